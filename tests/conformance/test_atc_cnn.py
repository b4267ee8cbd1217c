# SPDX-License-Identifier: GPL-2.0
"""CNNs through davinci-atc and the offline-model loader on every backend:
Conv (strides, pads, dilations, groups, 1-D, auto_pad, a bias), the
poolings, BatchNormalization, LRN, a Concat and a Transpose of computed tensors
and Sum against onnx's reference implementation (onnx.reference), a small
CNN of them all, and the light model-zoo CNNs of the onnx package
(onnx/backend/test/data/light) against their expected outputs with the
onnx backend tests' tolerance. The models' parameter blocks live in the
.om file's PARAMS section (format 1.1); a damaged block is refused at
load, never run. A Conv, its bias (or a folded BatchNormalization's
shift) and a Relu that alone reads it are one CONV2D task, its src2 and
epilogue (format 1.2); files of formats 1.0 and 1.1 still load."""

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import davinci  # noqa: E402
from davinci import atc, omfile, schema  # noqa: E402
from davinci.model import Model  # noqa: E402

from ._onnx_models import model  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                     "data", "light")
#: the light models a device of the default 256 MiB of HBM holds, and
#: those whose weights outgrow it (323 and 489 MiB)
LIGHT_CONVERTED = ("squeezenet", "resnet50", "shufflenet", "densenet121",
                   "inception_v2", "bvlc_alexnet", "inception_v1")
LIGHT_BIG = ("zfnet512", "vgg19")
#: the onnx backend tests' tolerance
RTOL, ATOL = 1e-3, 1e-7


def _n(op, ins, outs=("y",), **attrs):
    return helper.make_node(op, list(ins), list(outs), name=op.lower() + "0",
                            **attrs)


def _rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _check(dev, m, feeds, rtol=1e-5, atol=1e-5):
    """The converted model's outputs against onnx.reference's."""
    want = ReferenceEvaluator(m).run(None, feeds)
    with Model(dev, atc.convert(m)) as mod:
        got = mod.run([feeds[i.name] for i in m.graph.input
                       if i.name in feeds])
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("x,w,attrs", [
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 4, 11, 10), (6, 2, 3, 2), dict(strides=[2, 2], dilations=[2, 1],
                                        group=2)),
    ((1, 3, 7, 7), (3, 1, 3, 3), dict(group=3, auto_pad="SAME_UPPER")),
    ((2, 3, 7, 7), (5, 3, 1, 1), dict(auto_pad="VALID")),
    ((2, 3, 17), (4, 3, 5), dict(pads=[2, 2], strides=[2])),      # 1-D
], ids=["3x3 pad", "strided dilated grouped", "depthwise same",
        "1x1 valid", "1-D"])
def test_conv_with_its_bias_matches_the_reference(dev, rng, x, w, attrs):
    wt, b = _rand(rng, *w, scale=0.3), _rand(rng, w[0])
    m = model([_n("Conv", ["x", "w", "b"], **attrs)], [("x", list(x))],
              [("y", None)], [("w", wt), ("b", b)])
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _check(dev, m, {"x": _rand(rng, *x)})


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[2, 2], ceil_mode=1, strides=[2, 2])),
    ("MaxPool", dict(kernel_shape=[2, 2], dilations=[2, 2])),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[3, 2], strides=[2, 1],
                         pads=[1, 1, 1, 1])),
    ("GlobalAveragePool", {}), ("GlobalMaxPool", {}),
    # pads the device cannot say: a padded copy first
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2],
                     pads=[0, 0, 1, 1])),
    ("MaxPool", dict(kernel_shape=[2, 2], auto_pad="SAME_UPPER")),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[0, 1, 2, 1],
                         count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2],
                         pads=[0, 1, 2, 1])),      # Inception v1's kind
])
def test_poolings_match_the_reference(dev, rng, op, attrs):
    m = model([_n(op, ["x"], **attrs)], [("x", [2, 3, 9, 8])], [("y", None)])
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _check(dev, m, {"x": _rand(rng, 2, 3, 9, 8)}, rtol=1e-6, atol=1e-6)


def test_batch_normalization_concat_transpose_and_sum(dev, rng):
    """Opset 15 (BatchNormalization-14, training_mode 0): onnx.reference's
    BatchNormalization-9 mixes the batch's statistics in (its momentum
    default), which no inference runtime does."""
    c = 4
    stats = [("s", _rand(rng, c)), ("b", _rand(rng, c)), ("m", _rand(rng, c)),
             ("v", np.abs(_rand(rng, c)) + 0.5)]
    m = model([_n("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"],
                  epsilon=1e-3),
               _n("Concat", ["n", "x"], ["c"], axis=1),
               _n("Transpose", ["c"], ["t"], perm=[0, 2, 3, 1]),
               _n("Sum", ["t", "t", "k"], ["y"])],
              [("x", [2, c, 3, 5])], [("y", [2, 3, 5, 2 * c])],
              stats + [("k", _rand(rng, 2 * c))], opset=15)
    _check(dev, m, {"x": _rand(rng, 2, c, 3, 5)})


@pytest.mark.parametrize("size,shape", [
    (5, (2, 7, 4, 3)),      # AlexNet's window
    (4, (1, 6, 5, 5)),      # even: one more channel after than before
    (3, (2, 5, 6)),         # N x C x L
    (1, (1, 3, 2, 2)),
])
def test_lrn_matches_the_operator_definition(dev, rng, size, shape):
    """Against the formula of ONNX's operator page in float64, not
    onnx.reference: its LRN sums each channel's window for the first N
    channels only (it loops over the batch dimension)."""
    alpha, beta, bias = 2e-3, 0.75, 2.0
    m = model([_n("LRN", ["x"], size=size, alpha=alpha, beta=beta,
                  bias=bias)], [("x", list(shape))], [("y", list(shape))])
    x = _rand(rng, *shape, scale=3.0)
    sq = x.astype(np.float64) ** 2
    before, after = (size - 1) // 2, size // 2
    window = np.stack([sq[:, max(0, c - before):c + after + 1].sum(axis=1)
                       for c in range(shape[1])], axis=1)
    want = x / (bias + alpha / size * window) ** beta
    with Model(dev, atc.convert(m)) as mod:
        got, = mod.run([x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _small_cnn(rng):
    """Conv + BatchNormalization + Relu + MaxPool, two branches
    concatenated, GlobalAveragePool, Flatten, Gemm, Softmax: what a
    classifier exported by torch.onnx.export is made of."""
    inits = [("w1", _rand(rng, 8, 3, 3, 3, scale=0.3)),
             ("b1", _rand(rng, 8)),
             ("s", _rand(rng, 8)), ("bb", _rand(rng, 8)),
             ("mu", _rand(rng, 8)), ("var", np.abs(_rand(rng, 8)) + 0.5),
             ("w2", _rand(rng, 4, 8, 1, 1, scale=0.3)),
             ("w3", _rand(rng, 4, 8, 3, 3, scale=0.2)),
             ("fc", _rand(rng, 10, 8, scale=0.3)), ("fb", _rand(rng, 10))]
    nodes = [_n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             _n("BatchNormalization", ["c1", "s", "bb", "mu", "var"],
                ["n1"]),
             _n("Relu", ["n1"], ["r1"]),
             _n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2],
                strides=[2, 2]),
             _n("Conv", ["p1", "w2"], ["a"]),
             _n("Conv", ["p1", "w3"], ["b"], pads=[1, 1, 1, 1]),
             _n("Concat", ["a", "b"], ["cat"], axis=1),
             _n("GlobalAveragePool", ["cat"], ["g"]),
             _n("Flatten", ["g"], ["f"]),
             _n("Gemm", ["f", "fc", "fb"], ["z"], transB=1),
             _n("Softmax", ["z"], ["prob"], axis=-1)]
    return model(nodes, [("x", [2, 3, 12, 12])], [("prob", [2, 10])], inits,
                 opset=15)


def test_a_small_cnn_matches_the_reference(dev, rng):
    _check(dev, _small_cnn(rng), {"x": _rand(rng, 2, 3, 12, 12)})


def test_the_workspace_holds_only_what_is_live_at_once(rng):
    """A chain of convolutions needs two activations live at a time, not
    every one it makes: the converter places tensors whose lives do not
    meet in the same bytes."""
    nodes, inits = [], []
    prev = "x"
    for i in range(12):
        inits.append(("w%d" % i, _rand(rng, 4, 4, 3, 3, scale=0.2)))
        nodes.append(_n("Conv", [prev, "w%d" % i], ["c%d" % i],
                        pads=[1, 1, 1, 1]))
        prev = "c%d" % i
    nodes.append(_n("Relu", [prev], ["y"]))
    m = model(nodes, [("x", [1, 4, 16, 16])], [("y", [1, 4, 16, 16])], inits)
    om = omfile.parse(atc.convert(m))
    one = 4 * 16 * 16 * 4
    assert om.workspace_size(0) <= 3 * one


def _damaged(data: bytes, change) -> bytes:
    om = omfile.parse(data)
    params = bytearray(om.params)
    change(om, params)
    om.params = bytes(params)
    return omfile.serialize(om)


@pytest.mark.parametrize("what,change,words", [
    ("groups not dividing the channels",
     lambda om, p: p.__setitem__(slice(52, 56), (3).to_bytes(4, "little")),
     "convolution block"),
    ("a block past the section",
     lambda om, p: setattr(om.ops[0], "params", len(p)), "PARAMS"),
    ("no block",
     lambda om, p: setattr(om.ops[0], "params", None), "parameter block"),
])
def test_a_damaged_parameter_block_is_refused_at_load(dev, rng, what,
                                                      change, words):
    m = model([_n("Conv", ["x", "w"], pads=[1, 1, 1, 1])],
              [("x", [1, 4, 5, 5])], [("y", [1, 2, 5, 5])],
              [("w", _rand(rng, 2, 4, 3, 3))])
    data = _damaged(atc.convert(m), change)
    with pytest.raises(omfile.ModelFormatError, match=words):
        Model(dev, data)


@pytest.mark.parametrize("name", LIGHT_CONVERTED)
def test_light_model_matches_its_expected_output(dev, name):
    """As the onnx backend tests run them: the input arange(n) / n, the
    output against the file's with rtol 1e-3 and atol 1e-7."""
    _run_light(dev, name)


@pytest.mark.parametrize("name", LIGHT_BIG)
def test_light_model_too_big_for_the_default_device(backend, name):
    """On an in-process device of 1 GiB of HBM, in a process of its own
    (the backend's devices have 256 MiB). Once, on the in-process backend:
    the kernels' results are the same on every backend (test_digest)."""
    if backend.kind != "inproc":
        pytest.skip("run on the in-process backend, with 1 GiB of HBM")
    env = dict(os.environ, DAVINCI_INPROC_HBM_MB="1024",
               PYTHONPATH=os.pathsep.join(
                   [REPO] + os.environ.get("PYTHONPATH", "").split(
                       os.pathsep)))
    code = ("import davinci\n"
            "from tests.conformance.test_atc_cnn import _run_light\n"
            "d = davinci.Device(0)\n"
            "assert d.info.hbm_total >= 1 << 30, d.info\n"
            "_run_light(d, %r)\n" % name)
    done = subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def _run_light(dev, name):
    path = os.path.join(LIGHT, "light_%s.onnx" % name)
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    inp = next(i for i in m.graph.input if i.name not in inits)
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    n = int(np.prod(shape))
    x = (np.arange(n).reshape(shape) / n).astype(np.float32)
    want = numpy_helper.to_array(onnx.load_tensor(
        os.path.join(LIGHT, "light_%s_output_0.pb" % name)))
    with Model(dev, atc.convert(path)) as mod:
        got, = mod.run([x])
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_a_format_1_0_file_still_loads(dev, rng):
    """Format 1.1 added PARAMS; a model without it is a 1.0 file, which
    this reader loads as it always did."""
    from ._onnx_models import mlp
    m, ref = mlp()
    data = bytearray(atc.convert(m, input_shape="x:2,64"))
    assert not omfile.parse(bytes(data)).params
    data[10:12] = (0).to_bytes(2, "little")         # format minor 0
    x = _rand(rng, 2, 64)
    with Model(dev, bytes(data)) as mod:
        got, = mod.run([x])
    np.testing.assert_allclose(got, ref(x), rtol=1e-5, atol=1e-6)


def test_a_batch_norm_after_a_conv_is_folded_into_its_weights(dev, rng):
    """Conv + inference BatchNormalization convert to one CONV2D with its
    bias (davinci/atc/fuse.py), no MUL, and still match the reference; a
    BatchNormalization whose input a second node reads stays a MUL and an
    ADD."""
    c = 4
    stats = [("s", _rand(rng, c)), ("b", _rand(rng, c)), ("m", _rand(rng, c)),
             ("v", np.abs(_rand(rng, c)) + 0.5),
             ("w", _rand(rng, c, 3, 3, 3, scale=0.3)), ("cb", _rand(rng, c))]
    conv = _n("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1])
    bn = _n("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"],
            epsilon=1e-3)
    folded = model([conv, bn], [("x", [2, 3, 6, 5])], [("y", [2, c, 6, 5])],
                   stats, opset=15)
    kept = model([conv, bn, _n("Relu", ["c"], ["r"])], [("x", [2, 3, 6, 5])],
                 [("y", [2, c, 6, 5]), ("r", [2, c, 6, 5])], stats, opset=15)
    mul = schema.by_name("MUL").opcode
    for m, muls in ((folded, 0), (kept, 1)):
        om = omfile.parse(atc.convert(m))
        assert sum(o.opcode == mul for o in om.ops) == muls
        _check(dev, m, {"x": _rand(rng, 2, 3, 6, 5)}, rtol=1e-4, atol=1e-5)


def _ops_of(om) -> list[str]:
    return [schema.by_opcode(o.opcode).name for o in om.ops]


@pytest.mark.parametrize("bias,bn", [(True, False), (False, True),
                                     (True, True), (False, False)])
def test_conv_its_bias_its_batch_norm_and_its_relu_are_one_task(
        dev, rng, bias, bn):
    """Conv (+ B) (+ a folded BatchNormalization) + Relu: one CONV2D, its
    bias (B, or the BatchNormalization's shift) at src2 and RELU its
    epilogue, matching the reference."""
    c = 6
    inits = [("w", _rand(rng, c, 3, 3, 3, scale=0.3)), ("cb", _rand(rng, c)),
             ("s", _rand(rng, c)), ("b", _rand(rng, c)),
             ("m", _rand(rng, c)), ("v", np.abs(_rand(rng, c)) + 0.5)]
    nodes = [_n("Conv", ["x", "w", "cb"] if bias else ["x", "w"], ["c"],
                pads=[1, 1, 1, 1])]
    if bn:
        nodes.append(_n("BatchNormalization", ["c", "s", "b", "m", "v"],
                        ["n"]))
    nodes.append(_n("Relu", ["n" if bn else "c"], ["y"]))
    m = model(nodes, [("x", [2, 3, 7, 6])], [("y", [2, c, 7, 6])], inits,
              opset=15)
    om = omfile.parse(atc.convert(m))
    assert _ops_of(om) == ["CONV2D"]
    o = om.ops[0]
    assert o.imm == schema.by_name("CONV2D").imm.encode("RELU")
    assert (o.src2 != omfile.NO_TENSOR) == (bias or bn)
    assert atc.convert(m)[10:12] == ((2 if bias or bn else 1)
                                     ).to_bytes(2, "little")
    _check(dev, m, {"x": _rand(rng, 2, 3, 7, 6)}, rtol=1e-4, atol=1e-5)


def test_a_relu_is_fused_only_when_it_alone_reads_the_conv(dev, rng):
    """A Conv whose output a second node (or the graph) also reads keeps
    it: its Relu stays a RELU task, and both outputs match."""
    inits = [("w", _rand(rng, 4, 3, 3, 3, scale=0.3)), ("cb", _rand(rng, 4))]
    conv = _n("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1])
    relu = _n("Relu", ["c"], ["y"])
    also_read = model([conv, relu, _n("Neg", ["c"], ["z"])],
                      [("x", [1, 3, 5, 5])],
                      [("y", [1, 4, 5, 5]), ("z", [1, 4, 5, 5])], inits)
    an_output = model([conv, relu], [("x", [1, 3, 5, 5])],
                      [("y", [1, 4, 5, 5]), ("c", [1, 4, 5, 5])], inits)
    for m in (also_read, an_output):
        om = omfile.parse(atc.convert(m))
        names = _ops_of(om)
        assert names.count("RELU") == 1 and names.count("CONV2D") == 1
        conv_op = om.ops[names.index("CONV2D")]
        assert conv_op.imm == 0 and conv_op.src2 != omfile.NO_TENSOR
        _check(dev, m, {"x": _rand(rng, 1, 3, 5, 5)})


def test_a_models_own_fusion_attribute_is_not_taken(dev, rng):
    """Only the fusion pass marks a Conv: the attribute on a model's own
    Conv is dropped, so no RELU is run that the model does not ask for."""
    from davinci.atc.fuse import FUSED_RELU
    node = _n("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    node.attribute.extend([helper.make_attribute(FUSED_RELU, 1)])
    m = model([node], [("x", [1, 3, 5, 5])], [("y", [1, 4, 5, 5])],
              [("w", _rand(rng, 4, 3, 3, 3))])
    om = omfile.parse(atc.convert(m))
    assert om.ops[0].imm == 0
    x = _rand(rng, 1, 3, 5, 5)
    with Model(dev, atc.convert(m)) as mod:
        got, = mod.run([x])
    assert (got < 0).any()


def test_a_format_1_1_file_still_loads_and_1_2_needs_its_records(dev, rng):
    """A model without a src2 is written as format 1.1 (52-byte op
    records), which loads as before; a 1.2 file read as 1.1 (or a minor
    this reader does not know) is refused, never run."""
    m = _small_cnn(rng)
    x = _rand(rng, 2, 3, 12, 12)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    data = bytearray(atc.convert(m))
    assert data[10:12] == (2).to_bytes(2, "little")
    om = omfile.parse(bytes(data))
    for o in om.ops:        # the same model without its fused biases
        o.src2 = omfile.NO_TENSOR
    old = omfile.serialize(om)
    assert old[10:12] == (1).to_bytes(2, "little")
    with Model(dev, old) as mod:
        got, = mod.run([x])
    assert got.shape == want.shape      # loads and runs, biases left out
    with Model(dev, bytes(data)) as mod:
        got, = mod.run([x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for minor in (1, 3):
        bad = bytearray(data)
        bad[10:12] = minor.to_bytes(2, "little")
        with pytest.raises(omfile.ModelFormatError):
            omfile.parse(bytes(bad))


def test_a_model_with_biases_at_src2_is_refused_by_an_older_driver(
        dev, rng, monkeypatch):
    """A driver before ABI 1.10 announces no third operand: the loader
    refuses the model up front, saying why, instead of failing each run."""
    import dataclasses
    caps = dataclasses.replace(dev.capabilities(), src2_ops=frozenset())
    monkeypatch.setattr(dev, "capabilities", lambda: caps)
    data = atc.convert(_small_cnn(rng))
    with pytest.raises(davinci.InvalidArgumentError, match="src2"):
        Model(dev, data)

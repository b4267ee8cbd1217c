# SPDX-License-Identifier: GPL-2.0
"""Models exported by torch.onnx.export (the TorchScript exporter,
opset 17), converted by davinci-atc and run through acl.mdl as Ascend's
samples run an .om file, on every backend: a ResNet-18 (64 x 64, batch
1), a MobileNetV2-style CNN and a small ViT (32 x 32), a 2-layer
nn.TransformerEncoder, and transformers' BertModel,
BertForMaskedLM and GPT2LMHeadModel from tiny configs (2 layers of hidden
32, 8 tokens of int64 input_ids with an attention_mask that hides the
last two), in eval mode. Each output is compared with onnxruntime's run
of the same .onnx file and with torch's, at the onnx
backend tests' tolerance. The models are exported, converted and run once
per backend (a module fixture); the tests read the results. BERT and GPT-2
exported with a dynamic batch convert with --dynamic_batch_size, each gear
run against onnxruntime.

The transformers' graphs are what the converter folds and lowers: the
attention mask's Cast, Gather, And, Expand and Where (computed from the
input), Shape, ConstantOfShape, Equal and GatherElements of constants
folded at conversion, GPT-2's qkv Split and the heads' Transposes as
strided IDENTITYs, IsNaN as a CMP, Erf (BERT) and Pow and Tanh (GPT-2's
gelu), LayerNormalization, Softmax and the batched MatMuls; the
encoder's head size a Mod of shapes, folded."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import acl  # noqa: E402
import davinci  # noqa: E402
from davinci import atc, omfile  # noqa: E402

from .conftest import wait_quiescent  # noqa: E402

TORCH_TESTS = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "torch")
#: the onnx backend tests' tolerance (as test_atc_cnn's)
RTOL, ATOL = 1e-3, 1e-7
SEQ = 8
MODELS = ("resnet18", "mobilenet", "vit", "encoder", "bert_model", "bert",
          "gpt2")


def _tiny_models():
    """tests/torch/tiny_models.py, the models the torch tests train."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "tiny_models", os.path.join(TORCH_TESTS, "tiny_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _LM(torch.nn.Module):
    """A transformers model called as an exported graph is: input_ids and
    attention_mask in, the first output (hidden states or logits) out."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        kw = {"use_cache": False} if hasattr(self.m, "transformer") else {}
        return self.m(input_ids=input_ids, attention_mask=attention_mask,
                      return_dict=False, **kw)[0]


def _resnet18(tm):
    torch.manual_seed(0)
    net = tm.ResNet18().eval()
    with torch.no_grad():           # statistics other than the init's
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.normal_(1, 0.1)
                m.bias.normal_(0, 0.1)
    x = torch.randn(1, 3, 64, 64)
    return net, {"image": x}


def _transformer(make):
    torch.manual_seed(0)
    net = _LM(make()).eval()
    ids = torch.randint(0, 100, (1, SEQ))
    mask = torch.ones(1, SEQ, dtype=torch.int64)
    mask[0, -2:] = 0
    return net, {"input_ids": ids, "attention_mask": mask}


class _InvertedResidual(torch.nn.Module):
    """MobileNetV2's block: 1x1 expansion, 3x3 depthwise, 1x1 projection,
    batch norms and ReLU6 (exported as Clip), the shortcut added."""

    def __init__(self, c: int, e: int = 6):
        super().__init__()
        nn = torch.nn
        self.b = nn.Sequential(
            nn.Conv2d(c, c * e, 1, bias=False), nn.BatchNorm2d(c * e),
            nn.ReLU6(), nn.Conv2d(c * e, c * e, 3, 1, 1, groups=c * e,
                                  bias=False),
            nn.BatchNorm2d(c * e), nn.ReLU6(),
            nn.Conv2d(c * e, c, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return x + self.b(x)


def _mobilenet():
    """A MobileNetV2-style net at 32 x 32: a strided stem, two inverted
    residual blocks, global pooling and a classifier."""
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16),
        nn.ReLU6(), _InvertedResidual(16), _InvertedResidual(16),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
        nn.Linear(16, 10)).eval()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return net, {"image": torch.randn(1, 3, 32, 32)}


class _ViT(torch.nn.Module):
    """A vision transformer at 32 x 32: 8 x 8 patches by a Conv, a class
    token concatenated before them (the patches' 2-D transpose copied
    dense), learnt positions, 2 pre-norm encoder layers with GELU, the
    class token's head."""

    def __init__(self, d: int = 32):
        super().__init__()
        nn = torch.nn
        self.patch = nn.Conv2d(3, d, 8, 8)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, 17, d))
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(
            d, 4, 64, dropout=0.0, batch_first=True, activation="gelu",
            norm_first=True), 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(x.shape[0], -1, -1), t], 1)
        return self.head(self.enc(t + self.pos)[:, 0])


def _vit():
    torch.manual_seed(0)
    return _ViT().eval(), {"image": torch.randn(1, 3, 32, 32)}


def _encoder():
    """nn.TransformerEncoder, 2 layers of 32 with 4 heads (its head size
    a Mod of shapes, folded)."""
    torch.manual_seed(0)
    net = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(
        32, 4, 64, dropout=0.0, batch_first=True), 2).eval()
    return net, {"x": torch.randn(1, SEQ, 32)}


def _build(which: str, tm):
    if which == "resnet18":
        return _resnet18(tm)
    if which == "encoder":
        return _encoder()
    if which == "mobilenet":
        return _mobilenet()
    if which == "vit":
        return _vit()
    if which == "bert_model":       # the encoder's hidden states
        return _transformer(lambda: tm.tiny_bert(head=False))
    if which == "bert":
        return _transformer(tm.tiny_bert)
    return _transformer(tm.tiny_gpt2)


def _export(which: str, tm, path: str) -> dict:
    """Export model ``which`` to ``path``; its inputs and torch's output."""
    import warnings
    net, feeds = _build(which, tm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, tuple(feeds.values()), path,
                          input_names=list(feeds), output_names=["out"],
                          dynamo=False, opset_version=17)
        with torch.no_grad():
            want = net(*feeds.values()).numpy()
    return {"feeds": {k: v.numpy() for k, v in feeds.items()},
            "torch": want}


def _acl_run(path: str, feeds: dict) -> tuple[np.ndarray, list]:
    """Load the .om at ``path`` with acl.mdl, fill its inputs, execute,
    read its one output: (output, dims acl.mdl describes)."""
    model_id, ret = acl.mdl.load_from_file(path)
    assert ret == 0, ret
    desc = acl.mdl.create_desc()
    assert acl.mdl.get_desc(desc, model_id) == 0
    ptrs, bufs, sets = [], [], []
    try:
        for count, size_of in (
                (acl.mdl.get_num_inputs, acl.mdl.get_input_size_by_index),
                (acl.mdl.get_num_outputs,
                 acl.mdl.get_output_size_by_index)):
            ds = acl.mdl.create_dataset()
            sets.append(ds)
            for i in range(count(desc)):
                size = size_of(desc, i)
                p, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
                assert ret == 0
                ptrs.append(p)
                bufs.append(acl.create_data_buffer(p, size))
                assert acl.mdl.add_dataset_buffer(ds, bufs[-1])[1] == 0
        for i, arr in enumerate(feeds.values()):
            assert acl.mdl.get_input_name_by_index(desc, i) == list(feeds)[i]
            arr = np.ascontiguousarray(arr)
            b = acl.mdl.get_dataset_buffer(sets[0], i)
            assert acl.get_data_buffer_size(b) == arr.nbytes
            assert acl.rt.memcpy(acl.get_data_buffer_addr(b), arr.nbytes,
                                 arr.ctypes.data, arr.nbytes,
                                 acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert acl.mdl.execute(model_id, sets[0], sets[1]) == 0
        dims, ret = acl.mdl.get_output_dims(desc, 0)
        assert ret == 0
        assert acl.mdl.get_output_data_type(desc, 0) == acl.ACL_FLOAT
        out = np.empty(dims["dims"], np.float32)
        b = acl.mdl.get_dataset_buffer(sets[1], 0)
        assert acl.rt.memcpy(out.ctypes.data, out.nbytes,
                             acl.get_data_buffer_addr(b), out.nbytes,
                             acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return out, dims["dims"]
    finally:
        for ds in sets:
            acl.mdl.destroy_dataset(ds)
        for b in bufs:
            acl.destroy_data_buffer(b)
        for p in ptrs:
            acl.rt.free(p)
        acl.mdl.destroy_desc(desc)
        assert acl.mdl.unload(model_id) == 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each model exported, converted, run through acl.mdl and through
    onnxruntime: {name: {feeds, torch, ort, npu, dims, om, refusal}}."""
    pytest.importorskip("transformers")
    ort = pytest.importorskip("onnxruntime")
    tm = _tiny_models()
    tmp = tmp_path_factory.mktemp("export")
    out = {}
    for which in MODELS:
        path = str(tmp / ("%s.onnx" % which))
        r = _export(which, tm, path)
        r["ort"], = ort.InferenceSession(path, providers=[
            "CPUExecutionProvider"]).run(None, r["feeds"])
        try:
            r["om"] = atc.convert_file(path, str(tmp / which))
        except atc.ConversionError as exc:
            r["refusal"] = str(exc)
        out[which] = r
    with davinci.Device(0) as d:
        wait_quiescent(d)
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    try:
        for r in out.values():
            if "om" in r:
                r["npu"], r["dims"] = _acl_run(r["om"], r["feeds"])
    finally:
        acl.rt.reset_device(0)
        acl.finalize()
    return out


@pytest.mark.parametrize("which", MODELS)
def test_exported_model_converts(runs, which):
    r = runs[which]
    assert "refusal" not in r, r["refusal"]
    with open(r["om"], "rb") as f:
        om = omfile.parse(f.read())
    assert [i.name for i in om.inputs] == list(r["feeds"])
    assert [i.dtype for i in om.inputs] == [
        str(a.dtype) for a in r["feeds"].values()]
    assert list(om.outputs[0].dims) == list(r["torch"].shape)


@pytest.mark.parametrize("which", MODELS)
def test_exported_model_matches_onnxruntime(runs, which):
    r = runs[which]
    if "npu" not in r:
        pytest.fail("not converted: %s" % r.get("refusal"))
    assert r["dims"] == list(r["ort"].shape)
    np.testing.assert_allclose(r["npu"], r["ort"], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("which", MODELS)
def test_exported_model_matches_torch(runs, which):
    r = runs[which]
    if "npu" not in r:
        pytest.fail("not converted: %s" % r.get("refusal"))
    # onnxruntime's own distance from torch bounds what davinci may have
    np.testing.assert_allclose(r["ort"], r["torch"], rtol=RTOL, atol=1e-5)
    np.testing.assert_allclose(r["npu"], r["torch"], rtol=RTOL, atol=1e-5)


def test_the_attention_mask_is_read_at_run_time(runs):
    """The attention mask is an input of the converted GPT-2, not folded:
    with every token visible, the first six tokens' logits are those of
    the run that hid the last two (causal attention: none of them sees
    those) and the last two's differ; onnxruntime agrees."""
    r = runs["gpt2"]
    if "npu" not in r:
        pytest.fail("not converted: %s" % r.get("refusal"))
    feeds = dict(r["feeds"])
    feeds["attention_mask"] = np.ones_like(feeds["attention_mask"])
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    try:
        full, _ = _acl_run(r["om"], feeds)
    finally:
        acl.rt.reset_device(0)
        acl.finalize()
    ort = pytest.importorskip("onnxruntime")
    want, = ort.InferenceSession(r["om"][:-3] + ".onnx", providers=[
        "CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(full, want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(full[0, :-2], r["npu"][0, :-2], rtol=RTOL,
                               atol=1e-6)
    assert not np.allclose(full[0, -2:], r["npu"][0, -2:], rtol=1e-2)


@pytest.mark.parametrize("which", ["bert", "gpt2"])
def test_a_dynamic_batch_export_runs_each_gear(dev, tmp_path, which):
    """Exported with a dynamic batch dimension and converted with
    --dynamic_batch_size=1,2: each gear lowered with its own shapes, the
    batch of two padded differently per row, against onnxruntime."""
    pytest.importorskip("transformers")
    ort = pytest.importorskip("onnxruntime")
    import warnings
    from davinci.model import Model
    tm = _tiny_models()
    net, _ = _build(which, tm)
    torch.manual_seed(1)
    ids = torch.randint(0, 100, (2, SEQ))
    mask = torch.ones(2, SEQ, dtype=torch.int64)
    mask[1, 5:] = 0
    path = str(tmp_path / "m.onnx")
    batch = {0: "batch"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (ids, mask), path,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["out"], dynamo=False,
                          opset_version=17,
                          dynamic_axes={"input_ids": batch,
                                        "attention_mask": batch,
                                        "out": batch})
    data = atc.convert(path, input_shape="input_ids:-1,%d;attention_mask:"
                       "-1,%d" % (SEQ, SEQ), dynamic_batch_size="1,2")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    with Model(dev, data) as mod:
        for n in (2, 1):
            feeds = {"input_ids": ids[-n:].numpy(),
                     "attention_mask": mask[-n:].numpy()}
            want, = sess.run(None, feeds)
            got, = mod.run(list(feeds.values()), batch=n)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)

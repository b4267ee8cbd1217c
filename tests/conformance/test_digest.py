# SPDX-License-Identifier: GPL-2.0
"""A fixed, seeded workload of every op of the schema, the DVPP engines'
too (digest_dvpp.py); the SHA-256 of all outputs is written to
$DAVINCI_DIGEST_FILE when set, so backends (in-process, FUSE, kernel
module, arm64) can be compared bit for bit."""

import hashlib
import os

import numpy as np

from davinci import ops, schema

from . import _ref as R
from . import digest_dvpp
from .op_samples import SAMPLES

FLOATS = ("float32", "float16", "bfloat16")
ALL = FLOATS + ("int32",)


def _attrs(op):
    """The attribute values the op's samples use (op_samples.py)."""
    if op.imm is None:
        return [None]
    seen = []
    for sample in SAMPLES[op.name]:
        if sample.attr not in seen:
            seen.append(sample.attr)
    return seen


def _variants(op):
    """Keyword variants by the op's kind: both transposes of a matmul of
    two [64, 96] operands, a cast to every dtype."""
    if op.kind == "matmul":
        return [{"transpose_b": True}, {"transpose_a": True}]
    if op.kind == "cast":
        return [{"dtype": d} for d in ALL]
    if op.name == "MAXPOOL2D":  # its maxima and their indices
        return [{}, {"dtype": "int64"}]
    if op.name == "CONV2D":     # and with its bias and RELU epilogue
        return [{}, {"relu": True}]
    if op.kind == "view":       # of a [64, 96] or a [16, 16] operand
        return [{"sizes": (16, 16), "strides": (1, 16)},
                {"sizes": (4, 8, 16), "strides": (0, 32, 2)}]
    return [{}]


#: the digest's convolution on a [64, 96] and on a [16, 16] operand: x
#: and w's shapes, stride, padding, dilation, groups
_CONV = {6144: ((2, 4, 24, 32), (6, 2, 3, 3), (2, 1), (1, 2), (1, 2), 2),
         256: ((1, 4, 8, 8), (4, 1, 3, 3), (1, 2), (1, 1), (2, 1), 4)}


def _prefix(t, shape):
    """A tensor of ``shape`` on the first elements of ``t``."""
    from davinci import DeviceTensor
    return DeviceTensor(t.buffer, shape, t.dtype, t.offset)


def _conv_args(op, a, b, variant):
    """The convolution op's inputs, views of a's and b's first elements,
    and its keywords; CONV2D's ``relu`` variant with a bias of b's last
    elements (past w) too."""
    from davinci import DeviceTensor
    xs, ws, stride, padding, dilation, groups = _CONV[a.size]
    kw = dict(stride=stride, padding=padding, dilation=dilation,
              groups=groups)
    ys = ops.conv2d_shapes(xs, ws, **kw)[1]
    shapes = {"x": xs, "w": ws, "dy": ys}
    if op.name != "CONV2D":
        kw["shape"] = xs if "x" not in op.inputs else ws
    if variant.get("relu"):
        kw["relu"] = True
        kw["bias"] = DeviceTensor(b.buffer, (ws[0],), b.dtype, b.offset + (
            b.size - ws[0]) * b.itemsize)
    return [_prefix(t, shapes[n]) for t, n in zip((a, b), op.inputs)], kw


#: the digest's poolings on a [64, 96] and on a [16, 16] operand: x's
#: shape and the max ops' and the average ops' keywords
_POOL = {6144: ((2, 3, 32, 32), dict(kernel_size=3, stride=2, padding=1,
                                     dilation=(1, 2), ceil_mode=True),
                dict(kernel_size=(3, 2), stride=(2, 1), padding=1,
                     ceil_mode=True, count_include_pad=False)),
         256: ((1, 4, 8, 8), dict(kernel_size=2, stride=1, ceil_mode=False),
               dict(kernel_size=8, divisor=7))}


def _pool_args(op, a, b, s, variant):
    """The pooling op's inputs, views of a's and b's first elements (and
    the max gradient's indices, of a's max pooling), and its keywords
    with those of its ``variant``."""
    xs, max_kw, avg_kw = _POOL[a.size]
    kw = dict(max_kw if op.name.startswith("MAX") else avg_kw)
    kw.update(variant)
    x = _prefix(a, xs)
    if op.name in ("MAXPOOL2D", "AVGPOOL2D"):
        return [x], kw
    ys = ops.pool2d_shapes(xs, op=op.python, **kw)[1]
    kw.pop("dtype", None)
    ins = [_prefix(b, ys)]
    if op.name == "MAXPOOL2D_BACKWARD":
        ins.append(ops.max_pool2d(x, stream=s, dtype="int64", **kw))
    return ins, dict(kw, shape=xs)


def _pattern(dev, n: int, rows: int, mul: int, add: int):
    """int64 indices (i * mul + add) % rows, i < n."""
    return dev.tensor((np.arange(n, dtype=np.int64) * mul + add) % rows)


def _own_args(op, a, b, s):
    """The inputs and keywords of an op whose operands are not a and b
    alone, made from them (None for the others): indices of a pattern,
    bool masks comparing a and b, a new tensor for a generated one."""
    dev = a.device
    rows = a.shape[0]
    if op.name == "INDEX_SELECT":
        return [a, _pattern(dev, 2 * rows + 3, rows, 7, 2)], {}
    if op.name == "INDEX_ADD":
        return [a, b, _pattern(dev, rows, rows, 5, 3)], {}
    if op.name in ("SELECT", "MASK_SCALE"):
        mask = ops.compare("lt", a, b, dtype="bool", stream=s)
        return ([mask, a, b] if op.name == "SELECT" else [a, mask]), {}
    if op.kind == "generate":
        return [dev.empty(a.shape, a.dtype)], dict(SAMPLES[op.name][0].kwargs)
    if op.kind in ("optimizer", "momentum"):  # in place: copies of a and
        def copy(t):                        # b as the state, b the grad
            return dev.tensor(t.numpy(raw=True).copy(), t.dtype)
        state = [copy(a), copy(b)][:len(op.inputs) - 1]
        return [copy(a), b] + state, dict(SAMPLES[op.name][1].kwargs)
    if op.kind == "channels":  # a and b as [N, C]; float32 rows of C
        c = a.shape[1]

        def rows(r):
            return dev.tensor(np.linspace(0.25, 2, r * c, dtype=np.float32
                                          ).reshape(r, c))
        if op.name == "BN_TRAINING_REDUCE":
            return [a, rows(1), rows(1)], {}
        if op.name == "BN_TRAINING_UPDATE":
            return [a, rows(2)], {}
        return [b, a, rows(2 if op.name == "BN_TRAINING_UPDATE_GRAD"
                           else 5)], {}
    if op.name == "AIPP":      # a's bytes as an NV12 picture, its sample's
        from davinci.aipp import picture_bytes
        from .op_samples import _aipp_cases
        cfg = _aipp_cases()[0][1]
        h, w = cfg.out_size()
        pic = a.numpy(raw=True).view(np.uint8).reshape(-1)[:picture_bytes(
            cfg.input_format, cfg.src_w, cfg.src_h)]
        return [dev.tensor(pic.copy()), dev.tensor(np.frombuffer(
            cfg.pack(), np.uint8).copy())], {"height": h, "width": w,
                                             "dtype": a.dtype}
    return None


def every_op(a, b, s, dtype):
    """{label: output} of every schema op that takes ``dtype`` on ``a``
    (and ``b``), each attribute its samples use and each variant."""
    outs = {}
    for op in schema.COMPUTE_OPS:
        if dtype not in op.dtypes:
            continue
        fn = getattr(ops, op.python)
        for attr in _attrs(op):
            for kw in _variants(op):
                tensors = [a, b] if len(op.inputs) == 2 else [a]
                if op.kind == "conv":
                    tensors, kw = _conv_args(op, a, b, kw)
                if op.kind in ("pool", "pool_index"):
                    tensors, kw = _pool_args(op, a, b, s, kw)
                own = _own_args(op, a, b, s)
                if own is not None:
                    tensors, kw = own
                args = ([attr] if op.takes_attr else []) + tensors
                label = "_".join([op.python] + [str(x) for x in [attr]
                                                if x is not None] +
                                 ["%s=%s" % i for i in sorted(kw.items())
                                  if i[0] != "bias"])
                label = label.replace(" ", "")
                outs[label] = fn(*args, stream=s, **kw)
    return outs


def workload(dev):
    """Yield (label, output bytes) of the fixed workload: every op of the
    schema in every dtype it takes, on random operands and on special
    values, and the DVPP engines' tasks."""
    rng = np.random.default_rng(20261129)
    s = dev.stream()
    for dt in ALL:
        a = dev.tensor(R.random(rng, (64, 96), dt, -5, 5), dt)
        b = dev.tensor(R.random(rng, (64, 96), dt, 0.5, 5), dt)
        outs = every_op(a, b, s, dt)
        s.synchronize()
        for name in sorted(outs):
            yield "%s/%s" % (dt, name), outs[name].numpy(raw=True).tobytes()
    yield from specials(dev, s)
    with dev.malloc(1 << 20) as x, dev.malloc(1 << 20) as y:
        x.write(rng.integers(0, 256, 1 << 20, dtype=np.uint8))
        s.memcpy(y, x, 777_777, dst_offset=3, src_offset=11)
        s.memset(y, 0x5C, 1000, offset=500_000)
        s.synchronize()
        yield "memory", y.read()
    yield from digest_dvpp.workload(dev, s)


# Bit patterns where hardware differs if the kernels let it: NaNs with a
# payload and a sign (an op's output must be the canonical NaN), signed
# zeros and infinities, subnormals, the largest finite values, +-1. Given as
# bits: numpy's own float32 -> float16 rounding of a NaN differs between
# x86_64 and arm64.
SPECIAL_BITS = {
    "float32": np.array(
        [0x7fc00000, 0xffc00000, 0x7fc00001, 0xffa00003, 0x7f800000,
         0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x807fffff,
         0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000,
         0x33800000], np.uint32).view(np.float32),
    "float16": np.array(
        [0x7e00, 0xfe00, 0x7e01, 0xfd03, 0x7c00, 0xfc00, 0x0000, 0x8000,
         0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x1400],
        np.uint16).view(np.float16),
    "bfloat16": np.array(
        [0x7fc0, 0xffc0, 0x7fc1, 0xffa3, 0x7f80, 0xff80, 0x0000, 0x8000,
         0x0001, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3380],
        np.uint16),
}


def specials(dev, s):
    """Every op on each pair of special values, in each float dtype."""
    for dt in FLOATS:
        x = SPECIAL_BITS[dt]
        a = dev.tensor(np.repeat(x, x.size).reshape(16, 16), dt)
        b = dev.tensor(np.tile(x, x.size).reshape(16, 16), dt)
        outs = every_op(a, b, s, dt)
        s.synchronize()
        for name in sorted(outs):
            yield ("specials/%s/%s" % (dt, name),
                   outs[name].numpy(raw=True).tobytes())


def test_digest(dev):
    h = hashlib.sha256()
    labels = []
    for label, data in workload(dev):
        h.update(label.encode() + b"\0" + data)
        labels.append(label)
    assert len(labels) > 60
    digest = h.hexdigest()
    path = os.environ.get("DAVINCI_DIGEST_FILE")
    if path:
        with open(path, "w") as f:
            f.write(digest + "\n")
    # deterministic within one backend as well
    h2 = hashlib.sha256()
    for label, data in workload(dev):
        h2.update(label.encode() + b"\0" + data)
    assert h2.hexdigest() == digest


def test_digest_jpegs_are_the_kinds_they_name():
    """The embedded JPEGs (digest_jpegs.py) are baseline or progressive,
    of the subsampling and size their names say, restart-marker files
    with a DRI segment: what a regenerated set must still cover."""
    from davinci import dvpp
    from .digest_jpegs import FILES
    subs = {"420": "4:2:0", "422": "4:2:2", "444": "4:4:4"}
    kinds = set()
    for name, (w, h, data) in FILES.items():
        hd = dvpp.read_header(data)
        assert hd.supported and (hd.width, hd.height) == (w, h)
        assert "%dx%d" % (w, h) in name and (w % 16 or h % 16)
        assert hd.progressive == ("prog" in name), name
        sub = "grey" if "grey" in name else subs[name.split("-")[-2]]
        assert dvpp.SUBSAMPLING_NAMES[hd.subsampling] == sub, name
        assert (b"\xff\xdd" in data) == name.startswith("rst"), name
        kinds.add((hd.progressive, sub, name.startswith("rst")))
    for sub in ("4:2:2", "4:4:4", "grey"):
        assert (False, sub, False) in kinds and (True, sub, False) in kinds
    assert (True, "4:2:0", False) in kinds and \
        {k for k in kinds if k[2]} >= {(False, "4:2:0", True),
                                       (True, "4:2:2", True)}

# SPDX-License-Identifier: GPL-2.0
"""acl.op is a mapping onto the device's op schema (davinci.schema): every
compute op of the schema runs by each of its CANN names, for every dtype
it takes, through acl.op.execute_v2 and through a handle, and matches
numpy; an op without a CANN name says why. The seed's acl.rt.launch_task
runs the schema's elementwise ops by the same names. acl reaches the
runtime through its public modules only."""

import ast
import os

import numpy as np
import pytest

import acl
from davinci import schema

from . import _ref as R
from .op_samples import SAMPLES, Sample

ACL_DTYPES = {name: code for code, name in acl.op.DEVICE_DTYPES.items()}
ACL_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "userspace", "acl")

#: every (op, CANN name, dtype) the schema promises acl.op
CASES = [(op, name, dtype) for op in schema.COMPUTE_OPS
         for name in sorted(op.acl) for dtype in op.dtypes]
#: CANN's inputs of the reduce ops besides x: ReduceSum takes its axes as
#: an input tensor, ReduceSumD as an attribute
AXES_AS_INPUT = {"ReduceSum"}


def _case_id(case):
    op, name, dtype = case
    return "%s-%s" % (name, dtype)


class Tensors:
    """Device tensors for pyACL single-op calls, freed by close()."""

    def __init__(self):
        self.ptrs, self.descs, self.bufs = [], [], []

    def put(self, raw, acl_dtype, upload=True):
        """(desc, data buffer, pointer) of storage array ``raw``."""
        raw = np.ascontiguousarray(raw)
        n = max(raw.nbytes, 1)
        p, ret = acl.rt.malloc(n, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        assert ret == 0
        self.ptrs.append(p)
        if upload and raw.nbytes:
            assert acl.rt.memcpy(p, n, raw.ctypes.data, raw.nbytes,
                                 acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        d = acl.create_tensor_desc(acl_dtype, list(raw.shape),
                                   acl.ACL_FORMAT_ND)
        b = acl.create_data_buffer(p, raw.nbytes)
        assert d and b
        self.descs.append(d)
        self.bufs.append(b)
        return d, b, p

    def get(self, t, like):
        out = np.empty_like(like)
        if out.nbytes:
            assert acl.rt.memcpy(out.ctypes.data, out.nbytes, t[2],
                                 out.nbytes,
                                 acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return out

    def close(self):
        for b in self.bufs:
            assert acl.destroy_data_buffer(b) == 0
        for d in self.descs:
            acl.destroy_tensor_desc(d)
        for p in self.ptrs:
            assert acl.rt.free(p) == 0


@pytest.fixture
def tensors(acl_dev):
    t = Tensors()
    yield t
    t.close()


class Call:
    """One CANN operator call: its inputs (storage arrays with their ACL
    dtypes), attributes and the numpy result it must give."""

    def __init__(self, inputs, attrs, want, dst_dtype, rtol=0.0):
        self.inputs = inputs            # [(raw, acl dtype)]
        self.attrs = attrs              # [(setter, name, value)]
        self.want = want                # storage array of the result
        self.dst_dtype = dst_dtype      # davinci dtype name of the result
        self.rtol = rtol                # 0: bit-exact

    def attr(self):
        a = acl.op.create_attr()
        for setter, name, value in self.attrs:
            assert getattr(acl.op, setter)(a, name, value) == 0
        return a

    def check(self, got):
        if self.rtol == 0:
            assert got.dtype == self.want.dtype
            np.testing.assert_array_equal(got.view(np.uint8),
                                          self.want.view(np.uint8))
        else:
            np.testing.assert_allclose(R.to_f32(got, self.dst_dtype),
                                       R.to_f32(self.want, self.dst_dtype),
                                       rtol=self.rtol, atol=self.rtol)


def _sample(op, fixed) -> Sample:
    """The op's first sample (op_samples.py) that agrees with what the
    CANN name fixes (Less: the LT sample of CMP)."""
    for sample in SAMPLES[op.name]:
        if op.imm is None or op.imm.name not in fixed or \
                str(sample.attr).upper() == str(fixed[op.imm.name]).upper():
            return sample
    raise AssertionError("no sample of %s for %s" % (op.name, fixed))


def _elementwise(op, name, dtype, rng):
    """Inputs in CANN's order and the numpy result of ``name``, from the
    op's samples."""
    fixed = op.acl[name]
    sample = _sample(op, fixed)
    ins = sample.inputs(rng, dtype)
    values = [x if dtype in R.INTEGERS else R.to_f32(x, dtype) for x in ins]
    want = np.asarray(sample.reference(sample.attr, *values))
    want = want.astype(R.STORAGE[dtype]) if dtype in R.INTEGERS else \
        R.from_f32(want.astype(np.float32), dtype)
    attrs = []
    if op.imm is not None and op.imm.name not in fixed:
        # an enum is CANN's string attribute (GeluV2's approximate "none")
        setter = {"float32": "set_attr_float", "byte": "set_attr_int",
                  "enum": "set_attr_string", "int32": "set_attr_int"}[
                      op.imm.type]
        value = sample.attr.lower() if op.imm.type == "enum" else sample.attr
        attrs = [(setter, op.imm.name, value)]
    cann = [None] * len(ins)
    for source, index in enumerate(op.acl_order(name)):
        cann[index] = ins[source]
    rtol = sample.rtol or (
        {"float32": 4e-7, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
        if sample.ulps else 0.0)
    return Call([(x, ACL_DTYPES[dtype]) for x in cann], attrs, want, dtype,
                rtol)


def _matmul(op, name, dtype, rng):
    m, k, n = 6, 17, 9
    a = R.random(rng, (m, k), dtype, -8, 8, True)
    b = R.random(rng, (n, k), dtype, -8, 8, True)     # transpose_x2
    want = R.to_f32(a, dtype).astype(np.float64) @ \
        R.to_f32(b, dtype).astype(np.float64).T
    return Call([(a, ACL_DTYPES[dtype]), (b, ACL_DTYPES[dtype])],
                [("set_attr_bool", "transpose_x2", True)],
                R.from_f32(want.astype(np.float32), dtype), dtype)


def _rows(op, name, dtype, rng):
    x = R.random(rng, (4, 3, 10), dtype, -10, 10)
    xf = R.to_f32(x, dtype).astype(np.float64)
    s = xf - xf.max(axis=-1, keepdims=True)
    if op.python == "softmax":
        want = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    elif op.python == "log_softmax":
        want = s - np.log(np.exp(s).sum(axis=-1, keepdims=True))
    else:
        raise AssertionError("no numpy reference for %s" % op.python)
    rtol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}[dtype]
    return Call([(x, ACL_DTYPES[dtype])],
                [("set_attr_list_int", "axes", [-1])],
                R.from_f32(want.astype(np.float32), dtype), dtype, rtol)


def _reduce(op, name, dtype, rng):
    x = R.random(rng, (4, 3, 10), dtype, -8, 8, True)
    want = R.from_f32(R.to_f32(x, dtype).astype(np.float64).sum(axis=-1)
                      .astype(np.float32), dtype)
    ins = [(x, ACL_DTYPES[dtype])]
    attrs = [("set_attr_bool", "keep_dims", False)]
    if name in AXES_AS_INPUT:
        ins.append((np.array([-1], np.int32), acl.ACL_INT32))
    else:
        attrs.append(("set_attr_list_int", "axes", [-1]))
    return Call(ins, attrs, want, dtype)


def _casts(op, name, dtype, rng):
    """One Cast call from ``dtype`` to each dtype of the device."""
    raw = R.random(rng, (300,), dtype, -3000, 3000)
    if dtype in R.INTEGERS and dtype != "bool":
        raw = np.clip(raw, -3000, 3000).astype(raw.dtype)
    for dst in op.dtypes:
        if dtype in R.INTEGERS:
            vals = raw.astype(np.float32)           # exact: |v| < 2**24
        else:
            vals = R.to_f32(raw, dtype)
        if dst == "bool":
            want = vals != 0
        elif dst in R.INTEGERS and dtype in R.INTEGERS:
            want = raw.astype(R.STORAGE[dst])       # wraps
        elif dst in R.INTEGERS:
            info = np.iinfo(R.STORAGE[dst])         # saturates
            want = np.clip(np.trunc(vals.astype(np.float64)), info.min,
                           info.max).astype(R.STORAGE[dst])
        else:
            want = R.from_f32(vals, dst)
        yield Call([(raw, ACL_DTYPES[dtype])],
                   [("set_attr_data_type", "dst_type", ACL_DTYPES[dst])],
                   want, dst)


def _storage(want, dtype):
    return want.astype(R.STORAGE[dtype]) if dtype in R.INTEGERS else \
        R.from_f32(np.asarray(want, np.float64).astype(np.float32), dtype)


def _conv_attrs(kw):
    (sh, sw), (ph, pw), (dh, dw) = kw["stride"], kw["padding"], \
        kw["dilation"]
    return [("set_attr_list_int", "strides", [1, 1, sh, sw]),
            ("set_attr_list_int", "pads", [ph, ph, pw, pw]),
            ("set_attr_list_int", "dilations", [1, 1, dh, dw]),
            ("set_attr_int", "groups", kw["groups"]),
            ("set_attr_string", "data_format", "NCHW")]


def _convs(op, name, dtype, rng):
    """Every convolution sample of op_samples.py in CANN's inputs: a
    gradient's size as an int32 input, or an attribute of its D form;
    Conv2D once more with a bias. Integer-valued operands: exact."""
    sized = {"CONV2D_BACKWARD_INPUT": ("input_size", 0),
             "CONV2D_BACKWARD_WEIGHT": ("filter_size", 1)}
    for sample in SAMPLES[op.name]:
        ins = sample.inputs(rng, dtype)
        kw = sample.kwargs
        want = sample.reference(None, *(R.to_f32(x, dtype) for x in ins))
        cann = [(x, ACL_DTYPES[dtype]) for x in ins]
        attrs = _conv_attrs(kw)
        if op.name == "CONV2D_BACKWARD_INPUT":
            cann = cann[::-1]                   # filter, out_backprop
        if op.name in sized:
            what, at = sized[op.name]
            if name.endswith("D"):
                attrs.append(("set_attr_list_int", what, list(kw["shape"])))
            else:
                cann.insert(at, (np.array(kw["shape"], np.int32),
                                 acl.ACL_INT32))
        yield Call(cann, attrs, _storage(want, dtype), dtype)
        if op.name == "CONV2D":
            bias = R.random(rng, (ins[1].shape[0],), dtype, -4, 4, True)
            with_bias = want + R.to_f32(bias, dtype)[None, :, None, None]
            yield Call(cann + [(bias, ACL_DTYPES[dtype])], attrs,
                       _storage(with_bias, dtype), dtype)


def _views(op, name, dtype, rng):
    """Slice and Transpose: a block of a 3-D tensor (its bytes, exact);
    their inputs as int32 and int64 tensors, the D forms' attributes."""
    x = R.random(rng, (4, 5, 6), dtype, -8, 8, True)
    if name.startswith("Slice"):
        offsets, size = [1, 0, 2], [2, -1, 3]
        want = x[1:3, :, 2:5]
        extra = [("offsets", offsets), ("size", size)]
    else:
        perm = [2, 0, 1]
        want = x.transpose(perm)
        extra = [("perm", perm)]
    if name.endswith("D"):
        yield Call([(x, ACL_DTYPES[dtype])],
                   [("set_attr_list_int", k, v) for k, v in extra],
                   np.ascontiguousarray(want), dtype)
        return
    for ints, acl_int in ((np.int32, acl.ACL_INT32),
                          (np.int64, acl.ACL_INT64)):
        yield Call([(x, ACL_DTYPES[dtype])] +
                   [(np.array(v, ints), acl_int) for _, v in extra], [],
                   np.ascontiguousarray(want), dtype)


def _pool_attrs(name, kw):
    """CANN's attributes of a pooling sample, None when ``name`` cannot
    say it (MaxPool and AvgPool: VALID padding, no ceil_mode; exclusive
    means; no dilation, divisor or adaptive division anywhere)."""
    if kw.get("dilation", (1, 1)) != (1, 1) or kw.get("divisor") or \
            kw.get("adaptive"):
        return None
    (kh, kw_), (sh, sw), (ph, pw) = kw["kernel_size"], kw["stride"], \
        kw["padding"]
    attrs = [("set_attr_list_int", "ksize", [1, 1, kh, kw_]),
             ("set_attr_list_int", "strides", [1, 1, sh, sw]),
             ("set_attr_string", "data_format", "NCHW")]
    if name in ("MaxPool", "AvgPool"):
        if (ph, pw) != (0, 0) or kw["ceil_mode"] or \
                kw.get("count_include_pad"):
            return None
        return attrs + [("set_attr_string", "padding", "VALID")]
    attrs += [("set_attr_string", "padding_mode", "CALCULATED"),
              ("set_attr_list_int", "pads", [ph, ph, pw, pw]),
              ("set_attr_bool", "ceil_mode", kw["ceil_mode"])]
    if name.startswith("AvgPool"):
        attrs.append(("set_attr_bool", "exclusive",
                      not kw.get("count_include_pad")))
    return attrs


def _pools(op, name, dtype, rng):
    """The pooling samples of op_samples.py that CANN name ``name`` can
    say; AvgPoolV2Grad's input shape as an int32 input."""
    calls = []
    for sample in SAMPLES[op.name]:
        kw = sample.kwargs
        attrs = _pool_attrs(name, kw)
        if attrs is None or kw.get("dtype"):       # MAXPOOL2D's indices
            continue
        ins = sample.inputs(rng, dtype)
        want = sample.reference(None, *(R.to_f32(x, dtype) for x in ins))
        cann = [(x, ACL_DTYPES[dtype]) for x in ins]
        if name == "AvgPoolV2Grad":
            cann.insert(0, (np.array(kw["shape"], np.int32), acl.ACL_INT32))
        rtol = sample.rtol or (
            {"float32": 4e-7, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
            if sample.ulps else 0.0)
        calls.append(Call(cann, attrs, _storage(want, dtype), dtype, rtol))
    assert calls, "no sample of %s that %s can say" % (op.name, name)
    return calls


#: CANN names whose calls are their own rather than their op kind's
NAMED_CALLS = {"Slice": _views, "SliceD": _views, "Transpose": _views,
               "TransposeD": _views}


def calls(op, name, dtype, rng):
    """The calls that exercise CANN name ``name`` of ``op`` on ``dtype``."""
    if name in NAMED_CALLS:
        return list(NAMED_CALLS[name](op, name, dtype, rng))
    if op.kind == "conv":
        return list(_convs(op, name, dtype, rng))
    if op.kind == "pool":
        return _pools(op, name, dtype, rng)
    if op.kind in ("binary", "unary", "triangle"):
        return [_elementwise(op, name, dtype, rng)]
    if op.kind == "matmul":
        return [_matmul(op, name, dtype, rng)]
    if op.kind == "rows":
        return [_rows(op, name, dtype, rng)]
    if op.kind == "reduce":
        return [_reduce(op, name, dtype, rng)]
    if op.kind == "cast":
        return list(_casts(op, name, dtype, rng))
    raise AssertionError("no acl calls for kind %r of %s: add them"
                         % (op.kind, op.name))


def test_every_compute_op_has_a_cann_name_or_a_reason():
    for op in schema.COMPUTE_OPS:
        assert op.acl or op.why_not_in("acl"), (
            "DAVINCI_OP_%s has no CANN name and the schema does not say why "
            "acl.op lacks it" % op.name)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_every_cann_name_runs_its_op(tensors, rng, case):
    op, name, dtype = case
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    for call in calls(op, name, dtype, rng):
        ins = [tensors.put(raw, dt) for raw, dt in call.inputs]
        outs = [tensors.put(call.want, ACL_DTYPES[call.dst_dtype], False)
                for _ in range(2)]
        attr = call.attr()
        in_descs, in_bufs = [t[0] for t in ins], [t[1] for t in ins]
        # checked without data, as execute_v2 would check it
        assert acl.op.update_params(name, in_descs, [outs[0][0]], attr) == 0
        assert acl.op.execute_v2(name, in_descs, in_bufs, [outs[0][0]],
                                 [outs[0][1]], attr, stream) == 0, \
            acl.get_recent_err_msg()
        handle, ret = acl.op.create_handle(name, in_descs, [outs[1][0]],
                                           attr)
        assert ret == 0
        assert acl.op.execute_with_handle(handle, in_bufs, [outs[1][1]],
                                          stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        for out in outs:
            call.check(tensors.get(out, call.want))
        acl.op.destroy_handle(handle)
        acl.op.destroy_attr(attr)
    assert acl.rt.destroy_stream(stream) == 0


def test_an_unknown_op_type_names_every_op_of_the_schema(tensors):
    x = tensors.put(np.ones(4, np.float32), acl.ACL_FLOAT)
    for call in (lambda: acl.op.execute_v2("Conv3D", [x[0]], [x[1]], [x[0]],
                                           [x[1]], 0, 0),
                 lambda: acl.op.create_handle("Conv3D", [x[0]], [x[0]], 0)[1],
                 lambda: acl.op.update_params("Conv3D", [x[0]], [x[0]], 0)):
        assert call() == acl.ACL_ERROR_OP_NOT_FOUND
        msg = acl.get_recent_err_msg()
        for op in schema.COMPUTE_OPS:
            for name in op.acl:
                assert name in msg


@pytest.mark.parametrize("name,attr,value", [("Log", "base", 2.0),
                                             ("Log", "scale", 3.0),
                                             ("Log", "shift", 1.0),
                                             ("Swish", "scale", 2.0)])
def test_a_cann_attribute_the_device_lacks_is_refused_not_ignored(
        tensors, name, attr, value):
    """CANN's Log(base, scale, shift) and Swish(scale) run at their
    defaults (base e, scale 1, shift 0) only; the defaults set explicitly
    are taken."""
    a = tensors.put(np.full(8, 2.0, np.float32), acl.ACL_FLOAT)
    out = tensors.put(np.zeros(8, np.float32), acl.ACL_FLOAT, False)

    def run(attr):
        return acl.op.execute_v2(name, [a[0]], [a[1]], [out[0]], [out[1]],
                                 attr, 0)
    other = acl.op.create_attr()
    assert acl.op.set_attr_float(other, attr, value) == 0
    assert run(other) == acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert attr in acl.get_recent_err_msg()
    default = acl.op.create_attr()
    assert acl.op.set_attr_float(default, attr, 1.0 if attr == "scale" else
                                 {"base": -1.0, "shift": 0.0}[attr]) == 0
    assert run(default) == 0
    assert acl.rt.synchronize_stream(0) == 0
    want = np.log(2.0) if name == "Log" else 2.0 / (1.0 + np.exp(-2.0))
    np.testing.assert_allclose(tensors.get(out, np.zeros(8, np.float32)),
                               want, rtol=1e-6)


def test_attributes_a_cann_name_needs(tensors):
    """Axpy's alpha is a required float; a comparison writes ACL_BOOL, as
    CANN's do, or 1 and 0 in the inputs' data type, and nothing else."""
    a = tensors.put(np.ones(8, np.float32), acl.ACL_FLOAT)
    out = tensors.put(np.ones(8, np.float32), acl.ACL_FLOAT, False)

    def axpy(attr):
        return acl.op.execute_v2("Axpy", [a[0], a[0]], [a[1], a[1]],
                                 [out[0]], [out[1]], attr, 0)
    none = acl.op.create_attr()
    assert axpy(none) == acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    assert "alpha" in acl.get_recent_err_msg()
    wrong = acl.op.create_attr()
    assert acl.op.set_attr_string(wrong, "alpha", "2") == 0
    assert axpy(wrong) == acl.ACL_ERROR_OP_ATTR_NOT_MATCH
    good = acl.op.create_attr()
    assert acl.op.set_attr_float(good, "alpha", 2.0) == 0
    assert axpy(good) == 0
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(tensors.get(out, np.ones(8, np.float32)),
                                  np.full(8, 3, np.float32))
    steps = np.arange(8, dtype=np.float32) - 3
    b = tensors.put(steps, acl.ACL_FLOAT)
    flags = tensors.put(np.full(8, 7, np.uint8), acl.ACL_BOOL, False)
    assert acl.op.execute_v2("Less", [a[0], b[0]], [a[1], b[1]], [flags[0]],
                             [flags[1]], 0, 0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(tensors.get(flags, np.ones(8, np.uint8)),
                                  (1 < steps).astype(np.uint8))
    ints = tensors.put(np.ones(8, np.int32), acl.ACL_INT32, False)
    assert acl.op.execute_v2("Less", [a[0], b[0]], [a[1], b[1]], [ints[0]],
                             [ints[1]], 0, 0) == \
        acl.ACL_ERROR_OP_OUTPUT_NOT_MATCH
    assert "ACL_INT32" in acl.get_recent_err_msg()
    for h in (none, wrong, good):
        acl.op.destroy_attr(h)


#: the seed's elementwise calls: every CANN name of a binary or unary op
SEED_CASES = [(op, name) for op in schema.COMPUTE_OPS
              if op.kind in ("binary", "unary") for name in sorted(op.acl)]


@pytest.mark.parametrize("case", SEED_CASES, ids=lambda c: c[1])
def test_seed_launch_task_runs_the_elementwise_ops(tensors, rng, case):
    op, name = case
    call = _elementwise(op, name, "float32", rng)
    ins = [tensors.put(raw, dt) for raw, dt in call.inputs]
    out = tensors.put(call.want, acl.ACL_FLOAT, False)
    cfg = {"op_type": name, "input_x": ins[0][2], "output_z": out[2],
           "count": call.want.size, "dtype": acl.ACL_FLOAT}
    if len(ins) > 1:
        cfg["input_y"] = ins[1][2]
    cfg.update((attr, value) for _, attr, value in call.attrs)
    stream, _ = acl.rt.create_stream()
    task_id, ret = acl.rt.launch_task(stream, cfg)
    assert ret == 0, acl.get_recent_err_msg()
    assert acl.rt.synchronize_stream(stream) == 0
    call.check(tensors.get(out, call.want))
    assert acl.rt.destroy_stream(stream) == 0


def _private_davinci_uses(path):
    """(line, what) of each use of a private davinci module or name in
    the Python file ``path``: imports of davinci._x or davinci.y._x, names
    starting with _ imported from davinci, and attributes davinci._x."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)

    def private(dotted):
        parts = dotted.split(".")
        return parts[0] == "davinci" and \
            any(p.startswith("_") for p in parts[1:])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if private(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and \
                node.module and node.module.split(".")[0] == "davinci":
            if private(node.module):
                found.append((node.lineno, node.module))
            found += [(node.lineno, "%s.%s" % (node.module, a.name))
                      for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and \
                isinstance(node.value, ast.Name) and \
                node.value.id == "davinci" and node.attr.startswith("_"):
            found.append((node.lineno, "davinci." + node.attr))
    return found


def test_acl_uses_no_private_davinci_module():
    files = [os.path.join(d, f) for d, _, fs in os.walk(ACL_DIR)
             for f in fs if f.endswith(".py")]
    assert len(files) > 10
    bad = ["%s:%d: %s" % (os.path.relpath(p, ACL_DIR), line, what)
           for p in sorted(files) for line, what in _private_davinci_uses(p)]
    assert not bad, "acl uses davinci's private modules:\n" + "\n".join(bad)


def test_the_private_use_finder_finds_them(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import davinci._uapi\nfrom davinci import _uapi as U\n"
                 "from davinci.trace._ring import x\n"
                 "from davinci.ops import _tensor\nimport davinci\n"
                 "y = davinci._corelib\nfrom davinci import ops, schema\n")
    assert [line for line, _ in _private_davinci_uses(str(p))] == \
        [1, 2, 3, 4, 6]

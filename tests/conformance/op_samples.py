# SPDX-License-Identifier: GPL-2.0
"""Sample inputs of every device op, the one list each backend's tests
iterate (as PyTorch's OpInfo): per schema op (kmod/core/ops.toml) its
inputs, its attribute and a numpy reference, with the tolerance the op
promises (0: bit-identical to the reference, in storage bits).

An op the schema declares and this file lacks fails
tests/conformance/test_op_samples.py: adding an op is its kernel, its
schema entry and its samples here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import _ref as R


@dataclass
class Sample:
    """One call of an op: ``inputs(rng, dtype)`` returns the storage arrays
    of its inputs, ``reference(attr, *f32 inputs)`` the float result (float32
    values, or int32 for int32 inputs), ``attr`` its attribute."""
    name: str
    inputs: Callable
    reference: Callable
    attr: object = None
    kwargs: dict = field(default_factory=dict)
    #: ulps allowed in the result's dtype (0: bit-identical)
    ulps: int = 0
    #: relative tolerance instead of ulps (summations in another order)
    rtol: float = 0.0


def _rand(*shapes, low=-4.0, high=4.0, integer_valued=False):
    def make(rng, dtype):
        return [R.random(rng, s, dtype, low, high, integer_valued)
                for s in shapes]
    return make


def _binary(np_fn, int_fn=None):
    def ref(attr, a, b):
        if a.dtype.kind in "iub":
            with np.errstate(over="ignore"):
                return (int_fn or np_fn)(a, b).astype(a.dtype)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np_fn(a, b)
    return ref


def _nonzero(*shapes):
    def make(rng, dtype):
        ins = _rand(*shapes)(rng, dtype)
        b = ins[-1]
        if dtype in R.INTEGERS:
            ins[-1] = np.where(b == 0, 1, b).astype(b.dtype)
        return ins
    return make


def _softmax(attr, x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _log_softmax(attr, x):
    s = x - x.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def _strided(sizes, strides):
    """numpy's view of x's elements with these sizes and strides."""
    def ref(attr, x):
        flat = np.ascontiguousarray(x).reshape(-1)
        return np.lib.stride_tricks.as_strided(
            flat, shape=sizes,
            strides=[s * flat.itemsize for s in strides]).copy()
    return ref


def _cmp(fn, result=None):
    def ref(attr, a, b):
        r = fn(a, b)
        return r.astype(result or (a.dtype if a.dtype.kind in "iub"
                                   else np.float32))
    return ref


def _conv_patches(x, r, s, oh, ow, stride, padding, dilation):
    """{(r, s): x's elements each output reads at tap (r, s)}, zero padded
    (float64)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    return {(i, j): xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for i in range(r) for j in range(s)}


def _conv_ref(which, geom):
    """numpy's CONV2D (``y``) or its gradient (``dx``, ``dw``) of the
    convolution ``geom`` = (x shape, w shape, stride, padding, dilation,
    groups), in float64."""
    xs, ws, stride, padding, dilation, groups = geom
    n, c, h, w = xs
    k, cg, r, s = ws
    kg = k // groups
    oh = (h + 2 * padding[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1

    def gk(g):
        return slice(g * kg, (g + 1) * kg)

    def gc(g):
        return slice(g * cg, (g + 1) * cg)

    def forward(attr, x, wt):
        y = np.zeros((n, k, oh, ow))
        for (i, j), patch in _conv_patches(x, r, s, oh, ow, stride, padding,
                                           dilation).items():
            for g in range(groups):
                y[:, gk(g)] += np.einsum("nchw,kc->nkhw", patch[:, gc(g)],
                                         wt[gk(g), :, i, j])
        return y

    def backward_input(attr, dy, wt):
        ph, pw = padding
        dxp = np.zeros((n, c, h + 2 * ph, w + 2 * pw))
        for i in range(r):
            for j in range(s):
                rows = slice(i * dilation[0],
                             i * dilation[0] + stride[0] * (oh - 1) + 1,
                             stride[0])
                cols = slice(j * dilation[1],
                             j * dilation[1] + stride[1] * (ow - 1) + 1,
                             stride[1])
                for g in range(groups):
                    dxp[:, gc(g), rows, cols] += np.einsum(
                        "nkhw,kc->nchw", dy[:, gk(g)], wt[gk(g), :, i, j])
        return dxp[:, :, ph:ph + h, pw:pw + w]

    def backward_weight(attr, x, dy):
        dw = np.zeros((k, cg, r, s))
        for (i, j), patch in _conv_patches(x, r, s, oh, ow, stride, padding,
                                           dilation).items():
            for g in range(groups):
                dw[gk(g), :, i, j] = np.einsum(
                    "nkhw,nchw->kc", dy[:, gk(g)], patch[:, gc(g)])
        return dw

    return {"y": forward, "dx": backward_input, "dw": backward_weight}[which]


#: (name, x shape, w shape, stride, padding, dilation, groups)
_CONVS = (
    ("3x3 pad 1", (2, 4, 7, 9), (6, 4, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ("stride 2 dilation 2 groups 2", (1, 4, 11, 10), (4, 2, 3, 2), (2, 2),
     (2, 1), (2, 2), 2),
    ("depthwise", (2, 3, 6, 5), (3, 1, 3, 3), (1, 2), (0, 1), (1, 1), 3),
)


def _conv_samples(which):
    """Integer-valued operands: every sum is exact in float32, so the
    result is the exact one rounded once, bit for bit."""
    out = []
    for name, xs, ws, stride, padding, dilation, groups in _CONVS:
        geom = (xs, ws, stride, padding, dilation, groups)
        ys = (xs[0], ws[0], (xs[2] + 2 * padding[0] - dilation[0] *
                             (ws[2] - 1) - 1) // stride[0] + 1,
              (xs[3] + 2 * padding[1] - dilation[1] * (ws[3] - 1) - 1)
              // stride[1] + 1)
        shapes = {"y": (xs, ws), "dx": (ys, ws), "dw": (xs, ys)}[which]
        kw = dict(stride=stride, padding=padding, dilation=dilation,
                  groups=groups)
        if which != "y":
            kw["shape"] = xs if which == "dx" else ws
        out.append(Sample(name, _rand(*shapes, integer_valued=True),
                          _conv_ref(which, geom), kwargs=kw))
    return out


SAMPLES: dict[str, list[Sample]] = {
    "CONV2D": _conv_samples("y"),
    "CONV2D_BACKWARD_INPUT": _conv_samples("dx"),
    "CONV2D_BACKWARD_WEIGHT": _conv_samples("dw"),
    "ADD": [Sample("37x129", _rand((37, 129), (37, 129)), _binary(np.add))],
    "SUB": [Sample("37x129", _rand((37, 129), (37, 129)),
                   _binary(np.subtract))],
    "MUL": [Sample("37x129", _rand((37, 129), (37, 129)),
                   _binary(np.multiply))],
    "DIV": [Sample("37x129", _nonzero((37, 129), (37, 129)),
                   _binary(np.divide, R.int_div))],
    "MAX": [Sample("1000", _rand((1000,), (1000,)), _binary(np.maximum))],
    "MIN": [Sample("1000", _rand((1000,), (1000,)), _binary(np.minimum))],
    "RELU": [Sample("3x333", _rand((3, 333)),
                    lambda attr, x: np.maximum(x, x.dtype.type(0)))],
    "EXP": [Sample("4096", _rand((4096,), low=-20, high=20),
                   lambda attr, x: np.exp(x.astype(np.float64)), ulps=1)],
    "AXPY": [Sample("alpha 0.5", _rand((777,), (777,)),
                    lambda attr, x, y: np.float32(attr) * x + y, attr=0.5)],
    "MATMUL": [
        Sample("33x17x9", _rand((33, 17), (17, 9)),
               lambda attr, a, b: a.astype(np.float64) @ b, rtol=1e-5),
        Sample("transposed", _rand((17, 33), (9, 17)),
               lambda attr, a, b: a.T.astype(np.float64) @ b.T, rtol=1e-5,
               kwargs={"transpose_a": True, "transpose_b": True}),
    ],
    "SOFTMAX": [Sample("8x100", _rand((8, 100)), _softmax, rtol=1e-5)],
    "REDUCE_SUM": [Sample("7x300", _rand((7, 300)),
                          lambda attr, x: x.astype(np.float64).sum(-1),
                          rtol=1e-5)],
    "CAST": [Sample("to " + to, _rand((500,), integer_valued=True),
                    lambda attr, x, to=to: x.astype(R.STORAGE[to]),
                    kwargs={"dtype": to})
             for to in ("float32", "int64", "int8", "bool")],
    "RELU_GRAD": [Sample("grad, x", _rand((400,), (400,)),
                         lambda attr, g, x: np.where(x > 0, g,
                                                     g.dtype.type(0)))],
    "LOG_SOFTMAX": [Sample("8x100", _rand((8, 100)), _log_softmax,
                           rtol=1e-5)],
    "SQRT": [Sample("4096", _rand((4096,), low=0, high=1e4),
                    lambda attr, x: np.sqrt(x.astype(np.float64)))],
    "ABS": [Sample("3x333", _rand((3, 333)), lambda attr, x: np.abs(x))],
    "LEAKY_RELU": [Sample("slope 0.01", _rand((999,)),
                          lambda attr, x: np.where(x >= 0, x,
                                                   np.float32(attr) * x),
                          attr=0.01)],
    "COPY_VIEW": [
        Sample(name, _rand((6, 7)), _strided(sizes, strides),
               kwargs={"sizes": sizes, "strides": strides})
        for name, sizes, strides in (
            ("transpose", (7, 6), (1, 7)),
            ("slice", (3, 2), (14, 3)),
            ("expand", (4, 6, 7), (0, 7, 1)),
            ("permute 3-D", (2, 7, 3), (1, 2, 14)),
            ("contiguous", (42,), (1,)),
        )],
    "IDENTITY": [Sample("3x333", _rand((3, 333)), lambda attr, x: x)],
    "CMP": [Sample(p, _rand((300,), (300,), integer_valued=True),
                   _cmp(fn), attr=p)
            for p, fn in (("EQ", np.equal), ("NE", np.not_equal),
                          ("LT", np.less), ("LE", np.less_equal),
                          ("GT", np.greater), ("GE", np.greater_equal))] + [
        Sample("LT to bool", _rand((300,), (300,), integer_valued=True),
               _cmp(np.less, np.bool_), attr="LT",
               kwargs={"dtype": "bool"})],
}


def _ulps_apart(got: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Distance in units in the last place of ``dtype`` (storage bits)."""
    bits = {"float32": np.int32, "float16": np.int16,
            "bfloat16": np.int16}[dtype]
    g = np.ascontiguousarray(got).view(bits).astype(np.int64)
    w = np.ascontiguousarray(want).view(bits).astype(np.int64)
    # order the bit patterns as the floats they encode
    sign = np.int64(1) << (8 * np.dtype(bits).itemsize - 1)
    g = np.where(g < 0, -(g & (sign - 1)), g)
    w = np.where(w < 0, -(w & (sign - 1)), w)
    return np.abs(g - w)


def assert_matches(sample: Sample, raws, got_raw: np.ndarray, dtype: str,
                   out_dtype: str) -> None:
    """``got_raw`` (storage of ``out_dtype``) is ``sample``'s reference on
    the storage inputs ``raws`` of ``dtype``, within its tolerance."""
    values = [r if dtype in R.INTEGERS else R.to_f32(r, dtype)
              for r in raws]
    want = np.asarray(sample.reference(sample.attr, *values))
    if out_dtype in R.INTEGERS:
        assert np.array_equal(got_raw, want.astype(R.STORAGE[out_dtype]))
        return
    want_raw = R.from_f32(want.astype(np.float32), out_dtype)
    assert got_raw.shape == want_raw.shape
    if sample.rtol:
        np.testing.assert_allclose(R.to_f32(got_raw, out_dtype),
                                   R.to_f32(want_raw, out_dtype),
                                   rtol=max(sample.rtol, {
                                       "float32": 0, "float16": 2e-3,
                                       "bfloat16": 1.6e-2}[out_dtype]),
                                   atol=1e-6)
        return
    apart = _ulps_apart(got_raw, want_raw, out_dtype)
    nan = np.isnan(R.to_f32(want_raw, out_dtype))
    assert np.array_equal(nan, np.isnan(R.to_f32(got_raw, out_dtype)))
    assert apart[~nan].max(initial=0) <= sample.ulps, (
        "%d elements more than %d ulp off, worst %d" % (
            int((apart[~nan] > sample.ulps).sum()), sample.ulps,
            int(apart[~nan].max())))

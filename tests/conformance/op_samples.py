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

import math

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
    #: each input's dtype where it is not the op's (None: the op's)
    input_dtypes: tuple = ()
    #: the result's dtype where it is not the op's (ARGMAX's int64)
    out_dtype: "str | None" = None
    #: the dtypes the sample runs in (empty: every one the op takes)
    only: tuple = ()

    def dtypes_of(self, dtype: str, n: int) -> list[str]:
        """The dtype of each of ``n`` inputs of the sample in ``dtype``."""
        fixed = list(self.input_dtypes) + [None] * n
        return [d or dtype for d in fixed[:n]]


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


def _pool_windows(xs, geom):
    """torch's windows of a pooling of an x of shape ``xs`` (n, c, h, w):
    {(oh, ow): (rows, columns, count)}, the taps inside the input in
    row-major order and the divisor count_include_pad gives, and y's
    (oh, ow) extents."""
    k, stride, pad, dil, ceil_mode = (geom[n] for n in (
        "kernel", "stride", "padding", "dilation", "ceil_mode"))
    extents = []
    for d in (0, 1):
        size = xs[2 + d]
        o = (size + 2 * pad[d] - dil[d] * (k[d] - 1) - 1 +
             (stride[d] - 1 if ceil_mode else 0)) // stride[d] + 1
        if ceil_mode and (o - 1) * stride[d] >= size + pad[d]:
            o -= 1
        extents.append(o)
    wins = {}
    for oh in range(extents[0]):
        for ow in range(extents[1]):
            taps, padded = [], []
            for d, o in enumerate((oh, ow)):
                start = o * stride[d] - pad[d]
                taps.append([start + t * dil[d] for t in range(k[d])
                             if 0 <= start + t * dil[d] < xs[2 + d]])
                padded.append(min(start + k[d], xs[2 + d] + pad[d]) - start)
            wins[oh, ow] = (taps[0], taps[1], padded[0] * padded[1])
    return wins, tuple(extents)


def _pool_ref(which, xs, geom):
    """numpy's pooling op ``which`` (max, argmax, max_dx, avg, avg_dx) of
    an x of shape ``xs``, torch's rules: the first largest tap (or the last
    NaN) of a max window, a mean over the taps inside the input."""
    wins, (oh, ow) = _pool_windows(xs, geom)
    n, c, h, w = xs

    def argmax(x):
        idx = np.zeros((n, c, oh, ow), np.int64)
        for (i, j), (rows, cols, _) in wins.items():
            best = np.full((n, c), -np.inf)
            at = np.full((n, c), rows[0] * w + cols[0])
            for r in rows:
                for s in cols:
                    v = x[:, :, r, s]
                    take = (v > best) | np.isnan(v)
                    best = np.where(take, v, best)
                    at = np.where(take, r * w + s, at)
            idx[:, :, i, j] = at
        return idx

    def divisor(win):
        if geom.get("adaptive"):
            return geom["kernel"][0] * geom["kernel"][1]
        if geom.get("divisor"):
            return geom["divisor"]
        rows, cols, padded = win
        return padded if geom.get("count_include_pad") else \
            len(rows) * len(cols)

    def max_y(attr, x):
        idx = argmax(x)
        return np.take_along_axis(x.reshape(n, c, -1).astype(np.float64),
                                  idx.reshape(n, c, -1), 2).reshape(idx.shape)

    def max_dx(attr, dy, idx):
        dx = np.zeros((n, c, h * w))
        for i in range(oh):
            for j in range(ow):
                for a in range(n):
                    for b in range(c):
                        dx[a, b, idx[a, b, i, j]] += dy[a, b, i, j]
        return dx.reshape(xs)

    def avg_y(attr, x):
        y = np.zeros((n, c, oh, ow))
        for (i, j), win in wins.items():
            rows, cols, _ = win
            y[:, :, i, j] = x[:, :, rows][:, :, :, cols].astype(
                np.float64).sum((2, 3)) / divisor(win)
        return y

    def avg_dx(attr, dy):
        dx = np.zeros(xs)
        for (i, j), win in wins.items():
            rows, cols, _ = win
            dx[:, :, rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1] += \
                dy[:, :, i:i + 1, j:j + 1] / divisor(win)
        return dx

    return {"max": max_y, "argmax": lambda attr, x: argmax(x),
            "max_dx": max_dx, "avg": avg_y, "avg_dx": avg_dx}[which]


#: (name, x shape, kernel, stride, padding, dilation, ceil_mode, average
#: options); the max ops take the first four, the average ops all but
#: dilation
_POOLS = (
    ("3x3 stride 2 pad 1", (2, 3, 9, 11), (3, 3), (2, 2), (1, 1), (1, 1),
     False, dict(count_include_pad=True)),
    ("2x3 ceil mode", (1, 4, 7, 8), (2, 3), (2, 2), (1, 1), (2, 3), True,
     dict(count_include_pad=False)),
    ("1-D divisor 5", (2, 3, 1, 13), (1, 4), (1, 3), (0, 2), (1, 2), True,
     dict(count_include_pad=True, divisor=5)),
    ("global", (2, 3, 5, 7), (5, 7), (5, 7), (0, 0), (1, 1), False,
     dict(count_include_pad=False)),
)


def _pool_samples(which):
    """Integer-valued inputs (ties for the max, exact sums); the means
    divide once (1 ulp: float32's quotient rounded again to a half type)
    and their gradients add rounded quotients (a relative tolerance)."""
    out = []
    for name, xs, k, stride, pad, dil, ceil_mode, avg in _POOLS:
        geom = dict(kernel=k, stride=stride, padding=pad, dilation=dil,
                    ceil_mode=ceil_mode, **avg)
        kw = dict(kernel_size=k, stride=stride, padding=pad,
                  ceil_mode=ceil_mode)
        if which in ("max", "argmax", "max_dx"):
            kw["dilation"] = dil
        else:
            geom["dilation"] = (1, 1)
            kw.update(avg)
        ys = _pool_windows(xs, geom)[1]
        ys = xs[:2] + ys
        if which in ("max", "argmax"):
            out.append(Sample(
                name + (" indices" if which == "argmax" else ""),
                _rand(xs, integer_valued=True), _pool_ref(which, xs, geom),
                kwargs=dict(kw, dtype="int64") if which == "argmax" else kw))
        elif which == "max_dx":
            def inputs(rng, dtype, xs=xs, ys=ys, geom=geom):
                x = _rand(xs, integer_valued=True)(rng, "float32")[0]
                return _rand(ys, integer_valued=True)(rng, dtype) + [
                    _pool_ref("argmax", xs, geom)(None, x)]
            out.append(Sample(name, inputs, _pool_ref(which, xs, geom),
                              kwargs=dict(kw, shape=xs),
                              input_dtypes=(None, "int64")))
        elif which == "avg":
            out.append(Sample(name, _rand(xs, integer_valued=True),
                              _pool_ref(which, xs, geom), kwargs=kw, ulps=1))
        else:
            out.append(Sample(name, _rand(ys), _pool_ref(which, xs, geom),
                              kwargs=dict(kw, shape=xs), rtol=1e-6))
    xs = (2, 3, 12, 8)
    geom = dict(kernel=(4, 4), stride=(4, 4), padding=(0, 0),
                dilation=(1, 1), ceil_mode=False, adaptive=True)
    kw = dict(kernel_size=(4, 4), stride=(4, 4), adaptive=True,
              count_include_pad=False)
    if which == "avg":
        out.append(Sample("adaptive 12x8 to 3x2", _rand(xs),
                          _pool_ref(which, xs, geom), kwargs=kw, rtol=1e-6))
    elif which == "avg_dx":
        out.append(Sample("adaptive 12x8 to 3x2", _rand((2, 3, 3, 2)),
                          _pool_ref(which, xs, geom),
                          kwargs=dict(kw, shape=xs), rtol=1e-6))
    return out


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _f64(x):
    return np.asarray(x, np.float64)


def _sigmoid(x):
    """float64 sigmoid without overflow."""
    e = np.exp(-np.abs(_f64(x)))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _gelu(form):
    def ref(attr, x):
        x = _f64(x)
        if form == "TANH":
            return x * _sigmoid(2 * np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))
        return 0.5 * x * _erfc(-x / np.sqrt(2.0))
    return ref


def _gelu_grad(form):
    def ref(attr, dy, x):
        x = _f64(x)
        if form == "TANH":
            v = 2 * np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)
            dv = 2 * np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * x * x)
            g = _sigmoid(v) * (1 + x * _sigmoid(-v) * dv)
        else:
            g = (0.5 * _erfc(-x / np.sqrt(2.0))
                 + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi))
        return dy * g
    return ref


def _pow(attr, a, b):
    with np.errstate(all="ignore"):
        return np.power(_f64(a), _f64(b))


def _signed_bases(rng, dtype):
    """Bases of either sign with integer exponents, and the special
    values of C99's pow."""
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan,
                         0.5, -2.0], np.float32)
    a = np.concatenate([R.to_f32(R.random(rng, (200,), dtype), dtype),
                        np.repeat(specials, len(specials))])
    b = np.concatenate([R.to_f32(R.random(rng, (200,), dtype,
                                          integer_valued=True), dtype),
                        np.tile(np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5,
                                          np.inf, -np.inf, np.nan],
                                         np.float32), len(specials))])
    return [R.from_f32(a, dtype), R.from_f32(b, dtype)]



def _with(*makers):
    """Inputs from several makers, each ``make(rng, dtype)`` -> one
    storage array, in order."""
    def make(rng, dtype):
        return [m(rng, dtype) for m in makers]
    return make


def _values(shape, **kw):
    return lambda rng, dtype: R.random(rng, shape, dtype, **kw)


def _indices(shape, n, dtype="int64"):
    """Indices in [0, n), duplicates included."""
    return lambda rng, _: rng.integers(0, n, shape).astype(dtype)


def _bools(shape):
    return lambda rng, _: rng.integers(0, 2, shape).astype(np.bool_)


def _zeros(shape):
    return lambda rng, dtype: np.zeros(shape, R.STORAGE[dtype])


def _index_add_ref(attr, x, src, idx, axis=0):
    r = np.array(x, copy=True)
    with np.errstate(over="ignore"):
        np.add.at(r, (slice(None),) * axis + (idx,), src)
    return r


def _cumsum_ref(attr, x):
    if x.dtype.kind in "iub":
        with np.errstate(over="ignore"):
            return np.cumsum(x, axis=-1, dtype=x.dtype)
    return np.cumsum(x.astype(np.float64), axis=-1)


def _uniform(dtype, seed, offset):
    return lambda attr, out: R.uniform(
        R.philox_words(seed, offset, out.size), dtype).reshape(out.shape)


def _normal(mean, std, seed, offset):
    return lambda attr, out: R.normal(seed, offset, out.size, mean,
                                      std).reshape(out.shape)


def _bernoulli(attr, out, seed=7, offset=3):
    u = R.uniform(R.philox_words(seed, offset, out.size), "float32")
    return (u < np.float32(attr)).astype(out.dtype).reshape(out.shape)


def _tri(fn):
    return lambda attr, x: fn(x, attr)


def _argsort_ref(k=None):
    """torch.sort(stable=True)'s indices, the first ``k`` of each row:
    equal values keep their order, -0 equals +0, a NaN is the largest."""
    def ref(attr, x):
        wide = x.astype(np.int64 if x.dtype.kind in "iub" else np.float64)
        nan = np.isnan(wide) if wide.dtype.kind == "f" else \
            np.zeros(wide.shape, bool)
        if attr == "ASCENDING":
            order = np.argsort(wide, axis=-1, kind="stable")
        else:       # NaNs first, then the values largest first
            order = np.lexsort((np.where(nan, 0, -wide), ~nan), axis=-1)
        return order[..., :k if k else x.shape[-1]]
    return ref


def _with_specials(shape):
    """Values with ties, both zeros, NaNs and infinities (floats)."""
    def make(rng, dtype):
        x = np.round(rng.uniform(-3, 3, shape)).astype(np.float32)
        if dtype == "bool":
            return [x > 0]
        if dtype == "uint8":
            return [(x + 3).astype(np.uint8)]
        if dtype in R.INTEGERS:
            return [x.astype(R.STORAGE[dtype])]
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, flat.size // 4, replace=False)] = \
            rng.choice([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf],
                       flat.size // 4)
        return [R.from_f32(x, dtype)]
    return make


def _aipp_cases():
    """AIPP's configs: an NV12 picture through the BT.601 matrix, a crop,
    padding and the samples' ImageNet normalisation; an RGB888 one with
    R and B swapped and a mean only."""
    from davinci.aipp import AippConfig
    return [
        ("nv12 csc crop pad", AippConfig(
            "YUV420SP_U8", 20, 14, csc=True,
            matrix=[256, 0, 359, 256, -88, -183, 256, 454, 0],
            input_bias=[0, 128, 128], crop=True, crop_x=2, crop_y=4,
            crop_w=15, crop_h=9, padding=True, pad_left=1, pad_right=2,
            pad_top=2, pad_bottom=1, padding_value=-0.75,
            mean=[124, 117, 104, 0], min=[0.5, 0.0, 0.25, 0.0],
            var_reci=[0.0171247538316637, 0.0175070028011204,
                      0.0174291938997821, 1.0])),
        ("rgb888 swap", AippConfig(
            "RGB888_U8", 9, 5, rbuv_swap=True, mean=[3, 100, 255, 0],
            var_reci=[0.5, -0.125, 3.0, 1.0])),
    ]


def _aipp_samples():
    from davinci.aipp import picture_bytes, reference
    out = []
    for name, cfg in _aipp_cases():
        h, w = cfg.out_size()
        size = picture_bytes(cfg.input_format, cfg.src_w, cfg.src_h)
        packed = np.frombuffer(cfg.pack(), np.uint8).copy()
        for dt in _FLOAT_NAMES:
            out.append(Sample(
                "%s %s" % (name, dt),
                lambda rng, dtype, size=size, packed=packed: [
                    rng.integers(0, 256, size, dtype=np.uint8), packed],
                lambda attr, pic, _, cfg=cfg: reference(
                    cfg, pic, "float32")[None],
                kwargs={"height": h, "width": w, "dtype": dt},
                input_dtypes=("uint8", "uint8"), only=(dt,)))
    return out


_FLOAT_NAMES = ("float32", "float16", "bfloat16")

def _adam_inputs(shape):
    """param, grad, exp_avg and exp_avg_sq (not negative)."""
    def make(rng, dtype):
        p, g, m, v = _rand(shape, shape, shape, shape)(rng, dtype)
        return [p, g, m, R.from_f32(np.abs(R.to_f32(v, dtype)), dtype)]
    return make


def _adam(kwargs):
    """ADAM's param: R.adam in float32 (bit-identical)."""
    def ref(attr, x, g, m, v):
        from davinci.optim import adam_fields
        return R.adam(x, g, m, v, adam_fields(**kwargs))[0]
    return ref


def _sgd_inputs(shape):
    return _rand(shape, shape, shape)


def _sgd(kwargs):
    """SGD_MOMENTUM's param: R.sgd_momentum in float32 (bit-identical)."""
    def ref(attr, x, g, b):
        from davinci.optim import sgd_momentum_fields
        return R.sgd_momentum(x, g, b, sgd_momentum_fields(**kwargs))[0]
    return ref


_SGD_CASES = [
    ("first step", dict(lr=0.1, momentum=0.9, first_step=True)),
    ("dampening weight decay", dict(lr=0.05, momentum=0.8, dampening=0.1,
                                    weight_decay=0.01)),
    ("nesterov maximize", dict(lr=0.01, momentum=0.9, nesterov=True,
                               maximize=True, weight_decay=0.1)),
]


_ADAM_CASES = [
    ("step 1", dict(lr=0.01, step=1, beta1=0.9, beta2=0.999, eps=1e-8)),
    ("step 7 weight decay", dict(lr=0.003, step=7, beta1=0.8, beta2=0.99,
                                 eps=1e-6, weight_decay=0.1)),
    ("AdamW maximize", dict(lr=0.01, step=3, beta1=0.9, beta2=0.999,
                            eps=1e-8, weight_decay=0.05, decoupled=True,
                            maximize=True)),
    ("beta1 0.3", dict(lr=0.1, step=2, beta1=0.3, beta2=0.5, eps=1e-3)),
]

# -- batch norm ---------------------------------------------------------------
# x [4, 3, 4] of integers: M = 16, so that the means, the gradients' sums
# and dx are exact in float32 (invstd 0.5, power-of-two divisions)
_BN_X = (4, 3, 4)


def _bn_chan(a):
    return np.moveaxis(a.astype(np.float64), 1, 0).reshape(a.shape[1], -1)


def _bn_reduce_inputs(rng, dtype):
    c = _BN_X[1]
    return [R.random(rng, _BN_X, dtype, integer_valued=True),
            rng.uniform(0.5, 2, c).astype(np.float32),
            rng.uniform(-1, 1, c).astype(np.float32)]


def _bn_reduce_ref(attr, x, w, b):
    r = _bn_chan(x)
    m = r.shape[1]
    mean = r.mean(1)
    var = ((r - mean[:, None]) ** 2).mean(1)
    inv = 1 / np.sqrt(var + np.float64(np.float32(1e-5)))
    alpha = inv * w
    return np.stack([mean, inv, alpha, b - mean * alpha,
                     np.float64(np.float32(0.1)) * mean,
                     np.float64(np.float32(0.1)) * var * m / (m - 1)])


def _bn_update_inputs(rng, dtype):
    c = _BN_X[1]
    return [R.random(rng, _BN_X, dtype, integer_valued=True),
            np.stack([np.float32([0.5, -2, 0.25])[:c],
                      np.float32([1, 0, -3])[:c]])]


def _bn_update_ref(attr, x, coeffs):
    return x.astype(np.float64) * coeffs[0][None, :, None] + \
        coeffs[1][None, :, None]


def _bn_grad_inputs(rows):
    def make(rng, dtype):
        c = _BN_X[1]
        per = [np.float32([1, -2, 0])[:c], np.full(c, 0.5, np.float32)]
        if rows == 5:       # gw, gb, mean, invstd, w
            per = [np.float32([4, -6, 2])[:c], np.float32([3, 8, -5])[:c]] + \
                per + [np.float32([2, -1, 0.5])[:c]]
        return [R.random(rng, _BN_X, dtype, integer_valued=True),
                R.random(rng, _BN_X, dtype, integer_valued=True),
                np.stack(per).astype(np.float32)]
    return make


def _bn_update_grad_ref(attr, dy, x, stats):
    d, r = _bn_chan(dy), _bn_chan(x)
    return np.stack([((r - stats[0][:, None]) * d).sum(1) * stats[1],
                     d.sum(1), stats[0], stats[1]])


def _bn_reduce_grad_ref(attr, dy, x, p):
    m = x.shape[0] * x.shape[2]
    gw, gb, mean, inv, w = (v.astype(np.float64)[None, :, None] for v in p)
    k = gw * inv / m
    return ((dy - gb / m) - (x - mean) * k) * inv * w


SAMPLES: dict[str, list[Sample]] = {
    "MAXPOOL2D": _pool_samples("max") + _pool_samples("argmax"),
    "MAXPOOL2D_BACKWARD": _pool_samples("max_dx"),
    "AVGPOOL2D": _pool_samples("avg"),
    "AVGPOOL2D_BACKWARD": _pool_samples("avg_dx"),
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
    "TANH": [Sample("4096", _rand((4096,), low=-10, high=10),
                    lambda attr, x: np.tanh(_f64(x)), ulps=2)],
    "SIGMOID": [Sample("4096", _rand((4096,), low=-30, high=30),
                       lambda attr, x: _sigmoid(x), ulps=2)],
    "ERF": [Sample("4096", _rand((4096,), low=-5, high=5),
                   lambda attr, x: _erf(_f64(x)), ulps=2)],
    "LOG": [Sample("4096", _rand((4096,), low=1e-3, high=1e3),
                   lambda attr, x: np.log(_f64(x)), ulps=1)],
    "GELU": [Sample(form.lower(), _rand((4096,), low=-12, high=12),
                    _gelu(form), attr=form, ulps=3)
             for form in ("NONE", "TANH")],
    "SILU": [Sample("4096", _rand((4096,), low=-30, high=30),
                    lambda attr, x: x * _sigmoid(x), ulps=3)],
    "RECIPROCAL": [Sample("4096", _nonzero((4096,)),
                          lambda attr, x: 1 / _f64(x))],
    "POW": [Sample("positive bases", _rand((4096,), (4096,), low=0.05,
                                           high=6), _pow, ulps=1),
            Sample("signs and special values", _signed_bases, _pow,
                   ulps=1)],
    "NEG": [Sample("3x333", _rand((3, 333)), lambda attr, x: -x)],
    # torch's formulas of y, bit for bit (1 - y^2 rounded once)
    "TANH_GRAD": [Sample("dy, y", _rand((999,), (999,), low=-1, high=1),
                         lambda attr, dy, y: dy * (1 - _f64(y) ** 2).astype(
                             np.float32))],
    "SIGMOID_GRAD": [Sample("dy, y", _rand((999,), (999,), low=0, high=1),
                            lambda attr, dy, y:
                            dy * (np.float32(1) - y) * y)],
    # near a root of the gradient only an absolute bound holds
    "GELU_GRAD": [Sample(form.lower(), _rand((999,), (999,), low=-12,
                                             high=12),
                         _gelu_grad(form), attr=form, rtol=1e-6)
                  for form in ("NONE", "TANH")],
    "SILU_GRAD": [Sample("dy, x", _rand((999,), (999,), low=-30, high=30),
                         lambda attr, dy, x: _f64(dy) * _sigmoid(x) * (
                             1 + x * _sigmoid(-x)), rtol=1e-6)],
    "CMP": [Sample(p, _rand((300,), (300,), integer_valued=True),
                   _cmp(fn), attr=p)
            for p, fn in (("EQ", np.equal), ("NE", np.not_equal),
                          ("LT", np.less), ("LE", np.less_equal),
                          ("GT", np.greater), ("GE", np.greater_equal))] + [
        Sample("LT to bool", _rand((300,), (300,), integer_valued=True),
               _cmp(np.less, np.bool_), attr="LT",
               kwargs={"dtype": "bool"})],
    "INDEX_SELECT": [
        Sample("rows", _with(_values((10, 7)), _indices((13,), 10)),
               lambda attr, x, i: np.take(x, i, axis=0),
               input_dtypes=(None, "int64")),
        Sample("int32 axis 1", _with(_values((3, 9, 4)),
                                     _indices((2, 3), 9, "int32")),
               lambda attr, x, i: np.take(x, i, axis=1),
               input_dtypes=(None, "int32"), kwargs={"axis": 1}),
    ],
    "INDEX_ADD": [
        # integers: every sum exact in every dtype
        Sample("duplicates", _with(_values((6, 5), integer_valued=True),
                                   _values((11, 5), integer_valued=True),
                                   _indices((11,), 6)),
               _index_add_ref, input_dtypes=(None, None, "int64")),
        Sample("axis 1 int32", _with(_values((2, 4, 3), integer_valued=True),
                                     _values((2, 9, 3), integer_valued=True),
                                     _indices((9,), 4, "int32")),
               lambda attr, x, s, i: _index_add_ref(attr, x, s, i, 1),
               input_dtypes=(None, None, "int32"), kwargs={"axis": 1}),
        # float32 adds rounded in index order, as np.add.at's
        Sample("float32 order", _with(_values((3, 64)), _values((40, 64)),
                                      _indices((40,), 3)),
               _index_add_ref, input_dtypes=(None, None, "int64"),
               only=("float32",)),
    ],
    "SELECT": [
        Sample("1000", _with(_bools((1000,)), _values((1000,)),
                             _values((1000,))),
               lambda attr, c, x, y: np.where(c, x, y),
               input_dtypes=("bool",)),
        Sample("broadcast", _with(_bools((4, 1)), _values((4, 5)),
                                  _values((5,))),
               lambda attr, c, x, y: np.where(c, x, y),
               input_dtypes=("bool",)),
    ],
    "MASK_SCALE": [
        Sample("scale 1/0.9", _with(_values((999,)), _bools((999,))),
               lambda attr, x, m: (x * m.astype(np.float32)) *
               np.float32(attr), attr=float(np.float32(1 / 0.9)),
               input_dtypes=(None, "bool")),
    ],
    "ARGMAX": [Sample("7x33 ties", _rand((7, 33), integer_valued=True),
                      lambda attr, x: np.argmax(x, axis=-1),
                      out_dtype="int64")],
    "ARGMIN": [Sample("7x33 ties", _rand((7, 33), integer_valued=True),
                      lambda attr, x: np.argmin(x, axis=-1),
                      out_dtype="int64")],
    "CUMSUM": [
        Sample("5x70", _rand((5, 70), integer_valued=True), _cumsum_ref),
        # float32 sums in float64, each prefix rounded once
        Sample("float32 5x300", _rand((5, 300)), _cumsum_ref,
               only=("float32",)),
    ],
    "FILL": [
        Sample("3", _with(_zeros((37,))), lambda attr, o: np.full(
            o.shape, 3).astype(o.dtype), kwargs={"value": 3}),
        Sample("-1.5", _with(_zeros((37,))), lambda attr, o: np.full(
            o.shape, -1.5, np.float32), kwargs={"value": -1.5},
               only=_FLOAT_NAMES),
    ],
    "ARANGE": [
        Sample("-7 step 3", _with(_zeros((40,))), lambda attr, o: (
            -7 + 3 * np.arange(o.size)).astype(o.dtype),
               kwargs={"start": -7, "step": 3}),
        # float32 in float64, float16 and bfloat16 in float32
        Sample("0.5 step 0.1", _with(_zeros((300,))), lambda attr, o: (
            np.float64(0.5) + np.float64(0.1) * np.arange(o.size)),
               kwargs={"start": 0.5, "step": 0.1}, only=("float32",)),
        Sample("0.5 step 0.1 in float32", _with(_zeros((300,))),
               lambda attr, o: np.float32(0.5) + np.float32(0.1) *
               np.arange(o.size, dtype=np.float32),
               kwargs={"start": 0.5, "step": 0.1},
               only=("float16", "bfloat16")),
    ],
    "RANDOM_UNIFORM": [
        Sample("seed 1234 " + dt, _with(_zeros((1001,))),
               _uniform(dt, 1234, 5), kwargs={"seed": 1234, "offset": 5},
               only=(dt,)) for dt in _FLOAT_NAMES] + [
        Sample("64-bit seed and offset", _with(_zeros((9,))), _uniform(
            "float32", 0x123456789ABCDEF, 0xFFFFFFFFFFFFFFFF),
               kwargs={"seed": 0x123456789ABCDEF,
                       "offset": 0xFFFFFFFFFFFFFFFF}, only=("float32",))],
    "RANDOM_NORMAL": [
        # one ulp: the device rounds float64 to float32 and then to the
        # dtype, and its log, sqrt and sin/cos are not numpy's (NUMERICS.md)
        Sample("mean %g std %g %s" % (m, sd, dt), _with(_zeros((1001,))),
               _normal(m, sd, 99, 6), ulps=1, only=(dt,),
               kwargs={"mean": m, "std": sd, "seed": 99, "offset": 6})
        for dt in _FLOAT_NAMES for m, sd in ((0.0, 1.0), (-3.5, 0.25))] + [
        Sample("std 0", _with(_zeros((9,))), _normal(2.0, 0.0, 1, 0),
               kwargs={"mean": 2.0, "std": 0.0, "seed": 1},
               only=("float32",))],
    "BERNOULLI": [Sample("p 0.3", _with(_zeros((1000,))), _bernoulli,
                         attr=0.3, kwargs={"seed": 7, "offset": 3})],
    "TRIL": [Sample("diagonal %d" % d, _rand((2, 5, 7)), _tri(np.tril),
                    attr=d) for d in (0, 2, -3)],
    "TRIU": [Sample("diagonal %d" % d, _rand((2, 5, 7)), _tri(np.triu),
                    attr=d) for d in (0, 1, -2)],
    "AIPP": _aipp_samples(),
    "ARGSORT": [
        Sample("%s %s" % (order.lower(), name), make, _argsort_ref(k),
               attr=order, kwargs={"k": k} if k else {}, out_dtype="int64")
        for order in ("ASCENDING", "DESCENDING")
        for name, make, k in (
            ("ties 7x33", _with_specials((7, 33)), None),
            ("top 5 of 2x3x40", _rand((2, 3, 40)), 5),
            ("ties top 9 of 4x64", _with_specials((4, 64)), 9),
            ("1x1", _rand((1, 1)), None),
            ("top 1 of 3x1000", _rand((3, 1000)), 1))],
    "ADAM": [Sample(name, _adam_inputs((3, 37)), _adam(kw), kwargs=kw)
             for name, kw in _ADAM_CASES],
    "SGD_MOMENTUM": [Sample(name, _sgd_inputs((5, 23)), _sgd(kw), kwargs=kw)
                     for name, kw in _SGD_CASES],
    "BN_TRAINING_REDUCE": [
        Sample("4x3x4", _bn_reduce_inputs, _bn_reduce_ref, rtol=1e-5,
               input_dtypes=(None, "float32", "float32"),
               out_dtype="float32")],
    "BN_TRAINING_UPDATE": [
        Sample("4x3x4", _bn_update_inputs, _bn_update_ref,
               input_dtypes=(None, "float32"))],
    "BN_TRAINING_UPDATE_GRAD": [
        Sample("4x3x4", _bn_grad_inputs(2), _bn_update_grad_ref,
               input_dtypes=(None, None, "float32"), out_dtype="float32")],
    "BN_TRAINING_REDUCE_GRAD": [
        Sample("4x3x4", _bn_grad_inputs(5), _bn_reduce_grad_ref,
               input_dtypes=(None, None, "float32"))],
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
    the storage inputs ``raws`` of ``dtype`` (or of the sample's input
    dtypes), within its tolerance."""
    values = [r if d in R.INTEGERS else R.to_f32(r, d)
              for r, d in zip(raws, sample.dtypes_of(dtype, len(raws)))]
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

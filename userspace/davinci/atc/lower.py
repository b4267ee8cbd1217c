# SPDX-License-Identifier: GPL-2.0
"""ONNX nodes -> davinci ops, one handler per ONNX op type.

Every handler gets the :class:`Lowering` (the gear being built and the
node's attributes) and the node's input values, and returns its output
values. Where ONNX asks for more than a davinci op does, handlers compose
ops, and only in ways that are exact bit for bit (inf, NaN and -0
included): a computed operand repeated along leading or trailing dimensions
is broadcast by MEMCPYs (a block copied and doubled; each element copied
and doubled along its row), Gemm's alpha and beta become AXPY (alpha * y +
(-0), beta * c + y) or are folded into constant weights, a Transpose is a
view when it moves only size-1 dimensions and otherwise, in 2-D, the
transpose flag of the MatMul or Gemm that reads it (anything else is
refused: no davinci op transposes exactly). Values known at conversion time
(initializers, Constant, Shape of a static tensor) are folded on the host.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import _uapi as U
from .builder import (DEVICE_DTYPES, ITEMSIZE, ONNX_DTYPES, ConversionError,
                      GearBuilder, Transposed, Value, host_values,
                      onnx_type_name, type_list, type_name)

__all__ = ["HANDLERS", "Lowering", "supported_ops", "check_inputs",
           "arity", "MAX_BROADCAST_OPS"]

_FLOATS = ("float32", "float16", "bfloat16")


@dataclass
class Lowering:
    """One node (an onnx NodeProto) being lowered into ``gb``, with its
    name in messages, its attributes and the model's opset."""

    gb: GearBuilder
    node: Any
    name: str
    attrs: dict
    opset: int

    @property
    def where(self) -> str:
        return "%s node %r" % (self.node.op_type, self.name)

    def fail(self, msg: str) -> None:
        raise ConversionError("%s: %s" % (self.where, msg))

    def attr(self, name: str, default=None):
        return self.attrs.get(name, default)

    def need_float(self, v: Value, what: str = "input") -> None:
        if v.dtype not in _FLOATS:
            self.fail("%s is %s; davinci runs this op on %s (add a Cast "
                      "before it)" % (what, type_name(v.dtype),
                                      type_list(_FLOATS)))

    def need_device(self, v: Value, what: str = "an input") -> None:
        if v.dtype not in ITEMSIZE:
            self.fail("%s is %s, a type the device does not run (it runs %s)"
                      % (what, type_name(v.dtype), type_list(ITEMSIZE)))

    def device(self, v: Value, what: str = "an input") -> Value:
        """``v`` as a device tensor (a constant becomes a weight)."""
        self.need_device(v, what)
        return self.gb.device(v)

    def const_of(self, v: Value | None, what: str) -> np.ndarray:
        if v is None or not v.is_const:
            self.fail("%s must be known at conversion time (an initializer "
                      "or a Constant), not computed by the graph" % what)
        return v.const

    def ints_of(self, v: Value | None, what: str) -> list[int]:
        """The integers of constant ``v`` (axes, a shape): ONNX gives them
        as INT64."""
        arr = self.const_of(v, what)
        if v.dtype not in ("int32", "int64"):
            self.fail("%s is %s; ONNX gives it as INT64" % (
                what, type_name(v.dtype)))
        return [int(a) for a in arr.reshape(-1)]


def _numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


# ---------------------------------------------------------------------------
# broadcasting: MEMCPY only, so every bit (NaN payloads, -0) comes through
# ---------------------------------------------------------------------------
#: most MEMCPY ops one broadcast of a computed tensor may take (elements
#: repeated along trailing dimensions cost one per element and doubling)
MAX_BROADCAST_OPS = 1024


def _copy(L: Lowering, dst: Value, src: Value, nbytes: int) -> None:
    L.gb.emit(U.DAVINCI_OP_MEMCPY, 0, dst, src, count=nbytes)


def _fill_by_doubling(L: Lowering, out: Value, filled: int, total: int,
                      row: int = 0) -> None:
    """Bytes ``row`` .. ``row + total`` of work tensor ``out`` repeat their
    first ``filled`` bytes: copy what is there after itself until full."""
    while filled < total:
        n = min(filled, total - filled)
        _copy(L, L.gb.slice(out, row + filled, n),
              L.gb.slice(out, row, n), n)
        filled += n


def _doublings(n: int) -> int:
    return max(0, (n - 1).bit_length())


def _repeat_block(L: Lowering, v: Value, out: Value) -> Value:
    """``out`` = ``v`` repeated as a whole: one copy, then doubling."""
    isz = ITEMSIZE[v.dtype]
    block = v.size * isz
    _copy(L, L.gb.slice(out, 0, block), v, block)
    _fill_by_doubling(L, out, block, out.size * isz)
    return out


def _repeat_elements(L: Lowering, v: Value, out: Value) -> Value:
    """``out`` = each element of ``v`` repeated ``out.size / v.size``
    times in a row."""
    isz = ITEMSIZE[v.dtype]
    cols = out.size // max(v.size, 1)
    ops = v.size * (1 + _doublings(cols)) + (0 if L.gb.is_work(v) else 1)
    if ops > MAX_BROADCAST_OPS:
        L.fail("broadcasting each of the %d elements of a computed tensor "
               "%d times takes %d copies (at most %d): davinci has no exact "
               "broadcast op; make the operand a constant or reshape the "
               "model so the operand repeats along leading dimensions"
               % (v.size, cols, ops, MAX_BROADCAST_OPS))
    if not L.gb.is_work(v):             # an input: slices need the workspace
        w = L.gb.work(v.shape, v.dtype)
        _copy(L, w, v, v.size * isz)
        v = w
    for i in range(v.size):
        row = i * cols * isz
        _copy(L, L.gb.slice(out, row, isz), L.gb.slice(v, i * isz, isz), isz)
        _fill_by_doubling(L, out, isz, cols * isz, row)
    return out


def broadcast(L: Lowering, v: Value, shape: tuple[int, ...]) -> Value:
    """``v`` repeated to ``shape`` as a device tensor, bit for bit."""
    L.need_device(v)
    try:
        fits = tuple(np.broadcast_shapes(v.shape, shape)) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        L.fail("an operand of shape %s does not broadcast to %s"
               % (list(v.shape), list(shape)))
    if v.shape == shape:
        return L.gb.device(v)
    if v.is_const:
        arr = np.broadcast_to(v.const, shape)
        return L.gb.weight(np.ascontiguousarray(arr), v.dtype)
    padded = (1,) * (len(shape) - len(v.shape)) + v.shape
    out = L.gb.work(shape, v.dtype)
    if any(padded[i:] == shape[i:] and all(d == 1 for d in padded[:i])
           for i in range(len(shape) + 1)):
        return _repeat_block(L, v, out)     # along the leading dims
    if any(padded[:i] == shape[:i] and all(d == 1 for d in padded[i:])
           for i in range(len(shape), -1, -1)):
        return _repeat_elements(L, v, out)  # along the trailing dims
    L.fail("broadcasting a computed %s tensor of shape %s to %s is not "
           "supported: only a block repeated along the leading dimensions "
           "or elements repeated along the trailing ones"
           % (type_name(v.dtype), list(v.shape), list(shape)))


def splat(L: Lowering, value: float, shape, dtype: str) -> Value:
    """A work tensor of ``shape`` filled with ``value`` on the device (from
    a one-element weight, so the model stays small)."""
    one = L.gb.weight(host_values(np.array([value], np.float32), dtype),
                      dtype)
    return _repeat_block(L, one, L.gb.work(shape, dtype))


# ---------------------------------------------------------------------------
# handlers
# ---------------------------------------------------------------------------
_BINARY = {"Add": (U.DAVINCI_OP_ADD, np.add),
           "Sub": (U.DAVINCI_OP_SUB, np.subtract),
           "Mul": (U.DAVINCI_OP_MUL, np.multiply),
           "Div": (U.DAVINCI_OP_DIV, None),
           "Max": (U.DAVINCI_OP_MAX, np.maximum),
           "Min": (U.DAVINCI_OP_MIN, np.minimum)}
#: ops of 1..N inputs (ONNX's variadic Max and Min)
_VARIADIC = ("Max", "Min")


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)
    return a / b


def binary(L: Lowering, a: Value, b: Value) -> list[Value]:
    opcode, fn = _BINARY[L.node.op_type]
    if a.dtype != b.dtype:
        L.fail("inputs are %s and %s; ONNX needs one type (add a Cast)"
               % (type_name(a.dtype), type_name(b.dtype)))
    if a.dtype == "bool":
        L.fail("inputs are BOOL; ONNX's %s takes numbers" % L.node.op_type)
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        L.fail("shapes %s and %s do not broadcast" % (list(a.shape),
                                                      list(b.shape)))
    if a.is_const and b.is_const:
        r = (fn or _div)(a.const, b.const)
        return [Value(shape, a.dtype, const=host_values(r, a.dtype))]
    L.need_device(a)
    x, y = broadcast(L, a, shape), broadcast(L, b, shape)
    out = L.gb.work(shape, a.dtype)
    return [L.gb.emit(opcode, a.dtype, out, x, y, count=_numel(shape))]


def variadic(L: Lowering, first: Value, *rest: Value) -> list[Value]:
    """Max or Min of any number of inputs: one is itself, more a chain of
    the binary op (broadcasting is associative, so each step may)."""
    out = first
    for v in rest:
        out, = binary(L, out, v)
    return [out]


def unary(L: Lowering, x: Value) -> list[Value]:
    opcode = {"Relu": U.DAVINCI_OP_RELU, "Exp": U.DAVINCI_OP_EXP}[
        L.node.op_type]
    if opcode == U.DAVINCI_OP_EXP:
        L.need_float(x)
    x = L.device(x)
    out = L.gb.work(x.shape, x.dtype)
    return [L.gb.emit(opcode, x.dtype, out, x, count=x.size)]


def _matmul(L: Lowering, a: Value, b: Value, ta: bool, tb: bool
            ) -> tuple[Value, int, int]:
    """op(a) @ op(b) for 2-D a, b: (result, m, n). A Transpose that
    produced ``a`` or ``b`` becomes the op's transpose flag."""
    a, ta = _fold(L, a, ta)
    b, tb = _fold(L, b, tb)
    L.need_float(a, "A")
    if a.dtype != b.dtype:
        L.fail("A is %s and B is %s" % (type_name(a.dtype),
                                        type_name(b.dtype)))
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        L.fail("inner dimensions differ: %d and %d" % (k, k2))
    out = L.gb.work((m, n), a.dtype)
    flags = (U.DAVINCI_TASK_F_TRANS_A if ta else 0) | \
        (U.DAVINCI_TASK_F_TRANS_B if tb else 0)
    L.gb.emit(U.DAVINCI_OP_MATMUL, a.dtype, out, L.device(a, "A"),
              L.device(b, "B"), m=m, n=n, k=k, flags=flags)
    return out, m, n


def _fold(L: Lowering, v: Value, trans: bool) -> tuple[Value, bool]:
    """(operand, transpose flag) of a MATMUL operand: a transposed value
    is its storage with the flag flipped."""
    t = v.transposed
    if t is None:
        return v, trans
    if v.shape != (t.cols, t.rows):
        L.fail(t.refusal("%s reads it as %s" % (L.where, list(v.shape))))
    return v.storage(), not trans


def _plain(L: Lowering, v: "Value | None", what: str) -> None:
    if v is not None and v.transposed is not None:
        L.fail(v.transposed.refusal("it is %s's %s, which has no "
                                    "transpose flag" % (L.where, what)))


def matmul(L: Lowering, a: Value, b: Value) -> list[Value]:
    if len(b.shape) != 2 or len(a.shape) < 1:
        L.fail("A %s @ B %s: davinci multiplies an N-D A by a 2-D B"
               % (list(a.shape), list(b.shape)))
    lead = a.shape[:-1]
    rows = a.with_shape((_numel(lead), a.shape[-1]))
    out, _, n = _matmul(L, rows, b, False, False)
    return [out.with_shape(lead + (n,))]


def gemm(L: Lowering, a: Value, b: Value, c: Value | None = None
         ) -> list[Value]:
    alpha = float(L.attr("alpha", 1.0))
    beta = float(L.attr("beta", 1.0))
    ta, tb = bool(L.attr("transA", 0)), bool(L.attr("transB", 0))
    _plain(L, c, "C")
    if len(a.shape) != 2 or len(b.shape) != 2:
        L.fail("Gemm takes 2-D A and B, not %s and %s"
               % (list(a.shape), list(b.shape)))
    if alpha != 1.0 and b.is_const:
        b = Value(b.shape, b.dtype, const=host_values(b.const * alpha,
                                                      b.dtype))
        alpha = 1.0
    y, m, n = _matmul(L, a, b, ta, tb)
    if alpha != 1.0:
        # alpha * y + (-0) is alpha * y for every y (+0 would turn a -0
        # product into +0)
        negzero = splat(L, -0.0, (m, n), y.dtype)
        scaled = L.gb.work((m, n), y.dtype)
        y = L.gb.emit(U.DAVINCI_OP_AXPY, y.dtype, scaled, y, negzero,
                      count=m * n, imm=_f32(alpha))
    if c is None or beta == 0.0:
        return [y]
    if c.dtype != y.dtype:
        L.fail("A is %s and C is %s; ONNX needs one type (add a Cast)"
               % (type_name(y.dtype), type_name(c.dtype)))
    if c.is_const and beta != 1.0:
        c = Value(c.shape, c.dtype, const=host_values(c.const * beta,
                                                      c.dtype))
        beta = 1.0
    cb = broadcast(L, c, (m, n))
    out = L.gb.work((m, n), y.dtype)
    if beta == 1.0:
        return [L.gb.emit(U.DAVINCI_OP_ADD, y.dtype, out, y, cb, count=m * n)]
    return [L.gb.emit(U.DAVINCI_OP_AXPY, y.dtype, out, cb, y, count=m * n,
                      imm=_f32(beta))]


def _f32(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _axis(L: Lowering, axis: int, nd: int) -> int:
    a = axis + nd if axis < 0 else axis
    if not 0 <= a < nd:
        L.fail("axis %d outside a %d-D input" % (axis, nd))
    return a


def softmax(L: Lowering, x: Value) -> list[Value]:
    L.need_float(x)
    nd = len(x.shape)
    axis = _axis(L, int(L.attr("axis", -1 if L.opset >= 13 else 1)), nd)
    if L.opset >= 13 and any(d != 1 for d in x.shape[axis + 1:]):
        L.fail("softmax over axis %d of shape %s: davinci's SOFTMAX runs over "
               "the last axis" % (axis, list(x.shape)))
    m, n = _numel(x.shape[:axis]), _numel(x.shape[axis:])
    x = L.device(x)
    out = L.gb.work(x.shape, x.dtype)
    return [L.gb.emit(U.DAVINCI_OP_SOFTMAX, x.dtype, out, x, m=m, n=n)]


def reduce_sum(L: Lowering, x: Value, axes: Value | None = None
               ) -> list[Value]:
    L.need_float(x)
    nd = len(x.shape)
    if axes is not None:
        ax = L.ints_of(axes, "axes")
    else:
        ax = [int(a) for a in L.attr("axes", [])]
    if not ax:
        if L.attr("noop_with_empty_axes", 0):
            return [x]
        ax = list(range(nd))
    norm = sorted({_axis(L, a, nd) for a in ax})
    if not norm:                        # a scalar: nothing to reduce
        return [x]
    r = norm[0]
    if norm != list(range(r, nd)):
        L.fail("ReduceSum over axes %s: davinci reduces trailing axes only "
               "(the last k of %d)" % (ax, nd))
    keep = bool(L.attr("keepdims", 1))
    shape = x.shape[:r] + ((1,) * (nd - r) if keep else ())
    m, n = _numel(x.shape[:r]), _numel(x.shape[r:])
    x = L.device(x)
    out = L.gb.work(shape or (1,), x.dtype)
    L.gb.emit(U.DAVINCI_OP_REDUCE_SUM, x.dtype, out, x, m=m, n=n)
    return [out.with_shape(shape)]


def cast(L: Lowering, x: Value) -> list[Value]:
    code = int(L.attr("to", 1))
    to = ONNX_DTYPES.get(code)
    if to is None:
        L.fail("cast to %s is not supported: davinci-atc casts to %s"
               % (onnx_type_name(code), type_list(ONNX_DTYPES.values())))
    if x.is_const:
        return [Value(x.shape, to, const=host_values(x.const, to))]
    if to not in ITEMSIZE:
        L.fail("cast of a computed tensor to %s: davinci tensors are %s"
               % (type_name(to), type_list(ITEMSIZE)))
    if to == x.dtype:
        return [x]
    out = L.gb.work(x.shape, to)
    return [L.gb.emit(U.DAVINCI_OP_CAST, x.dtype, out, x, count=x.size,
                      dst_dtype=DEVICE_DTYPES[to])]


def reshape(L: Lowering, x: Value, shape: Value) -> list[Value]:
    want = L.ints_of(shape, "the target shape")
    allowzero = int(L.attr("allowzero", 0))
    dims = [x.shape[i] if d == 0 and not allowzero and i < len(x.shape)
            else d for i, d in enumerate(want)]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        L.fail("shape %s: one -1 at most, and no other negative dimension"
               % want)
    if -1 in dims:
        known = _numel([d for d in dims if d != -1])
        dims[dims.index(-1)] = x.size // known if known else 0
    if _numel(dims) != x.size:
        L.fail("cannot reshape %s to %s" % (list(x.shape), want))
    return [x.with_shape(dims)]


def flatten(L: Lowering, x: Value) -> list[Value]:
    nd = len(x.shape)
    axis = int(L.attr("axis", 1))
    if not -nd <= axis <= nd:
        L.fail("axis %d outside -%d..%d (the input is %d-D)"
               % (axis, nd, nd, nd))
    axis = axis + nd if axis < 0 else axis
    return [x.with_shape((_numel(x.shape[:axis]), _numel(x.shape[axis:])))]


def _axes_arg(L: Lowering, axes: Value | None) -> list[int] | None:
    if axes is not None:
        return L.ints_of(axes, "axes")
    a = L.attr("axes")
    return None if a is None else [int(v) for v in a]


def squeeze(L: Lowering, x: Value, axes: Value | None = None) -> list[Value]:
    ax = _axes_arg(L, axes)
    nd = len(x.shape)
    drop = {i for i, d in enumerate(x.shape) if d == 1} if ax is None \
        else {_axis(L, a, nd) for a in ax}
    wide = sorted(i for i in drop if x.shape[i] != 1)
    if wide:
        L.fail("axes %s of shape %s are not of size 1" % (wide,
                                                          list(x.shape)))
    return [x.with_shape([d for i, d in enumerate(x.shape) if i not in drop])]


def unsqueeze(L: Lowering, x: Value, axes: Value | None = None
              ) -> list[Value]:
    ax = _axes_arg(L, axes) or []
    nd = len(x.shape) + len(ax)
    norm = sorted(_axis(L, a, nd) for a in ax)
    if len(set(norm)) != len(norm):
        L.fail("axes %s name one output axis twice" % ax)
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return [x.with_shape(shape)]


def transpose(L: Lowering, x: Value) -> list[Value]:
    """A layout no-op (the permutation moves only size-1 dimensions) is a
    view; a 2-D transpose is left to the MatMul or Gemm that reads it (its
    transpose flag, see :class:`Transposed`); anything else is refused:
    davinci has no exact transposed copy."""
    nd = len(x.shape)
    perm = [int(p) for p in L.attr("perm", list(range(nd))[::-1])]
    if sorted(perm) != list(range(nd)):
        L.fail("perm %s is not a permutation of the %d dimensions"
               % (perm, nd))
    shape = tuple(x.shape[p] for p in perm)
    if x.is_const:
        # copy(), not ascontiguousarray(), which makes a scalar 1-D
        return [Value(shape, x.dtype, const=x.const.transpose(perm).copy())]
    moved = [p for p in perm if x.shape[p] != 1]
    if moved == sorted(moved):
        return [x.with_shape(shape)]        # only size-1 dims move
    big = [i for i, d in enumerate(x.shape) if d != 1]
    if len(big) != 2:
        L.fail("transpose %s of shape %s moves data in more than two "
               "dimensions: davinci has no exact transposed copy, and "
               "davinci-atc folds only 2-D transposes into a MatMul or Gemm"
               % (perm, list(x.shape)))
    r, c = x.shape[big[0]], x.shape[big[1]]
    return [Value(shape, x.dtype, x.tid,
                  transposed=Transposed(r, c, L.where))]


def identity(L: Lowering, x: Value) -> list[Value]:
    return [x]


def dropout(L: Lowering, x: Value, ratio: Value | None = None,
            training_mode: Value | None = None) -> list[Value]:
    """Inference: the output is the input and the mask, when the node has
    one, all true (a constant). Training mode drops at random: refused."""
    if training_mode is not None and \
            np.any(L.const_of(training_mode, "training_mode")):
        r = 0.5 if ratio is None else L.const_of(ratio, "ratio")
        if np.any(r != 0):
            L.fail("training_mode is true, so it drops elements at random: "
                   "davinci-atc converts inference models (export the "
                   "model after model.eval())")
    if len(L.node.output) < 2 or not L.node.output[1]:
        return [x]
    return [x, Value(x.shape, "bool", const=np.ones(x.shape, np.bool_))]


def shape_of(L: Lowering, x: Value) -> list[Value]:
    s = np.array(x.shape, np.int64)
    start, end = L.attr("start", 0), L.attr("end", None)
    s = s[start:end]
    return [Value(s.shape, "int64", const=s)]


def gather(L: Lowering, data: Value, idx: Value) -> list[Value]:
    d = L.const_of(data, "Gather's data")
    i = L.const_of(idx, "Gather's indices")
    if idx.dtype not in ("int32", "int64"):
        L.fail("indices are %s; ONNX's Gather takes INT32 or INT64 indices"
               % type_name(idx.dtype))
    axis = _axis(L, int(L.attr("axis", 0)), d.ndim)
    n = d.shape[axis]
    if np.any((i < -n) | (i >= n)):
        L.fail("indices %s outside the %d elements of axis %d of the data "
               "(shape %s)" % (i.tolist(), n, axis, list(d.shape)))
    r = np.take(d, i, axis=axis)
    return [Value(r.shape, data.dtype, const=r)]


def concat(L: Lowering, first: Value, *rest: Value) -> list[Value]:
    vals = (first,) + rest
    arrs = [L.const_of(v, "each Concat input") for v in vals]
    if len({v.dtype for v in vals}) > 1:
        L.fail("inputs are %s; ONNX needs one type (add a Cast)"
               % type_list(sorted({v.dtype for v in vals}), "and"))
    if first.const.ndim == 0:
        L.fail("its inputs are scalars: Concat joins tensors of rank 1 or "
               "more")
    axis = _axis(L, int(L.attr("axis", 0)), first.const.ndim)
    if any(a.ndim != first.const.ndim or
           a.shape[:axis] + a.shape[axis + 1:] !=
           first.const.shape[:axis] + first.const.shape[axis + 1:]
           for a in arrs):
        L.fail("input shapes %s differ beyond axis %d"
               % ([list(a.shape) for a in arrs], axis))
    r = np.concatenate(arrs, axis=axis)
    return [Value(r.shape, vals[0].dtype, const=r)]


HANDLERS: dict[str, Callable[..., list[Value]]] = {
    **{op: variadic if op in _VARIADIC else binary for op in _BINARY},
    "Relu": unary, "Exp": unary, "MatMul": matmul, "Gemm": gemm,
    "Softmax": softmax, "ReduceSum": reduce_sum, "Cast": cast,
    "Reshape": reshape, "Flatten": flatten, "Squeeze": squeeze,
    "Unsqueeze": unsqueeze, "Transpose": transpose, "Identity": identity,
    "Dropout": dropout, "Shape": shape_of, "Gather": gather,
    "Concat": concat,
}


#: ops that take a Transpose's result not yet done: MatMul and Gemm fold
#: it into their transpose flag, the others only look at it in another
#: shape (Value.with_shape refuses a shape that would move data)
TAKE_TRANSPOSED = frozenset(("MatMul", "Gemm", "Reshape", "Flatten",
                             "Squeeze", "Unsqueeze", "Identity", "Dropout"))


def check_inputs(L: Lowering, args) -> None:
    """Refuse a Transpose's result as an input of an op that cannot take
    it (see TAKE_TRANSPOSED)."""
    if L.node.op_type in TAKE_TRANSPOSED:
        return
    for v in args:
        if v is not None and v.transposed is not None:
            raise ConversionError(v.transposed.refusal(
                "%s reads it" % L.where))


def arity(fn: Callable[..., list[Value]]) -> tuple[int, "int | None"]:
    """(inputs required, most inputs; None: any number) of handler ``fn``,
    read from its signature: parameters after the Lowering without a
    default are required, those with one optional, ``*rest`` any number."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    required = sum(1 for p in params if p.kind is p.POSITIONAL_OR_KEYWORD
                   and p.default is p.empty)
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return required, None
    return required, len(params)


def supported_ops() -> list[str]:
    return sorted(HANDLERS) + ["Constant"]

# SPDX-License-Identifier: GPL-2.0
"""ONNX nodes -> davinci ops: :data:`RULES`, one registration per ONNX op
(domain, op type and opset range, as onnxruntime registers its kernels),
each naming its handler and the device ops of the schema
(:mod:`davinci.schema`) it emits.

Every handler gets the :class:`Lowering` (the gear being built, the node's
attributes and its registration) and the node's input values, and returns
its output values. Where ONNX asks for more than a davinci op does,
handlers compose ops, and only in ways that are exact bit for bit (inf,
NaN and -0 included): a computed operand repeated along leading or trailing
dimensions is broadcast by MEMCPYs (a block copied and doubled; each
element copied and doubled along its row), Gemm's alpha and beta become
AXPY (alpha * y + (-0), beta * c + y) or are folded into constant weights,
a Transpose is a view when it moves only size-1 dimensions, in 2-D the
transpose flag of the MatMul or Gemm that reads it, and otherwise a strided
IDENTITY (bytes moved, not values computed), as are Expand, Slice and
Split; an operand MEMCPYs cannot repeat is read at a stride of 0 by the
one task; the logical ops are Where's SELECT. Values known at conversion
time (initializers, Constant, ConstantOfShape, Shape of a static tensor,
and most ops of only these: an attention mask's arithmetic) are folded on
the host. The CNN ops (Conv, the poolings) take their
geometry in a parameter block (the model's PARAMS section); a Conv's
bias is its CONV2D's third operand and a Relu that alone reads it that
task's epilogue (fuse.py); a BatchNormalization's scale and shift and a
Concat's pieces are strided tasks reading or writing views.
"""

from __future__ import annotations

import inspect
import itertools
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import opdesc, ops, schema, views
from ..errors import DavinciError
from .fuse import FUSED_RELU
from .builder import (ITEMSIZE, ONNX_DTYPES, ConversionError, GearBuilder,
                      Transposed, Value, host_values, onnx_type_name,
                      type_list, type_name)

__all__ = ["Rule", "RULES", "Lowering", "find_rule", "uint64_div_mod",
           "cast_carried_double",
           "supported_ops", "check_inputs", "constant_value", "dense",
           "MAX_BROADCAST_OPS", "MS_DOMAIN"]

#: onnxruntime's contrib domain (its training ops among them)
MS_DOMAIN = "com.microsoft"
#: the types ONNX's float-only ops take that davinci has
_FLOATS = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Rule:
    """One registration: ONNX op ``op_type`` of ``domain`` ("" is ONNX's
    own) at opsets ``since`` .. ``until`` (None: every later one), lowered
    by ``lower`` into device op ``op`` (a schema name; None for a view or a
    value folded on the host) and the ``also`` ops its composition may add
    (MEMCPY: a broadcast operand). ``takes_transposed``: it reads a
    Transpose's result not yet done (see :func:`check_inputs`)."""
    op_type: str
    lower: Callable[..., list[Value]]
    op: "str | None" = None
    also: tuple[str, ...] = ()
    domain: str = ""
    since: int = 1
    until: "int | None" = None
    takes_transposed: bool = False

    @property
    def emits(self) -> tuple[str, ...]:
        """The schema ops a node of this registration may write."""
        return ((self.op,) if self.op else ()) + self.also

    @property
    def name(self) -> str:
        """``Relu``; ``com.microsoft:ReluGrad`` outside ONNX's domain."""
        return "%s:%s" % (self.domain, self.op_type) if self.domain \
            else self.op_type

    @property
    def opsets(self) -> str:
        """"13+", "1-12"."""
        return "%d+" % self.since if self.until is None \
            else "%d-%d" % (self.since, self.until)

    def covers(self, opset: int) -> bool:
        return self.since <= opset and (self.until is None or
                                        opset <= self.until)

    @property
    def arity(self) -> tuple[int, "int | None"]:
        """(inputs required, most inputs; None: any number), read from the
        handler's signature: parameters after the Lowering without a
        default are required, those with one optional, ``*rest`` any
        number."""
        params = list(inspect.signature(self.lower).parameters.values())[1:]
        required = sum(1 for p in params if p.kind is p.POSITIONAL_OR_KEYWORD
                       and p.default is p.empty)
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            return required, None
        return required, len(params)


@dataclass
class Lowering:
    """One node (an onnx NodeProto) being lowered into ``gb``, with its
    name in messages, its attributes and the registration lowering it;
    ``shapes``: the static shapes the model declares for its values (its
    outputs and value_info, and what ONNX's shape inference adds), which a
    handler reads where an input it needs as a constant is computed (see
    :func:`pinned`)."""

    gb: GearBuilder
    node: Any
    name: str
    attrs: dict
    rule: Rule
    #: name -> declared shape (a dict, or convert's lazy _DeclaredShapes)
    shapes: Any = field(default_factory=dict)

    def declared(self, j: int = 0) -> "tuple[int, ...] | None":
        """The shape the model declares for output ``j``, or None."""
        outs = self.node.output
        return self.shapes.get(outs[j]) if j < len(outs) else None

    @property
    def where(self) -> str:
        return "%s node %r" % (self.node.op_type, self.name)

    def fail(self, msg: str) -> None:
        raise ConversionError("%s: %s" % (self.where, msg))

    def attr(self, name: str, default=None):
        return self.attrs.get(name, default)

    def need_types(self, v: Value, op: str, what: str = "input") -> None:
        """Refuse ``v`` unless device op ``op`` takes its dtype."""
        dtypes = [d for d in schema.by_name(op).dtypes if d in ITEMSIZE]
        if v.dtype not in dtypes:
            self.fail("%s is %s; davinci's %s runs on %s (add a Cast before "
                      "it)" % (what, type_name(v.dtype), op,
                               type_list(dtypes)))

    def emit(self, op: str, dst: Value, *srcs: Value, **extents) -> Value:
        """Device op ``op`` of the schema (see GearBuilder.emit)."""
        return self.gb.emit(op, dst, *srcs, where=self.where, **extents)

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
    L.emit("MEMCPY", dst, src, count=nbytes)


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
# computed inputs where a handler needs a constant: pinned at conversion
# time to the value the model's declared shapes imply, checked at run time
# ---------------------------------------------------------------------------
def _cmp(L: Lowering, a: Value, b: Value, predicate: str) -> Value:
    """CMP of device tensors ``a`` and ``b`` broadcast by numpy's rules
    (stride-0 walks), a BOOL tensor."""
    shape = tuple(np.broadcast_shapes(a.shape, b.shape)) or (1,)
    a, b = (v.with_shape(v.shape or (1,)) for v in (a, b))
    walk = opdesc.Strided(shape, _contiguous(shape),
                          _broadcast_strides(a.shape, shape),
                          _broadcast_strides(b.shape, shape))
    return L.emit("CMP", L.gb.work(shape, "bool"), a, b, strided=walk,
                  attr=predicate)


def _count_true(L: Lowering, b: Value, rows: int, cols: int) -> Value:
    """The number of true elements in each of ``rows`` rows of ``cols`` of
    BOOL tensor ``b``: a CAST to FLOAT and a REDUCE_SUM (exact: counts of
    far less than 2 ** 24)."""
    f = L.emit("CAST", L.gb.work((rows, cols), "float32"),
               b.with_shape((rows, cols)), count=rows * cols)
    return L.emit("REDUCE_SUM", L.gb.work((rows,), "float32"), f,
                  rows=(rows, cols))


def _fail_run_over(L: Lowering, count: Value, limit: int) -> None:
    """The run fails unless one-element FLOAT ``count`` is at most
    ``limit``: it indexes an INDEX_SELECT over ``limit + 1`` rows, and an
    index outside them fails the task before it writes anything."""
    idx = L.emit("CAST", L.gb.work((1, 1), "int32"), count.with_shape((1,)),
                 count=1)
    table = L.gb.weight(np.zeros((limit + 1, 1), np.int32), "int32")
    L.emit("INDEX_SELECT", L.gb.work((1, 1), "int32"), table, idx,
           mnk=(1, limit + 1, 1), count=1, attr="INT32")


def _missed_rows(L: Lowering, hits: Value, rows: int, cols: int) -> Value:
    """How many of the ``rows`` rows of BOOL ``hits`` hold no true
    element (one FLOAT)."""
    per_row = _count_true(L, hits, rows, cols)
    zero = L.gb.weight(np.zeros(1, np.float32), "float32")
    missed = _cmp(L, per_row, zero, "EQ")
    return _count_true(L, missed, 1, rows)


def _mismatches(L: Lowering, v: Value, rows, as_set: bool) -> Value:
    """One FLOAT, 0 when computed integer tensor ``v`` holds element by
    element one of each row of ``rows`` (``as_set``: each row's values
    somewhere, as pinned's)."""
    width = max(len(r) for r in rows)
    table = np.array([list(r) + [r[0]] * (width - len(r)) for r in rows],
                     v.dtype)
    m = v.size
    vd = L.device(v)
    if as_set:      # each row of the table is a value some element holds
        hits = _cmp(L, vd.with_shape((1, 1, m)), L.gb.weight(
            table.reshape(len(rows), width, 1), v.dtype), "EQ")
        return _missed_rows(L, hits, len(rows), width * m)
    hits = _cmp(L, vd.with_shape((m, 1)), L.gb.weight(table, v.dtype), "EQ")
    return _missed_rows(L, hits, m, width)


def pinned(L: Lowering, v: Value, value, what: str,
           allowed: "list[list[int]] | None" = None,
           as_set: bool = False) -> Value:
    """Computed integer tensor ``v`` (axes, a shape, sizes) as the constant
    ``value`` that the shapes the model declares imply, with device ops
    that fail the run unless ``v`` holds it when the model runs: element by
    element one of ``allowed[i]`` (by default ``value[i]``), or with
    ``as_set`` the values of ``value`` in any order, each once (an axis
    given as ``allowed[i]``'s forms, a and a - rank). So a model whose
    computed input is not what its declared shapes say fails, never
    returns another result."""
    value = np.asarray(value, np.int64).reshape(-1)
    if v.dtype not in ("int32", "int64"):
        L.fail("%s is %s; ONNX gives it as INT64" % (what,
                                                    type_name(v.dtype)))
    if v.size != value.size:
        L.fail("%s is computed, and its %d values cannot be the %s the "
               "model's declared shapes imply" % (what, v.size,
                                                  value.tolist()))
    const = Value(v.shape, v.dtype, const=value.astype(v.dtype).reshape(
        v.shape))
    if v.is_const or v.size == 0:
        return const
    rows = allowed if allowed is not None else [[a] for a in value]
    _fail_run_over(L, _mismatches(L, v, rows, as_set), 0)
    return const


def _computed(L: Lowering, v: "Value | None", what: str) -> bool:
    """``v`` is a computed tensor a handler needs as a constant: true when
    the model declares the node's result shape (so :func:`pinned` can pin
    it), else the conversion fails as it did."""
    if v is None or v.is_const:
        return False
    if L.declared(0) is None:
        L.fail("%s must be known at conversion time (an initializer or a "
               "Constant), not computed by the graph, or the model must "
               "declare the shape of the node's result (value_info)" % what)
    return True


def _removals(big, small) -> list[list[int]]:
    """Every set of axes of shape ``big`` whose removal leaves ``small``."""
    big, small = tuple(big), tuple(small)
    k = len(big) - len(small)
    if k < 0:
        return []
    return [list(drop) for drop in itertools.combinations(range(len(big)), k)
            if tuple(d for i, d in enumerate(big) if i not in drop) == small]


def _removed_axes(L: Lowering, big, small, what: str) -> list[int]:
    """The axes of shape ``big`` whose removal leaves ``small``: the only
    such set, else the conversion fails."""
    found = _removals(big, small)
    if len(found) != 1:
        L.fail("%s is computed, and the declared shapes %s and %s %s" % (
            what, list(big), list(small),
            "do not fit" if not found else "leave it ambiguous (%s)"
            % " or ".join(str(f) for f in found[:4])))
    return found[0]


def _axis_forms(axes, nd: int) -> list[list[int]]:
    return [[a, a - nd] for a in axes]


# ---------------------------------------------------------------------------
# handlers
# ---------------------------------------------------------------------------
def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)
    return a / b


#: how each binary device op is folded when both operands are constants
_FOLD = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": _div,
         "MAX": np.maximum, "MIN": np.minimum, "POW": np.power}


def binary(L: Lowering, a: Value, b: Value) -> list[Value]:
    op = L.rule.op
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
        r = _FOLD[op](a.const, b.const)
        return [Value(shape, a.dtype, const=host_values(r, a.dtype))]
    L.need_device(a)
    if not (_copies_broadcast(L, a, shape) and
            _copies_broadcast(L, b, shape)):
        # one task reading the operands by stride-0 walks: exact as well
        return [_broadcast_op(L, op, L.device(a), L.device(b))]
    x, y = broadcast(L, a, shape), broadcast(L, b, shape)
    out = L.gb.work(shape, a.dtype)
    return [L.emit(op, out, x, y, count=_numel(shape))]


def _copies_broadcast(L: Lowering, v: Value, shape) -> bool:
    """:func:`broadcast` repeats ``v`` to ``shape`` by MEMCPYs: it is
    that shape or a constant already, or repeats as a block along the
    leading dims, or element by element along the trailing ones in at most
    MAX_BROADCAST_OPS copies."""
    shape = tuple(shape)
    if v.shape == shape or v.is_const:
        return True
    padded = (1,) * (len(shape) - len(v.shape)) + v.shape
    if any(padded[i:] == shape[i:] and all(d == 1 for d in padded[:i])
           for i in range(len(shape) + 1)):
        return True
    if not any(padded[:i] == shape[:i] and all(d == 1 for d in padded[i:])
               for i in range(len(shape), -1, -1)):
        return False
    cols = _numel(shape) // max(v.size, 1)
    ops = v.size * (1 + _doublings(cols)) + (0 if L.gb.is_work(v) else 1)
    return ops <= MAX_BROADCAST_OPS


def _broadcast_strides(shape, out_shape) -> tuple[int, ...]:
    """A dense tensor of ``shape`` read at each index of ``out_shape`` by
    numpy's rules: its strides, 0 along the dims it repeats."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    return tuple(0 if n == 1 and m != 1 else st for n, m, st in
                 zip(padded, out_shape, _contiguous(padded)))


def _broadcast_shape(L: Lowering, *vs: Value) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(v.shape for v in vs)))
    except ValueError:
        L.fail("shapes %s do not broadcast"
               % " and ".join(str(list(v.shape)) for v in vs))


#: ONNX's comparisons: CMP's predicate and numpy's function when folded
_COMPARISONS = {"Equal": ("EQ", np.equal), "Less": ("LT", np.less),
                "LessOrEqual": ("LE", np.less_equal),
                "Greater": ("GT", np.greater),
                "GreaterOrEqual": ("GE", np.greater_equal)}


def compare(L: Lowering, a: Value, b: Value) -> list[Value]:
    """A BOOL tensor: one CMP, the operands broadcast by stride-0 walks."""
    predicate, fold = _COMPARISONS[L.node.op_type]
    if a.dtype != b.dtype:
        L.fail("inputs are %s and %s; ONNX needs one type (add a Cast)"
               % (type_name(a.dtype), type_name(b.dtype)))
    shape = _broadcast_shape(L, a, b)
    if a.is_const and b.is_const:
        return [Value(shape, "bool", const=fold(a.const, b.const))]
    x, y = L.device(a, "A"), L.device(b, "B")
    L.need_types(x, "CMP", "A")
    walk = opdesc.Strided(shape, _contiguous(shape),
                          _broadcast_strides(a.shape, shape),
                          _broadcast_strides(b.shape, shape))
    return [L.emit("CMP", L.gb.work(shape, "bool"), x, y, strided=walk,
                   attr=predicate)]


def where(L: Lowering, cond: Value, x: Value, y: Value) -> list[Value]:
    """Y broadcast into the output by a strided IDENTITY, then X over it
    where cond holds (SELECT reads its else-branch from its dst)."""
    if cond.dtype != "bool":
        L.fail("condition is %s; Where takes BOOL" % type_name(cond.dtype))
    if x.dtype != y.dtype:
        L.fail("X is %s and Y %s; Where takes one type (add a Cast)"
               % (type_name(x.dtype), type_name(y.dtype)))
    shape = _broadcast_shape(L, cond, x, y)
    if cond.is_const and x.is_const and y.is_const:
        return [Value(shape, x.dtype, const=np.where(cond.const, x.const,
                                                     y.const))]
    yd = L.device(y, "Y")
    L.need_types(yd, "SELECT", "Y")
    out = strided_copy(L, yd, shape, _broadcast_strides(y.shape, shape),
                       L.gb.work(shape, y.dtype))
    walk = opdesc.Strided(shape, _contiguous(shape),
                          _broadcast_strides(x.shape, shape),
                          _broadcast_strides(cond.shape, shape))
    return [L.emit("SELECT", out, L.device(x, "X"),
                   L.device(cond, "condition"), strided=walk)]


def variadic(L: Lowering, first: Value, *rest: Value) -> list[Value]:
    """Max or Min of any number of inputs: one is itself, more a chain of
    the binary op (broadcasting is associative, so each step may)."""
    out = first
    for v in rest:
        out, = binary(L, out, v)
    return [out]


def unary(L: Lowering, x: Value) -> list[Value]:
    x = L.device(x)
    L.need_types(x, L.rule.op)
    out = L.gb.work(x.shape, x.dtype)
    return [L.emit(L.rule.op, out, x, count=x.size)]


def _int_power(L: Lowering, x: Value, y: Value) -> list[Value]:
    """An INT32 or INT64 X to an integer Y, as onnxruntime's (the double
    power, exact where it is an integer below 2^53 the type holds): by
    squaring, Y's six low bits each a SELECT of the product so far times
    X ** 2^b; the run fails for a negative Y, one of 64 or more, or a
    result whose magnitude (a FLOAT POW of |X| and Y, within 1e-5) passes
    2^30 (INT32) or 2^52 (INT64), where the two could differ."""
    shape = _broadcast_shape(L, x, y)
    if x.is_const and y.is_const:
        L.fail("an integer Pow of constants is not folded")
    n = _numel(shape) or 1
    flat = (n,)

    def full(v: Value, what: str) -> Value:
        v = L.device(v, what).with_shape(v.shape or (1,))
        st = _broadcast_strides(v.shape, shape or (1,))
        return _view_copy(L, v, 0, shape or (1,), st).with_shape(flat)
    xb, yb = full(x, "X"), full(y, "Y")
    for bound, pred in ((0, "LT"), (64, "GE")):
        bad = _cmp(L, yb, L.gb.weight(np.array([bound], y.dtype), y.dtype),
                   pred)
        _fail_run_over(L, _count_true(L, bad, 1, n), 0)
    mag = L.emit("POW", L.gb.work(flat, "float32"), L.emit(
        "ABS", L.gb.work(flat, "float32"), _to_float32(L, xb, "X"),
        count=n), _to_float32(L, yb, "Y"), count=n)
    lim = float(1 << (30 if x.dtype == "int32" else 52))
    over = _cmp(L, mag, L.gb.weight(np.array([lim], np.float32), "float32"),
                "GT")
    _fail_run_over(L, _count_true(L, over, 1, n), 0)
    acc = L.gb.weight(np.ones(n, x.dtype), x.dtype)
    base, q = xb, yb
    two = L.gb.weight(np.array([2], y.dtype), y.dtype)
    one = L.gb.weight(np.array([1], y.dtype), y.dtype)
    for b in range(6):
        half = _broadcast_op(L, "DIV", q, two)
        bit = _broadcast_op(L, "SUB", q, _broadcast_op(L, "MUL", half, two))
        acc, = where(L, _cmp(L, bit, one, "EQ"),
                     L.emit("MUL", L.gb.work(flat, x.dtype), acc, base,
                            count=n), acc)
        if b < 5:
            base = L.emit("MUL", L.gb.work(flat, x.dtype), base, base,
                          count=n)
        q = half
    return [acc.with_shape(shape)]


def power(L: Lowering, x: Value, y: Value) -> list[Value]:
    """X ** Y, broadcast, in X's float type. A Y of another type (opset 12
    lets it differ) is taken when it is a constant whose values X's type
    holds exactly (converted on the host); a computed INT32 or INT64 one
    is CAST to X's type, and the run fails unless each is within the
    integers it holds exactly (2^24 for FLOAT: beyond, an odd exponent
    could turn even)."""
    if x.dtype in ("int32", "int64") and y.dtype in ("int32", "int64"):
        return _int_power(L, x, y)
    if x.dtype in ("int32", "int64") and y.dtype in _FLOATS:
        # onnxruntime truncates the double power: exact here for a whole
        # exponent, which the run checks (an INT32 of it CAST back equal)
        yd = L.device(y, "Y").with_shape((y.size,))
        yi = L.emit("CAST", L.gb.work((y.size,), "int32"), yd,
                    count=y.size)
        back = L.emit("CAST", L.gb.work((y.size,), y.dtype), yi,
                      count=y.size)
        _fail_run_over(L, _count_true(L, _cmp(L, back, yd, "NE"), 1,
                                      y.size), 0)
        return _int_power(L, x, yi.with_shape(y.shape))
    if x.dtype not in _FLOATS:
        L.fail("X is %s; davinci's POW runs on %s (an integer power is "
               "not converted)" % (type_name(x.dtype), type_list(_FLOATS)))
    if y.dtype in ("int32", "int64") and not y.is_const:
        lim = {"float32": 1 << 24, "float16": 1 << 11,
               "bfloat16": 1 << 8}[x.dtype]
        flat = L.device(y, "Y").with_shape((y.size,))
        for bound, pred in ((lim, "GT"), (-lim, "LT")):
            out = _cmp(L, flat, L.gb.weight(np.array([bound], y.dtype),
                                            y.dtype), pred)
            _fail_run_over(L, _count_true(L, out, 1, y.size), 0)
        y = L.emit("CAST", L.gb.work(y.shape, x.dtype), flat,
                   count=y.size).with_shape(y.shape)
    if y.dtype != x.dtype:
        exact = y.is_const and y.dtype != "bool" and np.array_equal(
            host_values(y.const, x.dtype).astype(np.float64),
            y.const.astype(np.float64))
        if not exact:
            L.fail("X is %s and Y %s; davinci takes an exponent of another "
                   "type only as a constant %s holds exactly (add a Cast)"
                   % (type_name(x.dtype), type_name(y.dtype),
                      type_name(x.dtype)))
        y = Value(y.shape, x.dtype, const=host_values(y.const, x.dtype))
    return binary(L, x, y)


def gelu(L: Lowering, x: Value) -> list[Value]:
    """x Phi(x), or its tanh form (approximate "tanh")."""
    form = L.attr("approximate", "none")
    if form not in ("none", "tanh"):
        L.fail("approximate is %r; Gelu takes \"none\" or \"tanh\"" % form)
    x = L.device(x)
    L.need_types(x, L.rule.op)
    out = L.gb.work(x.shape, x.dtype)
    return [L.emit(L.rule.op, out, x, count=x.size, attr=form)]


def leaky_relu(L: Lowering, x: Value) -> list[Value]:
    """y = x where x >= 0, else alpha * x (alpha: 0.01 by default)."""
    x = L.device(x)
    L.need_types(x, L.rule.op)
    out = L.gb.work(x.shape, x.dtype)
    return [L.emit(L.rule.op, out, x, count=x.size,
                   attr=float(L.attr("alpha", 0.01)))]


def relu_grad(L: Lowering, dy: Value, x: Value) -> list[Value]:
    """onnxruntime's ReluGrad: dX = dY where X > 0, else 0. RELU_GRAD lets
    dY through where X is NaN (as PyTorch's threshold_backward does);
    onnxruntime gives 0 there, so a CMP of X with itself (0 where X is
    NaN) zeroes those with a second RELU_GRAD."""
    if dy.dtype != x.dtype:
        L.fail("dY is %s and X is %s; ReluGrad takes one type"
               % (type_name(dy.dtype), type_name(x.dtype)))
    if dy.dtype not in _FLOATS:
        L.fail("dY is %s; ReluGrad takes %s" % (type_name(dy.dtype),
                                                type_list(_FLOATS)))
    if dy.shape != x.shape:
        L.fail("dY %s and X %s: ReluGrad takes tensors of one shape"
               % (list(dy.shape), list(x.shape)))
    dy, x = L.device(dy, "dY"), L.device(x, "X")
    n = x.size
    passed = L.emit("RELU_GRAD", L.gb.work(x.shape, x.dtype), dy, x,
                    count=n)
    number = L.emit("CMP", L.gb.work(x.shape, x.dtype), x, x, count=n,
                    attr="EQ")
    return [L.emit("RELU_GRAD", L.gb.work(x.shape, x.dtype), passed, number,
                   count=n)]


def _matmul(L: Lowering, a: Value, b: Value, ta: bool, tb: bool,
            out: "Value | None" = None) -> tuple[Value, int, int]:
    """op(a) @ op(b) for 2-D a, b: (result, m, n). A Transpose that
    produced ``a`` or ``b`` becomes the op's transpose flag."""
    a, ta = _fold(L, a, ta)
    b, tb = _fold(L, b, tb)
    L.need_types(a, "MATMUL", "A")
    if a.dtype != b.dtype:
        L.fail("A is %s and B is %s" % (type_name(a.dtype),
                                        type_name(b.dtype)))
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        L.fail("inner dimensions differ: %d and %d" % (k, k2))
    out = (out or L.gb.work((m, n), a.dtype)).with_shape((m, n))
    L.emit("MATMUL", out, L.device(a, "A"), L.device(b, "B"), mnk=(m, n, k),
           transpose=(ta, tb))
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


#: the most MATMULs one batched MatMul node is lowered to
MAX_BATCHED_MATMULS = 4096


def matmul(L: Lowering, a: Value, b: Value) -> list[Value]:
    """numpy's matmul: a 1-D operand a row (A) or a column (B) dropped
    from the result; a 2-D B one MATMUL of A's rows; an N-D B one MATMUL
    per matrix of the broadcast batch."""
    if not a.shape or not b.shape:
        L.fail("A %s @ B %s: MatMul takes no scalars"
               % (list(a.shape), list(b.shape)))
    drop = ()
    if len(a.shape) == 1:
        a, drop = a.with_shape((1,) + a.shape), (-2,)
    if len(b.shape) == 1:
        b, drop = b.with_shape(b.shape + (1,)), drop + (-1,)
    if len(b.shape) == 2:
        lead = a.shape[:-1]
        rows = a.with_shape((_numel(lead), a.shape[-1]))
        out, _, n = _matmul(L, rows, b, False, False)
        shape = lead + (n,)
    else:
        out, shape = _batched_matmul(L, a, b)
    keep = [d for i, d in enumerate(shape) if i - len(shape) not in drop]
    return [out.with_shape(tuple(keep))]


def _matrices(L: Lowering, v: Value, what: str):
    """The i-th matrix of ``v`` (..., r, c) as a 2-D value: a weight of its
    own for a constant, else a slice of ``v`` in the workspace."""
    r, c = v.shape[-2:]
    if v.is_const:
        mats = v.const.reshape(-1, r, c)
        return lambda i: L.gb.weight(np.ascontiguousarray(mats[i]),
                                     v.dtype)
    _plain(L, v, what)
    L.need_device(v, what)
    if not L.gb.is_work(v):             # an input: slices need the workspace
        w = L.gb.work(v.shape, v.dtype)
        _copy(L, w, v, v.size * ITEMSIZE[v.dtype])
        v = w
    isz = r * c * ITEMSIZE[v.dtype]
    return lambda i: L.gb.slice(v, i * isz, isz).with_shape((r, c))


def _batched_matmul(L: Lowering, a: Value, b: Value):
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        L.fail("the batch dims of A %s and B %s do not broadcast"
               % (list(a.shape), list(b.shape)))
    count = _numel(batch)
    if count > MAX_BATCHED_MATMULS:
        L.fail("a batch of %d matrices (at most %d MATMULs a node)"
               % (count, MAX_BATCHED_MATMULS))
    if a.shape[-1] != b.shape[-2]:
        L.fail("inner dimensions differ: %d and %d" % (a.shape[-1],
                                                       b.shape[-2]))
    m, n = a.shape[-2], b.shape[-1]
    out = L.gb.work(batch + (m, n), a.dtype)
    if count == 0 or m * n == 0:
        return out, batch + (m, n)
    mat_a, mat_b = _matrices(L, a, "A"), _matrices(L, b, "B")
    # index of each broadcast batch position in A's and B's own batches
    at = [np.broadcast_to(np.arange(_numel(v.shape[:-2])).reshape(
        v.shape[:-2]), batch).reshape(-1) for v in (a, b)]
    isz = m * n * ITEMSIZE[a.dtype]
    for i in range(count):
        _matmul(L, mat_a(int(at[0][i])), mat_b(int(at[1][i])), False, False,
                out=L.gb.slice(out, i * isz, isz))
    return out, batch + (m, n)


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
        y = L.emit("AXPY", scaled, y, negzero, count=m * n, attr=alpha)
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
        return [L.emit("ADD", out, y, cb, count=m * n)]
    return [L.emit("AXPY", out, cb, y, count=m * n, attr=beta)]


def _axis(L: Lowering, axis: int, nd: int) -> int:
    a = axis + nd if axis < 0 else axis
    if not 0 <= a < nd:
        L.fail("axis %d outside a %d-D input" % (axis, nd))
    return a


def _over_rows(L: Lowering, x: Value, axis: int) -> list[Value]:
    """Row op ``L.rule.op`` (SOFTMAX, LOG_SOFTMAX) of ``x`` seen as 2-D:
    the axes before ``axis`` are the rows."""
    L.need_types(x, L.rule.op)
    m, n = _numel(x.shape[:axis]), _numel(x.shape[axis:])
    x = L.device(x)
    out = L.gb.work(x.shape, x.dtype)
    return [L.emit(L.rule.op, out, x, rows=(m, n))]


def softmax_flattened(L: Lowering, x: Value) -> list[Value]:
    """Softmax and LogSoftmax before opset 13: over the axes from ``axis``
    (default 1) on, flattened into one."""
    return _over_rows(L, x, _axis(L, int(L.attr("axis", 1)), len(x.shape)))


def softmax_one_axis(L: Lowering, x: Value) -> list[Value]:
    """Softmax and LogSoftmax from opset 13: over ``axis`` (default -1)
    alone, which davinci does when the axes after it are of size 1."""
    nd = len(x.shape)
    axis = _axis(L, int(L.attr("axis", -1)), nd)
    if all(d == 1 for d in x.shape[axis + 1:]):
        return _over_rows(L, x, axis)
    # davinci's row ops run over the last axis: move ``axis`` there and
    # back, two strided IDENTITYs (bytes moved, not values)
    perm = [i for i in range(nd) if i != axis] + [axis]
    y, = _over_rows(L, _permuted(L, L.device(x), perm), nd - 1)
    return [_permuted(L, y, [int(i) for i in np.argsort(perm)])]


def _permuted(L: Lowering, x: Value, perm) -> Value:
    """x's dims in the order ``perm``, as a dense work tensor."""
    shape = tuple(x.shape[p] for p in perm)
    src = _contiguous(x.shape)
    return strided_copy(L, x, shape, tuple(src[p] for p in perm),
                        L.gb.work(shape, x.dtype))


def reduce_sum(L: Lowering, x: Value, axes: Value | None = None
               ) -> list[Value]:
    L.need_types(x, "REDUCE_SUM")
    nd = len(x.shape)
    if axes is not None and not axes.is_const and axes.size == 0:
        axes = Value(axes.shape, axes.dtype, const=np.zeros(0, np.int64))
    if _computed(L, axes, "axes"):
        choices = _removals(x.shape, L.declared(0)) if not L.attr(
            "keepdims", 1) else []
        if len(choices) > 1 and all(len(c) == axes.size for c in choices):
            return [_reduce_chosen(L, x, axes, choices)]
        ax = _reduced_axes(L, x.shape)
        axes = pinned(L, axes, ax, "axes", _axis_forms(ax, nd), as_set=True)
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
    keep = bool(L.attr("keepdims", 1))
    kept = [i for i in range(nd) if i not in norm]
    shape = tuple(1 if i in norm else d for i, d in enumerate(x.shape)) \
        if keep else tuple(x.shape[i] for i in kept)
    m, n = _numel([x.shape[i] for i in kept]), _numel(
        [x.shape[i] for i in norm])
    x = L.device(x)
    if norm != list(range(nd - len(norm), nd)) and x.size:
        # REDUCE_SUM sums trailing axes: the others moved before them (a
        # strided IDENTITY, bytes moved)
        x = _permuted(L, x, kept + norm)
    out = L.gb.work(shape or (1,), x.dtype)
    L.emit("REDUCE_SUM", out, x, rows=(m, n))
    return [out.with_shape(shape)]


def _reduce_chosen(L: Lowering, x: Value, axes: Value, choices) -> Value:
    """A reduction whose computed axes the declared result leaves
    ambiguous (a 3 x 2 x 2 to 3 x 2): each choice reduced, and the one
    the axes hold picked by Where's SELECTs; the run fails when they hold
    none."""
    nd = len(x.shape)
    out, missed = None, None
    for ax in choices:
        y, = reduce_sum(L, x, Value((len(ax),), "int64",
                                    const=np.array(ax, np.int64)))
        y = L.device(y).with_shape(y.shape or (1,))
        miss = _mismatches(L, axes, _axis_forms(ax, nd), as_set=True)
        if out is None:
            out, missed = y, miss
            continue
        zero = L.gb.weight(np.zeros(1, np.float32), "float32")
        picked = _cmp(L, miss, zero, "EQ").with_shape((1,) * len(y.shape))
        out, = where(L, picked, y, out)
        missed = _broadcast_op(L, "MIN", missed, miss)
    _fail_run_over(L, missed, 0)
    return out.with_shape(L.declared(0))


def _reduced_axes(L: Lowering, shape) -> list[int]:
    """The axes a reduction of ``shape`` whose result the model declares
    reduces: those of size 1 in the result but not in ``shape`` (keepdims),
    or the only ones whose removal leaves the result."""
    out, nd = L.declared(0), len(shape)
    if not L.attr("keepdims", 1):
        return _removed_axes(L, shape, out, "axes")
    if len(out) != nd or any(o not in (1, d) for o, d in zip(out, shape)):
        L.fail("axes is computed, and the declared result %s is no "
               "reduction of %s" % (list(out), list(shape)))
    axes = [i for i, (o, d) in enumerate(zip(out, shape)) if o != d]
    if not axes and not L.attr("noop_with_empty_axes", 0):
        L.fail("axes is computed, and the declared result %s does not say "
               "which of the size-1 axes it reduces" % list(out))
    return axes


def reduce_mean(L: Lowering, x: Value, axes: Value | None = None
                ) -> list[Value]:
    """ReduceMean: ReduceSum's REDUCE_SUM over the trailing axes, then a
    DIV by the count of elements each mean takes (one rounding each)."""
    out, = reduce_sum(L, x, axes)
    n = x.size // max(out.size, 1)
    if out is x or n == 1 or x.size == 0:
        return [out]
    flat = out.with_shape((out.size,))
    _by_scalar(L, "DIV", flat, float(n), out=flat)
    return [out]

def cast(L: Lowering, x: Value) -> list[Value]:
    code = int(L.attr("to", 1))
    to = ONNX_DTYPES.get(code)
    if to is None:
        L.fail("cast to %s is not supported: davinci-atc casts to %s"
               % (onnx_type_name(code), type_list(ONNX_DTYPES.values())))
    if x.is_const:
        return [Value(x.shape, to, const=host_values(x.const, to))]
    if to == "float64" and x.dtype in _FLOATS:
        return [float_to_double(L, L.device(x))]
    if to not in ITEMSIZE:
        L.fail("cast of a computed tensor to %s: davinci tensors are %s"
               % (type_name(to), type_list(ITEMSIZE)))
    if to == x.dtype:
        return [x]
    out = L.gb.work(x.shape, to)
    return [L.emit("CAST", out, x, count=x.size)]


def dense(gb: GearBuilder, v: Value, where: str) -> Value:
    """``v`` in memory as its shape says: a Transpose's result not yet done
    (see :class:`Transposed`) copied by one strided IDENTITY (bytes moved,
    every bit through), for a reader without a transpose flag; any other
    value as it is."""
    t = v.transposed
    if t is None:
        return v
    out = gb.dense_copies.get(v.tid)        # one copy for every reader
    if out is None:
        out = gb.work((t.cols, t.rows), v.dtype)
        walk = opdesc.Strided((t.cols, t.rows), (t.rows, 1), (1, t.cols))
        gb.emit("IDENTITY", out, v.storage(), strided=walk, where=where)
        gb.dense_copies[v.tid] = out
    return out.with_shape(v.shape)


def _view(L: Lowering, x: Value, shape) -> Value:
    """``x`` seen with ``shape``; a transposed value whose data the new
    shape needs in memory is made dense first."""
    if x.transposed is not None and tuple(
            d for d in shape if d != 1) != tuple(d for d in x.shape
                                                 if d != 1):
        x = dense(L.gb, x, L.where)
    return x.with_shape(shape)


def reshape(L: Lowering, x: Value, shape: Value) -> list[Value]:
    allowzero = int(L.attr("allowzero", 0))
    if _computed(L, shape, "the target shape"):
        shape = _pinned_shape(L, x, shape, allowzero)
    want = L.ints_of(shape, "the target shape")
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
    return [_view(L, x, dims)]


def _pinned_shape(L: Lowering, x: Value, shape: Value, allowzero: int
                  ) -> Value:
    """A computed Reshape target pinned to the declared result: each of
    its values that dimension, a 0 copying it from x (without allowzero)
    or one -1 (of a non-empty x); the run fails otherwise."""
    out = L.declared(0)
    if _numel(out) != x.size:
        L.fail("the target shape is computed, and the declared result %s "
               "does not hold the %d elements of %s" % (list(out), x.size,
                                                        list(x.shape)))
    if shape.size != len(out):
        L.fail("the target shape is computed, and its %d values cannot be "
               "the declared %s" % (shape.size, list(out)))
    allowed = []
    for i, d in enumerate(out):
        row = [d] if d != 0 or allowzero else []
        if not allowzero and i < len(x.shape) and x.shape[i] == d:
            row.append(0)
        if x.size:
            row.append(-1)
        allowed.append(row or [d])
    pin = pinned(L, shape, out, "the target shape", allowed)
    if x.size and not shape.is_const:     # at most one -1
        minus = L.gb.weight(np.full(1, -1, shape.dtype), shape.dtype)
        ones = _cmp(L, L.device(shape), minus, "EQ")
        _fail_run_over(L, _count_true(L, ones, 1, shape.size), 1)
    return pin


def flatten(L: Lowering, x: Value) -> list[Value]:
    nd = len(x.shape)
    axis = int(L.attr("axis", 1))
    if not -nd <= axis <= nd:
        L.fail("axis %d outside -%d..%d (the input is %d-D)"
               % (axis, nd, nd, nd))
    axis = axis + nd if axis < 0 else axis
    return [_view(L, x, (_numel(x.shape[:axis]), _numel(x.shape[axis:])))]


def _axes_arg(L: Lowering, axes: Value | None) -> list[int] | None:
    if axes is not None:
        return L.ints_of(axes, "axes")
    a = L.attr("axes")
    return None if a is None else [int(v) for v in a]


def _pinned_axes(L: Lowering, big, small, axes: Value) -> Value:
    """Computed Squeeze or Unsqueeze axes: the size-1 axes of ``big`` whose
    removal leaves ``small`` (the declared result or the input); where
    several sets do (1 x 3 x 1 x 5 from 1 x 3 x 1 x 1 x 5), every one is
    the same view, and the run checks the axes are one of them."""
    found = [f for f in _removals(big, small) if all(big[a] == 1 for a in f)]
    if len(found) > 1 and all(len(f) == axes.size for f in found) and \
            not axes.is_const:
        missed = None
        for f in found:
            miss = _mismatches(L, axes, _axis_forms(f, len(big)), True)
            missed = miss if missed is None else _broadcast_op(
                L, "MIN", missed, miss)
        _fail_run_over(L, missed, 0)
        return Value(axes.shape, axes.dtype, const=np.array(
            found[0], axes.dtype).reshape(axes.shape))
    ax = _removed_axes(L, big, small, "axes")
    if any(big[a] != 1 for a in ax):
        L.fail("axes is computed, and %s is not %s with axes of size 1 "
               "inserted" % (list(big), list(small)))
    return pinned(L, axes, ax, "axes", _axis_forms(ax, len(big)),
                  as_set=True)


def squeeze(L: Lowering, x: Value, axes: Value | None = None) -> list[Value]:
    if _computed(L, axes, "axes"):
        axes = _pinned_axes(L, x.shape, L.declared(0), axes)
    ax = _axes_arg(L, axes)
    nd = len(x.shape)
    drop = {i for i, d in enumerate(x.shape) if d == 1} if ax is None \
        else {_axis(L, a, nd) for a in ax}
    wide = sorted(i for i in drop if x.shape[i] != 1)
    if wide:
        L.fail("axes %s of shape %s are not of size 1" % (wide,
                                                          list(x.shape)))
    return [_view(L, x, [d for i, d in enumerate(x.shape) if i not in drop])]


def unsqueeze(L: Lowering, x: Value, axes: Value | None = None
              ) -> list[Value]:
    if _computed(L, axes, "axes"):
        axes = _pinned_axes(L, L.declared(0), x.shape, axes)
    ax = _axes_arg(L, axes) or []
    nd = len(x.shape) + len(ax)
    norm = sorted(_axis(L, a, nd) for a in ax)
    if len(set(norm)) != len(norm):
        L.fail("axes %s name one output axis twice" % ax)
    shape = list(x.shape)
    for a in norm:
        shape.insert(a, 1)
    return [_view(L, x, shape)]


def transpose(L: Lowering, x: Value) -> list[Value]:
    """A layout no-op (the permutation moves only size-1 dimensions) is a
    view; a 2-D transpose is left to the MatMul or Gemm that reads it (its
    transpose flag, see :class:`Transposed`), copied dense by a strided
    IDENTITY for another reader (:func:`dense`); any other permutation is
    a strided IDENTITY at once."""
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
        # moved bytes, not values: IDENTITY of the permuted view is exact
        return [_permuted(L, x, perm)]
    r, c = x.shape[big[0]], x.shape[big[1]]
    return [Value(shape, x.dtype, x.tid,
                  transposed=Transposed(r, c, L.where))]


def identity(L: Lowering, x: Value) -> list[Value]:
    return [x]


def _drops(L: Lowering, ratio: Value | None,
           training_mode: Value | None) -> "Value | bool":
    """Whether Dropout drops at random: False, True or, when the ratio or
    the training mode is computed, a one-element FLOAT that is 1 where it
    does (training mode true and the ratio not 0: a NaN ratio counts as
    not 0) and 0 where the output is the input."""
    if training_mode is None:
        return False
    if training_mode.dtype != "bool" or training_mode.size != 1:
        L.fail("training_mode is %s %s; Dropout takes one BOOL" % (
            type_name(training_mode.dtype), list(training_mode.shape)))
    if training_mode.is_const:
        if not np.any(training_mode.const):
            return False
        on: "Value | None" = None
    else:
        on = _count_true(L, L.device(training_mode, "training_mode"), 1, 1)
    if ratio is None or ratio.is_const:
        r = 0.5 if ratio is None else ratio.const
        if not np.any(r != 0):
            return False
        return True if on is None else on
    if ratio.dtype not in _FLOATS or ratio.size != 1:
        L.fail("ratio is %s %s; a computed Dropout ratio is one of %s" % (
            type_name(ratio.dtype), list(ratio.shape), type_list(_FLOATS)))
    zero = L.gb.weight(host_values(np.zeros(1), ratio.dtype), ratio.dtype)
    nonzero = _count_true(L, _cmp(L, L.device(ratio, "ratio"), zero, "NE"),
                          1, 1)
    if on is None:
        return nonzero
    return L.emit("MUL", L.gb.work((1,), "float32"), on, nonzero, count=1)


def dropout(L: Lowering, x: Value, ratio: Value | None = None,
            training_mode: Value | None = None) -> list[Value]:
    """Inference: the output is the input and the mask, when the node has
    one, all true (a constant). Training mode drops at random: refused
    when known at conversion, and when the ratio or the training mode is
    computed, the run fails unless training mode is false or the ratio 0
    at run time (the output then the input, as onnxruntime's)."""
    drops = _drops(L, ratio, training_mode)
    if drops is True:
        L.fail("training_mode is true, so it drops elements at random: "
               "davinci-atc converts inference models (export the "
               "model after model.eval())")
    if isinstance(drops, Value):
        _fail_run_over(L, drops, 0)
    if len(L.node.output) < 2 or not L.node.output[1]:
        return [x]
    return [x, Value(x.shape, "bool", const=np.ones(x.shape, np.bool_))]


def shape_of(L: Lowering, x: Value) -> list[Value]:
    s = np.array(x.shape, np.int64)
    start, end = L.attr("start", 0), L.attr("end", None)
    s = s[start:end]
    return [Value(s.shape, "int64", const=s)]


def _wrapped(L: Lowering, idx: Value, n: int) -> Value:
    """Computed indices with each negative one plus ``n``."""
    zero = L.gb.weight(host_values(np.zeros(1), idx.dtype), idx.dtype)
    walk = opdesc.Strided(idx.shape, _contiguous(idx.shape),
                          _contiguous(idx.shape), (0,) * len(idx.shape))
    negative = L.emit("CMP", L.gb.work(idx.shape, "bool"), idx, zero,
                      strided=walk, attr="LT")
    out = L.gb.work(idx.shape, idx.dtype)
    _copy(L, out, idx, idx.size * ITEMSIZE[idx.dtype])
    return L.emit("SELECT", out, _by_scalar(L, "ADD", idx, n), negative,
                  count=idx.size)


def gather(L: Lowering, data: Value, idx: Value) -> list[Value]:
    """Folded when data and indices are constants; else one INDEX_SELECT:
    the axes before ``axis`` its batches (the indices repeated for each),
    those after it a row. Negative indices count from the end, as ONNX's:
    wrapped at conversion when constant, else on the device (idx + n
    SELECTed where idx < 0); an index outside [-n, n) fails the task
    (DAVINCI_STATUS_INVALID_TASK) with nothing written."""
    if idx.dtype not in ("int32", "int64"):
        L.fail("indices are %s; ONNX's Gather takes INT32 or INT64 indices"
               % type_name(idx.dtype))
    axis = _axis(L, int(L.attr("axis", 0)), len(data.shape))
    n = data.shape[axis]
    if idx.is_const:
        i = idx.const
        if np.any((i < -n) | (i >= n)):
            L.fail("indices %s outside the %d elements of axis %d of the "
                   "data (shape %s)" % (i.tolist(), n, axis,
                                        list(data.shape)))
        if data.is_const:
            r = np.take(data.const, i, axis=axis)
            return [Value(r.shape, data.dtype, const=r)]
        idx = Value(idx.shape, idx.dtype, const=np.where(i < 0, i + n, i))
    shape = data.shape[:axis] + idx.shape + data.shape[axis + 1:]
    batches, k = _numel(data.shape[:axis]), _numel(data.shape[axis + 1:])
    count = _numel(idx.shape)
    out = L.gb.work(shape, data.dtype)
    if _numel(shape) == 0:
        return [out]
    index = L.device(idx, "indices").with_shape((1, count))
    if not idx.is_const:
        index = _wrapped(L, index, n)
    if batches > 1:
        index = broadcast(L, index, (batches, count))
    L.emit("INDEX_SELECT", out, L.device(data, "data"), index,
           mnk=(batches, n, k), count=count,
           attr=idx.dtype.upper())
    return [out]


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


# ---------------------------------------------------------------------------
# CNN ops: parameter blocks and strided tasks
# ---------------------------------------------------------------------------
def _contiguous(shape) -> tuple[int, ...]:
    return views.contiguous_strides(tuple(shape))


def strided_copy(L: Lowering, x: Value, sizes, src_strides, out: Value,
                 dst_strides=None) -> Value:
    """IDENTITY of the view of device tensor ``x`` with ``sizes`` and
    ``src_strides`` into ``out`` (dense by default): one strided task."""
    walk = opdesc.Strided(tuple(sizes), tuple(dst_strides or
                                              _contiguous(sizes)),
                          tuple(src_strides))
    return L.emit("IDENTITY", out, L.device(x), strided=walk)


def _spatial(L: Lowering, name: str, default, dims: int) -> tuple[int, ...]:
    v = [int(a) for a in L.attr(name, [default] * dims)]
    if len(v) != dims:
        L.fail("%s %s: %d values for a %d-D input"
               % (name, v, dims, dims + 2))
    return tuple(v)


def _pad_pairs(L: Lowering, x_hw, k, stride, dilation
               ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(begins, ends): the padding of each spatial dim from ``pads`` or
    ``auto_pad`` (VALID, SAME_UPPER, SAME_LOWER resolved here)."""
    dims = len(x_hw)
    auto = L.attr("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto == "VALID":
        return (0,) * dims, (0,) * dims
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        total = [max((-(-n // s) - 1) * s + (kk - 1) * d + 1 - n, 0)
                 for n, kk, s, d in zip(x_hw, k, stride, dilation)]
        small = tuple(t // 2 for t in total)
        big = tuple(t - t // 2 for t in total)
        return (small, big) if auto == "SAME_UPPER" else (big, small)
    if auto != "NOTSET":
        L.fail("auto_pad %r is none of NOTSET, VALID, SAME_UPPER, "
               "SAME_LOWER" % auto)
    pads = [int(p) for p in L.attr("pads", [0] * (2 * dims))]
    if len(pads) != 2 * dims:
        L.fail("pads %s: %d values for %d spatial dims"
               % (pads, 2 * dims, dims))
    return tuple(pads[:dims]), tuple(pads[dims:])


def _pads(L: Lowering, x_hw, k, stride, dilation) -> tuple[int, ...]:
    """The symmetric padding of each spatial dim; refused where begin and
    end differ: the device pads both sides alike."""
    begin, end = _pad_pairs(L, x_hw, k, stride, dilation)
    if begin != end:
        L.fail("pads %s: the device pads both sides of a dimension alike "
               "(begin = end)" % list(begin + end))
    return begin


def _padded(L: Lowering, x: Value, begin, end, fill: float) -> Value:
    """``x`` (N, C, spatial...) inside a border of ``fill`` (``begin``
    before and ``end`` after each spatial dim): the border splatted from
    one weight, ``x`` one strided IDENTITY into the interior."""
    shape = x.shape[:2] + tuple(n + b + e for n, b, e in
                                zip(x.shape[2:], begin, end))
    out = splat(L, fill, shape, x.dtype)
    strides = _contiguous(shape)
    at = sum(b * st for b, st in zip(begin, strides[2:]))
    span = 1 + sum((n - 1) * st for n, st in zip(x.shape, strides))
    isz = ITEMSIZE[x.dtype]
    strided_copy(L, x, x.shape, _contiguous(x.shape),
                 L.gb.slice(out, at * isz, span * isz), strides)
    return out


def _as_2d(dims: int, v: tuple[int, ...], flat: int) -> tuple[int, int]:
    """A 1-D op's value seen as 2-D, its height ``flat``."""
    return (flat,) + v if dims == 1 else v


def _nchw(L: Lowering, x: Value, what: str, volumes: bool = False) -> int:
    """X's spatial dims: 1 or 2 (3 too with ``volumes``: a pooling by
    taps)."""
    if len(x.shape) not in ((3, 4, 5) if volumes else (3, 4)):
        L.fail("%s is %s: davinci takes N x C x H x W (or N x C x L)"
               % (what, list(x.shape)))
    return len(x.shape) - 2




def _bias(L: Lowering, b: Value, k: int, dtype: str) -> Value:
    """Conv's B as CONV2D's src2: k elements of y's dtype."""
    b = L.device(b, "B")
    if b.shape != (k,) or b.dtype != dtype:
        L.fail("B is %s %s; it needs %d %s elements, one per output "
               "channel" % (type_name(b.dtype), list(b.shape), k,
                            type_name(dtype)))
    return b


def conv(L: Lowering, x: Value, w: Value, b: "Value | None" = None
         ) -> list[Value]:
    """Conv as one CONV2D (1-D as a height of 1): its bias (B, or a folded
    BatchNormalization's shift) the task's src2, and a Relu that only
    reads it (fuse.py) its epilogue."""
    dims = _nchw(L, x, "X")
    L.need_types(x, "CONV2D", "X")
    if w.dtype != x.dtype or len(w.shape) != len(x.shape):
        L.fail("W is %s %s, X %s %s" % (type_name(w.dtype), list(w.shape),
                                        type_name(x.dtype), list(x.shape)))
    k = tuple(w.shape[2:])
    stride = _spatial(L, "strides", 1, dims)
    dilation = _spatial(L, "dilations", 1, dims)
    pads = _pads(L, x.shape[2:], k, stride, dilation)
    group = int(L.attr("group", 1))
    x4 = x.shape[:2] + _as_2d(dims, x.shape[2:], 1)
    w4 = w.shape[:2] + _as_2d(dims, k, 1)
    try:
        fields, y4 = ops.conv2d_shapes(
            x4, w4, _as_2d(dims, stride, 1), _as_2d(dims, pads, 0),
            _as_2d(dims, dilation, 1), group)
    except DavinciError as exc:
        L.fail(str(exc))
    y = L.gb.work(y4, x.dtype)
    L.emit("CONV2D", y, L.device(x, "X").with_shape(x4),
           L.device(w, "W").with_shape(w4), params=fields,
           attr="RELU" if L.attr(FUSED_RELU, 0) else "NONE",
           src2=None if b is None else _bias(L, b, y4[1], x.dtype))
    return [y.with_shape(y4[:2] + y4[2 + (dims == 1):])]


def _pool(L: Lowering, x: Value, op: str, kernel, stride, pads, dilation,
          ceil_mode: bool, count_include_pad: bool = False,
          indices: bool = False, column_major: bool = False
          ) -> list[Value]:
    dims = len(x.shape) - 2
    x4 = x.shape[:2] + _as_2d(dims, tuple(x.shape[2:]), 1)
    try:
        fields, y4 = ops.pool2d_shapes(
            x4, _as_2d(dims, kernel, 1), _as_2d(dims, stride, 1),
            _as_2d(dims, pads, 0), _as_2d(dims, dilation, 1),
            ceil_mode=ceil_mode, count_include_pad=count_include_pad,
            op="max_pool2d" if op == "MAXPOOL2D" else "avg_pool2d")
    except DavinciError as exc:
        L.fail(str(exc))
    y = L.gb.work(y4, x.dtype)
    xd = L.device(x, "X").with_shape(x4)
    L.emit(op, y, xd, params=fields)
    out = y4[:2] + y4[2 + (dims == 1):]
    if not indices:
        return [y.with_shape(out)]
    # the argmax of each window, an index into its plane; ONNX's are flat
    # over the tensor: plus the plane's first element
    at = L.emit(op, L.gb.work(y4, "int64"), xd, params=fields)
    n, c, h, w = x4
    if column_major:        # h * w_ + w -> w * h_ + h (storage_order 1)
        row = _by_scalar(L, "DIV", at, w)
        col = _broadcast_op(L, "SUB", at, _by_scalar(L, "MUL", row, w))
        at = _broadcast_op(L, "ADD", _by_scalar(L, "MUL", col, h), row)
    first = (np.arange(n * c, dtype=np.int64) * (h * w)).reshape(n, c, 1, 1)
    flat = _broadcast_op(L, "ADD", at, L.gb.weight(first, "int64"))
    return [y.with_shape(out), flat.with_shape(out)]


def _pool_by_taps(L: Lowering, x: Value, op: str, k, stride, dilation,
                  begin, end, ceil_mode: bool, include: bool = False
                  ) -> list[Value]:
    """A pooling the device's ops do not take (3-D, an average's
    dilations, pads over half the window) as one task per tap of the
    window: MAX (or ADD) of a strided view of x inside a border of -inf
    (or 0) into the result, whose first tap is a strided IDENTITY; an
    average then divided by each window's count (its taps inside x, or
    inside the pads with count_include_pad), a constant per position.
    Output sizes and the windows ceil_mode adds are ONNX's."""
    taps = int(np.prod(k))
    if taps > MAX_BROADCAST_OPS:
        L.fail("a window of %d taps (kernel %s): davinci pools it one task "
               "a tap, at most %d" % (taps, list(k), MAX_BROADCAST_OPS))
    sp = x.shape[2:]
    outs, ends = [], []
    for n, kk, s, d, b, e in zip(sp, k, stride, dilation, begin, end):
        span = (kk - 1) * d + 1
        room = n + b + e - span
        if room < 0:
            L.fail("kernel %s (dilations %s) is larger than X %s padded"
                   % (list(k), list(dilation), list(sp)))
        o = (-(-room // s) if ceil_mode else room // s) + 1
        if ceil_mode and (o - 1) * s >= n + b:
            o -= 1          # a window starts inside x or its begin pad
        outs.append(o)
        ends.append(max(e, (o - 1) * s + span - n - b))
    fill = -np.inf if op == "MAX" else 0.0
    xd = L.device(x, "X")
    if any(begin) or any(ends):
        xd = _padded(L, xd, begin, tuple(ends), fill)
    full = _contiguous(xd.shape)
    shape = x.shape[:2] + tuple(outs)
    strides = full[:2] + tuple(st * s for st, s in zip(full[2:], stride))
    y = None
    for tap in itertools.product(*(range(kk) for kk in k)):
        at = sum(t * d * st for t, d, st in zip(tap, dilation, full[2:]))
        if y is None:
            y = _view_copy(L, xd, at, shape, strides)
            continue
        walk = opdesc.Strided(shape, _contiguous(shape), _contiguous(shape),
                              strides)
        L.emit(op if op == "MAX" else "ADD", y, y, _at(L, xd, at),
               strided=walk)
    if op == "MAX":
        return [y]
    count = np.ones(1)
    for n, kk, s, d, b, e, o in zip(sp, k, stride, dilation, begin, end,
                                    outs):
        pos = (np.arange(o) * s - b)[:, None] + np.arange(kk)[None] * d
        inside = (pos >= (-b if include else 0)) & \
            (pos < (n + e if include else n))
        count = np.multiply.outer(count, inside.sum(axis=1))
    count = count.reshape(outs)
    if count.min() < 1:
        L.fail("pads %s: a window holds no tap of X" % list(begin + end))
    div = L.gb.weight(host_values(count.astype(np.float64), x.dtype),
                      x.dtype)
    st = _contiguous(shape)
    walk = opdesc.Strided(shape, st, st, (0, 0) + _contiguous(outs))
    return [L.emit("DIV", y, y, div, strided=walk)]


def max_pool(L: Lowering, x: Value) -> list[Value]:
    """MaxPool's Y as MAXPOOL2D (the padding's taps ignored, as ONNX's),
    and its Indices a second MAXPOOL2D writing INT64 argmaxes, which are
    per plane, plus each plane's first element (ONNX's flat over the
    tensor)."""
    indices = len(L.node.output) > 1 and bool(L.node.output[1])
    dims = _nchw(L, x, "X", volumes=not indices)
    if x.dtype in ("int8", "uint8") and not indices:
        # exact in FLOAT, and back: a max is one of its window's values
        y, = max_pool(L, _to_float32(L, x, "X"))
        return [L.emit("CAST", L.gb.work(y.shape, x.dtype), y,
                       count=y.size)]
    L.need_types(x, "MAXPOOL2D", "X")
    k = _spatial(L, "kernel_shape", 1, dims)
    stride = _spatial(L, "strides", 1, dims)
    dilation = _spatial(L, "dilations", 1, dims)
    begin, end = _pad_pairs(L, x.shape[2:], k, stride, dilation)
    if dims == 3:
        return _pool_by_taps(L, x, "MAX", k, stride, dilation, begin, end,
                             bool(L.attr("ceil_mode", 0)))
    if begin != end or any(b > kk // 2 for b, kk in zip(begin, k)):
        # the device pads both sides alike, by at most half the window:
        # pad with -inf, which no max takes over a number (a NaN still
        # wins), and pool unpadded
        if indices:
            L.fail("its Indices output of pads %s, %s is not converted "
                   "(the device pads both sides alike, by at most half "
                   "the window)" % (list(begin), list(end)))
        x = _padded(L, L.device(x, "X"), begin, end, -np.inf)
        begin = (0,) * dims
    return _pool(L, x, "MAXPOOL2D", k, stride, begin, dilation,
                 bool(L.attr("ceil_mode", 0)), indices=indices,
                 column_major=bool(L.attr("storage_order", 0)))


def average_pool(L: Lowering, x: Value) -> list[Value]:
    dims = _nchw(L, x, "X", volumes=True)
    L.need_types(x, "AVGPOOL2D", "X")
    k = _spatial(L, "kernel_shape", 1, dims)
    stride = _spatial(L, "strides", 1, dims)
    dilation = _spatial(L, "dilations", 1, dims)
    include = bool(L.attr("count_include_pad", 0))
    begin, end = _pad_pairs(L, x.shape[2:], k, stride, dilation)
    if dims == 3 or any(d != 1 for d in dilation) or (
            not include and any(max(b, e) > kk // 2
                                for b, e, kk in zip(begin, end, k))):
        # what AVGPOOL2D takes not: one task a tap
        return _pool_by_taps(L, x, "AVG", k, stride, dilation, begin, end,
                             bool(L.attr("ceil_mode", 0)), include)
    if include and (begin != end or
                    any(b > kk // 2 for b, kk in zip(begin, k))):
        # counted pads are zeros of the input: pad with 0, pool unpadded
        x = _padded(L, L.device(x, "X"), begin, end, 0.0)
        begin = (0,) * dims
    elif begin != end:
        return _uneven_average_pool(L, x, k, stride, begin, end)
    return _pool(L, x, "AVGPOOL2D", k, stride, begin, (1,) * dims,
                 bool(L.attr("ceil_mode", 0)), include)


def _uneven_average_pool(L: Lowering, x: Value, k, stride, begin, end
                         ) -> list[Value]:
    """An average over each window's taps inside x, the pads uneven: the
    mean over a zero-padded x (every tap counted), times window size /
    taps inside, a constant per output position broadcast over N and C."""
    if int(L.attr("ceil_mode", 0)):
        L.fail("pads %s with ceil_mode 1 and count_include_pad 0: windows "
               "off the padded edge are not converted" % list(begin + end))
    dims = len(k)
    y, = _pool(L, _padded(L, L.device(x, "X"), begin, end, 0.0),
               "AVGPOOL2D", k, stride, (0,) * dims, (1,) * dims, False, True)
    inside = np.ones(1)
    for n, kk, st, b, o in zip(x.shape[2:], k, stride, begin, y.shape[2:]):
        first = np.arange(o) * st - b
        taps = np.minimum(first + kk, n) - np.maximum(first, 0)
        if taps.min() < 1:
            L.fail("pads %s: a window holds no tap of X"
                   % list(begin + end))
        inside = np.multiply.outer(inside, taps)
    area = float(np.prod(k))
    fix = L.gb.weight(host_values(area / inside.reshape(y.shape[2:]),
                                  x.dtype), x.dtype)
    strides = _contiguous(y.shape)
    walk = opdesc.Strided(y.shape, strides, strides,
                          (0, 0) + _contiguous(y.shape[2:]))
    return [L.emit("MUL", y, y, fix, strided=walk)]


def global_pool(L: Lowering, x: Value) -> list[Value]:
    """GlobalAveragePool and GlobalMaxPool: one window over H x W."""
    dims = _nchw(L, x, "X")
    op = L.rule.op
    L.need_types(x, op, "X")
    k = tuple(x.shape[2:])
    return _pool(L, x, op, k, (1,) * dims, (0,) * dims, (1,) * dims, False)


def _by_scalar(L: Lowering, op: str, x: Value, value: float,
               out: "Value | None" = None) -> Value:
    """``x`` op ``value``: the value one weight, repeated by a stride of 0."""
    w = L.gb.weight(host_values(np.array([value], np.float64), x.dtype),
                    x.dtype)
    strides = _contiguous(x.shape)
    walk = opdesc.Strided(x.shape, strides, strides, (0,) * len(x.shape))
    return L.emit(op, out or L.gb.work(x.shape, x.dtype), x, w,
                  strided=walk)


def lrn(L: Lowering, x: Value) -> list[Value]:
    """LRN: y = x / (bias + alpha / size * S) ** beta, S the sum of x**2
    over the ``size`` channels around each. S / size is an average pooling
    of x**2 seen as (N, 1, C, spatial) with a (size, 1) window, the zeros
    beyond the channels counted; the rest is four elementwise tasks (POW
    by -beta: the device has no division by a power)."""
    if len(x.shape) < 3:
        L.fail("X is %s: LRN takes N x C x D1 x ... (rank 3 or more)"
               % list(x.shape))
    L.need_types(x, "AVGPOOL2D", "X")
    size = L.attr("size")
    if size is None or int(size) < 1:
        L.fail("size is %r; LRN needs a window of 1 channel or more" % size)
    size = int(size)
    alpha = float(L.attr("alpha", 1e-4))
    beta = float(L.attr("beta", 0.75))
    bias = float(L.attr("bias", 1.0))
    xd = L.device(x, "X")
    squares = L.emit("MUL", L.gb.work(x.shape, x.dtype), xd, xd,
                     count=x.size)
    planes = squares.with_shape((x.shape[0], 1, x.shape[1],
                                 _numel(x.shape[2:])))
    # ONNX's window: floor((size - 1) / 2) channels before, ceil after
    before, after = (size - 1) // 2, size // 2
    if before != after:
        planes = _padded(L, planes, (before, 0), (after, 0), 0.0)
        before = 0
    mean, = _pool(L, planes, "AVGPOOL2D", (size, 1), (1, 1), (before, 0),
                  (1, 1), False, True)
    scale = mean.with_shape(x.shape)
    _by_scalar(L, "MUL", scale, alpha, out=scale)
    _by_scalar(L, "ADD", scale, bias, out=scale)
    _by_scalar(L, "POW", scale, -beta, out=scale)
    out = L.gb.work(x.shape, x.dtype)
    return [L.emit("MUL", out, xd, scale, count=x.size)]


def _broadcast_op(L: Lowering, op: str, a: Value, b: Value,
                  out: "Value | None" = None) -> Value:
    """Binary device op ``op`` of device tensors ``a`` and ``b``
    broadcast by numpy's rules: one task, stride-0 walks (into ``a`` in
    place when ``out`` is ``a``)."""
    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    walk = opdesc.Strided(shape, _contiguous(shape),
                          _broadcast_strides(a.shape, shape),
                          _broadcast_strides(b.shape, shape))
    return L.emit(op, out or L.gb.work(shape, a.dtype), a, b, strided=walk)


def _to_float32(L: Lowering, v: Value, what: str) -> Value:
    v = L.device(v, what)
    if v.dtype == "float32":
        return v
    return L.emit("CAST", L.gb.work(v.shape, "float32"), v, count=v.size)


def layer_norm(L: Lowering, x: Value, scale: Value,
               b: "Value | None" = None) -> list["Value | None"]:
    """LayerNormalization over the axes from ``axis`` on, in float32 (its
    stash_type 1) whatever X's type: the rows' mean, their centred squares'
    mean + epsilon, its square root and reciprocal, each a task over the
    rows as torch_npu's layer_norm; Y in X's type, Mean and InvStdDev in
    float32 shaped as X with the normalised axes 1."""
    if x.dtype not in _FLOATS:
        L.fail("X is %s; LayerNormalization takes %s"
               % (type_name(x.dtype), type_list(_FLOATS)))
    if int(L.attr("stash_type", 1)) != 1:
        L.fail("stash_type %s: davinci computes the statistics in FLOAT "
               "(stash_type 1)" % L.attr("stash_type"))
    nd = len(x.shape)
    axis = _axis(L, int(L.attr("axis", -1)), nd)
    eps = float(L.attr("epsilon", 1e-5))
    m, n = _numel(x.shape[:axis]), _numel(x.shape[axis:])
    stats = x.shape[:axis] + (1,) * (nd - axis)
    rows = _to_float32(L, x, "X").with_shape((m, n))

    def row_mean(v: Value) -> Value:
        sums = L.emit("REDUCE_SUM", L.gb.work((m, 1), "float32"), v,
                      rows=(m, n))
        return _by_scalar(L, "MUL", sums, 1.0 / n, out=sums)
    mean = row_mean(rows)
    centred = _broadcast_op(L, "SUB", rows, mean)
    var = row_mean(_broadcast_op(L, "MUL", centred, centred))
    _by_scalar(L, "ADD", var, eps, out=var)
    L.emit("SQRT", var, var, count=m)
    one = L.gb.weight(np.ones(1, np.float32), "float32")
    rstd = _broadcast_op(L, "DIV", one.with_shape((1, 1)), var)
    y = _broadcast_op(L, "MUL", centred, rstd, out=centred)
    for op, v, what in (("MUL", scale, "Scale"), ("ADD", b, "B")):
        if v is None:
            continue
        if _numel(v.shape) not in (1, n) or len(v.shape) > nd - axis:
            L.fail("%s is %s; it broadcasts over the normalised shape %s "
                   "here" % (what, list(v.shape), list(x.shape[axis:])))
        w = _to_float32(L, v, what).with_shape(
            (1, _numel(v.shape)) if _numel(v.shape) == n else (1, 1))
        y = _broadcast_op(L, op, y, w, out=y)
    y = y.with_shape(x.shape)
    if x.dtype != "float32":
        y = L.emit("CAST", L.gb.work(x.shape, x.dtype), y, count=x.size)
    return [y, mean.with_shape(stats), rstd.with_shape(stats)]


def _batch_norm_device(L: Lowering, x: Value, scale: Value, b: Value,
                       mean: Value, var: Value, training: bool
                       ) -> list[Value]:
    """BatchNormalization whose parameters are computed, or in training
    mode: a = scale / sqrt(var + epsilon) and c = B - mean * a per channel
    on the device, then y = x * a + c by two broadcast tasks. In training
    mode mean and var are the batch's (ReduceSum over N and the spatial
    dims, moved last; var the mean of the squared deviations), and the
    running statistics input * momentum + batch * (1 - momentum)."""
    c = x.shape[1]
    for v, what in ((scale, "scale"), (b, "B"), (mean, "input_mean"),
                    (var, "input_var")):
        if v.dtype != x.dtype or v.size != c:
            L.fail("%s is %s %s; it needs %d values of X's type"
                   % (what, type_name(v.dtype), list(v.shape), c))
    vec = [L.device(v, what).with_shape((c,)) for v, what in (
        (scale, "scale"), (b, "B"), (mean, "input_mean"),
        (var, "input_var"))]
    scale, b, mean, var = vec
    eps = float(L.attr("epsilon", 1e-5))
    xd = L.device(x, "X")
    outs = []
    if training:
        count = x.size // c
        perm = [1, 0] + list(range(2, len(x.shape)))
        rows = _permuted(L, xd, perm).with_shape((c, count))
        bmean = L.emit("REDUCE_SUM", L.gb.work((c,), x.dtype), rows,
                       rows=(c, count))
        bmean = _by_scalar(L, "DIV", bmean, float(count), out=bmean)
        dev = _broadcast_op(L, "SUB", rows, bmean.with_shape((c, 1)))
        dev = L.emit("MUL", dev, dev, dev, count=dev.size)
        bvar = L.emit("REDUCE_SUM", L.gb.work((c,), x.dtype), dev,
                      rows=(c, count))
        bvar = _by_scalar(L, "DIV", bvar, float(count), out=bvar)
        mom = float(L.attr("momentum", 0.9))
        for run, now in ((mean, bmean), (var, bvar)):
            outs.append(_broadcast_op(L, "ADD", _by_scalar(L, "MUL", run, mom),
                                      _by_scalar(L, "MUL", now, 1.0 - mom)))
        mean, var = bmean, bvar
    root = L.emit("SQRT", L.gb.work((c,), x.dtype), _by_scalar(
        L, "ADD", var, eps), count=c)
    a = L.emit("DIV", L.gb.work((c,), x.dtype), scale, root, count=c)
    shift = _broadcast_op(L, "SUB", b, _broadcast_op(L, "MUL", mean, a))
    strides = _contiguous(x.shape)
    bcast = tuple(1 if d == 1 else 0 for d in range(len(x.shape)))
    walk = opdesc.Strided(x.shape, strides, strides, bcast)
    y = L.gb.work(x.shape, x.dtype)
    for op, v in (("MUL", a), ("ADD", shift)):
        L.emit(op, y, xd, v, strided=walk)
        xd = y
    return [y] + outs


def batch_norm(L: Lowering, x: Value, scale: Value, b: Value, mean: Value,
               var: Value) -> list[Value]:
    """Inference BatchNormalization: y = x * a + c per channel, with
    a = scale / sqrt(var + epsilon) and c = B - mean * a computed on the
    host in float64 from the constants and rounded once to x's type, then
    two broadcast tasks (MUL, ADD). The device's result differs from
    onnxruntime's (x - mean) / sqrt(var + eps) * scale + B by rounding.
    Computed parameters, or training mode: :func:`_batch_norm_device`."""
    training = bool(int(L.attr("training_mode", 0)))
    if len(x.shape) < 2:
        L.fail("X is %s: it needs a channel dim" % list(x.shape))
    L.need_types(x, "MUL", "X")
    if training or not all(v.is_const for v in (scale, b, mean, var)):
        L.need_types(x, "SQRT", "X")
        return _batch_norm_device(L, x, scale, b, mean, var, training)
    if len([o for o in L.node.output if o]) > 1:
        L.fail("its running statistics outputs are training mode's "
               "(training_mode 1)")
    consts = [L.const_of(v, what).astype(np.float64).reshape(-1)
              for v, what in ((scale, "scale"), (b, "B"),
                              (mean, "input_mean"), (var, "input_var"))]
    c = x.shape[1]
    if any(a.size != c for a in consts):
        L.fail("scale, B, mean and var need %d values each" % c)
    eps = float(L.attr("epsilon", 1e-5))
    a = consts[0] / np.sqrt(consts[3] + eps)
    shift = consts[1] - consts[2] * a
    strides = _contiguous(x.shape)
    bcast = tuple(1 if d == 1 else 0 for d in range(len(x.shape)))
    walk = opdesc.Strided(x.shape, strides, strides, bcast)
    xd = L.device(x, "X")
    y = L.gb.work(x.shape, x.dtype)
    for op, v in (("MUL", a), ("ADD", shift)):
        w = L.gb.weight(host_values(v, x.dtype), x.dtype)
        L.emit(op, y, xd, w, strided=walk)
        xd = y
    return [y]


def concat_device(L: Lowering, first: Value, *rest: Value) -> list[Value]:
    """Concat of computed tensors: each input one strided IDENTITY into
    its place in the output; of constants only, folded on the host."""
    vals = (first,) + rest
    if all(v.is_const for v in vals):
        return concat(L, first, *rest)
    if len({v.dtype for v in vals}) > 1:
        L.fail("inputs are %s; ONNX needs one type (add a Cast)"
               % type_list(sorted({v.dtype for v in vals}), "and"))
    nd = len(first.shape)
    if nd == 0:
        L.fail("its inputs are scalars: Concat joins tensors of rank 1 or "
               "more")
    axis = _axis(L, int(L.attr("axis", 0)), nd)
    rest_of = [v.shape[:axis] + v.shape[axis + 1:] for v in vals]
    if any(len(v.shape) != nd or r != rest_of[0]
           for v, r in zip(vals, rest_of)):
        L.fail("input shapes %s differ beyond axis %d"
               % ([list(v.shape) for v in vals], axis))
    shape = list(first.shape)
    shape[axis] = sum(v.shape[axis] for v in vals)
    out = L.gb.work(shape, first.dtype)
    strides = _contiguous(shape)
    isz = ITEMSIZE[first.dtype]
    at = 0
    for v in vals:
        if v.size:
            span = 1 + sum((n - 1) * s for n, s in zip(v.shape, strides))
            dst = L.gb.slice(out, at * strides[axis] * isz, span * isz)
            strided_copy(L, v, v.shape, _contiguous(v.shape), dst, strides)
        at += v.shape[axis]
    return [out]


def constant_value(tensor) -> Value:
    """An initializer's or a Constant's TensorProto (of a type in
    ONNX_DTYPES) as a host constant."""
    from onnx import numpy_helper   # only a conversion, which reads ONNX
    dtype = ONNX_DTYPES[tensor.data_type]
    arr = host_values(numpy_helper.to_array(tensor), dtype)
    return Value(tuple(arr.shape), dtype, const=arr)


def constant_of_shape(L: Lowering, shape: Value) -> list[Value]:
    """A tensor of ``shape`` filled with ``value`` (a one-element tensor,
    float 0 by default), folded on the host (a computed shape pinned to
    the declared result)."""
    if _computed(L, shape, "the shape"):
        shape = pinned(L, shape, L.declared(0), "the shape")
    dims = L.ints_of(shape, "the shape")
    t = L.attr("value")
    v = Value((1,), "float32", const=np.zeros(1, np.float32)) if t is None \
        else constant_value(t)
    if v.size != 1:
        L.fail("value has %d elements; ConstantOfShape takes one" % v.size)
    arr = np.full(dims, v.const.reshape(-1)[0], dtype=v.const.dtype)
    return [Value(tuple(dims), v.dtype, const=arr)]


#: Constant's attributes of plain numbers (opset 12): numpy's type of each
_CONSTANT_FORMS = {"value_float": np.float32, "value_floats": np.float32,
                   "value_int": np.int64, "value_ints": np.int64}


def constant(L: Lowering) -> list["Value | None"]:
    t = L.attr("value")
    for form, dtype in _CONSTANT_FORMS.items():
        if t is None and form in L.attrs:
            arr = np.array(L.attrs[form], dtype)
            return [Value(arr.shape, str(arr.dtype), const=arr)]
    if t is None:
        L.fail("only its 'value' and value_float(s) and value_int(s) forms "
               "are converted (not %s)" % ", ".join(sorted(L.attrs)))
    # one of a type davinci-atc does not know is read by no node (the
    # converter refuses it first otherwise): it has no value
    return [constant_value(t) if t.data_type in ONNX_DTYPES else None]


# ---------------------------------------------------------------------------
# tensor views and masks: Expand, Slice, Split, Trilu, the logical ops,
# IsNaN and IsInf (strided IDENTITYs, SELECT, CMP, TRIL/TRIU), Mod and
# GatherElements; Range folded on the host
# ---------------------------------------------------------------------------
def _at(L: Lowering, x: Value, offset: int) -> Value:
    """Device tensor ``x`` from element ``offset`` on, as a tensor of its
    own a strided walk can start at (an input or a weight copied into the
    workspace first: only work tensors are sliced)."""
    x = L.device(x)
    if offset == 0:
        return x
    isz = ITEMSIZE[x.dtype]
    if not L.gb.is_work(x):
        w = L.gb.work(x.shape, x.dtype)
        _copy(L, w, x, x.size * isz)
        x = w
    return L.gb.slice(x, offset * isz, (x.size - offset) * isz)


def _view_copy(L: Lowering, x: Value, offset: int, sizes, strides
               ) -> Value:
    """A dense work tensor of the view of ``x`` that starts at element
    ``offset`` with ``sizes`` and ``strides``: one strided IDENTITY (none
    for an empty view)."""
    out = L.gb.work(sizes, x.dtype)
    if _numel(sizes) == 0:
        return out
    return strided_copy(L, _at(L, x, offset), sizes, strides, out)


def expand(L: Lowering, x: Value, shape: Value) -> list[Value]:
    """Expand: x broadcast with ``shape`` (numpy's rules both ways), one
    strided IDENTITY reading the repeated dims with a stride of 0 (a
    computed shape pinned to the declared result: each value that
    dimension, or 1 where x has it)."""
    if _computed(L, shape, "the shape"):
        out, m = L.declared(0), shape.size
        if m > len(out) or len(x.shape) > len(out):
            L.fail("the shape is computed, and the declared result %s has "
                   "fewer dimensions than it or x" % list(out))
        xs = (1,) * (len(out) - len(x.shape)) + tuple(x.shape)
        tail = list(range(len(out) - m, len(out)))
        shape = pinned(L, shape, [out[j] for j in tail], "the shape",
                       [[out[j]] + ([1] if xs[j] == out[j] != 1 else [])
                        for j in tail])
    dims = L.ints_of(shape, "the shape")
    try:
        out = tuple(np.broadcast_shapes(x.shape, tuple(dims)))
    except ValueError:
        L.fail("input %s does not broadcast with shape %s"
               % (list(x.shape), dims))
    if x.is_const:
        return [Value(out, x.dtype, const=np.broadcast_to(x.const,
                                                          out).copy())]
    L.need_device(x)
    if out == x.shape:
        return [x]
    return [_view_copy(L, x, 0, out, _broadcast_strides(x.shape, out))]


def _slice_args(L: Lowering, x: Value, starts, ends, axes, steps):
    """Slice's starts, ends, axes and steps, from its inputs (opset 10)
    or attributes (before), axes normalised."""
    nd = len(x.shape)
    if starts is None:
        if L.attr("starts") is None or L.attr("ends") is None:
            L.fail("it needs starts and ends")
        st = [int(v) for v in L.attr("starts")]
        en = [int(v) for v in L.attr("ends")]
        ax = [int(v) for v in L.attr("axes", range(len(st)))]
        sp = [1] * len(st)
    else:
        if ends is None:
            L.fail("it needs ends")
        st = L.ints_of(starts, "starts")
        en = L.ints_of(ends, "ends")
        ax = list(range(len(st))) if axes is None else L.ints_of(axes,
                                                                 "axes")
        sp = [1] * len(st) if steps is None else L.ints_of(steps, "steps")
    if not len(st) == len(en) == len(ax) == len(sp):
        L.fail("starts %s, ends %s, axes %s and steps %s differ in length"
               % (st, en, ax, sp))
    ax = [_axis(L, a, nd) for a in ax]
    if len(set(ax)) != len(ax):
        L.fail("axes %s name an axis twice" % ax)
    if any(s == 0 for s in sp):
        L.fail("steps %s: a step is never 0" % sp)
    return st, en, ax, sp


def _slice_computed(L: Lowering, x: Value, starts: Value, ends: Value,
                    axes: "Value | None", steps: "Value | None"
                    ) -> list[Value]:
    """Slice whose bounds or steps are computed: each named axis'
    effective start and size computed on the device as ONNX's (negative
    bounds plus the dim, clamped; for a negative step to [0, n - 1] and
    [-1, n - 1]; size ceil((end - start) / step)), its indices start +
    i * step picked by one INDEX_SELECT; the run fails unless each size is
    the declared result's (or a step is 0). Computed axes are pinned to
    the ones whose size the declared result changes, then the first
    others, ascending."""
    nd = len(x.shape)
    out = L.declared(0)
    if out is None or len(out) != nd:
        L.fail("starts, ends or steps are computed, and the model does not "
               "declare the result's shape (value_info)")
    m = starts.size
    if ends.size != m or (steps is not None and steps.size != m) or (
            axes is not None and axes.size != m):
        L.fail("starts, ends, axes and steps differ in length")
    if axes is None:
        ax = list(range(m))
    elif axes.is_const:
        ax = [_axis(L, a, nd) for a in L.ints_of(axes, "axes")]
    else:
        changed = [j for j in range(nd) if out[j] != x.shape[j]]
        if len(changed) > m:
            L.fail("axes is computed, and the declared result %s changes "
                   "more than its %d axes of %s" % (list(out), m,
                                                    list(x.shape)))
        ax = sorted(changed + [j for j in range(nd) if j not in changed]
                    [:m - len(changed)])
        pinned(L, axes, ax, "axes", _axis_forms(ax, nd))
    if len(set(ax)) != m or any(out[j] != x.shape[j] for j in range(nd)
                                if j not in ax):
        L.fail("axes %s and the declared result %s of %s do not fit"
               % (ax, list(out), list(x.shape)))

    def i64(v: "Value | None", what: str, default: int) -> Value:
        if v is None:
            return L.gb.weight(np.full(m, default, np.int64), "int64")
        if v.dtype not in ("int32", "int64"):
            L.fail("%s is %s; ONNX gives it as INT64" % (what,
                                                        type_name(v.dtype)))
        v = L.device(v, what).with_shape((m,))
        if v.dtype == "int32":
            v = L.emit("CAST", L.gb.work((m,), "int64"), v, count=m)
        return v

    def k(value: int) -> Value:
        return L.gb.weight(np.array([value], np.int64), "int64")

    def op(name: str, a: Value, b: Value) -> Value:
        return _broadcast_op(L, name, a, b)

    def pick(c: Value, a: Value, b: Value) -> Value:
        return where(L, c, a, b)[0]
    st, en, sp = (i64(starts, "starts", 0), i64(ends, "ends", 0),
                  i64(steps, "steps", 1))
    y = L.device(x)
    for i, a in enumerate(ax):
        n, o = x.shape[a], out[a]
        s, e, p = (_at(L, v, i).with_shape((1,)) for v in (st, en, sp))
        back = _cmp(L, p, k(0), "LT")
        s = pick(_cmp(L, s, k(0), "LT"), op("ADD", s, k(n)), s)
        s = op("MIN", op("MAX", s, k(0)), pick(back, k(n - 1), k(n)))
        e = pick(_cmp(L, e, k(0), "LT"), op("ADD", e, k(n)), e)
        e = op("MIN", op("MAX", e, pick(back, k(-1), k(0))),
               pick(back, k(n - 1), k(n)))
        sign = pick(back, k(-1), k(1))
        span, q = op("MUL", op("SUB", e, s), sign), op("MUL", p, sign)
        size = op("MAX", op("DIV", op("ADD", span, op("SUB", q, k(1))), q),
                  k(0))
        _fail_run_over(L, _count_true(L, _cmp(L, size, k(o), "NE"), 1, 1), 0)
        _fail_run_over(L, _count_true(L, _cmp(L, p, k(0), "EQ"), 1, 1), 0)
        if o == 0 or _numel(y.shape) == 0:
            continue
        idx = op("ADD", op("MUL", L.gb.weight(np.arange(o, dtype=np.int64),
                                               "int64"), p), s)
        before, after = _numel(y.shape[:a]), _numel(y.shape[a + 1:])
        rows = _view_copy(L, idx, 0, (before, o), (0, 1))
        got = L.gb.work((before * o, after), y.dtype)
        L.emit("INDEX_SELECT", got, y.with_shape((before * n, after)),
               rows, mnk=(before, n, after), count=o, attr="INT64")
        y = got.with_shape(y.shape[:a] + (o,) + y.shape[a + 1:])
    if _numel(out) == 0:
        return [L.gb.work(out, x.dtype)]
    return [y.with_shape(out)]


def slice_(L: Lowering, x: Value, starts: "Value | None" = None,
           ends: "Value | None" = None, axes: "Value | None" = None,
           steps: "Value | None" = None) -> list[Value]:
    """Slice with constant bounds: the view one strided IDENTITY copies
    (its first element an offset into x, each axis' step a stride); folded
    for a constant x. A negative step of a computed x is refused: the
    device's strides are unsigned. Computed bounds or steps:
    :func:`_slice_computed`."""
    if starts is not None and ends is not None and not x.is_const and any(
            v is not None and not v.is_const
            for v in (starts, ends, axes, steps)):
        return _slice_computed(L, x, starts, ends, axes, steps)
    st, en, ax, sp = _slice_args(L, x, starts, ends, axes, steps)
    picked = [range(n) for n in x.shape]
    for s, e, a, p in zip(st, en, ax, sp):
        picked[a] = range(*slice(s, e, p).indices(x.shape[a]))
    sizes = tuple(len(r) for r in picked)
    if x.is_const:
        r = x.const[np.ix_(*picked)] if x.shape else x.const
        return [Value(sizes, x.dtype, const=r.reshape(sizes).copy())]
    L.need_device(x)
    if all(r == range(n) for r, n in zip(picked, x.shape)):
        return [x]
    if any(r.step < 0 for r in picked if len(r) > 1):
        L.fail("steps %s: a negative step of a computed tensor is not "
               "converted (the device's strides are unsigned)" % sp)
    full = _contiguous(x.shape)
    offset = sum(r.start * st for r, st in zip(picked, full)) \
        if all(sizes) else 0
    strides = tuple(st * r.step for r, st in zip(picked, full))
    return [_view_copy(L, x, offset, sizes, strides)]


def split(L: Lowering, x: Value, split: "Value | None" = None
          ) -> list[Value]:
    """Split along ``axis``: each piece one strided IDENTITY of its view
    (folded for a constant x). The sizes come from the 'split' input
    (opset 13) or attribute, else equal parts: opset 18's num_outputs
    (the last part smaller), or one per output."""
    nd = len(x.shape)
    if nd == 0:
        L.fail("its input is a scalar")
    axis = _axis(L, int(L.attr("axis", 0)), nd)
    n = x.shape[axis]
    outs = len(L.node.output)
    if _computed(L, split, "split"):
        outs_d = [L.declared(j) for j in range(outs)]
        if any(d is None or len(d) != nd for d in outs_d):
            L.fail("split is computed, and the model does not declare the "
                   "shape of each output")
        split = pinned(L, split, [d[axis] for d in outs_d], "split")
    if split is not None:
        sizes = L.ints_of(split, "split")
    elif L.attr("split") is not None:
        sizes = [int(v) for v in L.attr("split")]
    else:
        parts = int(L.attr("num_outputs", outs))
        if L.attr("num_outputs") is None and n % parts:
            L.fail("axis %d of %d elements does not split into %d equal "
                   "parts" % (axis, n, parts))
        each = -(-n // parts)
        sizes = [min(each, max(0, n - i * each)) for i in range(parts)]
    if len(sizes) != outs or sum(sizes) != n or min(sizes) < 0:
        L.fail("parts %s for %d outputs of axis %d of %d elements"
               % (sizes, outs, axis, n))
    full = _contiguous(x.shape)
    res, at = [], 0
    for size in sizes:
        shape = x.shape[:axis] + (size,) + x.shape[axis + 1:]
        if x.is_const:
            r = np.take(x.const, range(at, at + size), axis=axis)
            res.append(Value(shape, x.dtype, const=r))
        else:
            L.need_device(x)
            res.append(_view_copy(L, x, at * full[axis], shape, full))
        at += size
    return res


def trilu(L: Lowering, x: Value, k: "Value | None" = None) -> list[Value]:
    """Trilu with a constant k: TRIL or TRIU over the last two dims, the
    dims before them the matrices (folded for a constant x)."""
    if len(x.shape) < 2:
        L.fail("input is %s: Trilu takes a matrix or a batch of them"
               % list(x.shape))
    if k is not None and not k.is_const:
        return _trilu_computed_k(L, x, k)
    ks = [0] if k is None else L.ints_of(k, "k")
    if len(ks) != 1:
        L.fail("k has %d values; Trilu takes one" % len(ks))
    diag = ks[0]
    upper = bool(L.attr("upper", 1))
    if x.is_const:
        f = np.triu if upper else np.tril
        return [Value(x.shape, x.dtype, const=f(x.const, diag).copy())]
    r, c = x.shape[-2:]
    # the device's diagonal is an int32; beyond the matrix it is all or none
    diag = max(-r - 1, min(c + 1, diag))
    out = L.gb.work(x.shape, x.dtype)
    if x.size == 0:
        return [out]
    m = _numel(x.shape[:-1])
    return [L.emit("TRIU" if upper else "TRIL", out, L.device(x),
                   mnk=(m, c, r), attr=diag)]


def _trilu_computed_k(L: Lowering, x: Value, k: Value) -> list[Value]:
    """Trilu with a computed k: a CMP of each element's column minus row
    (a constant) with k, >= for the upper triangle and <= for the lower,
    and Where's SELECT of x over zeros by it (the BOOL mask repeated for
    each matrix by a stride of 0)."""
    if k.dtype not in ("int32", "int64") or k.size != 1:
        L.fail("k is %s %s; Trilu takes one INT64" % (type_name(k.dtype),
                                                     list(k.shape)))
    r, c = x.shape[-2:]
    if x.size == 0:
        return [L.gb.work(x.shape, x.dtype)]
    upper = bool(L.attr("upper", 1))
    diag = np.arange(c, dtype=np.int64)[None, :] - \
        np.arange(r, dtype=np.int64)[:, None]
    d = L.gb.weight(diag.astype(k.dtype), k.dtype)
    keep = _cmp(L, d, L.device(k, "k").with_shape((1, 1)),
                "GE" if upper else "LE")
    zero = Value((), x.dtype, const=host_values(np.zeros(()), x.dtype))
    return where(L, keep, L.device(x), zero)


def _bools(L: Lowering, *vs: Value) -> None:
    for v in vs:
        if v.dtype != "bool":
            L.fail("an input is %s; %s takes BOOL" % (type_name(v.dtype),
                                                      L.node.op_type))


def _truth(value: bool) -> Value:
    return Value((), "bool", const=np.array(value))


def logical_not(L: Lowering, x: Value) -> list[Value]:
    """Not x = where(x, false, true): a strided IDENTITY and a SELECT."""
    _bools(L, x)
    if x.is_const:
        return [Value(x.shape, "bool", const=np.logical_not(x.const))]
    return where(L, x, _truth(False), _truth(True))


def logical(L: Lowering, a: Value, b: Value) -> list[Value]:
    """And, Or and Xor of bools as Where: a and b = where(b, a, false),
    a or b = where(b, true, a), a xor b = where(b, not a, a)."""
    _bools(L, a, b)
    op = L.node.op_type
    if a.is_const and b.is_const:
        fold = {"And": np.logical_and, "Or": np.logical_or,
                "Xor": np.logical_xor}[op]
        r = fold(a.const, b.const)
        return [Value(r.shape, "bool", const=r)]
    if op == "And":
        return where(L, b, a, _truth(False))
    if op == "Or":
        return where(L, b, _truth(True), a)
    not_a, = logical_not(L, a)
    return where(L, b, not_a, a)


def is_nan(L: Lowering, x: Value) -> list[Value]:
    """IsNaN: x != x, one CMP (NE is the predicate true for a NaN)."""
    if x.dtype not in _FLOATS:
        L.fail("X is %s; IsNaN takes %s" % (type_name(x.dtype),
                                            type_list(_FLOATS)))
    if x.is_const:
        return [Value(x.shape, "bool", const=np.isnan(x.const))]
    xd = L.device(x, "X")
    return [L.emit("CMP", L.gb.work(x.shape, "bool"), xd, xd, count=x.size,
                   attr="NE")]


def is_inf(L: Lowering, x: Value) -> list[Value]:
    """IsInf: x == +inf, x == -inf, or |x| == +inf for both (one CMP with
    the infinity a weight read at a stride of 0, after an ABS)."""
    if x.dtype not in _FLOATS:
        L.fail("X is %s; IsInf takes %s" % (type_name(x.dtype),
                                            type_list(_FLOATS)))
    pos = bool(L.attr("detect_positive", 1))
    neg = bool(L.attr("detect_negative", 1))
    if x.is_const:
        c = x.const
        r = (np.isposinf(c) & pos) | (np.isneginf(c) & neg)
        return [Value(x.shape, "bool", const=r)]
    if not pos and not neg:
        return [Value(x.shape, "bool", const=np.zeros(x.shape, np.bool_))]
    xd = L.device(x, "X")
    if pos and neg:
        xd = L.emit("ABS", L.gb.work(x.shape, x.dtype), xd, count=x.size)
    inf = L.gb.weight(host_values(np.array([np.inf if pos else -np.inf]),
                                  x.dtype), x.dtype)
    strides = _contiguous(x.shape)
    walk = opdesc.Strided(x.shape, strides, strides, (0,) * len(x.shape))
    if not x.shape:
        walk = opdesc.Strided((1,), (1,), (1,), (0,))
    return [L.emit("CMP", L.gb.work(x.shape, "bool"), xd, inf,
                   strided=walk, attr="EQ")]


def _int_range(L: Lowering, start: Value, limit: Value, delta: Value
               ) -> list[Value]:
    out = L.declared(0)
    if len({start.dtype, limit.dtype, delta.dtype}) > 1 or len(out) != 1 \
            or any(v.size != 1 for v in (start, limit, delta)):
        L.fail("start, limit and delta are scalars of one type, and the "
               "result 1-D")
    n, t = out[0], start.dtype

    def dev64(v: Value, what: str) -> Value:
        v = L.device(v, what).with_shape((1,))
        return v if t == "int64" else L.emit(
            "CAST", L.gb.work((1,), "int64"), v, count=1)

    def k(value: int) -> Value:
        return L.gb.weight(np.array([value], np.int64), "int64")
    s, e, d = dev64(start, "start"), dev64(limit, "limit"), \
        dev64(delta, "delta")
    sign, = where(L, _cmp(L, d, k(0), "LT"), k(-1), k(1))
    span = _broadcast_op(L, "MUL", _broadcast_op(L, "SUB", e, s), sign)
    q = _broadcast_op(L, "MUL", d, sign)
    size = _broadcast_op(L, "MAX", _broadcast_op(
        L, "DIV", _broadcast_op(L, "ADD", span,
                                _broadcast_op(L, "SUB", q, k(1))), q), k(0))
    _fail_run_over(L, _count_true(L, _cmp(L, size, k(n), "NE"), 1, 1), 0)
    _fail_run_over(L, _count_true(L, _cmp(L, d, k(0), "EQ"), 1, 1), 0)
    iota = L.gb.weight(np.arange(n, dtype=t), t)
    if n == 0:
        return [L.gb.work((0,), t)]
    step = _broadcast_op(L, "MUL", iota, L.device(delta).with_shape((1,)))
    return [_broadcast_op(L, "ADD", step, L.device(start).with_shape((1,)))]


#: the most elements a Range of computed float bounds makes: its count
#: check multiplies by n exactly with a delta split in halves of 12 bits
_FLOAT_RANGE_MAX = 4095


def _float_range(L: Lowering, start: Value, limit: Value, delta: Value
                 ) -> list[Value]:
    """Range of computed FLOAT, FLOAT16 or BFLOAT16 bounds: start + i *
    delta in FLOAT (MUL, ADD; one CAST to a half type), n of them, n the
    declared result's. The run fails unless n is onnxruntime's count,
    max(ceil((limit - start) / delta), 0) in double (the bounds cast up
    exactly): for n = 0 limit <= start (a positive delta) or limit >=
    start (a negative one); else (n - 1) * delta < limit - start <= n *
    delta (flipped for a negative delta), each side compared exactly:
    limit - start as Knuth's TwoSum (a rounded sum and its error), k *
    delta as TwoSum of k * hi and k * lo (Veltkamp's split of delta in
    halves of 12 bits: both products exact for k < 2^12), two such pairs
    ordered by their sums, then their errors. Where that exact count is
    not double's (a bound non-zero and below 2^-10 of delta: then the
    quotient can sit within double's rounding of a step), a zero, NaN or
    infinite delta, or one outside [2^-90, 2^90] (where the split could
    lose a bit), the run fails too."""
    out = L.declared(0)
    if len({start.dtype, limit.dtype, delta.dtype}) > 1 or len(out) != 1 \
            or any(v.size != 1 for v in (start, limit, delta)):
        L.fail("start, limit and delta are scalars of one type, and the "
               "result 1-D")
    n, t = out[0], start.dtype
    if n > _FLOAT_RANGE_MAX:
        L.fail("the result has %d elements; a Range of computed float "
               "bounds makes at most %d" % (n, _FLOAT_RANGE_MAX))
    one = (1,)
    lo_d, hi_d, d = (_to_float32(L, L.device(v, what).with_shape(one), what)
                     for v, what in ((start, "start"), (limit, "limit"),
                                     (delta, "delta")))

    def k(value: float) -> Value:
        return L.gb.weight(np.array([value], np.float32), "float32")

    def op(name: str, x: Value, y: Value) -> Value:
        return L.emit(name, L.gb.work(one, "float32"), x, y, count=1)

    def two_sum(x: Value, y: Value) -> tuple[Value, Value]:
        """x + y exactly as a rounded sum and its error (Knuth)."""
        r = op("ADD", x, y)
        yy = op("SUB", r, x)
        return r, op("ADD", op("SUB", x, op("SUB", r, yy)), op("SUB", y, yy))

    def count(*bs: Value) -> Value:
        """1.0 where all of BOOL ``bs`` are true, else 0.0."""
        c = _count_true(L, bs[0], 1, 1)
        for b in bs[1:]:
            c = op("MUL", c, _count_true(L, b, 1, 1))
        return c
    a = L.emit("ABS", L.gb.work(one, "float32"), d, count=1)
    pos, neg = _cmp(L, d, k(0.0), "GT"), _cmp(L, d, k(0.0), "LT")
    if n == 0:
        good = op("MUL", op("ADD", count(pos, _cmp(L, hi_d, lo_d, "LE")),
                            count(neg, _cmp(L, hi_d, lo_d, "GE"))),
                  count(_cmp(L, a, k(np.inf), "LT")))
    else:
        tiny = _by_scalar(L, "MUL", a, 2.0 ** -10)
        zero = k(0.0)

        def safe(v: Value) -> Value:
            av = L.emit("ABS", L.gb.work(one, "float32"), v, count=1)
            return op("ADD", count(_cmp(L, av, tiny, "GE")),
                      count(_cmp(L, v, zero, "EQ")))
        ok = op("MUL", op("MUL", count(_cmp(L, a, k(2.0 ** -90), "GE"),
                                       _cmp(L, a, k(2.0 ** 90), "LE")),
                          safe(lo_d)), safe(hi_d))
        x, ex = two_sum(hi_d, L.emit("NEG", L.gb.work(one, "float32"), lo_d,
                                     count=1))
        c = _by_scalar(L, "MUL", d, 4097.0)
        hi = op("SUB", c, op("SUB", c, d))
        lo = op("SUB", d, hi)

        def times(m: int) -> tuple[Value, Value]:
            return two_sum(_by_scalar(L, "MUL", hi, float(m)),
                           _by_scalar(L, "MUL", lo, float(m)))

        def order(m: int, strict: str, tie: str) -> Value:
            """1.0 where limit - start `strict` m * delta, or equal sums
            and errors `tie` (exactly the order of the two reals)."""
            p, ep = times(m)
            return op("ADD", count(_cmp(L, x, p, strict)),
                      count(_cmp(L, x, p, "EQ"), _cmp(L, ex, ep, tie)))
        up = op("ADD", op("MUL", count(pos), order(n, "LT", "LE")),
                op("MUL", count(neg), order(n, "GT", "GE")))
        down = op("ADD", op("MUL", count(pos), order(n - 1, "GT", "GT")),
                  op("MUL", count(neg), order(n - 1, "LT", "LT")))
        good = op("MUL", ok, op("MUL", up, down))
    _fail_run_over(L, op("SUB", k(1.0), good), 0)
    if n == 0:
        return [L.gb.work((0,), t)]
    iota = L.gb.weight(np.arange(n, dtype=np.float32), "float32")
    f = _broadcast_op(L, "ADD", _broadcast_op(L, "MUL", iota, d), lo_d)
    if t == "float32":
        return [f]
    return [L.emit("CAST", L.gb.work((n,), t), f, count=n)]


def range_(L: Lowering, start: Value, limit: Value, delta: Value
           ) -> list[Value]:
    """Range of constant bounds, folded on the host (numpy's arange in
    the bounds' type, as ONNX's: ceil((limit - start) / delta) values);
    of computed INT32 or INT64 bounds, start + i * delta on the device
    (wrapping, as onnxruntime's running sum), the run failing unless
    their count is the declared result's or delta is 0."""
    if not all(v.is_const for v in (start, limit, delta)) and \
            start.dtype in ("int32", "int64") and L.declared(0) is not None:
        return _int_range(L, start, limit, delta)
    if not all(v.is_const for v in (start, limit, delta)) and \
            start.dtype in _FLOATS and L.declared(0) is not None:
        return _float_range(L, start, limit, delta)
    s, e, d = (L.const_of(v, what).reshape(()) for v, what in (
        (start, "start"), (limit, "limit"), (delta, "delta")))
    if len({start.dtype, limit.dtype, delta.dtype}) > 1:
        L.fail("start, limit and delta are of different types")
    n = max(0, int(np.ceil((float(e) - float(s)) / float(d)))) if d else 0
    if not d:
        L.fail("delta is 0")
    r = (s + np.arange(n, dtype=np.asarray(s).dtype) * d).astype(s.dtype)
    return [Value(r.shape, start.dtype, const=r)]


def _clip(L: Lowering, x: Value, lo: "Value | None", hi: "Value | None"
          ) -> list[Value]:
    """min(max(x, lo), hi) as numpy's clip: a MAX and a MIN reading the
    bound at a stride of 0 (a NaN stays NaN; lo > hi gives hi)."""
    if x.dtype == "bool":
        L.fail("input is BOOL; Clip takes numbers")
    for v, what in ((lo, "min"), (hi, "max")):
        if v is not None and (v.dtype != x.dtype or v.size != 1):
            L.fail("%s is %s %s; Clip takes one %s" % (
                what, type_name(v.dtype), list(v.shape), type_name(x.dtype)))
    if x.is_const and all(v is None or v.is_const for v in (lo, hi)):
        r = x.const
        if lo is not None:
            r = np.maximum(r, lo.const.reshape(()))
        if hi is not None:
            r = np.minimum(r, hi.const.reshape(()))
        return [Value(x.shape, x.dtype, const=host_values(r, x.dtype))]
    if lo is None and hi is None:
        return [x]
    y = L.device(x).with_shape(x.shape or (1,))
    ones = (1,) * len(y.shape)
    for op, v, what in (("MAX", lo, "min"), ("MIN", hi, "max")):
        if v is not None:
            y = _broadcast_op(L, op, y, L.device(v, what).with_shape(ones))
    return [y.with_shape(x.shape)]


def clip_attributes(L: Lowering, x: Value) -> list[Value]:
    """Clip before opset 11: its bounds are float attributes, by default
    the float's lowest and largest (an infinity becomes one of them)."""
    if x.dtype not in _FLOATS:
        L.fail("input is %s; Clip before opset 11 takes %s"
               % (type_name(x.dtype), type_list(_FLOATS)))
    big = float(np.finfo(np.float32).max)
    lo, hi = (Value((), x.dtype, const=host_values(
        np.array(L.attr(name, default), np.float32), x.dtype))
        for name, default in (("min", -big), ("max", big)))
    return _clip(L, x, lo, hi)


def clip(L: Lowering, x: Value, lo: "Value | None" = None,
         hi: "Value | None" = None) -> list[Value]:
    """Clip from opset 11: its bounds are optional inputs, constant or
    computed scalars (ReLU6 is Clip(x, 0, 6))."""
    return _clip(L, x, lo, hi)


def _float_mod(L: Lowering, a: Value, b: Value, fmod: int) -> list[Value]:
    """Mod of computed floats, exact as C's fmod: in FLOAT (a FLOAT16 or
    BFLOAT16 cast up and back, both exact), |a| reduced by |b| * 2^k for
    k from the top of the type's range down to 0 wherever that is at
    most what remains (binary long division: each SUB exact by Sterbenz'
    lemma, as what remains is below twice it), one MUL, CMP, SUB and
    in-place SELECT a step; then a's sign (a -0 kept), NaN for an
    infinite a, a zero or NaN b; for fmod 0 b added where the signs
    differ (numpy's mod; a zero keeps a's sign)."""
    shape = _broadcast_shape(L, a, b) or (1,)
    n = _numel(shape)
    flat = (n,)

    def full(v: Value, what: str) -> Value:
        v = L.device(v, what).with_shape(v.shape or (1,))
        st = _broadcast_strides(v.shape, shape)
        v = _view_copy(L, v, 0, shape, st).with_shape(flat)
        return _to_float32(L, v, what)
    x, y = full(a, "A"), full(b, "B")
    r = L.emit("ABS", L.gb.work(flat, "float32"), x, count=n)
    m = L.emit("ABS", L.gb.work(flat, "float32"), y, count=n)
    top = 40 if a.dtype == "float16" else 276
    t = L.gb.work(flat, "float32")
    d = L.gb.work(flat, "float32")
    for k in range(top, -1, -1):
        src, left = m, k
        while True:         # 2^k in factors FLOAT holds (2^127 at most)
            _by_scalar(L, "MUL", src, 2.0 ** min(left, 127), out=t)
            src, left = t, left - min(left, 127)
            if not left:
                break
        fits = _cmp(L, t, r, "LE")
        L.emit("SUB", d, r, t, count=n)
        L.emit("SELECT", r, d, fits, count=n)

    def put(dst: Value, cond: Value, value: "float | Value") -> None:
        """dst = cond ? value : dst (a number at a stride of 0)."""
        if isinstance(value, Value):
            L.emit("SELECT", dst, value, cond, count=n)
            return
        w = L.gb.weight(np.array([value], np.float32), "float32")
        L.emit("SELECT", dst, w, cond,
               strided=opdesc.Strided(flat, (1,), (0,), (1,)))
    neg = _cmp(L, L.emit("RECIPROCAL", L.gb.work(flat, "float32"), x,
                         count=n), L.gb.weight(np.zeros(1, np.float32),
                                               "float32"), "LT")
    put(r, neg, L.emit("NEG", L.gb.work(flat, "float32"), r, count=n))
    if not fmod:
        zero = L.gb.weight(np.zeros(1, np.float32), "float32")
        r_neg, b_neg = _cmp(L, r, zero, "LT"), _cmp(L, y, zero, "LT")
        differ, = where(L, b_neg, where(L, r_neg, _truth(False),
                                        _truth(True))[0], r_neg)
        fix, = where(L, _cmp(L, r, zero, "NE"), differ, _truth(False))
        put(r, fix.with_shape(flat), _broadcast_op(L, "ADD", r, y))
    inf = L.gb.weight(np.array([np.inf], np.float32), "float32")
    zero = L.gb.weight(np.zeros(1, np.float32), "float32")
    for cond in (_cmp(L, L.emit("ABS", L.gb.work(flat, "float32"), x,
                                count=n), inf, "EQ"),
                 _cmp(L, y, zero, "EQ"), _cmp(L, y, y, "NE")):
        put(r, cond, np.nan)
    if a.dtype != "float32":
        r = L.emit("CAST", L.gb.work(flat, a.dtype), r, count=n)
    return [r.with_shape(_broadcast_shape(L, a, b))]


def mod(L: Lowering, a: Value, b: Value) -> list[Value]:
    """Mod: of constants folded on the host (numpy's mod, the sign of the
    divisor; C's fmod, of the dividend, with fmod 1). Of computed integers
    r = a - trunc(a / b) * b (DIV truncates, exact for every pair but
    a / 0, which ONNX leaves undefined), and for fmod 0 r + b where r is
    not 0 and its sign is not b's (CMPs, and Where's SELECTs), operands
    broadcast by stride-0 walks. Computed floats: :func:`_float_mod`
    (a - q * b is not C's fmod in floating point)."""
    if a.dtype != b.dtype:
        L.fail("A is %s and B %s; Mod takes one type"
               % (type_name(a.dtype), type_name(b.dtype)))
    fmod = int(L.attr("fmod", 0))
    floats = a.dtype in _FLOATS + ("float64",)
    shape = _broadcast_shape(L, a, b)
    if a.is_const and b.is_const:
        x, y = a.const, b.const
        if np.issubdtype(x.dtype, np.integer) and np.any(y == 0):
            L.fail("B holds a 0: an integer Mod by 0 is undefined")
        with np.errstate(all="ignore"):
            r = np.fmod(x, y) if fmod else np.mod(x, y)
        return [Value(r.shape, a.dtype, const=host_values(r, a.dtype))]
    if a.dtype in _FLOATS:
        return _float_mod(L, a, b, fmod)
    if floats or a.dtype == "bool":
        L.fail("A or B is a computed %s tensor: davinci converts a Mod of "
               "computed integers and floats" % type_name(a.dtype))
    # a scalar as one element: a strided walk has a dimension at least
    ad, bd = (L.device(v, what).with_shape(v.shape or (1,))
              for v, what in ((a, "A"), (b, "B")))
    q = _broadcast_op(L, "DIV", ad, bd)
    r = _broadcast_op(L, "SUB", ad, _broadcast_op(L, "MUL", q, bd))
    if fmod:
        return [r.with_shape(shape)]
    zero = L.gb.weight(np.zeros(1, a.dtype), a.dtype)

    def cmp(v: Value, predicate: str) -> Value:
        """v @predicate 0, a BOOL of v's shape."""
        st = _contiguous(v.shape)
        walk = opdesc.Strided(v.shape, st, st, (0,) * len(v.shape))
        return L.emit("CMP", L.gb.work(v.shape, "bool"), v, zero,
                      strided=walk, attr=predicate)
    r_neg, b_neg = cmp(r, "LT"), cmp(bd, "LT")
    not_r_neg, = where(L, r_neg, _truth(False), _truth(True))
    signs_differ, = where(L, b_neg, not_r_neg, r_neg)      # xor
    fix, = where(L, cmp(r, "NE"), signs_differ, _truth(False))
    y, = where(L, fix, _broadcast_op(L, "ADD", r, bd), r)
    return [y.with_shape(shape)]


def gather_elements(L: Lowering, data: Value, idx: Value) -> list[Value]:
    """GatherElements: folded when data and indices are constants (numpy's
    take_along_axis); else one INDEX_SELECT of k = 1 over the data with
    ``axis`` moved last (a strided IDENTITY, cut to the indices' other
    dims), each position's indices a batch (moved likewise), and the result
    moved back. Negative indices count from the end (wrapped on the device
    when computed); one outside the axis fails the run, nothing written."""
    if idx.dtype not in ("int32", "int64"):
        L.fail("indices are %s; GatherElements takes INT32 or INT64"
               % type_name(idx.dtype))
    r = len(data.shape)
    if len(idx.shape) != r or r == 0:
        L.fail("data %s and indices %s: one rank, at least 1"
               % (list(data.shape), list(idx.shape)))
    axis = _axis(L, int(L.attr("axis", 0)), r)
    n = data.shape[axis]
    if any(i > d for j, (i, d) in enumerate(zip(idx.shape, data.shape))
           if j != axis):
        L.fail("indices %s reach past data %s beyond axis %d"
               % (list(idx.shape), list(data.shape), axis))
    if idx.is_const:
        i = idx.const
        if np.any((i < -n) | (i >= n)):
            L.fail("indices outside the %d elements of axis %d" % (n, axis))
        i = np.where(i < 0, i + n, i)
        if data.is_const:
            cut = data.const[tuple(slice(0, m) if j != axis else slice(None)
                                   for j, m in enumerate(idx.shape))]
            got = np.take_along_axis(cut, i, axis=axis)
            return [Value(got.shape, data.dtype, const=got)]
        idx = Value(idx.shape, idx.dtype, const=i)
    out = L.gb.work(idx.shape, data.dtype)
    if idx.size == 0:
        return [out]
    L.need_device(data, "data")
    perm = [j for j in range(r) if j != axis] + [axis]
    others = tuple(idx.shape[j] for j in perm[:-1])
    batches, count = _numel(others), idx.shape[axis]
    full = _contiguous(data.shape)
    table = _view_copy(L, data, 0, others + (n,),
                       tuple(full[j] for j in perm))
    if idx.is_const:
        index = L.gb.weight(np.ascontiguousarray(
            idx.const.transpose(perm)), idx.dtype)
    else:
        index = _wrapped(L, _permuted(L, L.device(idx, "indices"), perm), n)
    flat = L.gb.work((batches, count), data.dtype)
    L.emit("INDEX_SELECT", flat, table.with_shape((batches * n, 1)),
           index.with_shape((batches, count)), mnk=(batches, n, 1),
           count=count, attr=idx.dtype.upper())
    moved = flat.with_shape(others + (count,))
    return [_permuted(L, moved, [int(j) for j in np.argsort(perm)])]


def uint64_div_mod(L: Lowering, a: Value, b: Value, op: str) -> list[Value]:
    """Div (or Mod) of UINT64s carried as their bits in INT64 (atc.carry)
    by the device's signed ops, exactly: a divisor of 2^63 or more
    divides once or not at all (an unsigned compare: both plus 2^63); a
    smaller one divides a dividend below 2^63 as signed, and one of 2^63
    or more as a' + 2^63 (a' = a - 2^63): a' / b and 2^63 / b ((2^63 - 1)
    / b, its remainder plus 1) summed, the remainders' sum carried once
    (it may pass 2^63: wrapping, compared unsigned)."""
    shape = _broadcast_shape(L, a, b) or (1,)
    n = _numel(shape)

    def full(v: Value, what: str) -> Value:
        v = L.device(v, what).with_shape(v.shape or (1,))
        return _view_copy(L, v, 0, shape, _broadcast_strides(
            v.shape, shape)).with_shape((n,))

    def k(value: int) -> Value:
        return L.gb.weight(np.array([value], np.int64), "int64")

    def op2(name: str, x: Value, y: Value) -> Value:
        return _broadcast_op(L, name, x, y)

    def pick(c: Value, x: Value, y: Value) -> Value:
        return where(L, c, x, y)[0]

    def unsigned_lt(x: Value, y: Value) -> Value:
        return _cmp(L, op2("ADD", x, k(-(1 << 63))),
                    op2("ADD", y, k(-(1 << 63))), "LT")

    def as_int(c: Value) -> Value:
        return L.emit("CAST", L.gb.work((n,), "int64"), c, count=n)
    x, y = full(a, "A"), full(b, "B")
    zero = k(0)
    # b >= 2^63: the quotient is a >= b
    q1 = as_int(where(L, unsigned_lt(x, y), _truth(False),
                      _truth(True))[0])
    r1 = op2("SUB", x, op2("MUL", q1, y))
    # b < 2^63, a < 2^63: signed
    q2 = op2("DIV", x, y)
    r2 = op2("SUB", x, op2("MUL", q2, y))
    # b < 2^63, a >= 2^63: (a - 2^63) / b and 2^63 / b
    lo = op2("ADD", x, k(-(1 << 63)))
    qa = op2("DIV", lo, y)
    ra = op2("SUB", lo, op2("MUL", qa, y))
    qm = op2("DIV", k((1 << 63) - 1), y)
    rm = op2("ADD", op2("SUB", k((1 << 63) - 1), op2("MUL", qm, y)), k(1))
    whole = _cmp(L, rm, y, "EQ")            # b divides 2^63
    q0 = op2("ADD", qm, as_int(whole))
    r0 = pick(whole, zero, rm)
    s = op2("ADD", ra, r0)
    carry = as_int(where(L, unsigned_lt(s, y), _truth(False),
                         _truth(True))[0])
    q3 = op2("ADD", op2("ADD", qa, q0), carry)
    r3 = op2("SUB", s, op2("MUL", carry, y))
    big_b, big_a = _cmp(L, y, zero, "LT"), _cmp(L, x, zero, "LT")
    if op == "Div":
        out = pick(big_b, q1, pick(big_a, q3, q2))
    else:
        out = pick(big_b, r1, pick(big_a, r3, r2))
    return [out.with_shape(_broadcast_shape(L, a, b))]


# ---------------------------------------------------------------------------
# DOUBLE, which the device has not, as a model's input or output: its bits
# carried in an INT64 (atc.carry), through Cast to and from FLOAT and
# FLOAT16 only, by integer arithmetic on the bits
# ---------------------------------------------------------------------------
def _i64(L: Lowering, value: int) -> Value:
    return L.gb.weight(np.array([value], np.int64), "int64")


def _ops64(L: Lowering):
    def op(name: str, a: Value, b: "Value | int") -> Value:
        return _broadcast_op(L, name, a, b if isinstance(b, Value)
                             else _i64(L, b))

    def cmp(a: Value, b: "Value | int", pred: str) -> Value:
        return _cmp(L, a, b if isinstance(b, Value) else _i64(L, b), pred)

    def pick(c: Value, a: "Value | int", b: "Value | int") -> Value:
        a, b = (v if isinstance(v, Value) else _i64(L, v) for v in (a, b))
        return where(L, c, a, b)[0]
    return op, cmp, pick


def _float_fields(L: Lowering, f: Value) -> tuple[Value, Value, Value]:
    """FLOAT tensor ``f`` (n,) as INT64 sign (BOOL), exponent field and
    mantissa field of its bits."""
    op, cmp, pick = _ops64(L)
    n = f.size
    bits = L.emit("CAST", L.gb.work((n,), "int64"),
                  Value((n,), "int32", f.tid), count=n)
    neg = cmp(bits, 0, "LT")
    mag = pick(neg, op("ADD", bits, 1 << 31), bits)
    e = op("DIV", mag, 1 << 23)
    return neg, e, op("SUB", mag, op("MUL", e, 1 << 23))


def float_to_double(L: Lowering, x: Value) -> Value:
    """A computed FLOAT or FLOAT16 tensor as DOUBLE bits (exact: numpy's
    widening, NaN payloads shifted as the hardware's): exponent rebiased,
    mantissa moved up 29 bits; a subnormal FLOAT first scaled by 2^64
    (exact, normal then) and its exponent taken down by 64."""
    op, cmp, pick = _ops64(L)
    n = x.size
    f = _to_float32(L, x.with_shape((n,)), "input")
    if not L.gb.is_work(f):
        w = L.gb.work((n,), "float32")
        _copy(L, w, f, 4 * n)
        f = w
    neg, e, m = _float_fields(L, f)
    _, es, ms = _float_fields(L, _by_scalar(L, "MUL", f, 2.0 ** 64))
    normal = op("ADD", op("MUL", op("ADD", e, 896), 1 << 52),
                op("MUL", m, 1 << 29))
    special = op("ADD", _i64(L, 2047 << 52), op("MUL", m, 1 << 29))
    tiny = op("ADD", op("MUL", op("ADD", es, 832), 1 << 52),
              op("MUL", ms, 1 << 29))
    tiny = pick(cmp(m, 0, "EQ"), 0, tiny)
    bits = pick(cmp(e, 255, "EQ"), special,
                pick(cmp(e, 0, "EQ"), tiny, normal))
    bits = pick(neg, op("ADD", bits, -(1 << 63)), bits)
    return dataclasses.replace(bits.with_shape(x.shape), carries="float64")


def double_to_float(L: Lowering, d: Value) -> Value:
    """DOUBLE bits as FLOAT, rounded once to nearest even as numpy's cast:
    the mantissa's low 29 bits rounded (a carry into the exponent, up to
    inf), a result below FLOAT's normals the integer significand divided
    by 2^shift (2^shift from a table by INDEX_SELECT) and rounded; NaN
    canonical."""
    op, cmp, pick = _ops64(L)
    n = d.size
    bits = Value((n,), "int64", d.tid)
    neg = cmp(bits, 0, "LT")
    mag = pick(neg, op("ADD", bits, -(1 << 63)), bits)
    e = op("DIV", mag, 1 << 52)
    m = op("SUB", mag, op("MUL", e, 1 << 52))

    def rounded(num: Value, den: Value) -> Value:
        q = op("DIV", num, den)
        rem = op("SUB", num, op("MUL", q, den))
        half = op("DIV", den, 2)
        odd = cmp(op("SUB", q, op("MUL", op("DIV", q, 2), 2)), 1, "EQ")
        up = pick(cmp(rem, half, "GT"), 1,
                  pick(cmp(rem, half, "EQ"), pick(odd, 1, 0), 0))
        return op("ADD", q, up)
    normal = op("ADD", op("MUL", op("SUB", e, 896), 1 << 23),
                rounded(m, _i64(L, 1 << 29)))
    sig = pick(cmp(e, 0, "EQ"), m, op("ADD", m, 1 << 52))
    shift = op("MAX", op("MIN", op("SUB", _i64(L, 926), e), 62), 0)
    table = L.gb.weight((np.int64(1) << np.arange(63, dtype=np.int64)
                         ).reshape(63, 1), "int64")
    den = L.emit("INDEX_SELECT", L.gb.work((n, 1), "int64"), table,
                 shift.with_shape((1, n)), mnk=(1, 63, 1), count=n,
                 attr="INT64").with_shape((n,))
    small = rounded(sig, den)
    out = pick(cmp(e, 896, "LE"), small,
               pick(cmp(e, 1151, "GE"), 255 << 23, normal))
    nan = pick(cmp(m, 0, "EQ"), 255 << 23, 0x7FC00000)
    out = pick(cmp(e, 2047, "EQ"), nan, out)
    out = pick(neg, op("ADD", out, 1 << 31), out)
    low = L.emit("CAST", L.gb.work((n,), "int32"), out, count=n)
    return Value(d.shape, "float32", low.tid)


def cast_carried_double(L: Lowering, x: Value) -> list[Value]:
    """Cast of a DOUBLE input (its bits carried in an INT64): to FLOAT
    (:func:`double_to_float`), to FLOAT16 or BFLOAT16 through FLOAT (a
    second rounding), to DOUBLE itself."""
    to = ONNX_DTYPES.get(int(L.attr("to", 1)))
    if to == "float64":
        return [x]
    if to not in _FLOATS:
        L.fail("input is DOUBLE, which davinci-atc carries in INT64 and "
               "casts to FLOAT, FLOAT16 or BFLOAT16 only (not %s)"
               % onnx_type_name(int(L.attr("to", 1))))
    f = double_to_float(L, L.device(x))
    if to == "float32":
        return [f]
    return [L.emit("CAST", L.gb.work(f.shape, to), f, count=f.size)]


#: the ops checking a computed input :func:`pinned` pins
_PINNED = ("CMP", "CAST", "REDUCE_SUM", "INDEX_SELECT")

#: every ONNX op davinci-atc converts, one row per registration: a handler
#: of the op at a range of opsets (where its meaning changed) and the
#: device ops it emits; tests/atc/test_registry.py converts each and
#: compares what it emits with ``op`` and ``also``
RULES: tuple[Rule, ...] = (
    # MEMCPY: an operand broadcast bit for bit
    Rule("Add", binary, "ADD", ("MEMCPY",)),
    Rule("Sub", binary, "SUB", ("MEMCPY",)),
    Rule("Mul", binary, "MUL", ("MEMCPY",)),
    # a UINT64's (atc.carry): Div by signed divisions of the halves, an
    # order as the bits plus 2^63 (ADD)
    Rule("Div", binary, "DIV", ("MEMCPY", "ADD", "SUB", "MUL", "CMP",
                                "CAST", "SELECT", "IDENTITY")),
    Rule("Max", variadic, "MAX", ("MEMCPY", "ADD")),
    Rule("Min", variadic, "MIN", ("MEMCPY", "ADD")),
    Rule("Relu", unary, "RELU"),
    Rule("Exp", unary, "EXP"),
    Rule("Sqrt", unary, "SQRT"),
    Rule("Abs", unary, "ABS"),
    Rule("LeakyRelu", leaky_relu, "LEAKY_RELU"),
    Rule("Tanh", unary, "TANH"),
    Rule("Sigmoid", unary, "SIGMOID"),
    Rule("Erf", unary, "ERF"),
    Rule("Log", unary, "LOG"),
    Rule("Reciprocal", unary, "RECIPROCAL"),
    Rule("Neg", unary, "NEG"),
    Rule("Gelu", gelu, "GELU", since=20),
    # a computed integer exponent CAST and pinned (_PINNED); an integer
    # power by squaring
    Rule("Pow", power, "POW", ("MEMCPY", "ABS", "DIV", "SUB", "MUL",
                               "SELECT", "IDENTITY") + _PINNED),
    # a Transpose's result becomes their transpose flag
    Rule("MatMul", matmul, "MATMUL", ("MEMCPY",), takes_transposed=True),
    Rule("Gemm", gemm, "MATMUL", ("AXPY", "ADD", "MEMCPY"),
         takes_transposed=True),
    Rule("Softmax", softmax_flattened, "SOFTMAX", until=12),
    Rule("Softmax", softmax_one_axis, "SOFTMAX", ("IDENTITY",), since=13),
    Rule("LogSoftmax", softmax_flattened, "LOG_SOFTMAX", until=12),
    Rule("LogSoftmax", softmax_one_axis, "LOG_SOFTMAX", ("IDENTITY",),
         since=13),
    # leading axes moved last (IDENTITY); computed axes pinned, or each
    # choice reduced and one picked (SELECT, MIN)
    Rule("ReduceSum", reduce_sum, "REDUCE_SUM",
         ("IDENTITY", "SELECT", "MIN", "CMP", "CAST", "INDEX_SELECT")),
    Rule("ReduceMean", reduce_mean, "REDUCE_SUM",
         ("DIV", "IDENTITY", "SELECT", "MIN", "CMP", "CAST",
          "INDEX_SELECT")),
    # to and from DOUBLE (carried as its bits): integer arithmetic on them
    Rule("Cast", cast, "CAST", ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN",
                                "CMP", "SELECT", "IDENTITY", "MEMCPY",
                                "INDEX_SELECT")),
    Rule("ReluGrad", relu_grad, "RELU_GRAD", ("CMP",), domain=MS_DOMAIN),
    # views: another shape of the same storage (Value.with_shape refuses a
    # shape that would need a Transpose's data moved)
    # (a computed shape or axes pinned: _PINNED)
    Rule("Reshape", reshape, also=_PINNED, takes_transposed=True),
    Rule("Flatten", flatten, takes_transposed=True),
    Rule("Squeeze", squeeze, also=_PINNED, takes_transposed=True),
    Rule("Unsqueeze", unsqueeze, also=_PINNED + ("MIN",),
         takes_transposed=True),
    Rule("Identity", identity, takes_transposed=True),
    Rule("Dropout", dropout, also=_PINNED + ("MUL",),
         takes_transposed=True),
    Rule("Transpose", transpose, also=("IDENTITY",)),
    # CNN ops: parameter blocks and strided tasks
    Rule("Conv", conv, "CONV2D"),
    # Indices made flat (DIV, SUB, MUL, ADD); INT8 and UINT8 through FLOAT
    # (CAST); a window one MAX or ADD a tap
    Rule("MaxPool", max_pool, "MAXPOOL2D", ("MEMCPY", "IDENTITY", "ADD",
                                            "DIV", "SUB", "MUL", "CAST",
                                            "MAX")),
    Rule("AveragePool", average_pool, "AVGPOOL2D", ("MEMCPY", "IDENTITY",
                                                    "MUL", "ADD", "DIV")),
    Rule("GlobalAveragePool", global_pool, "AVGPOOL2D"),
    Rule("GlobalMaxPool", global_pool, "MAXPOOL2D"),
    Rule("BatchNormalization", batch_norm, "MUL", ("ADD", "DIV", "IDENTITY",
                                                   "REDUCE_SUM", "SQRT",
                                                   "SUB")),
    Rule("LayerNormalization", layer_norm, "REDUCE_SUM",
         ("MUL", "SUB", "ADD", "SQRT", "DIV", "CAST"), since=17),
    Rule("LRN", lrn, "AVGPOOL2D", ("MUL", "ADD", "POW", "MEMCPY",
                                   "IDENTITY")),
    Rule("Equal", compare, "CMP"),
    *(Rule(name, compare, "CMP", ("ADD",), since=since) for name, since in (
        ("Less", 1), ("Greater", 1), ("LessOrEqual", 12),
        ("GreaterOrEqual", 12))),
    Rule("Where", where, "SELECT", ("IDENTITY",), since=9),
    Rule("Sum", variadic, "ADD", ("MEMCPY",)),
    # folded on the host
    Rule("Constant", constant),
    Rule("ConstantOfShape", constant_of_shape, also=_PINNED),
    Rule("Shape", shape_of),
    Rule("Gather", gather, "INDEX_SELECT", ("MEMCPY", "CMP", "ADD",
                                            "SELECT")),
    Rule("Concat", concat_device, also=("IDENTITY",)),
    # views and masks: strided IDENTITYs, SELECT, CMP, a triangle op
    Rule("Expand", expand, also=("IDENTITY",) + _PINNED, since=8),
    # computed bounds: starts and sizes on the device, INDEX_SELECTs
    Rule("Slice", slice_, also=("MEMCPY", "IDENTITY", "ADD", "SUB", "MUL",
                                "DIV", "MAX", "MIN", "SELECT") + _PINNED),
    Rule("Split", split, also=("MEMCPY", "IDENTITY") + _PINNED, since=2),
    # a computed k: a CMP mask and Where's SELECT
    Rule("Trilu", trilu, "TRIU", ("TRIL", "CMP", "IDENTITY", "SELECT"),
         since=14),
    Rule("Not", logical_not, "SELECT", ("IDENTITY",)),
    *(Rule(name, logical, "SELECT", ("IDENTITY",), since=7)
      for name in ("And", "Or", "Xor")),
    Rule("IsNaN", is_nan, "CMP", since=9),
    Rule("IsInf", is_inf, "CMP", ("ABS",), since=10),
    # computed integer bounds: start + i * delta, the count checked
    Rule("Range", range_, also=("ADD", "SUB", "MUL", "DIV", "MAX",
                                "SELECT", "IDENTITY", "NEG",
                                "ABS") + _PINNED, since=11),
    Rule("Clip", clip_attributes, "MAX", ("MIN",), until=10),
    Rule("Clip", clip, "MAX", ("MIN",), since=11),
    # computed floats: binary long division (ABS, MUL, CMP, SUB, SELECT),
    # a's sign back (RECIPROCAL, NEG), FLOAT16 and BFLOAT16 in FLOAT
    Rule("Mod", mod, "DIV", ("MUL", "SUB", "ADD", "CMP", "SELECT",
                             "IDENTITY", "ABS", "NEG", "RECIPROCAL",
                             "CAST"), since=10),
    Rule("GatherElements", gather_elements, "INDEX_SELECT",
         ("IDENTITY", "MEMCPY", "CMP", "ADD", "SELECT"), since=11),
)


def _check_rules(rules) -> None:
    """Each device op a rule names is the schema's, and one op's
    registrations do not overlap in opsets."""
    for r in rules:
        for op in r.emits:
            schema.by_name(op)          # KeyError: no such device op
    for i, r in enumerate(rules):
        for o in rules[i + 1:]:
            if (o.domain, o.op_type) == (r.domain, r.op_type) and \
                    (r.covers(o.since) or o.covers(r.since)):
                raise ValueError("%s is registered twice, at opsets %s and "
                                 "%s" % (r.name, r.opsets, o.opsets))


_check_rules(RULES)


def find_rule(domain: str, op_type: str, opset: int) -> "Rule | None":
    """The registration that lowers ``op_type`` of ``domain`` ("" for
    ONNX's) at the model's ``opset`` of that domain, or None."""
    return next((r for r in RULES if (r.domain, r.op_type) ==
                 (domain, op_type) and r.covers(opset)), None)


def check_inputs(L: Lowering, args) -> list:
    """The node's inputs as its handler takes them: a Transpose's result
    not yet done stays so for a rule that takes it (MatMul and Gemm fold
    it into their transpose flag, views only look at it in another shape:
    Rule.takes_transposed), and is made dense (:func:`dense`) for any
    other."""
    if L.rule.takes_transposed:
        return list(args)
    return [v if v is None else dense(L.gb, v, L.where) for v in args]


def supported_ops() -> list[str]:
    """The ONNX ops davinci-atc converts, ONNX's own first (``Relu``),
    then those of other domains (``com.microsoft:ReluGrad``)."""
    names = {(r.domain, r.name) for r in RULES}
    return [n for _, n in sorted(names)]

# SPDX-License-Identifier: GPL-2.0
"""Integer types the device has not (INT16, UINT16, UINT32, UINT64) as a
model's inputs and outputs, carried on the device in a wider type it has.

An input's bytes are moved into the low bytes of a zeroed INT32 (INT16,
UINT16) or INT64 (UINT32) tensor by one strided IDENTITY of bytes (an
INT16 into the high half, then divided by 65536: its sign extended
exactly); a UINT64 is its own bits as an INT64. Add, Sub, Mul and Sum of
the carried values are the narrow type's modulo its width once an output
keeps only the low bytes (two's complement arithmetic is congruent modulo
every power of two); Div, Mod, Max, Min and the comparisons are exact on
the widened values, which are the same numbers; a UINT64's comparisons,
Max and Min run on the bits plus 2^63 (the order of unsigned numbers as
signed ones), and its Div and Mod are lower.uint64_div_mod's (signed
divisions of the halves, exact). A DOUBLE is its bits in an INT64 too,
which only a Cast to FLOAT, FLOAT16 or BFLOAT16 reads (rounded once to
FLOAT by integer arithmetic on the bits: lower.double_to_float); a Cast
of a computed FLOAT or FLOAT16 to DOUBLE writes them (exact:
lower.float_to_double). Any other op reading a
carried value is refused (:func:`check`), so nothing reads the carrier as
if it were the value's type."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import omfile as F
from .. import opdesc
from .builder import ConversionError, GearBuilder, Value, type_name

__all__ = ["CARRIERS", "CARRIED_OPS", "widen", "narrow", "check",
           "ordered", "carried_result"]

#: a model's integer input or output type -> the device type carrying it
CARRIERS = {"int16": "int32", "uint16": "int32", "uint32": "int64",
            "uint64": "int64", "float64": "int64"}
_WIDTH = {"int16": 2, "uint16": 2, "uint32": 4, "uint64": 8, "float64": 8}
#: ONNX ops that take carried values, and give one (None: BOOL)
CARRIED_OPS = {"Add": True, "Sub": True, "Mul": True, "Sum": True,
               "Div": True, "Mod": True, "Max": True, "Min": True,
               "Equal": False, "Less": False, "Greater": False,
               "LessOrEqual": False, "GreaterOrEqual": False}
#: ops a UINT64 takes only as its bits plus 2^63 (an order)
_UINT64_ORDERED = ("Max", "Min", "Less", "Greater", "LessOrEqual",
                   "GreaterOrEqual")
#: the ops a DOUBLE (its bits in an INT64) takes: Cast to and from FLOAT
#: and FLOAT16 (lower.cast_carried_double, lower.float_to_double)
_DOUBLE_OPS = {"Cast": True}


def _bytes(v: Value, rows: int, cols: int) -> Value:
    """Tensor ``v``'s storage seen as UINT8 rows of ``cols`` bytes."""
    return Value((rows, cols), "uint8", v.tid)


def _by_scalar(gb: GearBuilder, op: str, v: Value, value: int,
               where: str) -> Value:
    w = gb.weight(np.array([value], v.dtype), v.dtype)
    n = max(v.size, 1)
    walk = opdesc.Strided((n,), (1,), (1,), (0,))
    out = gb.work(v.shape, v.dtype)
    gb.emit(op, out.with_shape((n,)), v.with_shape((n,)), w, strided=walk,
            where=where)
    return dataclasses.replace(out, carries=v.carries)


def widen(gb: GearBuilder, index: int, shape, dtype: str, name: str
          ) -> Value:
    """Model input ``index`` of type ``dtype`` (a key of CARRIERS) as the
    device tensor carrying it."""
    shape = tuple(int(d) for d in shape)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    width, wide = _WIDTH[dtype], CARRIERS[dtype]
    io = gb.io(F.KIND_INPUT, index, shape, "uint8", nbytes=n * width)
    if width == 8:          # UINT64, DOUBLE: the bits as they are
        return Value(shape, "int64", io.tid, carries=dtype)
    out = gb.work(shape, wide)
    where = "input %r (%s, carried in %s)" % (name, type_name(dtype),
                                              type_name(wide))
    if n == 0:
        return dataclasses.replace(out, carries=dtype)
    size = 4 if wide == "int32" else 8
    gb.emit("MEMSET", _bytes(out, 1, n * size).with_shape((n * size,)),
            count=n * size, attr=0, where=where)
    at = 2 if dtype == "int16" else 0
    dst = gb.slice(out, at, n * size - at)
    walk = opdesc.Strided((n, width), (size, 1), (width, 1))
    gb.emit("IDENTITY", _bytes(dst, 1, n * size - at).with_shape(
        (n * size - at,)), _bytes(io, 1, n * width).with_shape(
            (n * width,)), strided=walk, where=where)
    out = dataclasses.replace(out, carries=dtype)
    if dtype == "int16":            # s * 65536 / 65536: the sign extended
        out = _by_scalar(gb, "DIV", out, 1 << 16, where)
    return out


def narrow(gb: GearBuilder, v: Value, index: int, where: str) -> None:
    """Graph output ``index``, a carried value, as its type: the low bytes
    of each carrier element."""
    dtype = v.carries
    width = _WIDTH[dtype]
    n = v.size
    dst = gb.io(F.KIND_OUTPUT, index, v.shape, "uint8", nbytes=n * width)
    if n == 0:
        return
    src = gb.device(v)
    if width == 8:
        gb.emit("MEMCPY", dst, src, count=n * 8, where=where)
        return
    size = 4 if v.dtype == "int32" else 8
    walk = opdesc.Strided((n, width), (width, 1), (size, 1))
    gb.emit("IDENTITY", _bytes(dst, 1, n * width).with_shape((n * width,)),
            _bytes(src, 1, n * size).with_shape((n * size,)), strided=walk,
            where=where)


def check(where: str, op_type: str, args) -> "str | None":
    """The type the carried inputs among ``args`` stand for (None: none
    is carried), refusing an op that does not take them, or inputs of
    different types."""
    kinds = {a.carries for a in args if a is not None}
    if not kinds - {None}:
        return None
    if len(kinds) != 1:
        raise ConversionError(
            "%s: inputs are %s; ONNX's %s takes one type" % (
                where, " and ".join(sorted({type_name(a.carries or a.dtype)
                                            for a in args
                                            if a is not None})), op_type))
    dtype = kinds.pop()
    takes = _DOUBLE_OPS if dtype == "float64" else CARRIED_OPS
    if op_type not in takes:
        raise ConversionError(
            "%s: an input is %s, which the device has not: davinci-atc "
            "carries it in %s through %s only" % (
                where, type_name(dtype), type_name(CARRIERS[dtype]),
                ", ".join(sorted(takes))))
    return dtype


def ordered(gb: GearBuilder, op_type: str, args, where: str) -> list:
    """A UINT64's inputs to an order (Max, Min, a comparison) as their
    bits plus 2^63, which orders them as signed INT64s; others as they
    are."""
    if op_type not in _UINT64_ORDERED:
        return list(args)
    return [_by_scalar(gb, "ADD", a, -(1 << 63), where) for a in args]


def carried_result(gb: GearBuilder, op_type: str, dtype: str, outs,
                   where: str) -> list:
    """The results of ``op_type`` of carried ``dtype`` inputs: carried too
    (a UINT64 Max or Min back from its order), or BOOL."""
    if not CARRIED_OPS[op_type]:
        return list(outs)
    res = []
    for o in outs:
        o = dataclasses.replace(o, carries=dtype)
        if dtype == "uint64" and op_type in _UINT64_ORDERED:
            o = _by_scalar(gb, "ADD", o, -(1 << 63), where)
        res.append(o)
    return res

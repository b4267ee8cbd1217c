# SPDX-License-Identifier: GPL-2.0
"""Single-operator models (davinci's module, not pyACL's): what
``davinci-atc --singleop`` writes from ATC's single-op JSON and acl.op
reads back (set_model_dir, load).

The JSON is ATC's: a list of operators, each

    {"op": "MatMul",
     "input_desc": [{"format": "ND", "type": "float16", "shape": [1, 64]},
                    ...],
     "output_desc": [{"format": "ND", "type": "float16", "shape": [1, 8]}],
     "attr": [{"name": "transpose_x2", "type": "bool", "value": true}]}

with an input made constant by ``"is_const": true, "const_value": [...]``
(ReduceSum's axes). The device's operators are built in, so compiling one
checks it exactly as acl.op.update_params would (its inputs, outputs and
attributes) and writes that checked description into a model file named
as ATC names them (index, operator, then each tensor's data type, format
and dimensions). A file is :data:`MAGIC`, a little-endian u32 format
version and u32 length, the description as JSON, and the CRC-32 of all
before it: a truncated or altered file is refused, never half read.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from . import constants as C
from ._state import AclFail

__all__ = ["MAGIC", "OpSpec", "SpecError", "parse_json", "compile_json",
           "dump", "load", "file_name", "model_files"]

MAGIC = b"DVSINGLEOP\0\0"
VERSION = 1
_HEADER = struct.Struct("<12sII")
#: ATC's JSON type names -> ACL data types
TYPES = {"float": C.ACL_FLOAT, "float32": C.ACL_FLOAT,
         "float16": C.ACL_FLOAT16, "bfloat16": C.ACL_BF16,
         "int32": C.ACL_INT32, "int64": C.ACL_INT64, "int8": C.ACL_INT8,
         "uint8": C.ACL_UINT8, "bool": C.ACL_BOOL, "int16": C.ACL_INT16,
         "uint16": C.ACL_UINT16, "uint32": C.ACL_UINT32,
         "uint64": C.ACL_UINT64, "double": C.ACL_DOUBLE}
#: ATC's JSON format names -> ACL formats
FORMATS = {"ND": C.ACL_FORMAT_ND, "NCHW": C.ACL_FORMAT_NCHW,
           "NHWC": C.ACL_FORMAT_NHWC, "NC1HWC0": C.ACL_FORMAT_NC1HWC0}
#: an attribute's JSON type -> its acl.op setter and a check of its value
ATTR_TYPES = {
    "bool": ("set_attr_bool", lambda v: isinstance(v, bool)),
    "int": ("set_attr_int", lambda v: _is_int(v)),
    "float": ("set_attr_float", lambda v: _is_num(v)),
    "string": ("set_attr_string", lambda v: isinstance(v, str)),
    "data_type": ("set_attr_data_type", lambda v: v in TYPES),
    "list_bool": ("set_attr_list_bool", lambda v: _list_of(v, bool)),
    "list_int": ("set_attr_list_int", lambda v: _list_of(v, int)),
    "list_float": ("set_attr_list_float", lambda v: _list_of(v, float)),
    "list_string": ("set_attr_list_string", lambda v: _list_of(v, str)),
    "list_list_int": ("set_attr_list_list_int",
                      lambda v: isinstance(v, list) and
                      all(_list_of(x, int) for x in v)),
}
#: numpy storage of a constant input's values, by ACL data type
_CONST_NUMPY = {C.ACL_FLOAT: np.float32, C.ACL_FLOAT16: np.float16,
                C.ACL_INT32: np.int32, C.ACL_INT64: np.int64,
                C.ACL_INT8: np.int8, C.ACL_UINT8: np.uint8,
                C.ACL_BOOL: np.bool_}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return _is_int(v) or isinstance(v, float)


def _list_of(v, kind) -> bool:
    check = {bool: lambda x: isinstance(x, bool), int: _is_int,
             float: _is_num, str: lambda x: isinstance(x, str)}[kind]
    return isinstance(v, list) and all(check(x) for x in v)


class SpecError(ValueError):
    """A single-op description that is not well formed: the message names
    the operator and the field."""


@dataclass(frozen=True)
class TensorSpec:
    dtype: int
    format: int
    shape: tuple[int, ...]
    const: "bytes | None" = None


@dataclass(frozen=True)
class OpSpec:
    """One operator of a single-op description, as ATC's JSON gives it."""
    op: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    attrs: tuple[tuple[str, str, object], ...]
    source: dict                        # the JSON object, for the file


def _tensor(where: str, d) -> TensorSpec:
    if not isinstance(d, dict):
        raise SpecError("%s: a tensor description is an object with "
                        "format, type and shape" % where)
    for key in ("type", "shape"):
        if key not in d:
            raise SpecError("%s: no %r" % (where, key))
    if d["type"] not in TYPES:
        raise SpecError("%s: type %r is none of %s"
                        % (where, d["type"], ", ".join(TYPES)))
    fmt = d.get("format", "ND")
    if fmt not in FORMATS:
        raise SpecError("%s: format %r is none of %s"
                        % (where, fmt, ", ".join(FORMATS)))
    shape = d["shape"]
    if not _list_of(shape, int) or any(n < 0 for n in shape):
        raise SpecError("%s: shape %r: a list of sizes >= 0 (a dynamic "
                        "shape, -1, is not supported)" % (where, shape))
    dtype = TYPES[d["type"]]
    const = None
    if d.get("is_const"):
        if dtype not in _CONST_NUMPY:
            raise SpecError("%s: a constant of type %r is not supported"
                            % (where, d["type"]))
        values = np.asarray(d.get("const_value"), _CONST_NUMPY[dtype])
        if values.size != int(np.prod(shape, dtype=np.int64)):
            raise SpecError("%s: const_value has %d values, shape %s needs "
                            "%d" % (where, values.size, shape,
                                    int(np.prod(shape, dtype=np.int64))))
        const = values.tobytes()
    return TensorSpec(dtype, FORMATS[fmt], tuple(shape), const)


def _spec(index: int, obj) -> OpSpec:
    where = "operator %d" % index
    if not isinstance(obj, dict) or not isinstance(obj.get("op"), str):
        raise SpecError("%s: an object with \"op\", the CANN operator type"
                        % where)
    where = "operator %d (%s)" % (index, obj["op"])
    descs = {}
    for key in ("input_desc", "output_desc"):
        items = obj.get(key, [])
        if not isinstance(items, list):
            raise SpecError("%s: %s must be a list" % (where, key))
        descs[key] = tuple(_tensor("%s %s %d" % (where, key, i), d)
                           for i, d in enumerate(items))
    attrs = []
    for i, a in enumerate(obj.get("attr", [])):
        if not isinstance(a, dict) or {"name", "type", "value"} - set(a):
            raise SpecError("%s attr %d: an object with name, type and "
                            "value" % (where, i))
        kind = ATTR_TYPES.get(a["type"])
        if kind is None:
            raise SpecError("%s attr %s: type %r is none of %s" % (
                where, a["name"], a["type"], ", ".join(ATTR_TYPES)))
        if not kind[1](a["value"]):
            raise SpecError("%s attr %s: %r is not a %s" % (
                where, a["name"], a["value"], a["type"]))
        value = TYPES[a["value"]] if a["type"] == "data_type" else a["value"]
        attrs.append((a["name"], a["type"], value))
    return OpSpec(obj["op"], descs["input_desc"], descs["output_desc"],
                  tuple(attrs), obj)


def parse_json(text: str) -> list[OpSpec]:
    """The operators of ATC's single-op JSON (a list of them, or one)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SpecError("not JSON: %s" % exc) from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise SpecError("a single-op description is a list of operators")
    return [_spec(i, obj) for i, obj in enumerate(data)]


def compile_json(text: str) -> list[tuple[str, bytes]]:
    """(file name, model bytes) of each operator of ATC's single-op JSON,
    each checked as acl.op.update_params would; SpecError naming the
    operator that fails and why."""
    from .op import check_single_op
    out = []
    for i, spec in enumerate(parse_json(text)):
        try:
            check_single_op(spec)
        except AclFail as exc:
            raise SpecError("operator %d (%s): %s (aclError %d)"
                            % (i, spec.op, exc.message, exc.code)) from None
        out.append((file_name(i, spec), dump(spec)))
    return out


def file_name(index: int, spec: OpSpec) -> str:
    """ATC's name of an operator's model file: its index and type, then
    each input's and output's data type, format and dimensions."""
    parts = [str(index), spec.op]
    for t in spec.inputs + spec.outputs:
        parts += [str(t.dtype), str(t.format)] + [str(n) for n in t.shape]
    return "_".join(parts) + ".om"


def dump(spec: OpSpec) -> bytes:
    body = json.dumps(spec.source, sort_keys=True).encode()
    head = _HEADER.pack(MAGIC, VERSION, len(body)) + body
    return head + struct.pack("<I", zlib.crc32(head))


def is_model(data: bytes) -> bool:
    return bytes(data[:len(MAGIC)]) == MAGIC


def load(data: bytes, what: str) -> OpSpec:
    """The operator of a single-op model file's bytes; AclFail
    ACL_ERROR_PARSE_MODEL for anything but a whole, unaltered one."""
    def bad(why):
        return AclFail(C.ACL_ERROR_PARSE_MODEL,
                       "%s is not a davinci single-op model: %s (compile "
                       "it again with davinci-atc --singleop)" % (what, why))
    data = bytes(data)
    if len(data) < _HEADER.size + 4 or not is_model(data):
        raise bad("no single-op header")
    _, version, length = _HEADER.unpack_from(data)
    if version != VERSION:
        raise bad("format version %d, this reader takes %d"
                  % (version, VERSION))
    if len(data) != _HEADER.size + length + 4:
        raise bad("%d bytes, its header says %d"
                  % (len(data), _HEADER.size + length + 4))
    crc, = struct.unpack_from("<I", data, len(data) - 4)
    if crc != zlib.crc32(data[:-4]):
        raise bad("its checksum does not match: the file was altered")
    try:
        return _spec(0, json.loads(data[_HEADER.size:-4]))
    except (ValueError, SpecError) as exc:
        raise bad(str(exc)) from None


def model_files(model_dir: str) -> list[str]:
    """The .om files of an operator model directory, in name order."""
    return sorted(os.path.join(model_dir, f) for f in os.listdir(model_dir)
                  if f.endswith(".om") and
                  os.path.isfile(os.path.join(model_dir, f)))

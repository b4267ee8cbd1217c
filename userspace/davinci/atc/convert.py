# SPDX-License-Identifier: GPL-2.0
"""ONNX model -> davinci offline model (:mod:`davinci.omfile`).

The graph is lowered once per gear: a static model has one, a model
converted with ``dynamic_batch_size`` one per batch size, each with every
shape known, so each gear's task list is final at conversion time and the
runtime only fills in the caller's input and output addresses.
"""

from __future__ import annotations

import os

from .. import omfile as F
from . import aipp_stage, carry
from .fuse import fold_batch_norms, fuse_conv_relus
from .builder import (DEVICE_DTYPES, ONNX_DTYPES, ConversionError,
                      GearBuilder, Weights, onnx_type_name, type_list,
                      type_name)
from .lower import (Lowering, check_inputs, constant_value, dense,
                    find_rule, supported_ops, uint64_div_mod,
                    cast_carried_double)

__all__ = ["convert", "convert_file", "parse_input_shape",
           "ConversionError"]


#: the largest dimension omfile.parse accepts in an input's or output's dims
_MAX_DIM = 1 << 31


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ConversionError(
            "davinci-atc reads ONNX with the onnx package: pip install onnx"
        ) from None
    return onnx


def parse_input_shape(text: str | None) -> dict[str, list[int]]:
    """``"x:1,784;y:-1,3"`` -> {"x": [1, 784], "y": [-1, 3]} (ATC's
    --input_shape)."""
    out: dict[str, list[int]] = {}
    for part in filter(None, (text or "").split(";")):
        name, sep, dims = part.rpartition(":")
        try:
            if not sep or not name:
                raise ValueError(part)
            out[name.strip()] = [int(d) for d in dims.split(",") if d.strip()]
        except ValueError:
            raise ConversionError(
                "--input_shape %r: give name:d0,d1,...;name2:... (for "
                "example \"input:1,784\")" % text) from None
    return out


def _dims(vi) -> list:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        raise ConversionError(
            "input %r has no shape in the model (not even its rank): give "
            "it with --input_shape=%s:d0,d1,..." % (vi.name, vi.name))
    return [d.dim_value if d.HasField("dim_value") else -1
            for d in t.shape.dim]


def _check_io_shape(what: str, name: str, dims) -> None:
    """Refuse a shape a davinci model's input or output cannot have."""
    if len(dims) > F.MAX_DIMS:
        raise ConversionError(
            "%s %r has %d dimensions (shape %s): a davinci model's inputs "
            "and outputs have at most %d" % (what, name, len(dims),
                                             list(dims), F.MAX_DIMS))
    if any(d > _MAX_DIM for d in dims):
        raise ConversionError(
            "%s %r has shape %s: a davinci model's dimensions are at most "
            "%d" % (what, name, list(dims), _MAX_DIM))


def _elem(vi) -> str:
    """A graph input's dtype (one the device has: see _refuse_types)."""
    return ONNX_DTYPES[vi.type.tensor_type.elem_type]


def _node_name(node, idx: int) -> str:
    return node.name or "#%d" % idx


def _constant_value(node):
    """The TensorProto of a Constant node's 'value' attribute, or None."""
    return next((a.t for a in node.attribute if a.name == "value"), None)


def _refuse_types(g, init_names: set) -> None:
    """Refuse a graph input whose type the device has not, and an
    initializer or Constant read by a node or the graph of a type
    davinci-atc does not know (INT16, UINT32, FLOAT8E4M3FN, ...), naming the
    tensor, the first node that reads it and its op."""
    readers: dict[str, str] = {}
    for idx, node in enumerate(g.node):
        for name in node.input:
            readers.setdefault(name, "read by %s node %r" % (
                node.op_type, _node_name(node, idx)))
    for vo in g.output:
        readers.setdefault(vo.name, "graph output %r" % vo.name)

    def refuse(what: str, name: str, type_: str, allowed: str) -> None:
        raise ConversionError("%s %r is %s (%s): %s" % (
            what, name, type_, readers.get(name, "read by no node"),
            allowed))
    for vi in g.input:
        if vi.name in init_names:
            continue
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            refuse("input", vi.name, "a %s, not a tensor" % kind,
                   "davinci model inputs are tensors")
        code = vi.type.tensor_type.elem_type
        if ONNX_DTYPES.get(code) not in _IO_DTYPES:
            refuse("input", vi.name, onnx_type_name(code),
                   "davinci model inputs are %s (export the model with "
                   "inputs of one of them)" % type_list(_IO_DTYPES))
    consts = [("initializer", t.name, t) for t in g.initializer] + \
        [("Constant", n.output[0], _constant_value(n)) for n in g.node
         if n.op_type == "Constant" and n.output]
    for what, name, t in consts:
        if t is None or t.data_type in ONNX_DTYPES:
            continue
        if name in readers:
            refuse(what, name, onnx_type_name(t.data_type),
                   "davinci-atc converts %s tensors, and %s constants it "
                   "folds at conversion time" % (
                       type_list(DEVICE_DTYPES, "and"),
                       type_list([d for d in ONNX_DTYPES.values()
                                  if d not in DEVICE_DTYPES], "and")))


#: a model's input and output types: the device's, and the integers
#: davinci-atc carries in a wider one (atc/carry.py)
_IO_DTYPES = list(DEVICE_DTYPES) + list(carry.CARRIERS)


def _attrs(onnx, node) -> dict:
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        out[a.name] = v
    return out


def _domain(name: str) -> str:
    """"" for ONNX's own domain, however the model spells it."""
    return "" if name in ("", "ai.onnx") else name


def _opsets(model) -> dict[str, int]:
    """The model's opset of each domain it imports (ONNX's: 13 when it
    imports none)."""
    out = {"": 13}
    out.update((_domain(o.domain), int(o.version))
               for o in model.opset_import)
    return out


def convert(model, input_shape: "str | dict | None" = None,
            dynamic_batch_size: "str | list[int] | None" = None,
            soc_version: str = "davinci", input_format: str = "ND",
            source: str = "", insert_op_conf=None,
            output_type: "str | None" = None,
            dynamic_image_size: "str | list | None" = None) -> bytes:
    """Convert ``model`` (an onnx ModelProto, or a path) into the bytes of
    a davinci offline model. ``insert_op_conf``: an AIPP config file's
    path (or its parsed aipp_ops) whose stage goes in front of the model
    (aipp_stage); ``output_type``: ATC's --output_type;
    ``dynamic_image_size``: ATC's "h,w;h,w" (the inputs' -1 dims). Raises
    :class:`ConversionError`."""
    onnx = _onnx()
    if isinstance(model, (str, os.PathLike)):
        source = source or os.path.basename(str(model))
        try:
            model = onnx.load(str(model))
        except Exception as exc:   # noqa: BLE001 - onnx raises many kinds
            raise ConversionError("cannot read ONNX model %s: %s"
                                  % (model, exc)) from None
    if input_format not in F.FORMATS:
        raise ConversionError("--input_format %r: use one of %s"
                              % (input_format, ", ".join(F.FORMATS)))
    model = fuse_conv_relus(fold_batch_norms(model))
    g = model.graph
    opsets = _opsets(model)
    shapes = input_shape if isinstance(input_shape, dict) \
        else parse_input_shape(input_shape)
    batches = _batches(dynamic_batch_size)
    hws = _hw_sizes(dynamic_image_size)
    if batches and hws:
        raise ConversionError("--dynamic_batch_size and --dynamic_image_size "
                              "are two kinds of dynamic model: give one")
    init_names = {t.name for t in g.initializer}
    _refuse_types(g, init_names)
    # one of a type davinci-atc does not know is read by no node
    inits = {t.name: constant_value(t) for t in g.initializer
             if t.data_type in ONNX_DTYPES}
    inputs = [vi for vi in g.input if vi.name not in init_names]
    unknown = set(shapes) - {vi.name for vi in inputs}
    if unknown:
        raise ConversionError("--input_shape names %s, which the model does "
                              "not have as inputs (it has %s)"
                              % (sorted(unknown), [vi.name for vi in inputs]))
    if not g.output:
        raise ConversionError("the graph has no outputs: a davinci model "
                              "returns at least one tensor")
    if batches and not inputs:
        raise ConversionError("--dynamic_batch_size needs an input with a "
                              "batch dimension; this graph has no inputs")
    in_dims = []
    for vi in inputs:
        dims = list(shapes[vi.name] if vi.name in shapes else _dims(vi))
        _check_io_shape("input", vi.name, dims)
        dyn = [i for i, d in enumerate(dims) if d < 0]
        if hws and dyn:
            if len(dyn) != 2 or len(dims) != 4:
                raise ConversionError(
                    "--dynamic_image_size fills the height and width of a "
                    "4-D input: give them as -1 in --input_shape (%s:1,3,-1,"
                    "-1); input %r is %s" % (vi.name, vi.name, dims))
            in_dims.append(dims)
            continue
        if dyn and (dyn != [0] or not batches):
            raise ConversionError(
                "input %r has unknown dimensions %s (shape %s): give "
                "--input_shape=%s:1,... for a static model, or -1 for the "
                "batch with --dynamic_batch_size=1,2,4,8" % (
                    vi.name, dyn, dims, vi.name))
        if batches and not dyn:
            raise ConversionError(
                "--dynamic_batch_size needs the batch dimension of every "
                "input set to -1 in --input_shape (input %r is %s)"
                % (vi.name, dims))
        in_dims.append(dims)
    if hws and not any(d < 0 for dims in in_dims for d in dims):
        raise ConversionError("--dynamic_image_size needs an input whose "
                              "height and width are -1 in --input_shape "
                              "(\"x:1,3,-1,-1\")")
    if hws and insert_op_conf is not None:
        raise ConversionError("--dynamic_image_size with --insert_op_conf is "
                              "not supported: AIPP makes one image size")
    stages = {} if insert_op_conf is None else aipp_stage.plan(
        insert_op_conf, [vi.name for vi in inputs], in_dims,
        [_elem(vi) for vi in inputs])
    aipp_stage.refuse_with_batches(stages)
    n_dyn = sum(st.dynamic for st in stages.values())
    out_types = _output_types(output_type, g)
    # the model's declared shapes hold for the shapes it declares its
    # inputs with, not for those --input_shape or the gears give them
    declared = {} if shapes or batches or hws else _DeclaredShapes(onnx,
                                                                   model)
    weights = Weights()
    gears = []
    out_shapes = None
    all_shapes = []
    for gi in range(max(1, len(batches), len(hws))):
        gb = GearBuilder(gi, weights)
        b = batches[gi] if batches else None
        hw = hws[gi] if hws else None
        env = dict(inits)
        cfgs = {st.index: gb.io(F.KIND_INPUT, st.config_input,
                                aipp_stage.config_dims(), "uint8")
                for st in stages.values() if st.dynamic}
        for i, (vi, dims) in enumerate(zip(inputs, in_dims)):
            shape = _gear_shape(dims, b, hw)
            st = stages.get(i)
            if st is None and _elem(vi) in carry.CARRIERS:
                env[vi.name] = carry.widen(gb, i, shape, _elem(vi), vi.name)
                continue
            if st is None:
                env[vi.name] = gb.io(F.KIND_INPUT, i, shape, _elem(vi))
                continue
            pic = gb.io(F.KIND_INPUT, i, [b if d < 0 else d
                                          for d in st.pic_dims], "uint8")
            env[vi.name] = st.emit(gb, pic, cfgs.get(i), shape, _elem(vi),
                                   vi.name)
        if batches:
            gb.io(F.KIND_INPUT, len(inputs) + n_dyn, (1,), "int32", nbytes=8)
        if hws:
            gb.io(F.KIND_INPUT, len(inputs), (2,), "int64")
        made_by = _lower_nodes(onnx, g, env, gb, opsets, declared)
        _cast_outputs(g, env, gb, out_types)
        shapes_now = _make_outputs(g, env, made_by, gb)
        if out_shapes is None:
            out_shapes = shapes_now
        all_shapes.append(shapes_now)
        gears.append(gb)
        if b is not None:
            for (s0, _), (s, _) in zip(out_shapes, shapes_now):
                if len(s) != len(s0) or s[1:] != s0[1:]:
                    raise ConversionError(
                        "output shapes change beyond the batch dimension "
                        "between batch sizes (%s and %s)" % (s0, s))
    om = _assemble(inputs, in_dims, g, out_shapes, batches, weights, gears,
                   input_format, stages, {"producer": "davinci-atc",
                                          "soc_version": soc_version,
                                          "source": source,
                                          "opset": opsets[""]})
    if hws:
        _set_gear_dims(om, in_dims, all_shapes, hws)
    data = F.serialize(om)
    try:
        F.parse(data)       # never hand out a model the loader refuses
    except F.ModelFormatError as exc:
        raise ConversionError(
            "the model converts, but to a davinci model the loader would "
            "refuse (%s): davinci-atc does not check this limit yet; please "
            "report it" % exc) from None
    return data


def _hw_sizes(spec) -> list[list[int]]:
    """ATC's --dynamic_image_size "112,112;224,224" -> [[112, 112],
    [224, 224]] (height, width)."""
    if not spec:
        return []
    parts = [p.split(",") for p in spec.split(";") if p.strip()] \
        if isinstance(spec, str) else spec
    try:
        vals = [[int(v) for v in p] for p in parts]
    except (ValueError, TypeError):
        vals = None
    if not vals or any(len(v) != 2 or min(v) < 1 for v in vals) or \
            len(vals) > F.MAX_GEARS or \
            len({tuple(v) for v in vals}) != len(vals):
        raise ConversionError("--dynamic_image_size %r: give 1 to %d distinct "
                              "\"height,width\" sizes, as \"112,112;224,"
                              "224\"" % (spec, F.MAX_GEARS))
    return vals


def _gear_shape(dims, batch, hw) -> list[int]:
    """``dims`` in one gear: -1 is the batch, or the height then the
    width."""
    if hw is not None:
        fill = iter(hw)
        return [next(fill) if d < 0 else d for d in dims]
    return [batch if d < 0 else d for d in dims]


def _set_gear_dims(om: F.OfflineModel, in_dims, all_shapes, hws) -> None:
    """A dynamic-image-size model's inputs and outputs: -1 where a dim
    changes between gears, and each gear's dims."""
    om.hw_sizes = [list(hw) for hw in hws]
    for i, dims in enumerate(in_dims):
        if any(d < 0 for d in dims):
            om.inputs[i].dims = list(dims)
            om.inputs[i].gear_dims = [_gear_shape(dims, None, hw)
                                      for hw in hws]
    om.inputs.append(F.IoDesc(F.MBATCH_INPUT, "int64", "ND", [2]))
    for j, io in enumerate(om.outputs):
        per = [shapes[j][0] for shapes in all_shapes]
        if any(len(p) != len(per[0]) for p in per):
            raise ConversionError(
                "graph output %r changes rank between image sizes (%s)"
                % (io.name, per))
        io.dims = [d if all(p[k] == d for p in per) else -1
                   for k, d in enumerate(per[0])]
        io.gear_dims = [list(p) for p in per]


def _batches(spec) -> list[int]:
    if not spec:
        return []
    try:
        vals = [int(v) for v in (spec.split(",") if isinstance(spec, str)
                                 else spec)]
    except ValueError:
        raise ConversionError("--dynamic_batch_size %r: give batch sizes "
                              "like \"1,2,4,8\"" % (spec,)) from None
    if not vals or any(v < 1 for v in vals) or len(vals) > F.MAX_GEARS or \
            len(set(vals)) != len(vals):
        raise ConversionError("--dynamic_batch_size %r: 1 to %d distinct "
                              "positive sizes" % (spec, F.MAX_GEARS))
    return sorted(vals)


#: ATC's --output_type names -> device dtypes
_OUTPUT_TYPES = {"FP32": "float32", "FP16": "float16", "UINT8": "uint8",
                 "INT8": "int8", "INT32": "int32", "INT64": "int64",
                 "BF16": "bfloat16", "BOOL": "bool"}


def _output_types(spec: "str | None", g) -> dict[int, str]:
    """ATC's --output_type: one type for every output ("FP16"), or
    "node:index:type;..." naming the node whose output ``index`` is a
    graph output -> {graph output number: device dtype}."""
    if not spec:
        return {}

    def dtype(name: str) -> str:
        if name.upper() not in _OUTPUT_TYPES:
            raise ConversionError("--output_type %r: types are %s" % (
                spec, ", ".join(_OUTPUT_TYPES)))
        return _OUTPUT_TYPES[name.upper()]
    if ":" not in spec:
        return {j: dtype(spec.strip()) for j in range(len(g.output))}
    made = {}
    for idx, node in enumerate(g.node):
        for k, o in enumerate(node.output):
            made[(_node_name(node, idx), k)] = o
    outs = [vo.name for vo in g.output]
    want: dict[int, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        node, sep, rest = part.partition(":")
        k, sep2, t = rest.partition(":")
        try:
            key = (node, int(k))
        except ValueError:
            key = None
        if not sep or not sep2 or key is None:
            raise ConversionError("--output_type %r: give TYPE, or "
                                  "node:index:TYPE;... (for example "
                                  "\"prob:0:FP16\")" % spec)
        name = made.get(key)
        if name is None or name not in outs:
            raise ConversionError(
                "--output_type %r: output %d of node %r is not a graph "
                "output (the graph's outputs are %s)" % (spec, key[1], node,
                                                         outs))
        want[outs.index(name)] = dtype(t)
    return want


def _cast_outputs(g, env: dict, gb: GearBuilder, want: dict) -> None:
    """Cast each graph output --output_type names to its type."""
    for j, dtype in want.items():
        name = g.output[j].name
        v = env.get(name)
        if v is None or v.dtype == dtype:
            continue
        if v.carries:
            raise ConversionError(
                "--output_type of graph output %r: it is %s, which "
                "davinci-atc carries in %s and casts to nothing"
                % (name, type_name(v.carries), type_name(v.dtype)))
        v = gb.device(v)
        env[name] = gb.emit("CAST", gb.work(v.shape, dtype), v,
                            count=v.size, where="--output_type of graph "
                            "output %r" % name)


def _make_outputs(g, env: dict, made_by: dict, gb: GearBuilder
                  ) -> list[tuple[list[int], str]]:
    """Write the graph's outputs; their (shape, dtype)."""
    shapes = []
    for j, vo in enumerate(g.output):
        v = env.get(vo.name)
        if v is None:
            raise ConversionError("graph output %r is never produced"
                                  % vo.name)
        if v.dtype not in DEVICE_DTYPES:
            raise ConversionError(
                "graph output %r%s is %s: davinci model outputs are %s" % (
                    vo.name, made_by.get(vo.name, ""), type_name(v.dtype),
                    type_list(DEVICE_DTYPES)))
        _check_io_shape("graph output", vo.name, v.shape)
        v = dense(gb, v, "graph output %d" % j)
        if v.carries:
            carry.narrow(gb, v, j, "graph output %d" % j)
            shapes.append((list(v.shape), v.carries))
            continue
        gb.make_output(v, j)
        shapes.append((list(v.shape), v.dtype))
    return shapes


def _output_role(onnx, node, j: int, name: str, opset: int) -> str:
    """", the 'mask' output of Dropout node 'd'", as ONNX names output
    ``j`` of ``node``'s op."""
    try:
        outs = onnx.defs.get_schema(node.op_type, opset,
                                    _domain(node.domain)).outputs
        role = "the %r output" % outs[min(j, len(outs) - 1)].name
    except onnx.defs.SchemaError:
        role = "output %d" % j
    return ", %s of %s node %r," % (role, node.op_type, name)


#: ops whose result has the shape of their (first) input
_SAME_SHAPE = {"Abs", "Cast", "Ceil", "Dropout", "Elu", "Erf", "Exp",
               "Floor", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log",
               "Neg", "Not", "Reciprocal", "Relu", "Round", "Selu",
               "Sigmoid", "Sign", "Softplus", "Sqrt", "Tanh"}


def _static(vi) -> "tuple[int, ...] | None":
    t = vi.type.tensor_type
    if not t.HasField("shape") or not all(
            d.HasField("dim_value") for d in t.shape.dim):
        return None
    return tuple(int(d.dim_value) for d in t.shape.dim)


class _DeclaredShapes:
    """Every value's static shape the model declares (its inputs, outputs
    and value_info, and what ONNX's shape inference adds), and the input
    of an op whose result has its shape (Log, Abs, Cast: _SAME_SHAPE)
    when only the result's is declared. A handler whose input is computed
    where it needs a constant pins it to the value these imply
    (lower.pinned), checked when the model runs. Worked out the first
    time a handler asks (shape inference copies the model, weights too)."""

    def __init__(self, onnx, model):
        self._onnx, self._model = onnx, model
        self._shapes: "dict | None" = None

    def get(self, name: str) -> "tuple[int, ...] | None":
        if self._shapes is None:
            self._shapes = self._work_out()
        return self._shapes.get(name)

    def _work_out(self) -> dict:
        g = self._model.graph
        try:
            g = self._onnx.shape_inference.infer_shapes(self._model).graph
        except Exception:   # noqa: BLE001 - the model's own shapes then
            pass
        out = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            s = _static(vi)
            if s is not None:
                out.setdefault(vi.name, s)
        for node in reversed(list(g.node)):
            if node.op_type in _SAME_SHAPE and node.input and \
                    node.output and node.output[0] in out:
                out.setdefault(node.input[0], out[node.output[0]])
        return out


def _lower_nodes(onnx, g, env: dict, gb: GearBuilder,
                 opsets: dict[str, int], declared) -> dict[str, str]:
    """Lower every node into ``gb``, its outputs into ``env``; returns, for
    each value a node made, which output of which node it is."""
    made_by: dict[str, str] = {}
    for idx, node in enumerate(g.node):
        name = _node_name(node, idx)
        domain = _domain(node.domain)
        opset = opsets.get(domain, 1)   # a domain it forgot to import
        rule = find_rule(domain, node.op_type, opset)
        if rule is None:
            raise ConversionError(_unsupported(node, name, idx, len(g.node),
                                               domain))
        args = _node_inputs(node, name, env, rule.arity)
        L = Lowering(gb, node, name, _attrs(onnx, node), rule, declared)
        args = check_inputs(L, args)
        carried = carry.check(L.where, node.op_type, args)
        if carried == "uint64":
            args = carry.ordered(gb, node.op_type, args, L.where)
        if carried == "uint64" and node.op_type in ("Div", "Mod"):
            outs = uint64_div_mod(L, *args, node.op_type)
        elif carried == "float64":
            outs = cast_carried_double(L, *args)
        else:
            outs = rule.lower(L, *args)
        if carried and carried != "float64":
            outs = carry.carried_result(gb, node.op_type, carried, outs,
                                        L.where)
        for j, o in enumerate(node.output):
            if not o:
                continue
            if j >= len(outs):
                L.fail("output %d (%r) is not supported: davinci-atc "
                       "computes the first %d" % (j, o, len(outs)))
            if outs[j] is None:         # a value no node may read
                continue
            env[o] = outs[j]
            made_by[o] = _output_role(onnx, node, j, name, opset)
    return made_by


def _unsupported(node, name: str, idx: int, nodes: int, domain: str
                 ) -> str:
    what = node.op_type if not domain else "%s of domain %r" % (
        node.op_type, domain)
    return ("unsupported ONNX op %s in node %r (node %d of %d): davinci-atc "
            "converts %s" % (what, name, idx, nodes,
                             ", ".join(supported_ops())))


def _node_inputs(node, name: str, env: dict,
                 counts: "tuple[int, int | None]") -> list:
    """The values ``node`` reads (None for an omitted optional input),
    refused unless their count is one its handler takes (``counts``)."""
    need, most = counts
    n = len(node.input)
    if n < need or (most is not None and n > most):
        takes = ("%d" % need if most == need else
                 "%d or more" % need if most is None else
                 "%d to %d" % (need, most))
        raise ConversionError("%s node %r has %d inputs: davinci-atc "
                              "converts %s with %s inputs"
                              % (node.op_type, name, n, node.op_type, takes))
    args = []
    for i, inp in enumerate(node.input):
        if not inp and (i < need or most is None):
            raise ConversionError("%s node %r: input %d is empty (omitted), "
                                  "and %s needs it" % (node.op_type, name, i,
                                                       node.op_type))
        if inp and inp not in env:
            raise ConversionError("%s node %r reads %r, which nothing "
                                  "produced before it"
                                  % (node.op_type, name, inp))
        args.append(env[inp] if inp else None)
    return args


def _io_desc(name: str, dims, dtype: str, fmt: str) -> F.IoDesc:
    return F.IoDesc(name, dtype, fmt if len(dims) == 4 else "ND",
                    [int(d) for d in dims])


def _assemble(inputs, in_dims, g, out_shapes, batches, weights: Weights,
              gears, fmt: str, stages: dict, info: dict) -> F.OfflineModel:
    ins = []
    for i, (vi, dims) in enumerate(zip(inputs, in_dims)):
        st = stages.get(i)
        ins.append(_io_desc(vi.name, dims, _elem(vi), fmt) if st is None
                   else F.IoDesc(vi.name, "uint8", st.pic_format,
                                 list(st.pic_dims)))
    for st in sorted(stages.values(), key=lambda s: s.config_input):
        if st.dynamic:
            ins.append(F.IoDesc(aipp_stage.DYNAMIC_AIPP_INPUT, "uint8", "ND",
                                aipp_stage.config_dims()))
    if batches:
        ins.append(F.IoDesc(F.MBATCH_INPUT, "int64", "ND", [1]))
    outs = []
    for vo, (shape, dtype) in zip(g.output, out_shapes):
        dims = ([-1] + shape[1:]) if batches else shape
        outs.append(_io_desc(vo.name, dims, dtype, fmt))
    tensors = list(weights.tensors)
    ops = []
    for gb in gears:
        t, o = gb.finish(len(tensors))
        tensors.extend(t)
        ops.extend(o)
    return F.OfflineModel(ins, outs, batches, bytes(weights.blob), tensors,
                          ops, info, params=bytes(weights.params))


def convert_file(model_path: str, output: str, **kw) -> str:
    """Convert ``model_path`` and write ``output`` (``.om`` appended as ATC
    does); returns the path written."""
    data = convert(model_path, **kw)
    path = output if output.endswith(".om") else output + ".om"
    with open(path, "wb") as f:
        f.write(data)
    return path

# SPDX-License-Identifier: GPL-2.0
"""Graph rewrites davinci-atc makes before lowering, as ATC's fusion
passes do: each leaves the model's outputs the same up to float32
rounding and removes device work.

A Conv whose output only an inference BatchNormalization reads, both
with constant parameters, becomes one Conv with the normalisation folded
into its weights and bias: w' = w * s, b' = (b - mean) * s + shift with
s = scale / sqrt(var + epsilon) per output channel, computed in float64
and rounded once to float32. ResNet-50 then runs 53 fewer MULs and ADDs.

A Conv whose output only a Relu reads (after that folding) takes the
Relu in: the Conv gets the attribute ``davinci_fused_relu`` and writes
the Relu's output, which its one CONV2D task computes as its epilogue
(the bytes of CONV2D and RELU as two tasks, NUMERICS.md). Its bias is
that task's third operand, so a Conv, its BatchNormalization and its
Relu are one task; ResNet-50 runs 49 fewer RELUs and 53 fewer ADDs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fold_batch_norms", "fuse_conv_relus", "FUSED_RELU"]

#: the attribute of a Conv that took in its Relu (lower.py reads it)
FUSED_RELU = "davinci_fused_relu"


def _readers(graph) -> dict[str, int]:
    count: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            count[name] = count.get(name, 0) + 1
    for vi in graph.output:
        count[vi.name] = count.get(vi.name, 0) + 1
    return count


def _attr(node, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return a.f if a.type == a.FLOAT else a.i
    return default


def _foldable(conv, bn, consts: dict, readers: dict) -> bool:
    if (conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx")
            or bn.op_type != "BatchNormalization"
            or bn.domain not in ("", "ai.onnx")):
        return False
    if len(conv.output) != 1 or readers.get(conv.output[0]) != 1:
        return False
    if (len(bn.output) != 1 or _attr(bn, "training_mode", 0)
            or len(bn.input) != 5):
        return False
    params = list(conv.input[1:]) + list(bn.input[1:])
    if not all(n in consts for n in params if n):
        return False
    return all(consts[n].dtype == np.float32 for n in params if n)


def _constants(graph, numpy_helper) -> dict[str, np.ndarray]:
    """Initializers, and what Constant and ConstantOfShape nodes make from
    them (the model zoo's light models make their weights so)."""
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.domain not in ("", "ai.onnx") or len(node.output) != 1:
            continue
        value = {a.name: a for a in node.attribute}.get("value")
        if node.op_type == "Constant" and value is not None and value.t:
            consts[node.output[0]] = numpy_helper.to_array(value.t)
        elif (node.op_type == "ConstantOfShape" and node.input
              and node.input[0] in consts):
            fill = (numpy_helper.to_array(value.t).reshape(-1)
                    if value is not None else np.zeros(1, np.float32))
            consts[node.output[0]] = np.full(
                [int(d) for d in consts[node.input[0]]], fill[0], fill.dtype)
    return consts


def fold_batch_norms(model):
    """A copy of ``model`` with each foldable Conv + BatchNormalization
    pair made one Conv, or ``model`` itself when there is none."""
    from onnx import numpy_helper

    graph = model.graph
    consts = _constants(graph, numpy_helper)
    readers = _readers(graph)
    made_by = {out: node for node in graph.node for out in node.output}
    pairs = []
    for bn in graph.node:
        conv = made_by.get(bn.input[0]) if bn.input else None
        if conv is not None and _foldable(conv, bn, consts, readers):
            pairs.append((conv, bn))
    if not pairs:
        return model
    out = type(model)()
    out.CopyFrom(model)
    graph = out.graph
    index = {id(n): i for i, n in enumerate(model.graph.node)}
    drop = set()
    for conv, bn in pairs:
        w = consts[conv.input[1]].astype(np.float64)
        b = (consts[conv.input[2]].astype(np.float64)
             if len(conv.input) > 2 and conv.input[2]
             else np.zeros(w.shape[0]))
        scale, shift, mean, var = (consts[n].astype(np.float64)
                                   for n in bn.input[1:])
        s = scale / np.sqrt(var + _attr(bn, "epsilon", 1e-5))
        new = graph.node[index[id(conv)]]
        stem = new.name or new.output[0]
        wname, bname = stem + "/bn_folded_w", stem + "/bn_folded_b"
        graph.initializer.extend([
            numpy_helper.from_array(
                (w * s.reshape(-1, *[1] * (w.ndim - 1))).astype(np.float32),
                wname),
            numpy_helper.from_array(
                ((b - mean) * s + shift).astype(np.float32), bname)])
        del new.input[1:]
        new.input.extend([wname, bname])
        new.output[0] = bn.output[0]
        drop.add(index[id(bn)])
    kept = [n for i, n in enumerate(graph.node) if i not in drop]
    del graph.node[:]
    graph.node.extend(kept)
    return out


def _onnx_op(node, op_type: str) -> bool:
    return node.op_type == op_type and node.domain in ("", "ai.onnx")


def fuse_conv_relus(model):
    """A copy of ``model`` with each Relu whose input is a Conv's output
    that nothing else reads (a graph output counts) taken into the Conv
    (attribute FUSED_RELU = 1); ``model`` itself when there is none. A
    FUSED_RELU the model's own Convs carry is dropped first: only this
    pass sets it."""
    from onnx import helper

    graph = model.graph
    readers = _readers(graph)
    made_by = {out: node for node in graph.node for out in node.output}
    pairs = []
    for relu in graph.node:
        if not _onnx_op(relu, "Relu") or len(relu.input) != 1 or \
                len(relu.output) != 1:
            continue
        conv = made_by.get(relu.input[0])
        if conv is None or not _onnx_op(conv, "Conv") or \
                len(conv.output) != 1 or readers.get(conv.output[0]) != 1:
            continue
        pairs.append((conv, relu))
    marked = any(a.name == FUSED_RELU for n in graph.node
                 if _onnx_op(n, "Conv") for a in n.attribute)
    if not pairs and not marked:
        return model
    out = type(model)()
    out.CopyFrom(model)
    graph = out.graph
    for node in graph.node:
        if _onnx_op(node, "Conv"):
            kept = [a for a in node.attribute if a.name != FUSED_RELU]
            del node.attribute[:]
            node.attribute.extend(kept)
    index = {id(n): i for i, n in enumerate(model.graph.node)}
    drop = set()
    for conv, relu in pairs:
        new = graph.node[index[id(conv)]]
        new.attribute.extend([helper.make_attribute(FUSED_RELU, 1)])
        new.output[0] = relu.output[0]
        drop.add(index[id(relu)])
    kept = [n for i, n in enumerate(graph.node) if i not in drop]
    del graph.node[:]
    graph.node.extend(kept)
    return out

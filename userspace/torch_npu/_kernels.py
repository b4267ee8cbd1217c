# SPDX-License-Identifier: GPL-2.0
"""ATen kernels of the npu device, registered for PrivateUse1.

A kernel runs its op as davinci tasks when the operands allow it (see
``_device_ops.on_device``) and otherwise computes on the CPU through host
views of the tensors' memory, warning once per op and reason. The table of
torch_npu._op_table registers them, each with the device ops it runs and
the operands it takes there. Ops with no kernel reach the C++ CPU fallback
(csrc/npu.cpp), which warns once per op.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import threading
import warnings

import numpy as np

import torch
from torch.utils._pytree import tree_map

import davinci
from davinci import opdesc
from davinci import ops as davinci_ops

from . import _devices, _ext, memory, streams
from . import _device_ops as D

aten = torch.ops.aten
_warned: set[str] = set()
_warn_lock = threading.Lock()
#: ATen ops these Python kernels ran on the CPU (fallback_ops() lists them
#: with the C++ fallback's)
_fell_back: set[str] = set()
_quiet = threading.local()


def _is_npu(x) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "npu"


def sync_for_host(*ts) -> None:
    """Wait for the devices of ``ts`` before the host touches them."""
    for index in {t.device.index for t in ts if _is_npu(t)}:
        _devices.context(index).synchronize()


def host(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor over ``t``'s memory (no copy; synchronise first)."""
    return _ext.load().host_view(t)


@contextlib.contextmanager
def quiet():
    """No fallback warnings in this thread for the block (printing a
    tensor computes its format with ops that run on the CPU)."""
    ext = _ext.load()
    before = getattr(_quiet, "on", False)
    _quiet.on = True
    ext.set_quiet(True)
    try:
        yield
    finally:
        _quiet.on = before
        ext.set_quiet(before)


def op_name(op) -> str:
    """``aten::add.Tensor``, as the C++ fallback names ops."""
    name = getattr(op, "name", None)
    return name() if callable(name) else str(op).replace("aten.", "aten::",
                                                         1)


def fallback_ops() -> list[str]:
    """The ATen ops the Python kernels ran on the CPU so far."""
    with _warn_lock:
        return sorted(_fell_back)


def warn_cpu(op: str, reason: str) -> None:
    """Record that ``op`` ran on the CPU and warn once per op and reason
    (neither while quiet: printing a tensor), naming what the op's row of
    the table runs on the device."""
    if getattr(_quiet, "on", False):
        return
    key = op + ": " + reason
    with _warn_lock:
        _fell_back.add(op)
        if key in _warned:
            return
        _warned.add(key)
    from ._op_table import device_rules     # (the table imports this one)
    rules = device_rules(op)
    warnings.warn("torch_npu: %s ran on the CPU (%s)%s; this warning is "
                  "shown once" % (op, reason, "; on the device it takes " +
                                  rules if rules else ""), stacklevel=3)


def on_cpu(op, reason: str, *args, **kwargs):
    """Run ``op`` on CPU copies of its npu arguments; npu results come back
    to the first npu argument's device. Callers write in-place results
    back themselves."""
    warn_cpu(op_name(op), reason)
    npu = [a for a in list(args) + list(kwargs.values()) if _is_npu(a)]
    npu += [t for a in args if isinstance(a, (list, tuple))
            for t in a if _is_npu(t)]
    device = npu[0].device if npu else None

    def to_cpu(x):
        return x.cpu() if _is_npu(x) else x

    def back(x):
        return x.to(device) if isinstance(x, torch.Tensor) and \
            device is not None else x
    res = op(*tree_map(to_cpu, args), **tree_map(to_cpu, kwargs))
    return tree_map(back, res)


def _scalar(x):
    """Python number of a number or a one-element CPU tensor; else None."""
    if isinstance(x, numbers.Number) and not isinstance(x, bool):
        return x
    if isinstance(x, torch.Tensor) and x.device.type == "cpu" and \
            x.dim() == 0:
        return x.item()
    return None


# -- copies ---------------------------------------------------------------------
def _copy_from(src: torch.Tensor, dst: torch.Tensor,
               non_blocking: bool = False) -> torch.Tensor:
    if src.numel() == 0 or _same_view(src, dst):
        return dst
    if _is_npu(src) and _is_npu(dst) and src.device == dst.device and \
            dst.numel():
        if _copy_on_device(src, dst):
            return dst
        warn_cpu("aten::_copy_from", "an npu copy the device does not make")
    if _is_npu(dst) and not _is_npu(src) and non_blocking and \
            dst.is_contiguous() and src.dtype == dst.dtype and \
            src.shape == dst.shape:
        # staged in pinned host memory now, copied by the device in order
        from . import memory
        buf, offset = memory.device_buffer(dst)
        data = src.contiguous().view(torch.uint8).numpy()
        D.stream_of(dst).copy_from_host(buf, data.tobytes(), offset,
                                        sync=False)
        return dst
    sync_for_host(src, dst)
    s, d = _host_views(src, dst)
    d.copy_(s)
    return dst


def _host_views(src: torch.Tensor, dst: torch.Tensor):
    """CPU tensors over src's and dst's memory (each as it is, a CPU one
    itself): over one CPU storage where they share their npu storage, so
    that CPU torch's copy sees them overlap (and refuses a partial
    overlap, as it does on the CPU)."""
    if _is_npu(src) and _is_npu(dst) and \
            src.untyped_storage().data_ptr() == \
            dst.untyped_storage().data_ptr():
        whole = torch.empty(0, dtype=torch.uint8, device=dst.device).set_(
            dst.untyped_storage())
        storage = host(whole).untyped_storage()
        return tuple(torch.empty(0, dtype=t.dtype).set_(
            storage, t.storage_offset(), t.shape, t.stride())
            for t in (src, dst))
    return (host(src) if _is_npu(src) else src,
            host(dst) if _is_npu(dst) else dst)


def _same_view(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """src and dst are one view of one storage: nothing to copy (as CPU
    torch's copy_ finds)."""
    return src.device == dst.device and src.dtype == dst.dtype and \
        src.untyped_storage().data_ptr() == \
        dst.untyped_storage().data_ptr() and \
        src.storage_offset() == dst.storage_offset() and \
        src.shape == dst.shape and src.stride() == dst.stride() and \
        src.is_conj() == dst.is_conj() and src.is_neg() == dst.is_neg()


def _dense_order(t: torch.Tensor) -> "list[int] | None":
    """The order of ``t``'s dimensions (by stride, outermost first) in
    which it is contiguous; None when it is not dense in any."""
    order = sorted(range(t.dim()), key=lambda d: -t.stride(d))
    return order if t.permute(order).is_contiguous() else None


def _bytes_of(t: torch.Tensor) -> tuple[object, int, int]:
    """(davinci buffer, first byte, end) of the memory npu tensor ``t``
    reaches."""
    buf, offset = memory.device_buffer(t)
    span = 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
    return buf, offset, offset + span * t.element_size()


def _overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    ba, a0, a1 = _bytes_of(a)
    bb, b0, b1 = _bytes_of(b)
    return ba is bb and a0 < b1 and b0 < a1


def _copy_on_device(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """dst := src (broadcast, converted) as device tasks when the device
    makes the copy (a destination dense in some order of its dimensions
    that shares no memory with the source, a source broadcastable to it,
    one dtype of 2, 4, 8 or 16 bytes or two the device computes in):
    MEMCPY where src is laid out as dst,
    COPY_VIEW reading src's view into dst's order where not, CAST between
    two of the device's dtypes; False (nothing done) otherwise."""
    if src.is_conj() or src.is_neg() or dst.is_conj() or dst.is_neg():
        return False
    convert = src.dtype != dst.dtype
    if convert and not (src.dtype in D.DTYPES and dst.dtype in D.DTYPES):
        return False
    order = _dense_order(dst)
    try:
        view = src.expand(dst.shape)
    except RuntimeError:
        return False                # not broadcastable: the CPU says so
    if order is None:
        return _copy_into_view(view, dst)
    d, v = dst.permute(order), view.permute(order)
    if _overlap(v, d):
        return False
    index = dst.get_device()
    cast = D.serves(index, "cast", D.DTYPES[src.dtype]) if convert else True
    if v.is_contiguous():
        if not convert:
            D.memcpy(v, d)
        elif cast:
            D.cast(v, d)
        return cast
    plan = D.view_plan(v)
    if not (cast and D.view_served(index, plan)):
        return False
    if not convert:
        D.copy_view(v, plan, d)
        return True
    dense = torch.empty(d.shape, dtype=src.dtype, device=dst.device)
    D.copy_view(v, plan, dense)
    D.cast(dense, d)
    return True


def _copy_into_view(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """dst := src for a destination no order of its dimensions makes dense
    (a slice, a transpose's slice, ...): one strided IDENTITY, or CAST to
    another dtype, reading src (already of dst's shape) in place; False
    (nothing done) where the device cannot, or they share memory."""
    if src.dtype not in D.DTYPES or dst.dtype not in D.DTYPES or \
            _overlap(src, dst):
        return False
    index = dst.get_device()
    op = "identity" if src.dtype == dst.dtype else "cast"
    if not (D.serves(index, op, D.DTYPES[src.dtype]) and
            D.takes_strided(index, op)):
        return False
    d, sv = D.operand(dst), D.operand(src)
    walk = D.walk(d.shape, d, [sv])
    if walk is None:
        return False
    D.elementwise(index, op, src.dtype, d, [sv], strided=walk)
    return True


def _copy_from_math_bits(src: torch.Tensor, dst: torch.Tensor,
                         non_blocking: bool = False) -> torch.Tensor:
    """A copy to or from npu of a tensor with a conjugate or negative bit.
    PyTorch's fallback for those bits would materialise the npu operand
    with clone(), which copies through _copy_from again without end (the
    stack overflowed in torch.fft.hfft). The host views carry the bits and
    the CPU's copy resolves them."""
    if not (_is_npu(src) or _is_npu(dst)):
        src = src.resolve_conj().resolve_neg()
        with torch._C._ExcludeDispatchKeyGuard(_MATH_BITS):
            return aten._copy_from.default(src, dst, non_blocking)
    sync_for_host(src, dst)
    d = host(dst) if _is_npu(dst) else dst
    s = host(src) if _is_npu(src) else src
    d.copy_(s)
    return dst


_MATH_BITS = torch._C.DispatchKeySet(torch._C.DispatchKey.Conjugate) | \
    torch._C.DispatchKeySet(torch._C.DispatchKey.Negative)


def _copy_from_and_resize(src: torch.Tensor, dst: torch.Tensor):
    dst.resize_(src.shape)
    return _copy_from(src, dst)


def _has_compatible_shallow_copy_type(self: torch.Tensor,
                                      other: torch.Tensor) -> bool:
    """A dense npu tensor and a dense CPU or npu one may take each other's
    data (Module.to sets param.data in place, so that tied weights, a
    GPT-2's lm_head and its token embedding, stay one Parameter), as
    PyTorch's OpenReg backend answers."""
    return all(t.layout == torch.strided and t.device.type in ("cpu", "npu")
               for t in (self, other))


def _local_scalar_dense(t: torch.Tensor):
    sync_for_host(t)
    return host(t).item()


# -- elementwise ------------------------------------------------------------------
def _ew(op: str, compute: torch.dtype, inputs, out, result: torch.dtype,
        natural: "torch.dtype | None" = None, attr=None):
    """out := ``op`` (a davinci.ops name) of ``inputs`` on the device:
    npu tensors of any layout and dtype, broadcast against each other
    (torch's rules; 0-dim ones too), and Python numbers (0-dim constants),
    each cast on the device to ``compute`` first where its dtype differs.
    The op writes ``natural`` (default: ``compute``; CMP's bool); ``out``
    (a new tensor of dtype ``result`` when None, else an out= or the
    tensor changed in place, any view) gets it directly, or through a
    dense temporary and an IDENTITY or CAST where it is of another dtype
    or overlaps a source other than as the same view. Returns the result,
    or None with nothing launched where the device cannot run it."""
    natural = natural or compute
    ts = [x for x in inputs if isinstance(x, torch.Tensor)]
    if not ts or not all(_is_npu(t) for t in ts) or \
            compute not in D.DTYPES or natural not in D.DTYPES:
        return None
    index = ts[0].get_device()
    if any(t.get_device() != index or t.is_conj() or t.is_neg()
           for t in ts):
        return None
    sizes = tuple(ts[0].shape)
    if any(tuple(t.shape) != sizes for t in ts[1:]):
        try:
            sizes = tuple(torch.broadcast_shapes(*(t.shape for t in ts)))
        except RuntimeError:
            return None                 # the CPU says why
    if out is not None and (not _is_npu(out) or out.get_device() != index
                            or tuple(out.shape) != sizes or
                            out.dtype not in D.DTYPES or
                            not torch.can_cast(result, out.dtype)):
        return None
    if not D.serves(index, op, D.DTYPES[compute]) or \
            (natural == torch.bool and not D.bool_results(index)):
        return None
    if 0 in sizes:                      # (empty tensors have no memory)
        return out if out is not None else \
            torch.empty(sizes, dtype=result, device=ts[0].device)
    steps: list = []                    # launched once all are possible

    def step(op_name, dtype, dst, srcs, a=None) -> bool:
        strided = None
        if not all(o.dense(dst.shape) for o in (dst, *srcs)):
            if not D.takes_strided(index, op_name):
                return False
            strided = D.walk(dst.shape, dst, srcs)
            if strided is None:
                return False
        steps.append((op_name, dtype, dst, srcs, a, strided))
        return True
    srcs = []
    keep = []                           # temporaries live to the end
    for x in inputs:
        if not isinstance(x, torch.Tensor):
            try:
                srcs.append(D.scalars.get(index, compute, x))
            except (RuntimeError, OverflowError, TypeError):
                return None             # a number the dtype cannot hold
            continue
        if x.numel() and x.dtype != compute:
            if x.dtype not in D.DTYPES or \
                    not D.serves(index, "cast", D.DTYPES[x.dtype]):
                return None
            tmp = torch.empty(x.shape, dtype=compute, device=x.device)
            keep.append(tmp)
            if not step("cast", x.dtype, D.operand(tmp), [D.operand(x)]):
                return None
            x = tmp
        srcs.append(D.operand(x))
    if out is None:
        out = torch.empty(sizes, dtype=result, device=ts[0].device)
    dst = D.operand(out)
    direct = out.dtype == natural and \
        not any(D.clashes(dst, s) for s in srcs)
    if direct and step(op, compute, dst, srcs, attr):
        pass
    else:
        if direct:
            return None                 # (a view the device cannot walk)
        tmp = torch.empty(sizes, dtype=natural, device=out.device)
        keep.append(tmp)
        step(op, compute, D.operand(tmp), srcs, attr)
        copy = "identity" if out.dtype == natural else "cast"
        if not D.serves(index, copy, D.DTYPES[natural]) or \
                not step(copy, natural, dst, [D.operand(tmp)]):
            return None
    for op_name, dtype, d, ss, a, strided in steps:
        D.elementwise(index, op_name, dtype, d, ss, a, strided)
    return out


def _promoted(x, other, true_division: bool = False) -> torch.dtype:
    """torch's result dtype of x <op> other (true division: a float)."""
    rtype = torch.result_type(x, other)
    if true_division and not (rtype.is_floating_point or rtype.is_complex):
        return torch.get_default_dtype()
    return rtype


def _binary_on_device(name: str, dev_op: str, x, other, alpha, out):
    """x <op> alpha*other as device tasks for any npu operands torch
    broadcasts (views, 0-dim tensors, other dtypes: promoted as torch
    does, cast on the device) and Python numbers; None where not."""
    if isinstance(other, torch.Tensor) and not _is_npu(other) and \
            other.dim():
        return None
    compute = _promoted(x, other, name == "div")
    if compute not in D.DTYPES or compute == torch.bool:
        return None
    result = compute
    s = _scalar(other)
    if s is None and not isinstance(other, torch.Tensor):
        return None
    if s is None:
        if alpha == 1:
            return _ew(dev_op, compute, [x, other], out, result)
        if compute not in D.FLOATS or name not in ("add", "sub"):
            return None
        # other * alpha + self, alpha rounded to float32
        a = _as_float32(alpha if name == "add" else -alpha)
        return _ew("axpy", compute, [other, x], out, result, attr=a)
    if compute not in D.FLOATS:
        if alpha != 1 or isinstance(s, float):
            return None
        return _ew(dev_op, compute, [x, s], out, result)
    half = compute != torch.float32
    if name in ("add", "sub"):
        # CPU torch rounds the scalar to a float16/bfloat16 tensor's dtype
        # first; alpha * scalar is rounded to float32 here, where CPU torch
        # fuses it into the add (identical when exact): value * 1 + self
        v = _as_dtype(s, compute) if half else s
        v = float(np.float32(alpha) * np.float32(v)) if alpha != 1 else v
        v = _as_float32(v if name == "add" else -v)
        done = _scalar_axpy(x, v, True, out, compute)
        return done if done is not None else \
            _ew("axpy", compute, [1, x], out, result, attr=v)
    if name == "mul":                   # number * self + -0
        done = _scalar_axpy(x, _as_float32(s), False, out, compute)
        return done if done is not None else \
            _ew("axpy", compute, [x, -0.0], out, result,
                attr=_as_float32(s))
    if half:                            # CPU torch: x * float32(1 / s)
        return _ew("axpy", compute, [x, -0.0], out, result, attr=_as_float32(
            1.0 / s if s else math.copysign(math.inf, s)))
    return _ew("div", compute, [x, s], out, result)


def _scalar_axpy(x, alpha: float, ones_first: bool, out, compute):
    """_ew's AXPY of a number for a dense ``x`` written in place or to a
    new tensor, as D.add_scalar (``alpha * 1 + x``) or D.scale (``alpha *
    x + -0``): the number's operand a cached row instead of a strided
    broadcast, the same task on the same values, so the same bits, at a
    dense task's cost (an optimizer's foreach steps are mostly these).
    None when it does not apply."""
    if (out is not None and out is not x) or x.dtype != compute or \
            not D.on_device(x, ops=("axpy",), floats=True):
        return None
    if out is None:
        out = torch.empty_like(x)
    (D.add_scalar if ones_first else D.scale)(x, alpha, out)
    return out


def _result_shape(x: torch.Tensor, other) -> torch.Size:
    if not isinstance(other, torch.Tensor) or other.shape == x.shape:
        return x.shape
    return torch.broadcast_shapes(
        x.shape, other.shape if isinstance(other, torch.Tensor) else ())


def _binary_op(name: str, dev_op: str, x, other, alpha=1, out=None):
    """x <op> alpha*other on the device when possible; ``out``: None
    (a new tensor), or the tensor to write (in-place or out=)."""
    if not isinstance(x, torch.Tensor):
        # rsub(t, number) reaches sub(number, t): the number as a tensor
        # of t's dtype (rounded as CPU torch rounds a scalar operand)
        x = torch.full_like(other, x)
    if out is None and alpha == 1 and isinstance(other, torch.Tensor) and \
            other.shape == x.shape and \
            D.on_device(x, other, ops=(dev_op,), floats=name == "div"):
        target = torch.empty_like(x)      # the common case, first
        D.binary(dev_op, x, other, target)
        return target
    res = _binary_on_device(name, dev_op, x, other, alpha, out)
    if res is not None:
        return res
    op = getattr(aten, name)
    reason = "operands of different shapes, dtypes or layouts"
    kw = {} if name in ("mul", "div") else {"alpha": alpha}
    if out is x:
        # the CPU's in-place op, for its checks (the result must keep x's
        # shape and dtype)
        inplace = getattr(aten, name + "_")
        res = on_cpu(inplace.Tensor if isinstance(other, torch.Tensor)
                     else inplace.Scalar, reason, x, other, **kw)
    else:
        res = on_cpu(op.Tensor if isinstance(other, torch.Tensor)
                     else op.Scalar, reason, x, other, **kw)
    if out is None:
        return res
    out.copy_(res)
    return out


def _as_float32(x: float) -> float:
    return D._as_float32(x)


def _as_dtype(s, dtype: torch.dtype) -> float:
    """The number ``s`` rounded to ``dtype`` as CPU torch rounds a scalar
    operand (through float32)."""
    return torch.tensor(s, dtype=torch.float32).to(dtype).item()


def _resize_out(out: torch.Tensor, shape: torch.Size, *inputs) -> None:
    """Give an out= tensor the result's shape, as CPU torch does: an out=
    that is also an input cannot be resized."""
    if out.shape == shape:
        return
    if any(out is t for t in inputs):
        raise RuntimeError("output with shape %s doesn't match the broadcast "
                           "shape %s" % (list(out.shape), list(shape)))
    out.resize_(shape)


def _make_binary(name: str, dev_op: str, has_alpha: bool
                 ) -> dict[str, object]:
    """The kernels of ``name`` (add, sub, mul, div) by overload: .Tensor
    (which the C++ half runs first: see _op_table), .Scalar, in place and
    .out."""
    if has_alpha:
        def functional(x, other, *, alpha=1):
            return _binary_op(name, dev_op, x, other, alpha)

        def inplace(x, other, *, alpha=1):
            return _binary_op(name, dev_op, x, other, alpha, out=x)

        def out_fn(x, other, *, alpha=1, out):
            _resize_out(out, _result_shape(x, other), x, other)
            return _binary_op(name, dev_op, x, other, alpha, out=out)
    else:
        def functional(x, other):
            return _binary_op(name, dev_op, x, other)

        def inplace(x, other):
            return _binary_op(name, dev_op, x, other, out=x)

        def out_fn(x, other, *, out):
            _resize_out(out, _result_shape(x, other), x, other)
            return _binary_op(name, dev_op, x, other, out=out)
    return {name + ".Tensor": functional, name + ".Scalar": functional,
            name + "_.Tensor": inplace, name + "_.Scalar": inplace,
            name + ".out": out_fn}


def _make_minmax(name: str) -> dict[str, object]:
    """maximum or minimum of two npu tensors broadcast against each other,
    promoted to one dtype as torch does."""
    op = getattr(aten, name)

    def run(x, other, out=None):
        if isinstance(other, torch.Tensor):
            dt = _promoted(x, other)
            if dt != torch.bool:
                res = _ew(name, dt, [x, other], out, dt)
                if res is not None:
                    return res
        if out is None:
            return on_cpu(op.default, "operands differ", x, other)
        out.copy_(on_cpu(op.default, "operands differ", x, other))
        return out

    def out_fn(x, other, *, out):
        _resize_out(out, _result_shape(x, other), x, other)
        return run(x, other, out)
    return {name: run, name + ".out": out_fn}


def _make_unary(name: str, dev_op: str, ints_to_float: bool
                ) -> dict[str, object]:
    """``name``, ``name_`` and ``name.out`` as davinci op ``dev_op``, on
    any npu view (``ints_to_float``: an integer tensor's float result, as
    torch's sqrt, exp and tanh give, cast on the device first)."""
    op = getattr(aten, name)

    def compute_of(x) -> torch.dtype:
        if ints_to_float and not (x.dtype.is_floating_point or
                                  x.dtype.is_complex):
            return torch.get_default_dtype()
        return x.dtype

    def functional(x):
        dt = compute_of(x)
        res = _ew(dev_op, dt, [x], None, dt)
        if res is not None:
            return res
        return on_cpu(op.default, "dtype, layout or a driver without it", x)

    def inplace(x):
        dt = compute_of(x)
        if _ew(dev_op, dt, [x], x, dt) is not None:
            return x
        # the CPU's in-place op, for its checks (abs_ of a complex tensor)
        x.copy_(on_cpu(getattr(aten, name + "_").default, "dtype, layout or "
                       "a driver without it", x))
        return x

    def out_fn(x, *, out):
        _resize_out(out, x.shape, x)
        dt = compute_of(x)
        if _ew(dev_op, dt, [x], out, dt) is not None:
            return out
        out.copy_(on_cpu(op.default, "dtype, layout or a driver without "
                         "it", x))
        return out
    return {name: functional, name + "_": inplace, name + ".out": out_fn}


def _make_gelu() -> dict[str, object]:
    """gelu, gelu_ and gelu.out, approximate "none" or "tanh" (GELU's
    imm), on any npu view of a float dtype."""
    def run(x, approximate, out):
        if approximate not in ("none", "tanh") or \
                not x.dtype.is_floating_point:
            return None
        return _ew("gelu", x.dtype, [x], out, x.dtype, attr=approximate)
    reason = "dtype, layout or approximate"

    def functional(x, *, approximate="none"):
        res = run(x, approximate, None)
        if res is not None:
            return res
        return on_cpu(aten.gelu.default, reason, x, approximate=approximate)

    def inplace(x, *, approximate="none"):
        if run(x, approximate, x) is None:
            x.copy_(on_cpu(aten.gelu_.default, reason, x,
                           approximate=approximate))
        return x

    def out_fn(x, *, approximate="none", out):
        _resize_out(out, x.shape, x)
        if run(x, approximate, out) is None:
            out.copy_(on_cpu(aten.gelu.default, reason, x,
                             approximate=approximate))
        return out
    return {"gelu": functional, "gelu_": inplace, "gelu.out": out_fn}


def _make_backward(name: str, dev_op: str, has_approximate: bool = False
                   ) -> dict[str, object]:
    """ATen's ``name`` (tanh_backward, sigmoid_backward: of the forward's
    result; gelu_backward, silu_backward: of its input) and its
    .grad_input overload as the davinci gradient op ``dev_op``: npu
    tensors of one float dtype, broadcast against each other, any views."""
    op = getattr(aten, name)
    reason = "dtypes or layout"

    def run(grad, x, out, attr):
        if grad.dtype != x.dtype or not grad.dtype.is_floating_point or \
                (has_approximate and attr not in ("none", "tanh")):
            return None
        return _ew(dev_op, grad.dtype, [grad, x], out, grad.dtype,
                   attr=attr)

    if has_approximate:
        def functional(grad, x, *, approximate="none"):
            res = run(grad, x, None, approximate)
            if res is not None:
                return res
            return on_cpu(op.default, reason, grad, x,
                          approximate=approximate)

        def out_fn(grad, x, *, approximate="none", grad_input):
            _resize_out(grad_input, _result_shape(grad, x), grad, x)
            if run(grad, x, grad_input, approximate) is None:
                grad_input.copy_(on_cpu(op.default, reason, grad, x,
                                        approximate=approximate))
            return grad_input
    else:
        def functional(grad, x):
            res = run(grad, x, None, None)
            return res if res is not None else \
                on_cpu(op.default, reason, grad, x)

        def out_fn(grad, x, *, grad_input):
            _resize_out(grad_input, _result_shape(grad, x), grad, x)
            if run(grad, x, grad_input, None) is None:
                grad_input.copy_(on_cpu(op.default, reason, grad, x))
            return grad_input
    return {name: functional, name + ".grad_input": out_fn}


def _pow_on_device(base, exponent, out):
    """base ** exponent on the device (npu tensors broadcast against each
    other, or a Python number either side), promoted as torch does, in a
    float dtype; None where not. A number exponent CPU torch computes
    otherwise (0.5: sqrt; 3 and -2 in float32: (x * x) * x and
    1 / (x * x)) runs as those ops, so the bits are CPU torch's; 1, 2 and
    -1 are POW's own exact cases."""
    for t in (base, exponent):
        if isinstance(t, torch.Tensor) and not _is_npu(t) and t.dim():
            return None
    if _scalar(base) is None and not isinstance(base, torch.Tensor) or \
            _scalar(exponent) is None and \
            not isinstance(exponent, torch.Tensor):
        return None
    dt = torch.result_type(base, exponent)
    if dt not in D.FLOATS:
        return None                     # integer powers: the CPU's
    e = _scalar(exponent) if isinstance(base, torch.Tensor) and \
        _is_npu(base) else None
    if e == 0.5:
        return _ew("sqrt", dt, [base], out, dt)
    if dt == torch.float32 and e in (3, -2):
        square = _ew("mul", dt, [base, base], None, dt)
        if square is None:
            return None
        if e == 3:
            return _ew("mul", dt, [square, base], out, dt)
        return _ew("reciprocal", dt, [square], out, dt)
    return _ew("pow", dt, [base, exponent], out, dt)


def _make_pow() -> dict[str, object]:
    """pow's overloads: tensor ** tensor, tensor ** number and
    number ** tensor, in place and out=."""
    reason = "dtypes (an integer power), layout or a CPU operand"

    def functional(x, exponent):
        res = _pow_on_device(x, exponent, None)
        if res is not None:
            return res
        op = aten.pow.Scalar if not isinstance(x, torch.Tensor) else (
            aten.pow.Tensor_Tensor if isinstance(exponent, torch.Tensor)
            else aten.pow.Tensor_Scalar)
        return on_cpu(op, reason, x, exponent)

    def inplace(x, exponent):
        if torch.result_type(x, exponent) != x.dtype or \
                _pow_on_device(x, exponent, x) is None:
            x.copy_(on_cpu(aten.pow_.Tensor if isinstance(
                exponent, torch.Tensor) else aten.pow_.Scalar, reason, x,
                exponent))
        return x

    def out_fn(x, exponent, *, out):
        shape = _result_shape(x, exponent) if isinstance(x, torch.Tensor) \
            else exponent.shape
        _resize_out(out, shape, x, exponent)
        if _pow_on_device(x, exponent, out) is None:
            out.copy_(functional(x, exponent))
        return out
    return {"pow.Tensor_Tensor": functional, "pow.Tensor_Scalar": functional,
            "pow.Scalar": functional, "pow_.Tensor": inplace,
            "pow_.Scalar": inplace, "pow.Tensor_Tensor_out": out_fn,
            "pow.Tensor_Scalar_out": out_fn, "pow.Scalar_out": out_fn}


#: LEAKY_RELU runs a negative_slope from 0 to float32's largest: CPU
#: torch's x * slope at a zero is -0 for +0 with a negative slope and NaN
#: with an infinite one, where the device keeps the zero
_SLOPE_MAX = float(np.finfo(np.float32).max)


def _slope_on_device(slope) -> bool:
    s = _scalar(slope)
    return s is not None and 0 <= s <= _SLOPE_MAX


def _leaky_relu(x, negative_slope=0.01):
    if _slope_on_device(negative_slope) and \
            D.on_device(x, ops=("leaky_relu",)):
        out = torch.empty_like(x)
        D.unary("leaky_relu", x, out, float(_scalar(negative_slope)))
        return out
    return on_cpu(aten.leaky_relu.default, "dtype, layout or a negative "
                  "slope", x, negative_slope)


def _leaky_relu_(x, negative_slope=0.01):
    if _slope_on_device(negative_slope) and \
            D.on_device(x, ops=("leaky_relu",)):
        D.unary("leaky_relu", x, x, float(_scalar(negative_slope)))
        return x
    x.copy_(on_cpu(aten.leaky_relu_.default, "dtype, layout or a negative "
                   "slope", x, negative_slope))
    return x


def _make_compare(name: str) -> dict[str, object]:
    """eq, ne, lt, le, gt, ge of npu tensors broadcast against each other
    or a number, promoted to one dtype as torch does (a bool one compared
    as uint8): CMP's bool result, or its 1 and 0 in an out= or in-place
    tensor of the compared dtype (any other one through a CAST)."""
    op = getattr(aten, name)

    def on_device(x, other, out):
        if isinstance(other, torch.Tensor) and not _is_npu(other) and \
                other.dim():
            return None
        s = _scalar(other)
        if s is None and not isinstance(other, torch.Tensor):
            return None
        dt = torch.result_type(x, other)
        if dt == torch.bool:
            dt = torch.uint8            # 0 and 1 compare as bools do
        natural = out.dtype if out is not None and out.dtype == dt \
            else torch.bool
        return _ew("compare", dt, [x, other if s is None else s], out,
                   torch.bool, natural, attr=name)

    def functional(x, other):
        res = on_device(x, other, None)
        if res is not None:
            return res
        return on_cpu(op.Tensor if isinstance(other, torch.Tensor)
                      else op.Scalar, "operands or dtypes", x, other)

    def out_fn(x, other, *, out):
        _resize_out(out, _result_shape(x, other), x, other)
        if on_device(x, other, out) is not None:
            return out
        out.copy_(on_cpu(op.Tensor if isinstance(other, torch.Tensor)
                         else op.Scalar, "operands or an out= of another "
                         "dtype", x, other))
        return out

    def inplace(x, other):
        if on_device(x, other, x) is not None:
            return x
        inp = getattr(aten, name + "_")
        x.copy_(on_cpu(inp.Tensor if isinstance(other, torch.Tensor)
                       else inp.Scalar, "operands differ", x, other))
        return x
    return {name + ".Tensor": functional, name + ".Scalar": functional,
            name + ".Tensor_out": out_fn, name + ".Scalar_out": out_fn,
            name + "_.Tensor": inplace, name + "_.Scalar": inplace}


def _threshold_backward(grad, x, threshold):
    # relu's backward: grad where x > 0, else 0 (DAVINCI_OP_RELU_GRAD)
    if threshold == 0 and grad.shape == x.shape and \
            D.on_device(grad, x, ops=("relu_grad",)):
        out = torch.empty_like(grad)
        D.binary("relu_grad", grad, x, out)
        return out
    return on_cpu(aten.threshold_backward.default,
                  "threshold, operands or a driver without RELU_GRAD",
                  grad, x, threshold)


def _fill(x, value):
    if _is_npu(x) and not x.numel():
        # nothing to write (GPT-2's backward zeroes a [0]); CPU torch's
        # checks of the number (an overflow raises)
        torch.empty(0, dtype=x.dtype).fill_(value)
        return x
    if D.on_device(x, ops=("axpy",)) or (value == 0 and D.on_device(x)):
        if x.numel():
            D.fill(x, float(value))
        return x
    if D.on_device(x, ops=("fill",)):
        try:
            if _fill_operand(x, value) is not None:
                return x
        except (RuntimeError, OverflowError, TypeError):
            pass                        # a number the dtype cannot hold
    warn_cpu("aten::fill_.Scalar", "dtype or layout")
    sync_for_host(x)
    host(x).fill_(value)
    return x


def _zero(x):
    return _fill(x, 0)


def _addcmul_(x, t1, t2, *, value=1):
    if D.on_device(x, t1, t2, ops=("axpy", "mul", "add")) and \
            x.shape == t1.shape == t2.shape:
        tmp = torch.empty_like(x)
        D.scale(t1, value, tmp)           # value * t1
        D.binary("mul", tmp, t2, tmp)     # * t2
        D.binary("add", x, tmp, x)        # self +
        return x
    x.copy_(on_cpu(aten.addcmul.default, "operands differ", x, t1, t2,
                   value=value))
    return x


def _addcdiv_(x, t1, t2, *, value=1):
    if D.on_device(x, t1, t2, ops=("div", "axpy")) and \
            x.shape == t1.shape == t2.shape:
        tmp = torch.empty_like(x)
        D.binary("div", t1, t2, tmp)      # t1 / t2
        D.axpy(value, tmp, x, x)          # self + value *
        return x
    x.copy_(on_cpu(aten.addcdiv.default, "operands differ", x, t1, t2,
                   value=value))
    return x


def _lerp_(x, end, weight):
    # x + weight * (end - x)
    if D.on_device(x, end, ops=("sub", "axpy")) and x.shape == end.shape:
        tmp = torch.empty_like(x)
        D.binary("sub", end, x, tmp)
        D.axpy(float(weight), tmp, x, x)
        return x
    x.copy_(on_cpu(aten.lerp.Scalar, "operands differ", x, end, weight))
    return x


# -- matmul -------------------------------------------------------------------------
def _dense_operand(t):
    """t, or a dense copy (COPY_VIEW) of a 2-D npu view MATMUL cannot read
    (an expanded gradient of a sum, a strided slice)."""
    if _is_npu(t) and t.dim() == 2 and t.numel() and \
            D.matmul_operand(t) is None and t.dtype in D.FLOATS:
        return t.contiguous()
    return t


def _mm(a, b):
    if _is_npu(a) and _is_npu(b) and a.dtype == b.dtype:
        a, b = _dense_operand(a), _dense_operand(b)
    pa, pb = D.matmul_operand(a), D.matmul_operand(b)
    if pa and pb and a.dtype == b.dtype and a.device == b.device:
        out = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype,
                          device=a.device)
        D.matmul(pa[0], pa[1], pb[0], pb[1], out)
        return out
    return on_cpu(aten.mm.default, "operand layout or dtype", a, b)


def _broadcast_rows(bias: torch.Tensor, m: int) -> torch.Tensor:
    """[n] -> [m, n] with the bias in every row: ones[m, 1] @ bias[1, n]
    (one product per element: exact)."""
    n = bias.shape[-1]
    out = torch.empty((m, n), dtype=bias.dtype, device=bias.device)
    D.matmul_dt(D.const(bias, 1, (m, 1)), D.dev(bias, (1, n)), D.dev(out),
                bias)
    return out


def _addmm(bias, a, b, *, beta=1, alpha=1):
    pa, pb = D.matmul_operand(a), D.matmul_operand(b)
    m, n = a.shape[0], b.shape[1]
    if pa and pb and beta == 1 and alpha == 1 and \
            D.on_device(bias, ops=("add",)) and bias.dtype == a.dtype and \
            bias.shape in ((n,), (1, n), (m, n)):
        out = torch.empty((m, n), dtype=a.dtype, device=a.device)
        D.matmul(pa[0], pa[1], pb[0], pb[1], out)
        full = bias if bias.shape == (m, n) else \
            _broadcast_rows(bias.reshape(n), m)
        D.binary("add", out, full, out)
        return out
    return on_cpu(aten.addmm.default, "beta/alpha, bias shape or layout",
                  bias, a, b, beta=beta, alpha=alpha)


# -- softmax ----------------------------------------------------------------------
def _dim_last(t: torch.Tensor, dim: int) -> torch.Tensor:
    """t with ``dim`` moved last, dense (one COPY_VIEW, none where t is
    dense already and ``dim`` is its last)."""
    d = dim % max(t.dim(), 1)
    moved = t if t.dim() == 0 or d == t.dim() - 1 else t.movedim(d, -1)
    return moved.contiguous()


def _dim_back(t: torch.Tensor, dim: int, like: torch.Tensor
              ) -> torch.Tensor:
    """The result of a row op over ``_dim_last(like, dim)`` in like's
    order of dims, dense (a COPY_VIEW back where dim was not last)."""
    d = dim % max(like.dim(), 1)
    if like.dim() == 0 or d == like.dim() - 1:
        return t
    return t.movedim(-1, d).contiguous()


def _row_op_ok(x, dim, op: str) -> bool:
    """A row op ``op`` of x along ``dim`` on the device: a dense copy with
    dim last first where x is a view or dim is not its last."""
    return _is_npu(x) and x.numel() > 0 and \
        _dim_ok(x, dim) and x.dtype in D.FLOATS and \
        D.serves(x.get_device(), op, D.DTYPES[x.dtype])


def _softmax(x, dim, half_to_float):
    if not half_to_float and _is_npu(x) and x.numel() == 0 and \
            x.dtype in D.FLOATS and _dim_ok(x, dim):
        return torch.empty_like(x)      # (nothing to compute)
    if not half_to_float and _row_op_ok(x, dim, "softmax"):
        rows = _dim_last(x, dim)
        out = torch.empty_like(rows)
        D.softmax(rows, out)
        return _dim_back(out, dim, x)
    return on_cpu(aten._softmax.default, "half_to_float, an empty tensor "
                  "or its dtype", x, dim, half_to_float)


def _broadcast_cols(col: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """[m] -> [m, n] with col[i] in every element of row i: col[m, 1] @
    ones[1, n] (exact)."""
    n = like.shape[-1]
    m = like.numel() // n
    out = torch.empty_like(like)
    D.matmul_dt(D.dev(col, (m, 1)), D.const(like, 1, (1, n)),
                D.dev(out, (m, n)), like)
    return out


def _log_softmax(x, dim, half_to_float):
    if not half_to_float and _is_npu(x) and x.numel() == 0 and \
            x.dtype in D.FLOATS and _dim_ok(x, dim):
        return torch.empty_like(x)
    if not half_to_float and _row_op_ok(x, dim, "log_softmax"):
        rows = _dim_last(x, dim)
        out = torch.empty_like(rows)
        D.log_softmax(rows, out)
        return _dim_back(out, dim, x)
    return on_cpu(aten._log_softmax.default, "half_to_float, an empty "
                  "tensor, its dtype or a driver without LOG_SOFTMAX", x,
                  dim, half_to_float)


# -- nll_loss ---------------------------------------------------------------------
_MEAN, _SUM = 1, 2          # torch's Reduction enum
#: what nll_loss's device path runs (one_hot: CAST, MATMUL, CMP)
_NLL_OPS = ("cast", "matmul", "compare", "relu_grad", "reduce_sum", "axpy",
            "div")


def _nll_on_device(x, target, weight, reduction: int,
                   ignore_index: int) -> bool:
    """The device path's conditions: [m, n] float scores, 1-D int64/int32
    targets on the same device, no class weights, mean or sum, an
    ignore_index that is no column (the default -100)."""
    return weight is None and reduction in (_MEAN, _SUM) and \
        x.dim() == 2 and D.on_device(x, ops=_NLL_OPS) and \
        isinstance(target, torch.Tensor) and \
        target.dtype in (torch.int64, torch.int32) and \
        target.device == x.device and target.is_contiguous() and \
        target.shape == x.shape[:1] and \
        not 0 <= ignore_index < x.shape[1] and x.shape[1] < 1 << 24


def _mask(x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """one_hot(target) in x's dtype (0 and 1 are exact in every float)."""
    mask = D.one_hot(target, x.shape[1])
    if x.dtype == torch.float32:
        return mask
    cast = torch.empty_like(x)
    D.cast(mask, cast)
    return cast


def _nll_loss_forward(x, target, weight, reduction, ignore_index):
    # output = -sum_i x[i, t_i] (/ total_weight for mean); total_weight =
    # the number of targets that name a column
    if not _nll_on_device(x, target, weight, reduction, ignore_index):
        return on_cpu(aten.nll_loss_forward.default, "weights, reduction, "
                      "shapes, ignore_index or a driver without CMP", x,
                      target, weight, reduction, ignore_index)
    mask = _mask(x, target)
    picked = torch.empty_like(x)
    D.binary("relu_grad", x, mask, picked)    # x where mask, else +0
    total = torch.empty((), dtype=x.dtype, device=x.device)
    D.row_sums(picked.reshape(1, -1), total.reshape(1))
    weight_sum = torch.empty((), dtype=x.dtype, device=x.device)
    D.row_sums(mask.reshape(1, -1), weight_sum.reshape(1))
    out = torch.empty((), dtype=x.dtype, device=x.device)
    D.scale(total, -1.0, out)
    if reduction == _MEAN:
        D.binary("div", out, weight_sum, out)
    return out, weight_sum


def _nll_loss_backward(grad, x, target, weight, reduction, ignore_index,
                       total_weight):
    # grad_input[i, t_i] = -(grad / total_weight) (mean) or -grad (sum),
    # +0 elsewhere, as CPU torch computes it
    if not (_nll_on_device(x, target, weight, reduction, ignore_index)
            and D.on_device(grad, total_weight, ops=("div", "axpy"))
            and grad.dtype == x.dtype and grad.numel() == 1):
        return on_cpu(aten.nll_loss_backward.default, "weights, reduction, "
                      "shapes, ignore_index or a driver without CMP", grad,
                      x, target, weight, reduction, ignore_index,
                      total_weight)
    c = torch.empty((), dtype=x.dtype, device=x.device)
    if reduction == _MEAN:
        D.binary("div", grad.reshape(()), total_weight.reshape(()), c)
        D.scale(c, -1.0, c)
    else:
        D.scale(grad.reshape(()), -1.0, c)
    full = _broadcast_rows(c.reshape(1), x.numel()).reshape(x.shape)
    out = torch.empty_like(x)
    D.binary("relu_grad", full, _mask(x, target), out)
    return out


def _log_softmax_backward(grad, output, dim, input_dtype):
    # grad - exp(output) * sum(grad, dim)
    if grad.dtype == input_dtype and _row_op_ok(grad, dim, "reduce_sum") \
            and output.shape == grad.shape and _is_npu(output) and \
            output.dtype == grad.dtype and \
            all(D.serves(grad.get_device(), op, D.DTYPES[grad.dtype])
                for op in ("exp", "matmul", "mul", "sub")):
        g, y = _dim_last(grad, dim), _dim_last(output, dim)
        rows = torch.empty(g.shape[:-1], dtype=g.dtype, device=g.device)
        D.row_sums(g, rows)
        e = torch.empty_like(y)
        D.unary("exp", y, e)
        D.binary("mul", e, _broadcast_cols(rows, g), e)
        out = torch.empty_like(g)
        D.binary("sub", g, e, out)
        return _dim_back(out, dim, grad)
    return on_cpu(aten._log_softmax_backward_data.default, "dim or dtype",
                  grad, output, dim, input_dtype)


def _softmax_backward(grad, output, dim, input_dtype):
    # output * (grad - sum(grad * output, dim))
    if grad.dtype == input_dtype and _row_op_ok(grad, dim, "reduce_sum") \
            and output.shape == grad.shape and _is_npu(output) and \
            output.dtype == grad.dtype and \
            all(D.serves(grad.get_device(), op, D.DTYPES[grad.dtype])
                for op in ("mul", "matmul", "sub")):
        g, y = _dim_last(grad, dim), _dim_last(output, dim)
        go = torch.empty_like(g)
        D.binary("mul", g, y, go)
        rows = torch.empty(g.shape[:-1], dtype=g.dtype, device=g.device)
        D.row_sums(go, rows)
        D.binary("sub", g, _broadcast_cols(rows, g), go)
        D.binary("mul", y, go, go)
        return _dim_back(go, dim, grad)
    return on_cpu(aten._softmax_backward_data.default, "dim or dtype",
                  grad, output, dim, input_dtype)


# -- pooling ----------------------------------------------------------------------
def _pair(v) -> "tuple[int, int] | list":
    """torch's int[2] argument: one value for both dimensions, or two;
    an empty stride is the kernel's."""
    v = [int(n) for n in v] if isinstance(v, (list, tuple)) else [int(v)]
    return v if not v else (v[0], v[0]) if len(v) == 1 else tuple(v)


def _pool_geometry(op: str, x: torch.Tensor, dims: "tuple | None" = None,
                   **kw) -> "tuple[dict, tuple, tuple] | None":
    """(block fields, [n, c, h, w] of x, y's shape) of pooling ``op`` on
    x (torch's [c, h, w] is one image), or None when the device does not
    run it: not npu floats the driver pools, not contiguous, or a
    geometry davinci.ops refuses (CPU torch then says what is wrong)."""
    schema_op = {"max_pool2d": ("max_pool2d", "max_pool2d_backward"),
                 "avg_pool2d": ("avg_pool2d", "avg_pool2d_backward")}[op]
    if x.dim() not in (3, 4) or not D.on_device(x, ops=schema_op,
                                                floats=True):
        return None
    x4 = tuple(x.shape) if x.dim() == 4 else (1,) + tuple(x.shape)
    kw = {k: _pair(v) if k in ("kernel_size", "stride", "padding",
                               "dilation") else v for k, v in kw.items()}
    try:
        fields, y = davinci_ops.pool2d_shapes(x4, op=op, **kw)
    except davinci.ShapeError:
        return None
    if dims is not None and tuple(dims) != y[-len(dims):]:
        return None
    return fields, x4, y if x.dim() == 4 else y[1:]


def _max_pool2d_with_indices(x, kernel_size, stride=(), padding=0,
                             dilation=1, ceil_mode=False):
    g = _pool_geometry("max_pool2d", x, kernel_size=kernel_size,
                       stride=stride, padding=padding, dilation=dilation,
                       ceil_mode=ceil_mode)
    if g is None:
        return on_cpu(aten.max_pool2d_with_indices.default, "layout, dtype "
                      "or geometry", x, kernel_size, stride, padding,
                      dilation, ceil_mode)
    fields, x4, y = g
    out = torch.empty(y, dtype=x.dtype, device=x.device)
    idx = torch.empty(y, dtype=torch.int64, device=x.device)
    D.pool("max_pool2d", fields, idx, [x], x.dtype, dst_dtype="int64")
    if not _serves(x, "index_select"):
        D.pool("max_pool2d", fields, out, [x], x.dtype)
        return out, idx
    # the values are x's elements at the indices (MAXPOOL2D copies the
    # chosen element's bits): one INDEX_SELECT of each plane instead of a
    # second pass over every window (a tenth of its device time)
    planes, hw = x4[0] * x4[1], x4[2] * x4[3]
    D.index_rows("index_select", out, x, idx,
                 (planes, hw, 1, y[-2] * y[-1]))
    return out, idx


def _max_pool2d_with_indices_backward(grad, x, kernel_size, stride, padding,
                                      dilation, ceil_mode, indices):
    g = _pool_geometry("max_pool2d", x, grad.shape[-2:],
                       kernel_size=kernel_size, stride=stride,
                       padding=padding, dilation=dilation,
                       ceil_mode=ceil_mode)
    if g is not None and grad.shape == indices.shape and \
            D.on_device(grad, x) and indices.dtype == torch.int64 and \
            D.on_device(indices) and indices.get_device() == x.get_device():
        dx = torch.empty_like(x)
        D.pool("max_pool2d_backward", g[0], dx, [grad, indices], x.dtype)
        return dx
    return on_cpu(aten.max_pool2d_with_indices_backward.default,
                  "layout, dtype or geometry", grad, x, kernel_size, stride,
                  padding, dilation, ceil_mode, indices)


def _avg_kw(kernel_size, stride, padding, ceil_mode, count_include_pad,
            divisor_override) -> dict:
    return dict(kernel_size=kernel_size, stride=stride, padding=padding,
                ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                divisor=divisor_override)


def _avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    kw = _avg_kw(kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override)
    g = _pool_geometry("avg_pool2d", x, **kw)
    if g is None:
        return on_cpu(aten.avg_pool2d.default, "layout, dtype or geometry",
                      x, kernel_size, stride, padding, ceil_mode,
                      count_include_pad, divisor_override)
    out = torch.empty(g[2], dtype=x.dtype, device=x.device)
    D.pool("avg_pool2d", g[0], out, [x], x.dtype)
    return out


def _avg_pool2d_backward(grad, x, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override):
    kw = _avg_kw(kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override)
    g = _pool_geometry("avg_pool2d", x, grad.shape[-2:], **kw)
    if g is not None and D.on_device(grad, x):
        dx = torch.empty_like(x)
        D.pool("avg_pool2d_backward", g[0], dx, [grad], x.dtype)
        return dx
    return on_cpu(aten.avg_pool2d_backward.default, "layout, dtype or "
                  "geometry", grad, x, kernel_size, stride, padding,
                  ceil_mode, count_include_pad, divisor_override)


def _adaptive_geometry(x, output_size):
    """_pool_geometry of torch's adaptive average pooling where each
    output extent divides x's: windows of x / output, as strides."""
    k = davinci_ops.adaptive_pool2d_kernel(x.shape, [int(n) for n in output_size]) \
        if x.dim() in (3, 4) and len(output_size) == 2 else None
    if k is None:
        return None
    return _pool_geometry("avg_pool2d", x, kernel_size=k, stride=k,
                          count_include_pad=False, adaptive=True)


def _adaptive_avg_pool2d(x, output_size):
    g = _adaptive_geometry(x, output_size)
    if g is None:
        return on_cpu(aten._adaptive_avg_pool2d.default, "layout, dtype or "
                      "an output size not dividing the input's", x,
                      output_size)
    out = torch.empty(g[2], dtype=x.dtype, device=x.device)
    D.pool("avg_pool2d", g[0], out, [x], x.dtype)
    return out


def _adaptive_avg_pool2d_backward(grad, x):
    g = _adaptive_geometry(x, grad.shape[-2:])
    if g is not None and D.on_device(grad, x) and \
            tuple(grad.shape) == tuple(g[2]):
        dx = torch.empty_like(x)
        D.pool("avg_pool2d_backward", g[0], dx, [grad], x.dtype)
        return dx
    return on_cpu(aten._adaptive_avg_pool2d_backward.default, "layout, "
                  "dtype or an output size not dividing the input's", grad,
                  x)


# -- foreach (what torch.optim's foreach paths call) ---------------------------------
def _foreach(per_tensor, listed: tuple[int, ...]):
    """A _foreach_* kernel looping ``per_tensor`` over the lists at the
    argument positions ``listed`` (other arguments passed as they are, a
    list of scalars zipped)."""
    def run(*args, **kwargs):
        n = len(args[0])
        results = []
        for i in range(n):
            a = [x[i] if (j in listed or (isinstance(x, (list, tuple))
                                          and j > 0)) else x
                 for j, x in enumerate(args)]
            results.append(per_tensor(*a, **kwargs))
        return results
    return run


def _foreach_inplace(per_tensor, listed):
    loop = _foreach(per_tensor, listed)

    def run(*args, **kwargs):
        loop(*args, **kwargs)
    return run


_FOREACH = {
    "_foreach_add_.List": (aten.add_.Tensor, (0, 1), True),
    "_foreach_add_.Scalar": (aten.add_.Scalar, (0,), True),
    "_foreach_add_.Tensor": (aten.add_.Tensor, (0,), True),
    "_foreach_add.List": (aten.add.Tensor, (0, 1), False),
    "_foreach_add.Scalar": (aten.add.Scalar, (0,), False),
    "_foreach_sub_.Scalar": (aten.sub_.Scalar, (0,), True),
    "_foreach_mul_.Scalar": (aten.mul_.Scalar, (0,), True),
    "_foreach_mul_.List": (aten.mul_.Tensor, (0, 1), True),
    "_foreach_mul_.Tensor": (aten.mul_.Tensor, (0,), True),
    "_foreach_mul.Scalar": (aten.mul.Scalar, (0,), False),
    "_foreach_mul.List": (aten.mul.Tensor, (0, 1), False),
    "_foreach_div_.Scalar": (aten.div_.Scalar, (0,), True),
    "_foreach_div_.List": (aten.div_.Tensor, (0, 1), True),
    "_foreach_div_.ScalarList": (aten.div_.Scalar, (0, 1), True),
    "_foreach_div.List": (aten.div.Tensor, (0, 1), False),
    "_foreach_div.ScalarList": (aten.div.Scalar, (0, 1), False),
    "_foreach_lerp_.Scalar": (aten.lerp_.Scalar, (0, 1), True),
    "_foreach_neg": (aten.neg.default, (0,), False),
    "_foreach_sqrt": (aten.sqrt.default, (0,), False),
    "_foreach_sqrt_": (aten.sqrt_.default, (0,), True),
    "_foreach_zero_": (aten.zero_.default, (0,), True),
}


def _pointwise_foreach(op):
    """_foreach_addcmul_/_foreach_addcdiv_: ``value`` is one scalar, a
    list of them, or a CPU tensor of them."""
    def run(x, t1, t2, value=1):
        if isinstance(value, torch.Tensor):
            value = value.tolist()
        values = value if isinstance(value, (list, tuple)) \
            else [value] * len(x)
        for a, b, c, v in zip(x, t1, t2, values):
            op(a, b, c, value=v)
    return run


def _foreach_kernels() -> dict[str, object]:
    """The _foreach_* kernels by overload: each runs its ATen op per
    tensor (on the device where that op's operands allow)."""
    kernels = {name: (_foreach_inplace if inplace else _foreach)(op, listed)
               for name, (op, listed, inplace) in _FOREACH.items()}
    add_scalar = kernels["_foreach_add_.Scalar"]

    def foreach_add_scalar_(tensors, scalar):
        """torch.optim's step increments: the host's copies of the fused
        optimizers' step counts move with them (_fused_optim)."""
        from . import _fused_optim
        before = _fused_optim.known_steps(tensors)
        add_scalar(tensors, scalar)
        _fused_optim.note_increment(tensors, before, scalar)
    kernels["_foreach_add_.Scalar"] = foreach_add_scalar_
    for op, base in ((aten.addcmul_.default, "_foreach_addcmul_"),
                     (aten.addcdiv_.default, "_foreach_addcdiv_")):
        for overload in ("Scalar", "ScalarList", "Tensor"):
            kernels[base + "." + overload] = _pointwise_foreach(op)
    return kernels


def _record_stream(t: torch.Tensor, s: torch.Stream) -> None:
    """``t``'s memory, once freed, is not reused until ``s`` has run past
    what it had queued then (memory.py). PyTorch hands ``s`` over as a
    plain torch.Stream (device type, index, id)."""
    memory.record_stream(t, streams.from_torch_stream(s))


# -- indexing, selection, arg-reductions, random ops ------------------------------
def _serves(t: torch.Tensor, *ops: str) -> bool:
    """npu tensor ``t`` of a device dtype every schema op of ``ops`` takes
    and the driver serves, not empty."""
    return _is_npu(t) and t.numel() > 0 and t.dtype in D.DTYPES and \
        all(D.serves(t.get_device(), op, D.DTYPES[t.dtype]) for op in ops)


def _indices_ok(x: torch.Tensor, index) -> bool:
    return isinstance(index, torch.Tensor) and _is_npu(index) and \
        index.device == x.device and index.dtype in D.INDEX_DTYPES


def _prod(shape) -> int:
    return math.prod(int(s) for s in shape)


def _dim_ok(x: torch.Tensor, dim) -> bool:
    """``dim`` names a dimension of x (a 0-dim tensor has dims 0 and -1,
    as torch wraps them): anything else is left to the CPU, which raises
    torch's IndexError."""
    n = max(x.dim(), 1)
    return isinstance(dim, int) and -n <= dim < n


def _batched_index(index: torch.Tensor, batches: int) -> torch.Tensor:
    """The dense indices of every batch: ``index`` flat, repeated for each
    of ``batches`` by one copy of its broadcast (COPY_VIEW)."""
    flat = index.reshape(-1).contiguous()
    if batches == 1:
        return flat
    return flat.expand(batches, flat.numel()).contiguous()


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False,
               sparse=False):
    if weight.dim() == 2 and _serves(weight, "index_select") and \
            _indices_ok(weight, indices):
        w = weight.contiguous()
        out = torch.empty(tuple(indices.shape) + (w.shape[1],),
                          dtype=w.dtype, device=w.device)
        D.index_rows("index_select", out, w, indices.contiguous(),
                     (1, w.shape[0], w.shape[1], indices.numel()))
        return out
    return on_cpu(aten.embedding.default, "weight, indices or dtype",
                  weight, indices, padding_idx, scale_grad_by_freq, sparse)


def _embedding_dense_backward(grad, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    # zeros, then each lookup's gradient row added in index order (CPU
    # torch's serial loop); the padding row, which CPU torch skips, zeroed
    # again afterwards: only its own lookups reached it
    if not scale_grad_by_freq and grad.dim() >= 1 and \
            _serves(grad, "index_add") and _indices_ok(grad, indices) and \
            grad.numel() == indices.numel() * grad.shape[-1]:
        d = grad.shape[-1]
        gw = torch.zeros((num_weights, d), dtype=grad.dtype,
                         device=grad.device)
        D.index_rows("index_add", gw, grad.contiguous(), indices.contiguous(),
                     (1, num_weights, d, indices.numel()))
        if 0 <= padding_idx < num_weights:
            gw[padding_idx].zero_()
        return gw
    return on_cpu(aten.embedding_dense_backward.default, "scale_grad_by_freq "
                  "or dtype", grad, indices, num_weights, padding_idx,
                  scale_grad_by_freq)


def _index_select(x, dim, index):
    if x.dim() and index.dim() <= 1 and _serves(x, "index_select") and \
            _indices_ok(x, index) and _dim_ok(x, dim):
        dim %= x.dim()
        m = _prod(x.shape[:dim])
        out = torch.empty(x.shape[:dim] + (index.numel(),) +
                          x.shape[dim + 1:], dtype=x.dtype, device=x.device)
        D.index_rows("index_select", out, x.contiguous(),
                     _batched_index(index, m),
                     (m, x.shape[dim], _prod(x.shape[dim + 1:]),
                      index.numel()))
        return out
    return on_cpu(aten.index_select.default, "index or dtype", x, dim, index)


def _along_last(x, dim, index) -> bool:
    """gather's and scatter_add's device case: the last dim, ``index``
    npu int64/int32 of x's other sizes."""
    return x.dim() >= 1 and _dim_ok(x, dim) and \
        dim % x.dim() == x.dim() - 1 and \
        _indices_ok(x, index) and index.dim() == x.dim() and \
        index.shape[:-1] == x.shape[:-1]


def _gather(x, dim, index, *, sparse_grad=False):
    # out[..., j] = x[..., index[..., j]]: one INDEX_SELECT of rows of 1
    if not sparse_grad and _serves(x, "index_select") and \
            _along_last(x, dim, index):
        out = torch.empty(index.shape, dtype=x.dtype, device=x.device)
        if out.numel():
            D.index_rows("index_select", out, x.contiguous(),
                         index.contiguous(),
                         (_prod(x.shape[:-1]), x.shape[-1], 1,
                          index.shape[-1]))
        return out
    return on_cpu(aten.gather.default, "not the last dim, or dtype", x, dim,
                  index, sparse_grad=sparse_grad)


def _accumulated(x: torch.Tensor, src: torch.Tensor, index: torch.Tensor,
                 geom, in_float32: bool) -> None:
    """INDEX_ADD of src into x in index order; ``in_float32`` (a float16
    or bfloat16 x): in float32 copies (CAST), rounded once at the end, as
    CPU torch's scatter_add and its index_add_ along the first or last
    dim accumulate (their opmath buffers)."""
    if not in_float32:
        D.index_rows("index_add", x, src.contiguous(), index, geom)
        return
    xf, sf = x.float(), src.float()
    D.index_rows("index_add", xf, sf.contiguous(), index, geom)
    x.copy_(xf)


def _scatter_add_into(x, dim, index, src) -> bool:
    """x[..., index[..., j]] += src[..., j], in j's order, in place."""
    if not (_serves(x, "index_add") and _along_last(x, dim, index) and
            isinstance(src, torch.Tensor) and src.dtype == x.dtype and
            src.device == x.device and src.shape == index.shape and
            x.is_contiguous()):
        return False
    if index.numel():
        _accumulated(x, src, index.contiguous(),
                     (_prod(x.shape[:-1]), x.shape[-1], 1, index.shape[-1]),
                     x.dtype in (torch.float16, torch.bfloat16))
    return True


def _scatter_add(x, dim, index, src):
    if _serves(x, "index_add") and x.is_contiguous():
        out = x.clone()
        if _scatter_add_into(out, dim, index, src):
            return out
    return on_cpu(aten.scatter_add.default, "not the last dim, or dtype", x,
                  dim, index, src)


def _scatter_add_(x, dim, index, src):
    if not _scatter_add_into(x, dim, index, src):
        x.copy_(on_cpu(aten.scatter_add.default, "not the last dim, or "
                       "dtype", x, dim, index, src))
    return x


def _index_add_into(x, dim, index, source, alpha) -> bool:
    """x.index_add_(dim, index, source) on the device, in index order."""
    if not (alpha == 1 and x.dim() and _dim_ok(x, dim) and
            _serves(x, "index_add") and
            x.is_contiguous() and _indices_ok(x, index) and
            index.dim() <= 1 and isinstance(source, torch.Tensor) and
            source.dtype == x.dtype and source.device == x.device):
        return False
    dim %= x.dim()
    if source.shape != x.shape[:dim] + (index.numel(),) + x.shape[dim + 1:]:
        return False                    # the CPU says why
    m = _prod(x.shape[:dim])
    # CPU torch rounds each add but along the first and last dims of a
    # tensor of 2 or more (a scatter_add there)
    in_float32 = x.dtype in (torch.float16, torch.bfloat16) and \
        x.dim() > 1 and dim in (0, x.dim() - 1)
    _accumulated(x, source, _batched_index(index, m),
                 (m, x.shape[dim], _prod(x.shape[dim + 1:]), index.numel()),
                 in_float32)
    return True


def _index_add_(x, dim, index, source, *, alpha=1):
    if not _index_add_into(x, dim, index, source, alpha):
        x.copy_(on_cpu(aten.index_add.default, "alpha, layout or dtype", x,
                       dim, index, source, alpha=alpha))
    return x


def _index_add(x, dim, index, source, *, alpha=1):
    if _serves(x, "index_add"):
        out = x.clone()
        if _index_add_into(out, dim, index, source, alpha):
            return out
    return on_cpu(aten.index_add.default, "alpha, layout or dtype", x, dim,
                  index, source, alpha=alpha)


def _value_operand(x: torch.Tensor, value):
    """The operand of a value of x's dtype: a number or a 0-dim tensor on
    the CPU (a 0-dim constant), or a 0-dim npu tensor of x's dtype; None
    where neither."""
    if x.dtype not in D.DTYPES:
        return None
    s = _scalar(value)
    if s is None and isinstance(value, torch.Tensor) and \
            value.dtype == torch.bool and value.dim() == 0 and \
            not _is_npu(value):
        s = bool(value.item())
    if s is not None:
        try:
            return D.scalars.get(x.get_device(), x.dtype, s)
        except (RuntimeError, OverflowError, TypeError):
            return None
    if isinstance(value, torch.Tensor) and _is_npu(value) and \
            value.dim() == 0 and value.dtype == x.dtype and \
            value.device == x.device:
        return D.operand(value)
    return None


def _select_into(out: torch.Tensor, cond: torch.Tensor, value) -> bool:
    """out := cond ? value : out (SELECT, in place), cond bool broadcast to
    out; value an operand (:func:`_value_operand`) or an npu tensor."""
    return _with_mask("select", out, value, cond)


def _with_mask(op: str, out: torch.Tensor, value, cond: torch.Tensor,
               attr=None) -> bool:
    """out := op(value, cond) for an op of a bool src1 (SELECT,
    MASK_SCALE): ``value`` (an operand or an npu tensor of out's dtype)
    and ``cond`` broadcast to out, any views, one task; False (nothing
    launched) where the device cannot."""
    if not (_is_npu(out) and _is_npu(cond) and cond.dtype == torch.bool and
            cond.device == out.device and out.dtype in D.DTYPES):
        return False
    index = out.get_device()
    if not D.serves(index, op, D.DTYPES[out.dtype]):
        return False
    src = value if isinstance(value, D.Operand) else D.operand(value)
    if src.dtype != out.dtype:
        return False
    dst, c = D.operand(out), D.operand(cond)
    try:
        torch.broadcast_shapes(cond.shape, out.shape)
        if tuple(torch.broadcast_shapes(cond.shape, src.shape,
                                        out.shape)) != tuple(out.shape):
            return False
    except RuntimeError:
        return False
    if D.clashes(dst, c, in_place=False) or D.clashes(dst, src):
        return False
    strided = None
    if not all(o.dense(dst.shape) for o in (dst, src, c)):
        if not D.takes_strided(index, op):
            return False
        strided = D.walk(dst.shape, dst, [src, c])
        if strided is None:
            return False
    if out.numel():
        D.elementwise(index, op, out.dtype, dst, [src, c], attr=attr,
                      strided=strided)
    return True


def _mask_scale(x: torch.Tensor, mask: torch.Tensor, scale: float):
    """(x * mask) * float32(scale) into a new tensor; None where the
    device cannot."""
    if not (_is_npu(x) and x.dtype in D.FLOATS):
        return None
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if _with_mask("mask_scale", out, x, mask, _as_float32(scale)):
        return out
    return None


def _masked_fill_(x, mask, value):
    v = _value_operand(x, value) if _is_npu(x) else None
    if v is None or not _select_into(x, mask, v):
        x.copy_(on_cpu(aten.masked_fill.Tensor if isinstance(
            value, torch.Tensor) else aten.masked_fill.Scalar,
            "value, mask or dtype", x, mask, value))
    return x


def _masked_fill(x, mask, value):
    v = _value_operand(x, value) if _is_npu(x) else None
    if v is not None and x.is_contiguous():
        out = x.clone()
        try:
            shape = torch.broadcast_shapes(x.shape, mask.shape)
        except RuntimeError:
            shape = None
        if shape == x.shape and _select_into(out, mask, v):
            return out
    return on_cpu(aten.masked_fill.Tensor if isinstance(
        value, torch.Tensor) else aten.masked_fill.Scalar,
        "value, mask or dtype", x, mask, value)


def _broadcast_into(out: torch.Tensor, src: torch.Tensor):
    """out := src broadcast to it, converted to its dtype: one IDENTITY or
    CAST (strided where a view or a broadcast needs it); None where the
    device cannot."""
    index = out.get_device()
    op = "identity" if src.dtype == out.dtype else "cast"
    if src.dtype not in D.DTYPES or \
            not D.serves(index, op, D.DTYPES[src.dtype]):
        return None
    dst, s = D.operand(out), D.operand(src)
    if D.clashes(dst, s, in_place=False):
        return None
    strided = None
    if not s.dense(dst.shape) or not dst.dense(dst.shape):
        strided = D.walk(dst.shape, dst, [s]) \
            if D.takes_strided(index, op) else None
        if strided is None:
            return None
    D.elementwise(index, op, src.dtype, dst, [s], strided=strided)
    return out


def _fill_operand(out: torch.Tensor, value):
    """out := value (a number of its dtype) by FILL; None where not."""
    if not D.serves(out.get_device(), "fill", D.DTYPES[out.dtype]):
        return None
    bits = torch.full((), value, dtype=out.dtype).view(1).view(torch.uint8)
    D.generate("fill", out, value=int.from_bytes(bits.numpy().tobytes(),
                                                 "little"))
    return out


def _arg_rows(x: torch.Tensor, dim):
    """x's values with ``dim`` last, dense, as [m, n]; None for an empty
    tensor or one whose dtype the device does not reduce."""
    if not (_serves(x, "argmax", "argmin") and x.dtype != torch.bool) or \
            (dim is not None and not _dim_ok(x, dim)):
        return None
    if dim is None:
        return x.contiguous().reshape(1, -1)
    d = dim % max(x.dim(), 1)
    moved = x if x.dim() == 0 or d == x.dim() - 1 else x.movedim(d, -1)
    moved = moved.contiguous()
    return moved.reshape(-1, moved.shape[-1] if moved.dim() else 1)


def _reduced_shape(x: torch.Tensor, dim, keepdim: bool):
    if dim is None:
        return (1,) * x.dim() if keepdim else ()
    d = dim % max(x.dim(), 1)
    if x.dim() == 0:
        return ()
    shape = list(x.shape)
    if keepdim:
        shape[d] = 1
    else:
        del shape[d]
    return tuple(shape)


def _make_argreduce(name: str):
    op = getattr(aten, name)

    def run(x, dim=None, keepdim=False):
        rows = _arg_rows(x, dim)
        if rows is None:
            return on_cpu(op.default, "an empty tensor or its dtype", x, dim,
                          keepdim)
        out = torch.empty(rows.shape[0], dtype=torch.int64, device=x.device)
        D.rows(name, rows, out)
        return out.reshape(_reduced_shape(x, dim, keepdim))
    return {name: run}


def _make_minmax_dim(name: str):
    # (values, indices): ARGMAX, then the values at the indices (an
    # INDEX_SELECT of rows of one element): the first NaN, the first tie
    arg = "argmax" if name == "max" else "argmin"
    op = getattr(aten, name)

    def run(x, dim, keepdim=False):
        rows = _arg_rows(x, dim)
        if rows is None or not _serves(x, "index_select"):
            return on_cpu(op.dim, "an empty tensor or its dtype", x, dim,
                          keepdim)
        m, n = rows.shape
        idx = torch.empty(m, dtype=torch.int64, device=x.device)
        D.rows(arg, rows, idx)
        values = torch.empty(m, dtype=x.dtype, device=x.device)
        D.index_rows("index_select", values, rows, idx, (m, n, 1, 1))
        shape = _reduced_shape(x, dim, keepdim)
        return values.reshape(shape), idx.reshape(shape)
    return {name + ".dim": run}


def _arange_size(start, end, step, dtype: torch.dtype) -> int:
    """arange's length as CPU torch computes it (int64 arithmetic for
    int64, float64 for the others)."""
    if dtype == torch.int64:
        a, b, s = int(start), int(end), int(step)
        sgn = (s > 0) - (s < 0)
        num = b - a + s - sgn
        q = abs(num) // abs(s)
        return q if (num >= 0) == (s > 0) else -q
    return math.ceil((float(end) - float(start)) / float(step))


def _arange_ok(start, end, step, dtype: torch.dtype) -> bool:
    """Bounds CPU torch takes: finite, a nonzero step (after the integer
    dtypes' truncation to int64) whose sign leads from start to end
    (anything else the CPU refuses, with its message)."""
    if not all(isinstance(v, numbers.Number) and math.isfinite(v)
               for v in (start, end, step)):
        return False
    if not dtype.is_floating_point:
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        return False
    return (end >= start) if step > 0 else (end <= start)


def _arange_out(start, end, step=1, *, out):
    dt = out.dtype
    if _is_npu(out) and dt in D.DTYPES and dt != torch.bool and \
            D.serves(out.get_device(), "arange", D.DTYPES[dt]) and \
            _arange_ok(start, end, step, dt):
        size = _arange_size(start, end, step, dt)
        if out.shape != (size,):
            out.resize_((size,))
        if dt.is_floating_point:
            bits = [opdesc.f64_bits(v) for v in (start, step)]
        else:
            bits = [int(v) & (1 << 64) - 1 for v in (start, step)]
        D.generate("arange", out, start=bits[0], step=bits[1])
        return out
    res = on_cpu(aten.arange.start_out, "dtype or operands", start, end,
                 step, out=torch.empty(0, dtype=dt))
    out.resize_(res.shape)
    out.copy_(res)
    return out


def _make_triangle(name: str):
    op = getattr(aten, name)

    def ok(x) -> bool:
        return x.dim() >= 2 and _serves(x, name)

    def functional(x, diagonal=0):
        if ok(x):
            src = x.contiguous()
            out = torch.empty_like(src)
            D.rows(name, src, out, attr=int(diagonal), k=x.shape[-2])
            return out
        return on_cpu(op.default, "dims or dtype", x, diagonal)

    def inplace(x, diagonal=0):
        if ok(x) and x.is_contiguous():
            D.rows(name, x, x, attr=int(diagonal), k=x.shape[-2])
            return x
        x.copy_(on_cpu(op.default, "dims, layout or dtype", x, diagonal))
        return x
    return {name: functional, name + "_": inplace}


def _cumsum(x, dim, *, dtype=None):
    # torch's result: int64 for integer and bool inputs unless dtype says
    dt = dtype or (x.dtype if x.dtype.is_floating_point else torch.int64)
    if _is_npu(x) and x.numel() and dt in D.DTYPES and dt != torch.bool \
            and x.dtype in D.DTYPES and _dim_ok(x, dim) and \
            D.serves(x.get_device(), "cumsum", D.DTYPES[dt]):
        d = dim % max(x.dim(), 1)
        src = x if x.dtype == dt else x.to(dt)
        last = x.dim() == 0 or d == x.dim() - 1
        moved = (src if last else src.movedim(d, -1)).contiguous()
        out = torch.empty_like(moved)
        D.rows("cumsum", moved, out)
        return out if last else out.movedim(-1, d).contiguous()
    return on_cpu(aten.cumsum.default, "dtype", x, dim, dtype=dtype)


def _native_dropout(x, p, train):
    # mask = bernoulli(1 - p) from a Philox key of the CPU generator;
    # out = (x * mask) * float32(1 / (1 - p)), as CPU torch's mul/mul_
    if train is not False and x.dtype in D.FLOATS and \
            _serves(x, "bernoulli", "mask_scale") and 0 <= p <= 1:
        keep = 1.0 - p
        scale = 0.0 if keep == 0 else 1.0 / keep
        mask = torch.empty(x.shape, dtype=torch.bool, device=x.device)
        D.generate("bernoulli", mask, attr=_as_float32(keep),
                   seed=D.philox_key(), offset=0)
        out = _mask_scale(x, mask, scale)
        if out is not None:
            return out, mask
    return on_cpu(aten.native_dropout.default, "dtype, train or p", x, p,
                  train)


def _native_dropout_backward(grad, mask, scale):
    out = _mask_scale(grad, mask, scale)
    if out is not None:
        return out
    return on_cpu(aten.native_dropout_backward.default, "dtype or mask",
                  grad, mask, scale)


def _uniform_(x, from_=0.0, to=1.0, *, generator=None):
    # (a range CPU torch refuses is the CPU's to refuse)
    if generator is None and x.dtype in D.FLOATS and x.is_contiguous() and \
            math.isfinite(to - from_) and from_ <= to and \
            _serves(x, "random_uniform", "axpy"):
        D.generate("random_uniform", x, seed=D.philox_key(), offset=0)
        if (from_, to) != (0.0, 1.0):
            # from + (to - from) * u
            D.axpy_dt(to - from_, D.dev(x, (x.numel(),)),
                      D.const(x, from_, (x.numel(),)), x)
        return x
    warn_cpu("aten::uniform_", "a generator, dtype or layout")
    sync_for_host(x)
    host(x).uniform_(from_, to, generator=generator)
    return x


def _normal_(x, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError("normal expects std >= 0.0, but found std %s"
                           % std)       # CPU torch's message
    if generator is None and x.dtype in D.FLOATS and x.is_contiguous() and \
            math.isfinite(mean) and math.isfinite(std) and \
            _serves(x, "random_normal"):
        D.generate("random_normal", x, seed=D.philox_key(), offset=0,
                   mean=opdesc.f64_bits(mean), std=opdesc.f64_bits(abs(std)))
        return x
    warn_cpu("aten::normal_", "a generator, dtype or layout")
    sync_for_host(x)
    host(x).normal_(mean, std, generator=generator)
    return x


def _bernoulli_(x, p=0.5, *, generator=None):
    if generator is None and x.is_contiguous() and 0 <= p <= 1 and \
            _serves(x, "bernoulli"):
        D.generate("bernoulli", x, attr=_as_float32(p), seed=D.philox_key(),
                   offset=0)
        return x
    warn_cpu("aten::bernoulli_.float", "a generator, dtype or layout")
    sync_for_host(x)
    host(x).bernoulli_(p, generator=generator)
    return x

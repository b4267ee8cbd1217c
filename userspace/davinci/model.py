# SPDX-License-Identifier: GPL-2.0
"""Offline models on a device: load once, run as one submission.

    from davinci.model import Model
    with davinci.Device(0) as dev:
        m = Model(dev, open("mlp.om", "rb").read())
        out = m.run([x])                      # numpy in, numpy out

Loading parses and checks the file (:func:`davinci.omfile.parse`), copies
the weights into HBM once, reserves the workspace (intermediate tensors)
once, and builds each gear's task descriptors once, with every weight and
workspace address filled in. :meth:`Model.execute` only writes the caller's
input and output addresses into the descriptors that use them (skipped when
they are the same as last time) and hands the whole list to the stream in
one submission (:meth:`Model.submit`): where the driver has task graphs
(``DAVINCI_FEAT_GRAPHS``), the list is captured once per gear and set of
caller addresses (the last :data:`GRAPHS_KEPT` of them are kept) and each
execute replays that graph with one ioctl; elsewhere it is written into the
stream's ring as one batch.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field

import numpy as np

from . import _uapi
from . import omfile as F
from .errors import (DavinciError, DeviceLostError, DTypeError,
                     InvalidArgumentError, ShapeError, TaskFailedError)
from .graph import Graph
from .stream import TASK_DTYPE, Stream

__all__ = ["Model", "GearPlan", "GRAPHS_KEPT"]

#: captured graphs a gear keeps, one per set of caller addresses
GRAPHS_KEPT = 4

#: an input or output is aligned to its elements
_ALIGN = F.DTYPE_SIZES


@functools.cache
def _bfloat16() -> "np.dtype | None":
    """ml_dtypes' bfloat16 (what onnx.numpy_helper hands out), or None
    where it is not installed: then no bfloat16 array can exist."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _host_dtype(io: F.IoDesc) -> np.dtype:
    """The numpy dtype of ``io``'s arrays in :meth:`Model.run`."""
    if io.dtype != "bfloat16":
        return np.dtype(io.dtype)
    bf16 = _bfloat16()
    if bf16 is None:
        raise DTypeError(
            "%r is bfloat16, and numpy has no bfloat16 without ml_dtypes: "
            "pip install ml_dtypes (onnx brings it), or run the model with "
            "Model.execute on device buffers holding the bits" % io.name)
    return bf16


@dataclass
class GearPlan:
    """One gear's descriptors and where the caller's addresses go:
    ``patches[field]`` = (rows of ``tasks``, index into the address vector
    [inputs..., outputs...])."""
    batch: int
    tasks: np.ndarray
    patches: dict[str, tuple[np.ndarray, np.ndarray]]
    last: tuple[int, ...] | None = None
    #: caller addresses -> the graph captured with them, oldest first
    graphs: dict[tuple[int, ...], Graph] = field(default_factory=dict)


def _check_src2(device, om: F.OfflineModel) -> None:
    """Refuse, before anything is allocated, a model whose ops name a
    third operand (a CONV2D's bias, format 1.2) the driver does not take
    (one before ABI 1.10), which would fail every execute."""
    caps = None
    for o in om.ops:
        if o.src2 == F.NO_TENSOR:
            continue
        caps = caps or device.capabilities()
        if not caps.takes_src2(o.opcode):
            raise InvalidArgumentError(
                "the model's %s tasks take their bias at src2, which this "
                "driver (%s) does not: load a davinci driver of ABI 1.10 "
                "or later" % (_uapi.OP_NAMES.get(o.opcode, o.opcode),
                              device.version))


class Model:
    """A loaded offline model on ``device``."""

    def __init__(self, device, data: bytes):
        self.device = device
        self.om = F.parse(data)
        om = self.om
        _check_src2(device, om)
        self._lock = threading.Lock()
        ws = max(om.workspace_size(g) for g in range(om.gears))
        self.weight_size = len(om.weights)
        self.work_size = ws
        self._weights = device.malloc(max(1, len(om.weights)))
        self._work = self._params = None
        try:
            if om.weights:
                self._weights.write(om.weights)
            if om.params:
                # the ops' parameter blocks, read by the device at each
                # submission (a graph's at each launch) from here
                self._params = device.malloc(len(om.params))
                self._params.write(om.params)
            self._work = device.malloc(max(1, ws))
            self.plans = [self._plan(g) for g in range(om.gears)]
        except BaseException:
            self._free_memory()
            raise
        self.inputs = om.inputs
        self.outputs = om.outputs
        self._stream: Stream | None = None
        self._capture: Stream | None = None
        self.use_graphs = device.version.has(_uapi.DAVINCI_FEAT_GRAPHS)

    # -- building -------------------------------------------------------------
    def _addr(self, t: F.Tensor) -> int:
        if t.kind == F.KIND_WEIGHT:
            return self._weights.dev_addr + t.offset
        if t.kind == F.KIND_WORK:
            return self._work.dev_addr + t.offset
        return 0                    # the caller's, filled in by execute

    def _plan(self, gear: int) -> GearPlan:
        om = self.om
        ops = [o for o in om.ops if o.gear == gear]
        tasks = np.zeros(len(ops), TASK_DTYPE)
        nin = len(om.inputs)
        patches: dict[str, tuple[list[int], list[int]]] = {
            "dst": ([], []), "src0": ([], []), "src1": ([], []),
            "src2": ([], [])}
        for row, o in enumerate(ops):
            tk = tasks[row]
            tk["opcode"], tk["dtype"], tk["dst_dtype"] = \
                o.opcode, o.dtype, o.dst_dtype
            tk["flags"], tk["imm"], tk["count"] = o.flags, o.imm, o.count
            tk["m"], tk["n"], tk["k"] = o.m, o.n, o.k
            if o.params is not None:
                tk["params"] = self._params.dev_addr + o.params
                tk["params_size"] = len(om.block(o))
                tk["params_version"] = F.block_version(o)
            for name in ("dst", "src0", "src1", "src2"):
                tid = getattr(o, name)
                if tid == F.NO_TENSOR:
                    continue
                t = om.tensors[tid]
                tk[name] = self._addr(t)
                if t.kind in (F.KIND_INPUT, F.KIND_OUTPUT):
                    patches[name][0].append(row)
                    patches[name][1].append(
                        t.index + (nin if t.kind == F.KIND_OUTPUT else 0))
        return GearPlan(
            om.batches[gear] if om.batches else 0, tasks,
            {f: (np.array(r, np.intp), np.array(i, np.intp))
             for f, (r, i) in patches.items() if r})

    # -- description ----------------------------------------------------------
    def gear_of(self, batch: int) -> int:
        """The gear that runs ``batch`` (0 for a static model)."""
        if not self.om.batches:
            if batch:
                raise InvalidArgumentError(
                    "the model has a static batch; it was not converted "
                    "with --dynamic_batch_size")
            return 0
        if batch not in self.om.batches:
            raise InvalidArgumentError(
                "batch %d is not one of the model's batch sizes %s"
                % (batch, self.om.batches))
        return self.om.batches.index(batch)

    def gear_of_hw(self, height: int, width: int) -> int:
        """The gear that runs images of ``height`` x ``width`` (a model
        converted with --dynamic_image_size)."""
        sizes = [list(hw) for hw in self.om.hw_sizes]
        if not sizes:
            raise InvalidArgumentError(
                "the model has a static image size; it was not converted "
                "with --dynamic_image_size")
        if [height, width] not in sizes:
            raise InvalidArgumentError(
                "image size %d x %d is not one of the model's %s"
                % (height, width, sizes))
        return sizes.index([height, width])

    def input_size(self, index: int, gear: int | None = None) -> int:
        """Bytes of input ``index`` (the largest gear's by default: image
        sizes, unlike batches, need not grow with the gear)."""
        return self._io_size(F.KIND_INPUT, index, gear)

    def output_size(self, index: int, gear: int | None = None) -> int:
        return self._io_size(F.KIND_OUTPUT, index, gear)

    def _io_size(self, kind: int, index: int, gear: "int | None") -> int:
        gears = range(self.om.gears) if gear is None else (gear,)
        return max(self.om.io_tensor(kind, index, g).size for g in gears)

    # -- execution ------------------------------------------------------------
    def check_io(self, addrs, gear: int) -> None:
        """Raise :class:`InvalidArgumentError` unless ``addrs`` (inputs,
        then outputs) are one aligned address each and no output shares a
        byte with another input or output in ``gear``."""
        om = self.om
        nin, nout = len(om.inputs), len(om.outputs)
        if len(addrs) != nin + nout:
            raise InvalidArgumentError(
                "the model takes %d inputs and %d outputs, got %d addresses"
                % (nin, nout, len(addrs)))
        for i, (a, io) in enumerate(zip(addrs, om.inputs + om.outputs)):
            if a % _ALIGN[io.dtype]:
                raise InvalidArgumentError(
                    "%s at %#x is not aligned to its %d-byte elements"
                    % (self._io_name(i), a, _ALIGN[io.dtype]))
        self._check_overlap(addrs, gear)

    def _io_name(self, i: int) -> str:
        """Address ``i`` of an execute, as the caller knows it."""
        nin = len(self.om.inputs)
        if i < nin:
            return "input %d %r" % (i, self.om.inputs[i].name)
        return "output %d %r" % (i - nin, self.om.outputs[i - nin].name)

    def _check_overlap(self, addrs, gear: int) -> None:
        # the ops write outputs while they read inputs and other outputs:
        # a shared byte gives wrong results, or a task the device refuses
        nin = len(self.om.inputs)
        sizes = [self.input_size(i, gear) for i in range(nin)] + \
            [self.output_size(j, gear) for j in range(len(self.om.outputs))]
        spans = [(int(a), int(a) + n) for a, n in zip(addrs, sizes)]
        for j in range(nin, len(spans)):
            o0, o1 = spans[j]
            for i in range(j):
                a0, a1 = spans[i]
                if o0 < a1 and a0 < o1 and o0 < o1 and a0 < a1:
                    raise InvalidArgumentError(
                        "%s at %#x..%#x overlaps %s at %#x..%#x: give each "
                        "output a buffer of its own, apart from the inputs"
                        % (self._io_name(i), a0, a1, self._io_name(j), o0,
                           o1))

    def execute(self, stream: Stream, addrs: "list[int]", gear: int = 0
                ) -> None:
        """Enqueue one run of gear ``gear`` on ``stream``: ``addrs`` holds
        the device addresses of the inputs, then of the outputs (the
        caller checked their sizes: :meth:`input_size`)."""
        self.check_io(addrs, gear)
        plan = self.plans[gear]
        self._last_gear = gear
        key = tuple(int(a) for a in addrs)
        with self._lock:
            if plan.last != key:
                vec = np.array(key, np.uint64)
                for name, (rows, idx) in plan.patches.items():
                    plan.tasks[name][rows] = vec[idx]
                plan.last = key
            self.submit(stream, plan, key)

    def submit(self, stream: Stream, plan: GearPlan, key: tuple) -> None:
        """The gear's whole task list in one submission: a replay of the
        graph captured with these addresses, or one batch into the ring."""
        if not self.use_graphs:
            stream.submit(plan.tasks)
            return
        g = plan.graphs.pop(key, None)
        if g is None:
            if len(plan.graphs) >= GRAPHS_KEPT:
                plan.graphs.pop(next(iter(plan.graphs))).destroy()
            try:
                g = self._record(plan)
            except DeviceLostError:
                raise
            except DavinciError:
                # no room for one more graph (ENOSPC), one this large
                # (E2BIG), or its memory: one batch into the ring instead
                stream.submit(plan.tasks)
                return
        plan.graphs[key] = g            # now the newest
        g.launch(stream)

    def _record(self, plan: GearPlan) -> Graph:
        """Capture ``plan``'s descriptors, as they are now, into a graph."""
        if self._capture is None or self._capture.destroyed:
            self._capture = self.device.stream()
        with self._capture.capture() as g:
            self._capture.submit(plan.tasks)
        return g

    def run(self, inputs: "list[np.ndarray]", batch: int = 0,
            hw: "tuple[int, int] | None" = None) -> list[np.ndarray]:
        """Convenience: upload ``inputs``, run, return the outputs (numpy
        arrays of the model's dtypes; bfloat16 ones are ml_dtypes.bfloat16
        arrays, as onnx.numpy_helper makes). ``batch`` picks a dynamic
        batch model's gear, ``hw`` (height, width) a dynamic image size
        one's."""
        if self.om.hw_sizes and hw is None:
            raise InvalidArgumentError(
                "the model has dynamic image sizes %s: give hw=(height, "
                "width)" % [list(x) for x in self.om.hw_sizes])
        gear = self.gear_of_hw(*hw) if hw is not None else \
            self.gear_of(batch)
        om = self.om
        real = [io for io in om.inputs if io.name != F.MBATCH_INPUT]
        if len(inputs) != len(real):
            raise InvalidArgumentError("the model takes %d inputs, got %d"
                                       % (len(real), len(inputs)))
        out_dtypes = [_host_dtype(io) for io in om.outputs]
        arrays = [self._input_array(io, a, i, gear)
                  for i, (io, a) in enumerate(zip(real, inputs))]
        bufs = []
        try:
            for i in range(len(om.inputs)):
                b = self.device.malloc(max(1, self.input_size(i, gear)))
                bufs.append(b)
                if i < len(arrays):
                    b.write(arrays[i].reshape(-1).view(np.uint8))
            for j in range(len(om.outputs)):
                bufs.append(self.device.malloc(max(1, self.output_size(j,
                                                                       gear))))
            s = self.stream
            self.execute(s, [b.dev_addr for b in bufs], gear)
            self.wait(s)
            outs = []
            for j, io in enumerate(om.outputs):
                b = bufs[len(om.inputs) + j]
                dims = om.dims(io, gear)
                outs.append(b.numpy(out_dtypes[j], tuple(dims)).copy())
            return outs
        finally:
            for b in bufs:
                b.free()

    def _input_array(self, io: F.IoDesc, value, index: int, gear: int
                     ) -> np.ndarray:
        """``value`` as input ``index``'s contiguous array. A bfloat16
        input takes bfloat16 arrays only: their bits go in as they are,
        and no other array's values are rounded into bfloat16 unasked."""
        want = _host_dtype(io)
        arr = np.asarray(value)
        if io.dtype == "bfloat16" and arr.dtype != want:
            raise DTypeError(
                "input %r is bfloat16, not %s: give an ml_dtypes.bfloat16 "
                "array (arr.astype(ml_dtypes.bfloat16) rounds float values; "
                "arr.view(ml_dtypes.bfloat16) takes uint16 bits as they are)"
                % (io.name, arr.dtype))
        arr = np.ascontiguousarray(arr, want)
        if arr.nbytes != self.input_size(index, gear):
            raise ShapeError(
                "input %r: %d bytes given, the model takes %d (dims %s)"
                % (io.name, arr.nbytes, self.input_size(index, gear),
                   self.om.dims(io, gear)))
        return arr

    @property
    def stream(self) -> Stream:
        """The model's own stream (made on first use)."""
        if self._stream is None or self._stream.destroyed:
            self._stream = self.device.stream()
        return self._stream

    def wait(self, stream: Stream) -> None:
        """Wait for the runs enqueued on ``stream``. A failed task leaves a
        stream in the error state; the model's own stream is reset once its
        failure is raised, so that the next run reports its own outcome
        (another stream is its owner's to reset)."""
        try:
            stream.synchronize()
        except TaskFailedError as exc:
            if stream is self._stream:
                stream.reset()
            why = self._explain(exc)
            if why is None:
                raise
            raise TaskFailedError("%s; %s" % (exc.message, why), exc.status,
                                  exc.stream_id, exc.seq,
                                  exc.opcode) from exc

    def _explain(self, exc: TaskFailedError) -> "str | None":
        """What a failed INDEX_SELECT means in this model: a run-time check
        davinci-atc built in (a computed shape, axes or sizes pinned to
        what the declared shapes imply: an INDEX_SELECT of one index into
        a zero table of one row) failing, and the model inputs whose values
        feed it. The .om names no task's purpose, so the checks are found
        by that shape, and every input feeding one is named."""
        if exc.status != _uapi.DAVINCI_STATUS_INVALID_TASK or \
                _uapi.OP_NAMES.get(exc.opcode) != "INDEX_SELECT":
            return None
        gear = getattr(self, "_last_gear", 0)
        om = self.om
        ops = [o for o in om.ops if o.gear == gear]
        checks = [i for i, o in enumerate(ops) if self._is_check(o)]
        if not checks:
            return None
        names: list[str] = []
        seen: set[int] = set()
        for i in checks:
            self._inputs_feeding(ops, i, names, seen)
        gathers = sum(_uapi.OP_NAMES.get(o.opcode) == "INDEX_SELECT"
                      for o in ops) - len(checks)
        inputs = ", ".join(repr(n) for n in names) or "none of its inputs"
        return (
            "the model's run-time check failed: a value it computes from "
            "input %s (a shape, axes, sizes or slice bounds davinci-atc "
            "pinned to what the model's declared shapes imply, or an integer "
            "exponent beyond what its conversion allows) differs from what "
            "the model declared, so it gives no result for these values; "
            "give %s values the declared shapes imply%s" % (
                inputs, "them" if len(names) > 1 else "it",
                "" if not gathers else
                " (or one of its %d Gathers had an index out of range)"
                % gathers))

    def _is_check(self, o: "F.Op") -> bool:
        if _uapi.OP_NAMES.get(o.opcode) != "INDEX_SELECT" or \
                o.count != 1 or o.m != 1 or o.k != 1 or \
                o.src0 == F.NO_TENSOR:
            return False
        t = self.om.tensors[o.src0]
        if t.kind != F.KIND_WEIGHT:
            return False
        table = self.om.weights[t.offset:t.offset + t.size]
        return len(table) == t.size and not any(table)

    def _inputs_feeding(self, ops: "list[F.Op]", i: int, names: list,
                        seen: set) -> None:
        """Add to ``names`` the model inputs op ``i`` reads, directly or
        through the workspace writes of the ops before it."""
        stack = [i]
        while stack:
            j = stack.pop()
            if j in seen:
                continue
            seen.add(j)
            o = ops[j]
            for tid in (o.src0, o.src1, getattr(o, "src2", F.NO_TENSOR)):
                if tid == F.NO_TENSOR:
                    continue
                t = self.om.tensors[tid]
                if t.kind == F.KIND_INPUT:
                    n = self.om.inputs[t.index].name
                    if n != F.MBATCH_INPUT and n not in names:
                        names.append(n)
                elif t.kind == F.KIND_WORK:
                    w = self._last_writer(ops, j, t)
                    if w is not None:
                        stack.append(w)

    def _last_writer(self, ops: "list[F.Op]", j: int, t: "F.Tensor"
                     ) -> "int | None":
        for k in range(j - 1, -1, -1):
            d = self.om.tensors[ops[k].dst]
            if d.kind == F.KIND_WORK and d.offset < t.offset + t.size and \
                    t.offset < d.offset + d.size:
                return k
        return None

    def unload(self) -> None:
        """Free the model's graphs, streams and device memory. All of them
        are freed even when a run still on the model's stream fails; that
        failure is raised afterwards."""
        failure: DavinciError | None = None
        if self._stream is not None and not self._stream.destroyed:
            try:
                self._stream.synchronize()
            except DavinciError as exc:
                failure = exc
        steps = [g.destroy for plan in self.plans
                 for g in plan.graphs.values()]
        steps += [s.destroy for s in (self._capture, self._stream)
                  if s is not None]
        steps += [b.free for b in self._live_buffers()]
        for plan in self.plans:
            plan.graphs.clear()
        for step in steps:          # every one tried, the first error kept
            try:
                step()
            except DavinciError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def _live_buffers(self) -> list:
        return [b for b in (self._weights, self._work, self._params)
                if b is not None and not b.freed]

    def _free_memory(self) -> None:
        """Free the weights and the workspace (tasks still using them keep
        them until they end)."""
        for b in self._live_buffers():
            b.free()

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.unload()

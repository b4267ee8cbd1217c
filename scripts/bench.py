"""make bench: the davinci NPU against the host, as ratios from one run.

Every row of the performance table (issue 11) on the backend that discovery
finds (DAVINCI_DEV_DIR, the module, a FUSE mount, or DAVINCI_BACKEND=inproc):
tiny-task latency against a null ioctl, batched NOPs against a bare Python
loop writing the same descriptors, NOP throughput of N streams from N threads
against one, task-graph replay, matmul and copies against numpy, a 3x3
convolution against CPU torch, an offline
model against per-op calls and numpy, a JPEG decode, a JPEG encode, a PNG
decode and a VPC resize (acl.media) against Pillow. Prints
absolute figures and ratios, marks a row that misses its goal, and writes
them all as JSON (--json PATH). Nothing here is asserted: it measures.

    python scripts/bench.py [--json PATH] [--quick] [--sweep-aicores]
                            [--only GROUP,...]
    python scripts/bench.py --ab-table DIR

--ab-table prints the rows of the bench-ab-ROUND-{A,B}.json files that
make bench-vm writes with VM_BENCH_AB (one boot, the module loaded with
and without some parameters, alternating) side by side.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

import davinci
from davinci import _uapi, make_task, ops

ROWS: list[dict] = []


def best_of(fn, repeat: int) -> float:
    """Fastest wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def median_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def record(key: str, what: str, value: float, unit: str,
           ratio: float | None = None, goal: float | None = None,
           lower_is_better: bool = False, note: str = "") -> None:
    """One row: printed now, kept for the JSON."""
    met = None
    if goal is not None:
        x = ratio if ratio is not None else value
        met = x <= goal if lower_is_better else x >= goal
    ROWS.append(dict(key=key, what=what, value=value, unit=unit,
                     ratio=ratio, goal=goal, goal_met=met,
                     lower_is_better=lower_is_better, note=note))
    shown = ("%.3g %s" % (value, unit)).strip()
    r = "" if ratio is None else "%.2fx" % ratio
    g = "" if goal is None else "%s %s%g" % (
        "ok  " if met else "MISS", "<=" if lower_is_better else ">=", goal)
    print("%-46s %16s %9s  %-12s %s" % (what, shown, r, g, note))


def nop_array(n: int):
    """``n`` NOP descriptors the fastest way this runtime offers."""
    if hasattr(davinci, "task_array"):
        a = davinci.task_array(n)
        a["opcode"] = _uapi.DAVINCI_OP_NOP
        return a
    return [make_task(_uapi.DAVINCI_OP_NOP) for _ in range(n)]


def bench_latency(dev, kind: str, quick: bool) -> None:
    v = _uapi.davinci_version()
    t = dev.transport
    null = median_of(lambda: t.ioctl(_uapi.DAVINCI_IOCTL_GET_VERSION, v),
                     500 if quick else 3000)
    record("null_ioctl_us", "null ioctl (GET_VERSION) from Python",
           null * 1e6, "us")
    s = dev.stream()
    nop = make_task(_uapi.DAVINCI_OP_NOP)

    def one():
        s.launch(nop)
        s.synchronize()
    for _ in range(200):
        one()
    lat = median_of(one, 500 if quick else 3000)
    goal = {"kmod": 5.0, "inproc": 3.0}.get(kind)
    record("tiny_task_us", "tiny task submit-to-complete, median",
           lat * 1e6, "us", None, 20.0 if kind == "fuse" else None, True)
    record("tiny_task_vs_null_ioctl", "  ... vs a null ioctl",
           lat / null, "x", lat / null, goal, True)
    tiny_task_breakdown(dev, s, nop, 200 if quick else 1000)
    s.destroy()


def tiny_task_breakdown(dev, s, nop, n: int) -> None:
    """Where a tiny task's time goes, on the clock the device stamps its
    completions with (CLOCK_MONOTONIC on every backend): from launch() to
    the device starting it, its run, from its end to synchronize()
    returning; how many of them needed a doorbell and a sleep in the
    driver's wait ioctl; and how often the device's dispatcher slept, of
    that how often because another thread wanted its CPU (the manager's
    figures: ABI 1.5)."""
    counts = dev.transport.ioctl_counts
    bells = counts.get(_uapi.DAVINCI_IOCTL_DOORBELL, 0)
    waits = counts.get(_uapi.DAVINCI_IOCTL_STREAM_WAIT, 0)
    before = dispatcher_stats(dev.index)
    parts: dict[str, list[int]] = {"start": [], "run": [], "seen": []}
    for _ in range(n):
        t0 = time.monotonic_ns()
        seq = s.launch(nop)
        s.synchronize()
        t1 = time.monotonic_ns()
        c = s.completion(seq)
        parts["start"].append(c.start_ns - t0)
        parts["run"].append(c.end_ns - c.start_ns)
        parts["seen"].append(t1 - c.end_ns)
    for key, what in (("start", "launch() to the device starting it"),
                      ("run", "its run on the device"),
                      ("seen", "its end to synchronize() returning")):
        record("tiny_task_%s_us" % key, "  ... %s, median" % what,
               statistics.median(parts[key]) / 1e3, "us")
    record("tiny_task_doorbells", "  ... that rang the doorbell",
           100 * (counts.get(_uapi.DAVINCI_IOCTL_DOORBELL, 0) - bells) / n,
           "%")
    record("tiny_task_blocked", "  ... that slept in the wait ioctl",
           100 * (counts.get(_uapi.DAVINCI_IOCTL_STREAM_WAIT, 0) - waits) / n,
           "%")
    after = dispatcher_stats(dev.index)
    if before is not None and after is not None:
        record("tiny_task_dispatcher_sleeps", "  ... dispatcher sleeps per "
               "100 tasks", 100 * (after.sleeps - before.sleeps) / n, "",
               note="%d with its CPU wanted; idle time %d us"
               % (after.cpu_wanted - before.cpu_wanted,
                  after.idle_ns // 1000))


def dispatcher_stats(index: int):
    """The dispatcher's figures from the manager, or None (an older
    driver, a manager node this user may not open)."""
    from davinci.manager import Manager
    try:
        with Manager() as mgr:
            return mgr.info(index).dispatcher
    except davinci.DavinciError:
        return None


def submit_batches(s, batch, n: int = 8) -> None:
    """``n`` submissions of ``batch`` on ``s``, then one sync."""
    for _ in range(n):
        s.submit(batch)
    s.synchronize()


def bench_batches(dev, quick: bool) -> None:
    """8 batches of 512 NOPs per sync against a bare Python loop writing
    the same 4096 descriptors (ctypes structs) into memory."""
    s = dev.stream(sq_entries=4096, cq_entries=4096)
    batch = nop_array(512)

    def npu():
        submit_batches(s, batch)
    npu()
    t_npu = best_of(npu, 5 if quick else 15)
    nop = make_task(_uapi.DAVINCI_OP_NOP)
    size = ctypes.sizeof(nop)
    ring = ctypes.create_string_buffer(4096 * size)
    base = ctypes.addressof(ring)

    def loop():
        for i in range(4096):
            ctypes.memmove(base + i * size, ctypes.addressof(nop), size)
    t_loop = best_of(loop, 5 if quick else 15)
    record("batch_nops_per_s", "NOPs, 8 x 512 per sync", 4096 / t_npu,
           "tasks/s")
    record("batch_nops_vs_python_loop",
           "  ... vs a Python loop writing them", t_loop / t_npu, "x",
           t_loop / t_npu, 0.5)
    s.destroy()


def bench_trace(dev, quick: bool) -> None:
    """The device trace's cost: the tiny-task latency and 512-NOP batches
    with recording off and on, alternated in rounds (issue 16)."""
    from davinci.trace import DeviceTraceReader, TraceUnsupportedError
    try:
        trace = DeviceTraceReader(dev)
    except TraceUnsupportedError:
        record("trace_overhead", "trace on vs off", 0, "", note="no trace")
        return
    s = dev.stream(sq_entries=4096, cq_entries=4096)
    nop, batch = make_task(_uapi.DAVINCI_OP_NOP), nop_array(512)

    def one():
        s.launch(nop)
        s.synchronize()

    lat: dict[bool, list[float]] = {False: [], True: []}
    tput: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(3 if quick else 7):
        for on in (False, True):
            trace.set_enabled(on)
            lat[on].append(median_of(one, 200 if quick else 1000))
            tput[on].append(4096 / best_of(lambda: submit_batches(s, batch),
                                           3 if quick else 5))
    trace.set_enabled(True)
    s.destroy()
    off, on = statistics.median(lat[False]), statistics.median(lat[True])
    record("tiny_task_traced_us", "tiny task, trace on (off: %.1f us)"
           % (off * 1e6), on * 1e6, "us")
    record("trace_overhead_tiny", "  ... on vs off", on / off, "x",
           on / off, 1.05, True)
    off, on = statistics.median(tput[False]), statistics.median(tput[True])
    record("trace_overhead_batch", "NOPs 8 x 512, trace off vs on",
           on, "tasks/s", off / on, 1.05, True)


def _stream_worker(s, batch, rounds: int, barrier) -> None:
    barrier.wait()
    for _ in range(rounds):
        s.submit(batch)
    s.synchronize()


def nops_per_second(dev, nstreams: int, rounds: int) -> float:
    """NOP throughput of ``nstreams`` streams from as many threads: the
    median of 5 runs, since one run on a shared 2-core host swings by 3x
    with where its threads land."""
    return statistics.median(_nops_per_second(dev, nstreams, rounds)
                             for _ in range(5))


def _nops_per_second(dev, nstreams: int, rounds: int) -> float:
    streams = [dev.stream(sq_entries=1024, cq_entries=1024)
               for _ in range(nstreams)]
    batch = nop_array(256)
    barrier = threading.Barrier(nstreams + 1)
    threads = [threading.Thread(target=_stream_worker,
                                args=(s, batch, rounds, barrier))
               for s in streams]
    for th in threads:
        th.start()
    barrier.wait()
    t0 = time.perf_counter()
    for th in threads:
        th.join()
    dt = time.perf_counter() - t0
    for s in streams:
        s.destroy()
    return nstreams * rounds * len(batch) / dt


def bench_scaling(dev, quick: bool) -> None:
    n = min(dev.info.aicores, 16)
    rounds = 8 if quick else 32
    one = nops_per_second(dev, 1, rounds)
    many = nops_per_second(dev, n, rounds)
    record("streams_scaling", "NOP tasks/s, %d streams/threads vs 1 (%d "
           "AI cores, %d host cores)" % (n, dev.info.aicores,
                                         os.cpu_count() or 1),
           many, "tasks/s", many / one, 4.0 if n >= 16 else None,
           note="goal is for 16 cores" if n < 16 else "")


def bench_graph(dev, quick: bool) -> None:
    s = dev.stream(sq_entries=1024, cq_entries=1024)
    if not hasattr(s, "capture"):
        record("graph_replay_per_s", "task graph replay", 0, "tasks/s",
               None, 1e6, note="no task graphs in this runtime")
        s.destroy()
        return
    with s.capture() as g:
        s.submit(nop_array(1000))
    s.synchronize()

    def replay():
        for _ in range(10):
            g.launch(s)
        s.synchronize()
    replay()
    t = best_of(replay, 5 if quick else 15)
    record("graph_replay_per_s", "task graph replay (1000 NOPs, x10)",
           10000 / t, "tasks/s", None, 1e6)
    g.destroy()
    s.destroy()


def bench_copies(dev, quick: bool) -> None:
    s = dev.stream()
    for size in (4 << 10, 1 << 20):
        host = np.random.default_rng(0).integers(0, 255, size, np.uint8)
        back = np.empty_like(host)
        other = np.empty_like(host)
        buf = dev.malloc(size)
        repeat = (200 if size < (1 << 20) else 20) * (1 if quick else 5)
        t_np = best_of(lambda: np.copyto(other, host), repeat)
        t_h2d = best_of(lambda: s.copy_from_host(buf, host), repeat)
        t_d2h = best_of(lambda: s.copy_to_host(buf, back), repeat)
        assert np.array_equal(back, host)
        label = "%d KiB" % (size >> 10) if size < (1 << 20) \
            else "%d MiB" % (size >> 20)
        goal = 0.5 if size < (1 << 20) else 0.9
        record("h2d_%s" % label.replace(" ", "").lower(),
               "host-to-device %s vs numpy copy" % label,
               size / t_h2d / 1e9, "GB/s", t_np / t_h2d, goal)
        record("d2h_%s" % label.replace(" ", "").lower(),
               "device-to-host %s vs numpy copy" % label,
               size / t_d2h / 1e9, "GB/s", t_np / t_d2h, goal)
        buf.free()
    s.destroy()


def _numpy_one_thread():
    """A context in which numpy's BLAS uses one thread (threadpoolctl comes
    with scikit-learn); without it, numpy's own thread count stands."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def bench_matmul(dev, quick: bool) -> None:
    """Matmul against numpy on one thread, per AI core used: the device's
    busy time over the wall time says how many cores one matmul kept busy
    (a large one is shared out across the free cores)."""
    from davinci.manager import Manager
    s = dev.stream()
    rng = np.random.default_rng(1)
    with Manager() as mgr:
        for m in ((512,) if quick else (64, 512)):
            a = rng.standard_normal((m, m), np.float32)
            b = rng.standard_normal((m, m), np.float32)
            ad, bd = dev.tensor(a), dev.tensor(b)
            cd = dev.empty((m, m), "float32")

            def npu():
                ops.matmul(ad, bd, out=cd, stream=s)
                s.synchronize()
            npu()
            runs = 5 if m >= 512 else 50
            busy0, t0 = mgr.info(dev.index).busy_ns, time.perf_counter()
            t_npu = best_of(npu, runs)
            wall = time.perf_counter() - t0
            cores = max(1.0, (mgr.info(dev.index).busy_ns - busy0) / 1e9
                        / wall)
            with _numpy_one_thread():
                t_np = best_of(lambda: a @ b, 20)
            record("matmul_%d" % m, "matmul %dx%d float32 vs numpy, per core"
                   % (m, m), 2 * m ** 3 / t_npu / 1e9, "GFLOP/s",
                   t_np / t_npu / cores, 0.5 if m == 512 else None,
                   note="%.1f AI cores busy" % cores)
            for t in (ad, bd, cd):
                t.free()
    s.destroy()


def bench_conv(dev, quick: bool) -> None:
    """A ResNet-like 3x3 convolution, 64 -> 64 channels on 56x56 (batch 8,
    2 with --quick), padding 1, against CPU torch on one thread, per AI
    core used (as matmul's row)."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("conv: torch is not installed, row skipped")
        return
    from davinci.manager import Manager
    n = 2 if quick else 8
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, 64, 56, 56), np.float32)
    w = rng.standard_normal((64, 64, 3, 3), np.float32)
    s = dev.stream()
    xd, wd = dev.tensor(x), dev.tensor(w)
    yd = dev.empty((n, 64, 56, 56), "float32")

    def npu():
        ops.conv2d(xd, wd, padding=1, out=yd, stream=s)
        s.synchronize()
    npu()
    with Manager() as mgr:
        busy0, t0 = mgr.info(dev.index).busy_ns, time.perf_counter()
        t_npu = best_of(npu, 5)
        wall = time.perf_counter() - t0
        cores = max(1.0, (mgr.info(dev.index).busy_ns - busy0) / 1e9 / wall)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        t_cpu = best_of(lambda: F.conv2d(tx, tw, padding=1), 5)
    finally:
        torch.set_num_threads(threads)
    flop = 2 * n * 64 * 56 * 56 * 64 * 9
    record("conv_3x3_64", "conv2d 3x3 %dx64x56x56 -> 64 float32 vs torch, "
           "per core" % n, flop / t_npu / 1e9, "GFLOP/s",
           t_cpu / t_npu / cores, 0.5, note="%.1f AI cores busy" % cores)
    for t in (xd, wd, yd):
        t.free()
    s.destroy()


def bench_model(dev, quick: bool) -> None:
    """The digits MLP (64-64-10, batch 1) as an offline model through
    acl.mdl.execute, as six acl.op.execute_v2 calls, and in numpy."""
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        record("mdl_vs_ops", "digits MLP: acl.mdl.execute", 0, "us",
               note="onnx not installed")
        return
    import acl
    from davinci import atc
    rng = np.random.default_rng(2)
    w1 = rng.standard_normal((64, 64), np.float32) * 0.1
    b1 = rng.standard_normal(64, np.float32)
    w2 = rng.standard_normal((64, 10), np.float32) * 0.1
    b2 = rng.standard_normal(10, np.float32)
    x = rng.standard_normal((1, 64), np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Gemm", ["r", "w2", "b2"], ["z"]),
         helper.make_node("Softmax", ["z"], ["y"], axis=-1)], "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(a, n) for n, a in
         (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))])
    data = atc.convert(helper.make_model(graph))
    acl.init()
    acl.rt.set_device(dev.index)
    stream, _ = acl.rt.create_stream()
    ptrs = {}
    for name, arr in (("x", x), ("w1", w1), ("b1", b1[None]), ("w2", w2),
                      ("b2", b2[None]), ("h", np.empty((1, 64), np.float32)),
                      ("r", np.empty((1, 64), np.float32)),
                      ("z0", np.empty((1, 10), np.float32)),
                      ("z", np.empty((1, 10), np.float32)),
                      ("y", np.empty((1, 10), np.float32)),
                      ("h0", np.empty((1, 64), np.float32))):
        p, _ = acl.rt.malloc(arr.nbytes, 0)
        acl.rt.memcpy(p, arr.nbytes, arr.ctypes.data, arr.nbytes, 1)
        ptrs[name] = (acl.create_tensor_desc(acl.ACL_FLOAT, list(arr.shape),
                                             acl.ACL_FORMAT_ND),
                      acl.create_data_buffer(p, arr.nbytes), p)
    layers = [("MatMul", ["x", "w1"], "h0"), ("Add", ["h0", "b1"], "h"),
              ("Relu", ["h"], "r"), ("MatMul", ["r", "w2"], "z0"),
              ("Add", ["z0", "b2"], "z"), ("SoftmaxV2", ["z"], "y")]

    def by_ops():
        for op, ins, out in layers:
            acl.op.execute_v2(op, [ptrs[i][0] for i in ins],
                              [ptrs[i][1] for i in ins], [ptrs[out][0]],
                              [ptrs[out][1]], 0, stream)
        acl.rt.synchronize_stream(stream)
    model_id, _ = acl.mdl.load_from_mem(data, len(data))
    datasets = []
    for names in (["x"], ["y"]):
        ds = acl.mdl.create_dataset()
        for n in names:
            acl.mdl.add_dataset_buffer(ds, ptrs[n][1])
        datasets.append(ds)

    def by_model():
        acl.mdl.execute(model_id, datasets[0], datasets[1])

    def by_numpy():
        z = np.maximum(x @ w1 + b1, 0) @ w2 + b2
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    repeat = 50 if quick else 300
    by_model()
    by_ops()
    t_mdl = median_of(by_model, repeat)
    t_ops = median_of(by_ops, repeat)
    t_np = median_of(by_numpy, repeat)
    record("mdl_vs_ops", "digits MLP: acl.mdl.execute vs 6 execute_v2",
           t_mdl * 1e6, "us", t_ops / t_mdl)
    record("mdl_vs_numpy", "digits MLP: acl.mdl.execute vs numpy",
           t_mdl * 1e6, "us", t_np / t_mdl)
    acl.mdl.unload(model_id)
    acl.rt.reset_device(dev.index)
    acl.finalize()


def bench_resnet50(dev, quick: bool) -> None:
    """The onnx package's light ResNet-50 (224 x 224, batch 1) converted by
    davinci-atc and run through the offline-model loader, against
    onnxruntime with as many threads as the device has AI cores."""
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        print("resnet50: onnx or onnxruntime is not installed, row skipped")
        return
    from davinci import atc
    from davinci.model import Model
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                        "data", "light", "light_resnet50.onnx")
    x = np.random.default_rng(3).standard_normal((1, 3, 224, 224),
                                                 np.float32)
    cores = dev.info.aicores
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = cores
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, opts,
                                providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    repeat = 2 if quick else 5
    with Model(dev, atc.convert(path)) as mod:
        mod.run([x])
        t_npu = best_of(lambda: mod.run([x]), repeat)
    sess.run(None, {name: x})
    t_ort = best_of(lambda: sess.run(None, {name: x}), repeat)
    record("resnet50_mdl", "light ResNet-50 batch 1 through the .om loader "
           "vs onnxruntime, %d threads" % cores, 1 / t_npu, "images/s",
           t_ort / t_npu, 0.5)


def _photo(w: int, h: int) -> np.ndarray:
    """An RGB picture with a photo's gradients, noise and edges."""
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([255 * x / (w - 1), 255 * y / (h - 1),
                    128 + 100 * np.sin((x + 2 * y) / 7)], axis=-1)
    img += rng.normal(0, 14, img.shape).astype(np.float32)
    img[h // 3:h // 2, w // 4:w // 2] = (250, 20, 30)
    return np.clip(img, 0, 255).astype(np.uint8)


def bench_jpegd(dev, quick: bool) -> None:
    """A 1920x1080 4:2:0 baseline JPEG (quality 90) decoded by acl.media on
    the DVPP engine (dvpp_jpeg_decode_async + synchronize_stream, the file
    already in device memory) against Pillow's libjpeg-turbo decoding the
    same bytes to its YCbCr planes (no colour conversion) on one core."""
    import io

    import acl
    try:
        from PIL import Image
    except ImportError:
        print("jpegd: Pillow is not installed, row skipped")
        return
    w, h = 1920, 1080
    b = io.BytesIO()
    Image.fromarray(_photo(w, h)).save(b, "JPEG", quality=90, subsampling=2)
    data = b.getvalue()
    assert acl.init() == 0 and acl.rt.set_device(dev.index) == 0
    m = acl.media
    try:
        ptr = acl.util.bytes_to_ptr(data)
        size, _ = m.dvpp_jpeg_predict_dec_size(ptr, len(data), 1)
        ch = m.dvpp_create_channel_desc()
        m.dvpp_create_channel(ch)
        stream, _ = acl.rt.create_stream()
        src, _ = m.dvpp_malloc(len(data))
        acl.rt.memcpy(src, len(data), ptr, len(data), 1)
        dst, _ = m.dvpp_malloc(size)
        desc = m.dvpp_create_pic_desc()
        m.dvpp_set_pic_desc_data(desc, dst)
        m.dvpp_set_pic_desc_size(desc, size)
        m.dvpp_set_pic_desc_format(desc, 1)

        def npu():
            m.dvpp_jpeg_decode_async(ch, src, len(data), desc, stream)
            if acl.rt.synchronize_stream(stream):
                raise RuntimeError("the JPEG decode failed")
        npu()
        repeat = 3 if quick else 10
        t_npu = best_of(npu, repeat)

        def pillow():
            im = Image.open(io.BytesIO(data))
            im.draft("YCbCr", im.size)
            im.load()
        t_cpu = best_of(pillow, repeat)
        record("jpegd_1080p", "JPEG decode 1920x1080 (acl.media) vs Pillow, "
               "one core", t_npu * 1e3, "ms", t_cpu / t_npu,
               note="4:2:0 q90, %d KiB" % (len(data) >> 10))
        m.dvpp_destroy_pic_desc(desc)
        m.dvpp_free(src)
        m.dvpp_free(dst)
        acl.rt.destroy_stream(stream)
        m.dvpp_destroy_channel(ch)
        m.dvpp_destroy_channel_desc(ch)
    finally:
        acl.rt.reset_device(dev.index)
        acl.finalize()


def bench_jpege(dev, quick: bool) -> None:
    """A 1920x1080 NV12 picture (a photo's) encoded at level 90 by acl.media
    on the DVPP engine (dvpp_jpeg_encode_async + synchronize_stream, the
    picture already in device memory) against Pillow's libjpeg-turbo
    encoding the same 4:2:0 samples (the same file, byte for byte) on one
    core."""
    import io

    import acl
    try:
        from PIL import Image
    except ImportError:
        print("jpege: Pillow is not installed, row skipped")
        return
    w, h = 1920, 1080
    ycc = np.asarray(Image.fromarray(_photo(w, h)).convert("YCbCr"))
    c = ycc[..., 1:].reshape(h // 2, 2, w // 2, 2, 2).astype(np.int32)
    c = ((c.sum(axis=(1, 3)) + 2) // 4).astype(np.uint8)
    pic = np.concatenate([ycc[..., 0].ravel(), c.ravel()]).tobytes()
    full = np.repeat(np.repeat(c, 2, 0), 2, 1)
    ref = Image.fromarray(np.dstack([ycc[..., 0], full]), "YCbCr")
    assert acl.init() == 0 and acl.rt.set_device(dev.index) == 0
    m = acl.media
    try:
        ch = m.dvpp_create_channel_desc()
        m.dvpp_create_channel(ch)
        stream, _ = acl.rt.create_stream()
        cfg = m.dvpp_create_jpege_config()
        m.dvpp_set_jpege_config_level(cfg, 90)
        src, _ = m.dvpp_malloc(len(pic))
        acl.rt.memcpy(src, len(pic), acl.util.bytes_to_ptr(pic), len(pic), 1)
        desc = m.dvpp_create_pic_desc()
        for field, value in (("data", src), ("size", len(pic)),
                             ("format", 1), ("width", w), ("height", h),
                             ("width_stride", w), ("height_stride", h)):
            getattr(m, "dvpp_set_pic_desc_" + field)(desc, value)
        cap, _ = m.dvpp_jpeg_predict_enc_size(desc, cfg)
        dst, _ = m.dvpp_malloc(cap)
        size = np.array([cap], np.int32)

        def npu():
            size[0] = cap
            m.dvpp_jpeg_encode_async(ch, desc, dst, acl.util.numpy_to_ptr(
                size), cfg, stream)
            if acl.rt.synchronize_stream(stream):
                raise RuntimeError("the JPEG encode failed")
        npu()
        repeat = 3 if quick else 10
        t_npu = best_of(npu, repeat)
        t_cpu = best_of(lambda: ref.save(io.BytesIO(), "JPEG", quality=90,
                                         subsampling=2), repeat)
        record("jpege_1080p", "JPEG encode 1920x1080 (acl.media) vs Pillow, "
               "one core", t_npu * 1e3, "ms", t_cpu / t_npu,
               note="4:2:0 q90, %d KiB" % (int(size[0]) >> 10))
        m.dvpp_destroy_pic_desc(desc)
        m.dvpp_free(src)
        m.dvpp_free(dst)
        m.dvpp_destroy_jpege_config(cfg)
        acl.rt.destroy_stream(stream)
        m.dvpp_destroy_channel(ch)
        m.dvpp_destroy_channel_desc(ch)
    finally:
        acl.rt.reset_device(dev.index)
        acl.finalize()


def bench_pngd(dev, quick: bool) -> None:
    """A 1920x1080 RGB PNG (Pillow's, compress level 6) decoded by
    acl.media on the DVPP engine (dvpp_png_decode_async to RGB888 +
    synchronize_stream, the file already in device memory) against
    Pillow's decode of the same bytes (zlib's inflate) on one core."""
    import io

    import acl
    try:
        from PIL import Image
    except ImportError:
        print("pngd: Pillow is not installed, row skipped")
        return
    b = io.BytesIO()
    Image.fromarray(_photo(1920, 1080)).save(b, "PNG")
    data = b.getvalue()
    assert acl.init() == 0 and acl.rt.set_device(dev.index) == 0
    m = acl.media
    try:
        ptr = acl.util.bytes_to_ptr(data)
        size, _ = m.dvpp_png_predict_dec_size(ptr, len(data), 12)
        ch = m.dvpp_create_channel_desc()
        m.dvpp_create_channel(ch)
        stream, _ = acl.rt.create_stream()
        src, _ = m.dvpp_malloc(len(data))
        acl.rt.memcpy(src, len(data), ptr, len(data), 1)
        dst, _ = m.dvpp_malloc(size)
        desc = m.dvpp_create_pic_desc()
        m.dvpp_set_pic_desc_data(desc, dst)
        m.dvpp_set_pic_desc_format(desc, 12)

        def npu():
            m.dvpp_set_pic_desc_size(desc, size)
            m.dvpp_png_decode_async(ch, src, len(data), desc, stream)
            if acl.rt.synchronize_stream(stream):
                raise RuntimeError("the PNG decode failed")
        npu()
        repeat = 3 if quick else 10
        t_npu = best_of(npu, repeat)
        t_cpu = best_of(lambda: Image.open(io.BytesIO(data)).load(), repeat)
        record("pngd_1080p", "PNG decode 1920x1080 (acl.media) vs Pillow, "
               "one core", t_npu * 1e3, "ms", t_cpu / t_npu,
               note="RGB, level 6, %d KiB" % (len(data) >> 10))
        m.dvpp_destroy_pic_desc(desc)
        m.dvpp_free(src)
        m.dvpp_free(dst)
        acl.rt.destroy_stream(stream)
        m.dvpp_destroy_channel(ch)
        m.dvpp_destroy_channel_desc(ch)
    finally:
        acl.rt.reset_device(dev.index)
        acl.finalize()


def bench_vpc(dev, quick: bool) -> None:
    """The samples' resize: a 1920x1080 NV12 picture to 224 x 224 by
    acl.media's VPC (dvpp_vpc_resize_async, bilinear, + synchronize_stream)
    against Pillow's bilinear resize of its Y, U and V planes (Pillow's
    filter widens its support when it shrinks, so it does more work per
    pixel: a workload of the same shape, not the same arithmetic), one
    core."""
    import acl
    try:
        from PIL import Image
    except ImportError:
        print("vpc: Pillow is not installed, row skipped")
        return
    w, h, ow, oh = 1920, 1080, 224, 224
    rgb = _photo(w, h)
    y = rgb[..., 0].copy()
    u, v = rgb[::2, ::2, 1].copy(), rgb[::2, ::2, 2].copy()
    nv12 = np.concatenate([y.ravel(), np.stack([u, v], -1).ravel()])
    assert acl.init() == 0 and acl.rt.set_device(dev.index) == 0
    m = acl.media
    try:
        ch = m.dvpp_create_channel_desc()
        m.dvpp_create_channel(ch)
        stream, _ = acl.rt.create_stream()
        descs, bufs = [], []
        for pw, ph, data in ((w, h, nv12), (ow, oh, None)):
            size = pw * ph * 3 // 2
            p, _ = m.dvpp_malloc(size)
            bufs.append(p)
            if data is not None:
                acl.rt.memcpy(p, size, acl.util.numpy_to_ptr(data), size, 1)
            d = m.dvpp_create_pic_desc()
            for f, val in (("data", p), ("size", size), ("format", 1),
                           ("width", pw), ("height", ph),
                           ("width_stride", pw), ("height_stride", ph)):
                getattr(m, "dvpp_set_pic_desc_" + f)(d, val)
            descs.append(d)
        cfg = m.dvpp_create_resize_config()
        m.dvpp_set_resize_config_interpolation(cfg, 1)

        def npu():
            m.dvpp_vpc_resize_async(ch, descs[0], descs[1], cfg, stream)
            if acl.rt.synchronize_stream(stream):
                raise RuntimeError("the VPC resize failed")
        npu()
        repeat = 3 if quick else 10
        t_npu = best_of(npu, repeat)
        planes = [Image.fromarray(p) for p in (y, u, v)]

        def pillow():
            planes[0].resize((ow, oh), Image.BILINEAR)
            for p in planes[1:]:
                p.resize((ow // 2, oh // 2), Image.BILINEAR)
        t_cpu = best_of(pillow, repeat)
        record("vpc_resize_1080p", "VPC resize 1920x1080 -> 224x224 NV12 "
               "(acl.media) vs Pillow, one core", t_npu * 1e3, "ms",
               t_cpu / t_npu, note="bilinear")
        m.dvpp_destroy_resize_config(cfg)
        for d in descs:
            m.dvpp_destroy_pic_desc(d)
        for p in bufs:
            m.dvpp_free(p)
        acl.rt.destroy_stream(stream)
        m.dvpp_destroy_channel(ch)
        m.dvpp_destroy_channel_desc(ch)
    finally:
        acl.rt.reset_device(dev.index)
        acl.finalize()


def sweep_aicores(quick: bool) -> None:
    """In-process only: N streams on N AI cores for N = 1..16, each in a
    child process with DAVINCI_INPROC_AICORES=N."""
    base = None
    for n in (1, 2, 4, 8, 16):
        env = dict(os.environ, DAVINCI_BACKEND="inproc",
                   DAVINCI_INPROC_AICORES=str(n))
        out = subprocess.run(
            [sys.executable, __file__, "--scaling-child", str(n)]
            + (["--quick"] if quick else []),
            env=env, capture_output=True, text=True, check=True).stdout
        rate = float(out.split()[-1])
        base = base or rate
        record("aicores_%d" % n, "NOP tasks/s, %d streams on %d AI cores"
               % (n, n), rate, "tasks/s", rate / base)


#: the groups of rows (--only) in the order they run: (device, backend
#: kind, quick) -> None
GROUPS = {"latency": bench_latency,
          "batches": lambda dev, kind, quick: bench_batches(dev, quick),
          "trace": lambda dev, kind, quick: bench_trace(dev, quick),
          "scaling": lambda dev, kind, quick: bench_scaling(dev, quick),
          "graph": lambda dev, kind, quick: bench_graph(dev, quick),
          "copies": lambda dev, kind, quick: bench_copies(dev, quick),
          "matmul": lambda dev, kind, quick: bench_matmul(dev, quick),
          "conv": lambda dev, kind, quick: bench_conv(dev, quick),
          "model": lambda dev, kind, quick: bench_model(dev, quick),
          "resnet50": lambda dev, kind, quick: bench_resnet50(dev, quick),
          "jpegd": lambda dev, kind, quick: bench_jpegd(dev, quick),
          "vpc": lambda dev, kind, quick: bench_vpc(dev, quick),
          "jpege": lambda dev, kind, quick: bench_jpege(dev, quick),
          "pngd": lambda dev, kind, quick: bench_pngd(dev, quick)}


def ab_table(folder: str) -> None:
    """Each row's ratio (or value) per round, A then B, from one boot."""
    runs = {}
    for name in sorted(os.listdir(folder)):
        parts = name[:-len(".json")].split("-") if name.endswith(
            ".json") else []
        if len(parts) == 4 and parts[:2] == ["bench", "ab"]:
            with open(os.path.join(folder, name)) as f:
                runs[(int(parts[2]), parts[3])] = json.load(f)["rows"]
    if not runs:
        sys.exit("no bench-ab-*.json in %s: run make bench-vm with "
                 "VM_BENCH_AB set" % folder)
    cols = sorted(runs, key=lambda k: (k[1], k[0]))
    print("%-46s %s" % ("", " ".join("%9s" % ("%s%d" % (side, n))
                                     for n, side in cols)))
    for i, row in enumerate(runs[cols[0]]):
        shown = []
        for col in cols:
            r = runs[col][i]
            x = r["ratio"] if r["ratio"] is not None else r["value"]
            shown.append("%9.3g" % x)
        print("%-46s %s" % (row["what"], " ".join(shown)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--quick", action="store_true",
                    help="fewer repetitions (the QEMU guest)")
    ap.add_argument("--sweep-aicores", action="store_true",
                    help="in-process: NOP throughput on 1..16 AI cores")
    ap.add_argument("--scaling-child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--only", metavar="GROUP,...",
                    help="only these groups of rows: %s" % ",".join(GROUPS))
    ap.add_argument("--ab-table", metavar="DIR",
                    help="print the rows of DIR/bench-ab-*.json side by side")
    args = ap.parse_args()
    if args.ab_table:
        ab_table(args.ab_table)
        return
    groups = args.only.split(",") if args.only else list(GROUPS)
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        ap.error("unknown group %s: choose from %s"
                 % (",".join(unknown), ",".join(GROUPS)))
    if args.scaling_child:
        with davinci.Device(0) as dev:
            print(nops_per_second(dev, args.scaling_child,
                                  8 if args.quick else 32))
        return
    backend = davinci.backend()
    with davinci.Device(0) as dev:
        info = dev.info
        # what serves the nodes: "lib" in-process, "fuse", "kmod"
        kind = {"lib": "inproc"}.get(dev.version.backend,
                                     dev.version.backend)
        print("davinci bench on %s: %s, %d AI cores, HBM %d MiB, %s"
              % (backend.describe(), info.name, info.aicores,
                 info.hbm_total >> 20, dev.version))
        print("%-46s %16s %9s  %-12s" % ("", "davinci", "ratio", "goal"))
        for name, run in GROUPS.items():
            if name in groups:
                run(dev, kind, args.quick)
    if args.sweep_aicores and kind == "inproc":
        sweep_aicores(args.quick)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(backend=kind, describe=backend.describe(),
                           host_cores=os.cpu_count(), rows=ROWS), f,
                      indent=1)
        print("wrote %s" % args.json)


if __name__ == "__main__":
    main()

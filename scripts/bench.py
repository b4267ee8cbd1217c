"""make bench: the davinci NPU next to numpy on this machine, from one run.

Submit-to-complete latency of one NOP, NOP throughput in batches,
host-to-device and device-to-host copy bandwidth against numpy's host copy,
a vector add and a 512x512 matmul against numpy. Runs on the backend that
discovery finds (DAVINCI_DEV_DIR, the module, a FUSE mount, or
DAVINCI_BACKEND=inproc). Prints absolute figures and ratios.
"""
import statistics
import time

import numpy as np

import davinci
from davinci import _uapi, make_task, ops


def best_of(fn, repeat: int) -> float:
    """Fastest wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def row(what: str, npu: str, host: str = "", ratio: str = "") -> None:
    print("%-34s %18s %18s %10s" % (what, npu, host, ratio))


def gbps(nbytes: int, seconds: float) -> str:
    return "%.2f GB/s" % (nbytes / seconds / 1e9)


def bench_nops(dev) -> None:
    s = dev.stream(sq_entries=1024, cq_entries=1024)
    lat = []
    for _ in range(300):
        t0 = time.perf_counter()
        s.launch(make_task(_uapi.DAVINCI_OP_NOP))
        s.synchronize()
        lat.append(time.perf_counter() - t0)
    lat.sort()
    row("NOP submit-to-complete, median", "%.1f us" % (
        statistics.median(lat) * 1e6))
    row("NOP submit-to-complete, p99", "%.1f us" % (
        lat[int(len(lat) * 0.99)] * 1e6))
    for batch in (1, 32, 512):
        tasks = [make_task(_uapi.DAVINCI_OP_NOP) for _ in range(batch)]
        rounds = max(1, 4096 // batch)

        def run():
            for _ in range(rounds):
                s.submit(tasks)
            s.synchronize()
        t = best_of(run, 3)
        row("NOP throughput, batches of %d" % batch,
            "%.0f tasks/s" % (rounds * batch / t))
    s.destroy()


def bench_copies(dev) -> None:
    s = dev.stream()
    for size in (4 << 10, 1 << 20, 64 << 20):
        host = np.random.default_rng(0).integers(0, 255, size, np.uint8)
        back = np.empty_like(host)
        other = np.empty_like(host)
        buf = dev.malloc(size)
        repeat = 50 if size < (1 << 20) else 10 if size < (64 << 20) else 3
        t_np = best_of(lambda: np.copyto(other, host), repeat)
        t_h2d = best_of(lambda: s.copy_from_host(buf, host), repeat)
        t_d2h = best_of(lambda: s.copy_to_host(buf, back), repeat)
        assert np.array_equal(back, host)
        label = "%d KiB" % (size >> 10) if size < (1 << 20) \
            else "%d MiB" % (size >> 20)
        row("host-to-device %s" % label, gbps(size, t_h2d),
            gbps(size, t_np), "%.2fx" % (t_np / t_h2d))
        row("device-to-host %s" % label, gbps(size, t_d2h),
            gbps(size, t_np), "%.2fx" % (t_np / t_d2h))
        buf.free()
    s.destroy()


def bench_ops(dev) -> None:
    s = dev.stream()
    n = 16 << 20
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n, np.float32)
    y = rng.standard_normal(n, np.float32)
    xd, yd = dev.tensor(x), dev.tensor(y)
    zd = dev.empty(n, "float32")
    z = np.empty_like(x)

    def npu_add():
        ops.add(xd, yd, out=zd, stream=s)
        s.synchronize()
    t_npu = best_of(npu_add, 5)
    t_np = best_of(lambda: np.add(x, y, out=z), 5)
    moved = 3 * 4 * n
    row("vector add, 16M float32", gbps(moved, t_npu), gbps(moved, t_np),
        "%.2fx" % (t_np / t_npu))
    for t in (xd, yd, zd):
        t.free()

    m = 512
    a = rng.standard_normal((m, m), np.float32)
    b = rng.standard_normal((m, m), np.float32)
    ad, bd = dev.tensor(a), dev.tensor(b)
    cd = dev.empty((m, m), "float32")

    def npu_matmul():
        ops.matmul(ad, bd, out=cd, stream=s)
        s.synchronize()
    t_npu = best_of(npu_matmul, 5)
    t_np = best_of(lambda: a @ b, 5)
    flops = 2 * m ** 3
    row("matmul 512x512 float32", "%.2f GFLOP/s" % (flops / t_npu / 1e9),
        "%.2f GFLOP/s" % (flops / t_np / 1e9), "%.2fx" % (t_np / t_npu))
    s.destroy()


def main() -> None:
    backend = davinci.backend()
    with davinci.Device(0) as dev:
        info = dev.info
        print("davinci bench on %s: %s, %d AI cores, HBM %d MiB"
              % (backend.describe(), info.name, info.aicores,
                 info.hbm_total >> 20))
        row("", "NPU", "numpy (host)", "NPU/host")
        bench_nops(dev)
        bench_copies(dev)
        bench_ops(dev)


if __name__ == "__main__":
    main()

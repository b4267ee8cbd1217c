"""make bench: torch_npu's overheads, as ratios from one run.

Per-op overhead: a tiny ``x + y`` on npu tensors from Python, submitted and
waited for, next to the runtime's own tiny-task latency (a NOP launched and
waited for on a davinci stream) in the same process (goal: at most 3x).
Training: one step of an MLP on scikit-learn's digits (forward, backward,
SGD with momentum) on npu:0 against CPU torch in the same process, and one
step of the demo's digits CNN (samples/cnn_digits.py: convolutions, batch
norm, max and average pooling; Adam, batch 64) as npu throughput against
the CPU's (goal: at least 0.5x), with the tasks an npu step runs (from the
device's trace). Both optimizers run with fused=True on both devices: CPU
torch's fused kernels, and on npu one ADAM or SGD_MOMENTUM task per
parameter (torch_npu._fused_optim). The device's busy time per step (its
tasks' start-to-completion, from the trace) says how much of an npu step
the device's kernels take and how much is the host's. CPU torch and
torch_npu run with one CPU thread (torch.set_num_threads(1)). Nothing is
asserted: it measures.

    python scripts/bench_torch.py [--json PATH] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import torch
from torch import nn

import davinci
from davinci import _uapi, make_task

import torch_npu  # noqa: F401  (registers the npu device)
from bench import median_of     # scripts/bench.py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "samples"))


def op_overhead(repeat: int) -> dict:
    s = torch.npu.current_stream()
    ds = s.davinci_stream
    nop = make_task(_uapi.DAVINCI_OP_NOP)

    def task():
        ds.launch(nop)
        ds.synchronize()
    x = torch.ones(4, device="npu")
    y = torch.ones(4, device="npu")

    def add():
        x + y
        s.synchronize()
    for _ in range(200):
        task()
        add()
    t_task = median_of(task, repeat)
    t_add = median_of(add, repeat)
    return dict(tiny_task_us=t_task * 1e6, npu_add_us=t_add * 1e6,
                ratio=t_add / t_task)


def _tasks_per_step(step, steps: int = 3) -> tuple[float, float]:
    """Tasks this process completed on npu:0 per call of ``step``, and the
    milliseconds they ran (start to completion, summed): the device's busy
    time, which bounds the step from below whatever the host does."""
    from davinci.trace import TraceSession
    from davinci.trace.records import KIND_NAMES
    done = next(k for k, v in KIND_NAMES.items() if v == "TASK_COMPLETE")
    session = TraceSession(devices=[0], spans=False, poll_ms=0)
    session.start()
    try:
        torch.npu.synchronize()
        session.drain()
        for _ in range(steps):
            step()
        torch.npu.synchronize()
        records = session.drain().records
    finally:
        session.stop()
    start = next(k for k, v in KIND_NAMES.items() if v == "TASK_START")
    began, tasks, busy_ns = {}, 0, 0
    for r in records:
        if r.pid != os.getpid():
            continue
        if r.type == start:
            began[(r.seq, r.id)] = r.timestamp_ns
        elif r.type == done:
            tasks += 1
            if (r.seq, r.id) in began:
                busy_ns += r.timestamp_ns - began[(r.seq, r.id)]
    return tasks / steps, busy_ns / steps / 1e6


def step_times(make_model, make_optimizer, X, Y, repeat: int) -> dict:
    """Median milliseconds of one training step on the CPU and on npu, and
    the tasks an npu step runs."""
    out = {}
    for device in ("cpu", "npu"):
        torch.manual_seed(0)
        m = make_model().to(device)
        opt = make_optimizer(m.parameters())
        lossf = nn.CrossEntropyLoss()
        Xd, Yd = X.to(device), Y.to(device)

        def step():
            opt.zero_grad()
            loss = lossf(m(Xd), Yd)
            loss.backward()
            opt.step()
            loss.item()                 # the step's result, on the host
        for _ in range(5):
            step()
        out[device] = median_of(step, repeat) * 1e3
        if device == "npu":
            out["tasks"], out["busy"] = _tasks_per_step(step)
    return dict(cpu_step_ms=out["cpu"], npu_step_ms=out["npu"],
                ratio=out["npu"] / out["cpu"], npu_tasks=out["tasks"],
                npu_device_busy_ms=out["busy"])


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    return (torch.tensor(d.data, dtype=torch.float32) / 16,
            torch.tensor(d.target))


def train_step(repeat: int) -> dict:
    X, Y = digits()
    return step_times(
        lambda: nn.Sequential(nn.Linear(64, 64), nn.ReLU(),
                              nn.Linear(64, 10)),
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, fused=True), X, Y,
        repeat)


def cnn_step(repeat: int) -> dict:
    from cnn_digits import BATCH, resnet  # samples/cnn_digits.py
    X, Y = digits()
    X = X[:BATCH].reshape(-1, 1, 8, 8)
    # fused=True: CPU torch's fused Adam, and on npu one ADAM task per
    # parameter (without it torch takes its foreach path on both)
    return step_times(resnet, lambda p: torch.optim.Adam(p, lr=0.01,
                                                          fused=True),
                      X, Y[:BATCH], repeat)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the figures as JSON here")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    # one CPU thread for CPU torch and torch_npu alike (as tests/torch's
    # conftest): torch's OpenMP workers spin while they wait and, on a
    # small machine, starve the device's threads and swing the CPU baseline
    torch.set_num_threads(1)
    print("torch_npu bench on %s" % davinci.backend().describe())
    o = op_overhead(300 if args.quick else 2000)
    print("tiny task (davinci NOP) submit-to-complete  %8.1f us"
          % o["tiny_task_us"])
    print("tiny x + y on npu, submit-to-result         %8.1f us  %.2fx "
          "the tiny task (goal <= 3x)%s" % (o["npu_add_us"], o["ratio"],
                                            "" if o["ratio"] <= 3
                                            else "  MISS"))
    t = train_step(10 if args.quick else 30)
    print("MLP step (digits, SGD momentum fused=True on both): cpu %.2f ms, npu %.2f ms, "
          "npu/cpu %.2fx, %.0f tasks (device busy %.2f ms)" % (
              t["cpu_step_ms"], t["npu_step_ms"], t["ratio"], t["npu_tasks"],
              t["npu_device_busy_ms"]))
    c = cnn_step(5 if args.quick else 15)
    throughput = 1 / c["ratio"]
    print("digits CNN step (batch 64, Adam fused=True on both): cpu %.2f "
          "ms, npu %.2f ms (%.0f tasks, device busy %.2f ms), npu "
          "throughput %.2fx the cpu's (goal >= 0.5x)%s" % (
              c["cpu_step_ms"], c["npu_step_ms"], c["npu_tasks"],
              c["npu_device_busy_ms"], throughput,
              "" if throughput >= 0.5 else "  MISS"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(op_overhead=o, train_step=t, cnn_step=c), f,
                      indent=1)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-2.0
"""Walk PyTorch's OpInfo database on npu against CPU torch.

Run by tests/torch/test_opinfo.py in a process of its own, so an op that
kills the process is named instead of taking pytest with it. For every
OpInfo entry (``torch.testing._internal.common_methods_invocations.op_db``)
and its sample inputs in float32 (complex64 too where the op takes it),
built on npu and copied to the CPU (tensors that share memory on npu share
it on the CPU too), it runs the op on both devices, with
the CPU generator seeded alike, and compares: the results (their shapes
and dtypes alone where the npu drew from its device generator), the arguments
after the call (an op that updates an argument must update the npu one
too), and, where the CPU raises, the exception's type. Then the op's
error inputs, which must raise what the CPU raises.

Each op prints one JSON line as it starts ({"start": name}) and one with
its outcome: samples run, mismatches (with the first few described), and
the ATen ops that fell back to the CPU for the first time in it; the last
line lists every op that fell back.

usage: opinfo_worker.py [--ops NAME,...] [--max-samples N]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import sys
import warnings

import torch
from torch.utils._pytree import tree_flatten, tree_map

torch.set_num_threads(1)

#: ops whose results are unspecified memory (compare shapes and dtypes)
UNSPECIFIED = {"empty", "empty_like", "new_empty", "new_empty_strided",
               "empty_strided", "empty_permuted", "torch.empty"}
RTOL, ATOL = 1e-4, 1e-5
#: what check_sample answers for a sparse result (npu tensors are strided)
UNSUPPORTED = "unsupported"


def cpu_copy(x):
    """``x`` with every npu tensor copied to the CPU, tensors that share an
    npu storage sharing one CPU copy of it (so aliasing is kept)."""
    storages: dict[int, torch.UntypedStorage] = {}

    def move(t):
        if isinstance(t, torch.device) and t.type == "npu":
            return torch.device("cpu")
        if isinstance(t, str) and t.split(":")[0] == "npu":
            return "cpu"
        if not isinstance(t, torch.Tensor) or t.device.type != "npu":
            return t
        key = t.untyped_storage().data_ptr()
        if key not in storages:
            storages[key] = t.untyped_storage().cpu()
        v = torch.empty(0, dtype=t.dtype).set_(
            storages[key], t.storage_offset(), t.size(), t.stride())
        if t.is_conj():
            v = v.conj()
        if t.is_neg():
            v = v._neg_view()
        return v
    return tree_map(move, x)


def run(fn, args, kwargs, seed: int):
    torch.manual_seed(seed)
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 (the CPU's exception is the spec)
        return None, e


def describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return "%s%s" % (str(x.dtype).replace("torch.", ""), list(x.shape))
    return type(x).__name__


def compare(name: str, want, got, values: bool) -> str | None:
    """None when ``got`` (npu) matches ``want`` (CPU), else what differs."""
    wl, _ = tree_flatten(want)
    gl, _ = tree_flatten(got)
    if name == "arguments":     # what the op may have written
        wl = [w for w in wl if isinstance(w, torch.Tensor)]
        gl = [g for g in gl if isinstance(g, torch.Tensor)]
    if len(wl) != len(gl):
        return "%s: %d results, the CPU's %d" % (name, len(gl), len(wl))
    for i, (w, g) in enumerate(zip(wl, gl)):
        if isinstance(w, torch.Tensor):
            if not isinstance(g, torch.Tensor):
                return "%s[%d]: %s, not a tensor" % (name, i, describe(g))
            if g.device.type != w.device.type.replace("cpu", "npu") and \
                    w.device.type == "cpu" and g.device.type != "cpu":
                return "%s[%d] on %s" % (name, i, g.device)
            g = g.cpu()
            if g.shape != w.shape or g.dtype != w.dtype:
                return "%s[%d]: %s, the CPU's %s" % (name, i, describe(g),
                                                     describe(w))
            if not values:
                continue
            try:
                torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL,
                                           equal_nan=True)
            except AssertionError as e:
                return "%s[%d]: %s" % (name, i, str(e).splitlines()[0:3])
        elif isinstance(w, float) and isinstance(g, float):
            if not (w == g or (w != w and g != g) or
                    abs(w - g) <= ATOL + RTOL * abs(w)):
                return "%s[%d]: %r, the CPU's %r" % (name, i, g, w)
        elif type(w) is not type(g) or (w != g and not isinstance(w, float)):
            return "%s[%d]: %r, the CPU's %r" % (name, i, g, w)
    return None


def not_strided(x) -> bool:
    """Meta tensors (samples about shapes alone) and sparse ones (npu
    tensors are strided only)."""
    return any(isinstance(t, torch.Tensor) and
               (t.device.type == "meta" or t.layout != torch.strided)
               for t in tree_flatten(x)[0])


def check_sample(op, fn, sample, seed: int) -> str | None:
    npu_args = (sample.input,) + tuple(sample.args)
    npu_kwargs = dict(sample.kwargs)
    if not_strided((npu_args, npu_kwargs)):
        return None
    cpu_args, cpu_kwargs = cpu_copy((npu_args, npu_kwargs))
    want, cpu_error = run(fn, cpu_args, cpu_kwargs, seed)
    from torch_npu import _device_ops
    draws = _device_ops.draws
    got, npu_error = run(fn, npu_args, npu_kwargs, seed)
    # a draw from the device's Philox generator: other values than the CPU
    # generator's for one seed (test_indexing.py checks their statistics)
    random = _device_ops.draws != draws
    if cpu_error is not None:
        if npu_error is None:
            return "the CPU raised %s, npu nothing" % type(cpu_error).__name__
        if type(npu_error) is not type(cpu_error):
            return "the CPU raised %s, npu %s: %s" % (
                type(cpu_error).__name__, type(npu_error).__name__,
                str(npu_error).splitlines()[0][:200])
        return None
    if npu_error is not None:
        if isinstance(npu_error, NotImplementedError) and \
                "Sparse" in str(npu_error):
            return UNSUPPORTED
        return "npu raised %s: %s" % (type(npu_error).__name__,
                                      str(npu_error).splitlines()[0][:200])
    values = op.name not in UNSPECIFIED and not random
    return compare("result", want, got, values) or \
        compare("arguments", (cpu_args, cpu_kwargs),
                (npu_args, npu_kwargs), values)


def check_error_input(op, ei) -> str | None:
    si = ei.sample_input
    npu_args = (si.input,) + tuple(si.args)
    npu_kwargs = dict(si.kwargs)
    if not_strided((npu_args, npu_kwargs)):
        return None
    cpu_args, cpu_kwargs = cpu_copy((npu_args, npu_kwargs))
    _, cpu_error = run(op.op, cpu_args, cpu_kwargs, 0)
    if cpu_error is None:
        return None         # an error of another device (e.g. CUDA's)
    _, npu_error = run(op.op, npu_args, npu_kwargs, 0)
    if npu_error is None:
        return "error input: the CPU raised %s, npu nothing" % \
            type(cpu_error).__name__
    if type(npu_error) is not type(cpu_error):
        return "error input: the CPU raised %s, npu %s: %s" % (
            type(cpu_error).__name__, type(npu_error).__name__,
            str(npu_error).splitlines()[0][:200])
    return None


def dtypes_of(op) -> list[torch.dtype]:
    supported = op.supported_dtypes("cpu")
    picked = [d for d in (torch.float32, torch.complex64) if d in supported]
    if not picked:
        picked = [d for d in (torch.int64, torch.bool) if d in supported][:1]
    return picked


def drawn(make, args, kwargs, limit: int, described: list[str] | None):
    """The first ``limit`` inputs ``make`` generates, built one at a time:
    an entry's whole list (grid_sampler_3d's is 150 MiB) does not fit beside
    the test process on a FUSE daemon's device. A generator that raises
    ends the list, said in ``described`` (None: not every entry has error
    inputs)."""
    try:
        yield from itertools.islice(make(*args, **kwargs), limit)
    except Exception as e:  # noqa: BLE001
        if described is not None:
            described.append("%s%s: %s" % (make.__name__, args[1:], e))


def walk(op, max_samples: int) -> dict:
    import torch_npu
    before = set(torch_npu.fallback_ops())
    samples = failures = unsupported = 0
    described: list[str] = []
    variants = [("", op.op)]
    if op.inplace_variant is not None:
        variants.append(("in-place ", op.inplace_variant))
    for dtype in dtypes_of(op):
        for variant, fn in variants:
            inputs = drawn(op.sample_inputs, ("npu", dtype),
                           {"requires_grad": False}, max_samples, described)
            for i, sample in enumerate(inputs):
                samples += 1
                problem = check_sample(op, fn, sample, seed=i)
                if problem == UNSUPPORTED:
                    unsupported += 1
                elif problem:
                    failures += 1
                    if len(described) < 3:
                        described.append("%s%s sample %d (%s): %s" % (
                            variant, str(dtype).replace("torch.", ""), i,
                            describe(sample.input), problem))
    for ei in drawn(op.error_inputs, ("npu",), {}, max_samples, None):
        samples += 1
        problem = check_error_input(op, ei)
        if problem:
            failures += 1
            if len(described) < 3:
                described.append(problem)
    fell_back = sorted(set(torch_npu.fallback_ops()) - before)
    return {"op": op.name, "variant": op.variant_test_name,
            "samples": samples, "failures": failures,
            "unsupported": unsupported,
            "problems": described, "fell_back": fell_back}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--ops", default="", help="comma-separated OpInfo names")
    p.add_argument("--max-samples", type=int, default=8)
    a = p.parse_args()
    import torch_npu
    from torch.testing._internal.common_methods_invocations import op_db
    wanted = set(filter(None, a.ops.split(",")))
    warnings.simplefilter("ignore")
    for op in op_db:
        if wanted and op.name not in wanted:
            continue
        print(json.dumps({"start": op.name,
                          "variant": op.variant_test_name}), flush=True)
        print(json.dumps(walk(op, a.max_samples)), flush=True)
        # the devices of a FUSE daemon are shared with the test process
        # that started this walk: hold no more than one entry's samples
        if torch.npu.memory_reserved() > 64 << 20:
            gc.collect()
            torch.npu.empty_cache()
    print(json.dumps({"done": True,
                      "fallback_ops": torch_npu.fallback_ops()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

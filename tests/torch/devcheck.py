# SPDX-License-Identifier: GPL-2.0
"""Helpers of the tests of ops composed on the device (test_reductions.py,
test_pointwise.py): run an expression on npu and on the CPU, compare
within the dtype's rounding, and fail if anything ran on the CPU."""

import contextlib
import math
import warnings

import torch

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
FLOATS = [F32, F16, BF16]
#: relative and absolute tolerance of a sum of a few dozen elements
_TOL = {F32: (1e-5, 1e-5), F16: (2e-3, 2e-3), BF16: (1.6e-2, 1.6e-2)}


@contextlib.contextmanager
def no_fallback():
    """Fails if the block runs any op on the CPU (a Python kernel's
    fallback or the C++ one's warning)."""
    import torch_npu
    from torch_npu import _kernels
    before = set(torch_npu.fallback_ops())
    fell_back = []
    warn_cpu = _kernels.warn_cpu

    def record(op, reason):
        fell_back.append("%s (%s)" % (op, reason))
    _kernels.warn_cpu = record
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
            torch.npu.synchronize()
    finally:
        _kernels.warn_cpu = warn_cpu
    fell_back += [str(w.message) for w in caught
                  if "torch_npu" in str(w.message)]
    fell_back += sorted(set(torch_npu.fallback_ops()) - before)
    assert not fell_back, fell_back


def sample(dt, *shape, seed=0, special=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    if special:
        flat = x.view(-1)
        flat[1] = math.nan
        flat[-2] = math.inf
    return x.to(dt)


def close(got, want, dt=None):
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    rtol, atol = _TOL[dt or want.dtype] if want.dtype.is_floating_point \
        else (0, 0)
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol,
                               equal_nan=True)


def check(fn, *xs, dt=None):
    """fn on npu copies of xs equals fn on xs; nothing on the CPU."""
    want = fn(*xs)
    with no_fallback():
        got = fn(*(x.npu() for x in xs))
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            close(g, w, dt)
    else:
        close(got, want, dt)

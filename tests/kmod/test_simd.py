"""The module's MATMUL kernel at every SIMD level the guest CPU has, picked
with the module parameter simd: the bytes must not depend on the level."""
import os

import numpy as np
import pytest

import davinci
from davinci import ops

PARAM = "/sys/module/davinci/parameters/simd"
LEVELS = ("sse2", "avx2", "avx512")
BASE = "neon" if os.uname().machine == "aarch64" else "sse2"


def cpu_levels():
    if BASE == "neon":
        return [BASE]
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f
                      if line.startswith("flags")), [])
    return [lv for lv, flag in zip(LEVELS, ("sse2", "avx2", "avx512f"))
            if flag in flags]


def set_level(name):
    with open(PARAM, "w") as f:
        f.write(name)


@pytest.fixture
def restore_level():
    yield
    set_level("auto")


def test_unknown_level_rejected(restore_level):
    with pytest.raises(OSError):
        set_level("no-such-level")
    set_level(BASE)
    with open(PARAM) as f:
        assert f.read().strip() == BASE


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_matmul_levels_bit_identical(restore_level, dtype):
    rng = np.random.default_rng(11)
    results = {}
    with davinci.Device(0) as dev:
        s = dev.stream()
        a = rng.standard_normal((70, 300)).astype(np.float32)
        b = rng.standard_normal((300, 90)).astype(np.float32)
        a[3, 7], b[5, 2], a[9, 9] = np.nan, -np.inf, 1e-40
        ad, bd = dev.tensor(a, dtype), dev.tensor(b, dtype)
        for name in cpu_levels():
            set_level(name)
            outs = [ops.matmul(ad, bd, stream=s),
                    ops.matmul(ad, ad, transpose_b=True, stream=s),
                    ops.matmul(bd, bd, transpose_a=True, stream=s)]
            s.synchronize()
            results[name] = [o.numpy(raw=True).tobytes() for o in outs]
        s.destroy()
    assert BASE in results
    for name, got in results.items():
        assert got == results[BASE], "%s differs from %s" % (name, BASE)

"""ctypes access to the op kernels of libdavinci_core (dv_op_*), for tests.

The library comes from $DAVINCI_CORE_LIB, else <repo>/build/libdavinci_core.so.
Tasks are the package's mirror of struct davinci_task (davinci._uapi).
"""
import ctypes
import os
import sys

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# opcodes and CMP's predicates: the op schema's (kmod/core/ops.toml)
sys.path.insert(0, os.path.join(REPO, "userspace"))
from davinci import schema  # noqa: E402
from davinci._uapi import davinci_task as Task  # noqa: E402

globals().update({"OP_" + _op.name: _op.opcode for _op in schema.OPS})
OP_COUNT = schema.OPS[-1].opcode + 1
(CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT,
 CMP_GE) = range(len(schema.by_name("CMP").imm.values))
F32, F16, BF16, I32 = range(4)
F_NOTIFY, F_TRANS_A, F_TRANS_B = 1, 2, 4

ELEMENTWISE = [OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_RELU,
               OP_EXP, OP_AXPY]
BINARY = [OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_AXPY]
INT_OK = [OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_RELU]


assert ctypes.sizeof(Task) == 128


class Extent(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_uint64), ("src0", ctypes.c_uint64),
                ("src1", ctypes.c_uint64), ("src2", ctypes.c_uint64)]


def lib_path():
    p = os.environ.get("DAVINCI_CORE_LIB")
    if p:
        return p
    return os.path.join(REPO, "build", "libdavinci_core.so")


_lib = None


def lib():
    global _lib
    if _lib is None:
        l = ctypes.CDLL(lib_path())
        l.dvc_op_is_compute.argtypes = [ctypes.c_uint16]
        l.dvc_op_is_compute.restype = ctypes.c_bool
        l.dvc_op_validate.argtypes = [ctypes.POINTER(Task)]
        l.dvc_op_validate.restype = ctypes.c_int
        l.dvc_op_extent.argtypes = [ctypes.POINTER(Task), ctypes.c_void_p,
                                    ctypes.POINTER(Extent)]
        l.dvc_op_extent.restype = ctypes.c_int
        l.dvc_op_units.argtypes = [ctypes.POINTER(Task)]
        l.dvc_op_units.restype = ctypes.c_uint64
        l.dvc_op_chunk_units.argtypes = [ctypes.POINTER(Task)]
        l.dvc_op_chunk_units.restype = ctypes.c_uint64
        l.dvc_op_run.argtypes = [ctypes.POINTER(Task), ctypes.c_void_p,
                                ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_uint64, ctypes.c_uint64]
        l.dvc_op_run.restype = None
        l.dvc_num_logf.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_uint64]
        l.dvc_num_logf.restype = None
        l.dvc_simd_level.argtypes = []
        l.dvc_simd_level.restype = ctypes.c_int
        _lib = l
    return _lib


def addr(a):
    return 0 if a is None else a.ctypes.data


def task(opcode, dtype=F32, dst=None, src0=None, src1=None, count=0, m=0,
         n=0, k=0, imm=0, flags=0, dst_dtype=0):
    t = Task()
    t.opcode = opcode
    t.dtype = dtype
    t.dst_dtype = dst_dtype
    t.flags = flags
    t.dst = addr(dst)
    t.src0 = addr(src0)
    t.src1 = addr(src1)
    t.count = count
    t.m, t.n, t.k = m, n, k
    t.imm = imm
    return t


def validate(t):
    return lib().dvc_op_validate(ctypes.byref(t))


def extent(t):
    e = Extent()
    rc = lib().dvc_op_extent(ctypes.byref(t), None, ctypes.byref(e))
    return rc, (e.dst, e.src0, e.src1, e.src2)


def units(t):
    return lib().dvc_op_units(ctypes.byref(t))


def chunk_units(t):
    return lib().dvc_op_chunk_units(ctypes.byref(t))


# os_simd_level(): 0 sse2 (neon on arm64), 1 avx2, 2 avx512; capped by the
# DAVINCI_SIMD environment variable, which the library reads at every call
SIMD_NAMES = ("neon" if os.uname().machine == "aarch64" else "sse2",
              "avx2", "avx512")


def logf(x):
    """The core's float32 log (dv_logf) of each element of ``x``."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.empty_like(x)
    lib().dvc_num_logf(x.ctypes.data, y.ctypes.data, x.size)
    return y


def simd_level():
    return lib().dvc_simd_level()


def run(t, chunks=None):
    """Validate, check extents, run all units (in @chunks pieces if given)."""
    assert validate(t) == 0
    rc, ext = extent(t)
    assert rc == 0
    # like the scheduler: an operand of 0 bytes is passed as NULL
    ptrs = [a if n else None
            for a, n in zip((t.dst, t.src0, t.src1, t.src2), ext)]
    u = units(t)
    step = chunks if chunks else max(u, 1)
    b = 0
    while b < u:
        e = min(u, b + step)
        lib().dvc_op_run(ctypes.byref(t), None, *ptrs, b, e)
        b = e


def run_raw(t, begin, end):
    lib().dvc_op_run(ctypes.byref(t), None, t.dst, t.src0, t.src1,
                     t.src2 or None, begin, end)


def f32_bits(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


# --- bfloat16 in numpy (uint16 storage) -----------------------------------

def bf16_to_f32(h):
    return (np.asarray(h, np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(f):
    """Round float32 to bfloat16 bits, nearest even; NaN -> quiet NaN."""
    b = np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    q = ((b >> 16) | 0x40).astype(np.uint16)
    return np.where(nan, q, r)


def f64_to_bf16_int(x):
    """bfloat16 bits of float64 values that are integers (|x| < 2^32),
    rounded once to nearest even from the float64 value."""
    b = np.asarray(x, np.float64).view(np.uint64)
    b = b + np.uint64((1 << 44) - 1) + ((b >> np.uint64(45)) & np.uint64(1))
    b = (b >> np.uint64(45)) << np.uint64(45)
    return (b.view(np.float64).astype(np.float32).view(np.uint32)
            >> 16).astype(np.uint16)


def widen(a, dtype):
    if dtype == BF16:
        return bf16_to_f32(a)
    return np.asarray(a).astype(np.float32)


def narrow(f, dtype):
    """float32 -> storage dtype, one rounding."""
    f = np.asarray(f, np.float32)
    if dtype == F32:
        return f
    if dtype == F16:
        with np.errstate(over="ignore"):
            return f.astype(np.float16)
    if dtype == BF16:
        return f32_to_bf16(f)
    raise ValueError(dtype)


NP_STORAGE = {F32: np.float32, F16: np.float16, BF16: np.uint16,
              I32: np.int32}


def empty(n, dtype):
    return np.zeros(n, NP_STORAGE[dtype])

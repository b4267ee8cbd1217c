# SPDX-License-Identifier: GPL-2.0
"""ctypes mirror of ``kmod/include/uapi/davinci.h``.

Every struct, constant, enum value and ioctl number of the uapi header, with
fields named exactly as in C. ``tests/abi/test_abi.py`` compiles a C program
against the header and checks every ``sizeof``, ``offsetof`` and ioctl number
against this module, so keep the two in step: add a struct here and list it in
:data:`STRUCTS`, add an ioctl and list it in :data:`IOCTLS`.
"""

from __future__ import annotations

import ctypes

__all__ = []  # everything is accessed as _uapi.NAME

# ---------------------------------------------------------------------------
# <asm-generic/ioctl.h>
# ---------------------------------------------------------------------------
_IOC_NRBITS = 8
_IOC_TYPEBITS = 8
_IOC_SIZEBITS = 14
_IOC_DIRBITS = 2

_IOC_NRMASK = (1 << _IOC_NRBITS) - 1
_IOC_TYPEMASK = (1 << _IOC_TYPEBITS) - 1
_IOC_SIZEMASK = (1 << _IOC_SIZEBITS) - 1
_IOC_DIRMASK = (1 << _IOC_DIRBITS) - 1

_IOC_NRSHIFT = 0
_IOC_TYPESHIFT = _IOC_NRSHIFT + _IOC_NRBITS
_IOC_SIZESHIFT = _IOC_TYPESHIFT + _IOC_TYPEBITS
_IOC_DIRSHIFT = _IOC_SIZESHIFT + _IOC_SIZEBITS

_IOC_NONE = 0
_IOC_WRITE = 1
_IOC_READ = 2


def _IOC(dir_: int, type_: int, nr: int, size: int) -> int:
    """Encode an ioctl number exactly as the kernel's ``_IOC()``."""
    if size > _IOC_SIZEMASK:
        raise ValueError("ioctl argument too large: %d bytes" % size)
    return ((dir_ << _IOC_DIRSHIFT) | (type_ << _IOC_TYPESHIFT) |
            (nr << _IOC_NRSHIFT) | (size << _IOC_SIZESHIFT))


def _IO(type_: int, nr: int) -> int:
    return _IOC(_IOC_NONE, type_, nr, 0)


def _IOR(type_: int, nr: int, struct) -> int:
    return _IOC(_IOC_READ, type_, nr, ctypes.sizeof(struct))


def _IOW(type_: int, nr: int, struct) -> int:
    return _IOC(_IOC_WRITE, type_, nr, ctypes.sizeof(struct))


def _IOWR(type_: int, nr: int, struct) -> int:
    return _IOC(_IOC_READ | _IOC_WRITE, type_, nr, ctypes.sizeof(struct))


def _IOC_DIR(nr: int) -> int:
    return (nr >> _IOC_DIRSHIFT) & _IOC_DIRMASK


def _IOC_TYPE(nr: int) -> int:
    return (nr >> _IOC_TYPESHIFT) & _IOC_TYPEMASK


def _IOC_NR(nr: int) -> int:
    return (nr >> _IOC_NRSHIFT) & _IOC_NRMASK


def _IOC_SIZE(nr: int) -> int:
    return (nr >> _IOC_SIZESHIFT) & _IOC_SIZEMASK


# The same, by names other modules may use.
IOC_READ, IOC_WRITE = _IOC_READ, _IOC_WRITE
ioc_dir, ioc_size = _IOC_DIR, _IOC_SIZE


# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------
DAVINCI_ABI_MAJOR = 1
DAVINCI_ABI_MINOR = 10     # 1: management ioctls; 2: DAVINCI_STATUS_MISALIGNED;
#                            3: polled rings, task graphs, trace ring;
#                            4: one TASKS_QUEUED record per take-in;
#                            5: the dispatcher's counters in mgmt info;
#                            6: the capability query (GET_CAP);
#                            7: INT64 BOOL INT8 UINT8, strided operands;
#                            8: TASK_HELP trace records;
#                            9: davinci_task.src2;
#                            10: CONV2D's bias (src2) and epilogue,
#                                DAVINCI_CAP_OP_SRC2,
#                                DAVINCI_STREAM_F_CONTINUE, STREAM_SET_FLAGS

DAVINCI_FEAT_USER_QUEUES = 1 << 0
DAVINCI_FEAT_EVENTS = 1 << 1
DAVINCI_FEAT_NOTIFICATIONS = 1 << 2
DAVINCI_FEAT_FP16 = 1 << 3
DAVINCI_FEAT_BF16 = 1 << 4
DAVINCI_FEAT_PINNED_HOST = 1 << 5
DAVINCI_FEAT_POLL = 1 << 6
DAVINCI_FEAT_MGMT = 1 << 7
DAVINCI_FEAT_MAP_HOLD = 1 << 8
DAVINCI_FEAT_LIMITS = 1 << 9
DAVINCI_FEAT_SQ_POLL = 1 << 10
DAVINCI_FEAT_GRAPHS = 1 << 11
DAVINCI_FEAT_TRACE = 1 << 12
DAVINCI_FEAT_RELU_GRAD = 1 << 13
DAVINCI_FEAT_TRAIN_OPS = 1 << 14    # LOG_SOFTMAX, SQRT, CMP
DAVINCI_FEAT_DISPATCH_STATS = 1 << 15   # davinci_mgmt_info.dispatch_*
DAVINCI_FEAT_CAPS = 1 << 16     # DAVINCI_IOCTL_GET_CAP: ops, dtypes served
DAVINCI_FEAT_PARAMS = 1 << 17   # davinci_task.params: parameter blocks
DAVINCI_FEAT_STREAM_CONTINUE = 1 << 18  # STREAM_F_CONTINUE, STREAM_SET_FLAGS
DAVINCI_PARAMS_MAX = 512        # bytes of the largest parameter block

# Capability queries (davinci_cap.query); see davinci.capabilities
DAVINCI_CAP_OPCODES = 0         # value: opcodes the driver knows
DAVINCI_CAP_OP_DTYPES = 1       # index opcode; value: dtype mask, 0 unserved
DAVINCI_CAP_OP_PARAMS = 2       # index opcode; value: param-block versions
DAVINCI_CAP_DTYPES = 3          # value: dtypes the driver knows
DAVINCI_CAP_OP_FLAGS = 4        # index opcode; value: task flags it takes
DAVINCI_CAP_STRIDED = 5         # value: davinci_params_strided versions
DAVINCI_CAP_OP_SRC2 = 6         # index opcode; value: 1 takes a src2

DAVINCI_NAME_LEN = 32
DAVINCI_VERSION_LEN = 32
DAVINCI_PATH_LEN = 256

DAVINCI_HEALTH_OK = 0
DAVINCI_HEALTH_WARNING = 1
DAVINCI_HEALTH_ALARM = 2
DAVINCI_HEALTH_CRITICAL = 3

DAVINCI_MEM_HUGE_FIRST = 0
DAVINCI_MEM_HUGE_ONLY = 1
DAVINCI_MEM_NORMAL_ONLY = 2
DAVINCI_MEM_POLICY_MASK = 0x3
DAVINCI_MEM_HOST = 1 << 8
DAVINCI_MEM_FLAGS_ALL = DAVINCI_MEM_POLICY_MASK | DAVINCI_MEM_HOST

DAVINCI_RING_ENTRIES_OFFSET = 64
DAVINCI_RING_MAX_ENTRIES = 4096

DAVINCI_STREAM_IDLE = 0
DAVINCI_STREAM_BUSY = 1
DAVINCI_STREAM_ERROR = 2

DAVINCI_TASK_QUEUED = 0
DAVINCI_TASK_RUNNING = 1
DAVINCI_TASK_DONE = 2

DAVINCI_EVENT_TIMING = 1 << 0
DAVINCI_EVENT_FLAGS_ALL = DAVINCI_EVENT_TIMING

DAVINCI_EVENT_NOT_RECORDED = 0
DAVINCI_EVENT_PENDING = 1
DAVINCI_EVENT_RECORDED = 2

DAVINCI_NOTIFY_COMPLETION = 1
DAVINCI_NOTIFY_USER = 2
DAVINCI_NOTIFY_FAULT = 3
DAVINCI_NOTIFY_DEVICE_LOST = 4

DAVINCI_MMAP_NODE = 0
DAVINCI_MMAP_FILE = 1
DAVINCI_ARENAS = 2

DAVINCI_MMAP_ARENA_SHIFT = 40


def DAVINCI_MMAP_ARENA(off: int) -> int:
    """Arena number encoded in an mmap offset."""
    return off >> DAVINCI_MMAP_ARENA_SHIFT


def DAVINCI_MMAP_ARENA_OFFSET(off: int) -> int:
    """Byte offset inside the arena encoded in an mmap offset."""
    return off & ((1 << DAVINCI_MMAP_ARENA_SHIFT) - 1)


# enum davinci_opcode and the ops' attribute enums (DAVINCI_CMP_*): from
# the op schema, kmod/core/ops.toml, as the header's generated part is
from . import _opschema  # noqa: E402
from ._opschema import *  # noqa: E402,F401,F403

# enum davinci_dtype
DAVINCI_DTYPE_FLOAT32 = 0
DAVINCI_DTYPE_FLOAT16 = 1
DAVINCI_DTYPE_BFLOAT16 = 2
DAVINCI_DTYPE_INT32 = 3
DAVINCI_DTYPE_INT64 = 4
DAVINCI_DTYPE_BOOL = 5
DAVINCI_DTYPE_INT8 = 6
DAVINCI_DTYPE_UINT8 = 7
DAVINCI_DTYPE_COUNT = 8

DAVINCI_TASK_F_NOTIFY = 1 << 0
DAVINCI_TASK_F_TRANS_A = 1 << 1
DAVINCI_TASK_F_TRANS_B = 1 << 2
DAVINCI_TASK_F_WAIT_NEXT = 1 << 3
DAVINCI_TASK_F_STRIDED = 1 << 4     # params: struct davinci_params_strided
DAVINCI_TASK_FLAGS_ALL = (DAVINCI_TASK_F_NOTIFY | DAVINCI_TASK_F_TRANS_A |
                          DAVINCI_TASK_F_TRANS_B | DAVINCI_TASK_F_WAIT_NEXT |
                          DAVINCI_TASK_F_STRIDED)

DAVINCI_STATUS_OK = 0
DAVINCI_STATUS_INVALID_ADDRESS = 1
DAVINCI_STATUS_INVALID_TASK = 2
DAVINCI_STATUS_ABORTED = 3
DAVINCI_STATUS_CANCELLED = 4
DAVINCI_STATUS_TIMEOUT = 5
DAVINCI_STATUS_ECC_ERROR = 6
DAVINCI_STATUS_DEVICE_LOST = 7
DAVINCI_STATUS_INVALID_EVENT = 8
DAVINCI_STATUS_MISALIGNED = 9    # operand not aligned to its element size
DAVINCI_STATUS_QUEUE_FAULT = 10  # polled SQ tail out of range

DAVINCI_IOCTL_BASE = 0xDA

# Management (manager node).
DAVINCI_MGMT_MAX_DEVICES = 64
DAVINCI_MGMT_MAX_PROCS = 32
DAVINCI_MGMT_MAX_EVENTS = 16
DAVINCI_MGMT_ALL_DEVICES = 0xFFFFFFFF

DAVINCI_FAULT_ECC = 1
DAVINCI_FAULT_HANG = 2
DAVINCI_FAULT_LOST = 3
DAVINCI_FAULT_THROTTLE = 4
DAVINCI_FAULT_KINDS = 8

DAVINCI_MGMT_EV_ADD = 1
DAVINCI_MGMT_EV_REMOVE = 2
DAVINCI_MGMT_EV_HEALTH = 3
DAVINCI_MGMT_EV_FAULT_INJECTED = 4
DAVINCI_MGMT_EV_FAULT = 5
DAVINCI_MGMT_EV_RESET = 6
DAVINCI_MGMT_EV_LOST = 7

# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------
_u8 = ctypes.c_uint8
_u16 = ctypes.c_uint16
_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64


class _Struct(ctypes.Structure):
    """Base: ``repr`` lists the fields, ``_asdict`` returns them."""

    def _asdict(self) -> dict:
        out = {}
        for name, ctype in self._fields_:
            val = getattr(self, name)
            if isinstance(val, ctypes.Array):
                val = list(val)
            out[name] = val
        return out

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % kv for kv in self._asdict().items()))


class davinci_version(_Struct):
    _fields_ = [
        ("abi_major", _u32),
        ("abi_minor", _u32),
        ("features", _u64),
        ("driver_version", ctypes.c_char * DAVINCI_VERSION_LEN),
        ("backend", ctypes.c_char * DAVINCI_NAME_LEN),
    ]


class davinci_device_info(_Struct):
    _fields_ = [
        ("index", _u32),
        ("aicores", _u32),
        ("hbm_total", _u64),
        ("hbm_free", _u64),
        ("host_total", _u64),
        ("host_free", _u64),
        ("task_timeout_ms", _u32),
        ("health", _u32),
        ("name", ctypes.c_char * DAVINCI_NAME_LEN),
        ("serial", ctypes.c_char * DAVINCI_NAME_LEN),
    ]


class davinci_limits(_Struct):
    _fields_ = [
        ("contexts_per_process", _u32),
        ("contexts_per_user", _u32),
        ("streams_per_context", _u32),
        ("events_per_context", _u32),
        ("tasks_per_stream", _u32),
        ("notifications_per_context", _u32),
        ("reserved", _u64 * 5),
    ]


class davinci_params_strided(_Struct):
    """The operands of a DAVINCI_TASK_F_STRIDED task (DOC: strided
    operands): strides of dst, src0 and src1, in elements."""
    _fields_ = [
        ("ndim", _u32),
        ("pad", _u32),
        ("sizes", _u64 * 8),
        ("strides", (_u64 * 8) * 3),
    ]


DAVINCI_PARAMS_STRIDED_VERSION = 1


#: a VPC picture's format (DOC: DVPP VPC): acldvppPixelFormat's numbers
DAVINCI_VPC_FMT_NV12 = 1
DAVINCI_VPC_FMT_NV21 = 2
DAVINCI_VPC_FMT_YUYV = 7
DAVINCI_VPC_FMT_RGB = 12
DAVINCI_VPC_FMT_BGR = 13
#: struct davinci_params_vpc_crop's interpolation
DAVINCI_VPC_BILINEAR = 0
DAVINCI_VPC_NEAREST = 1
DAVINCI_VPC_INTERP_COUNT = 2
#: VPC's picture limits
DAVINCI_VPC_MIN_WIDTH = 10
DAVINCI_VPC_MIN_HEIGHT = 6
DAVINCI_VPC_MAX_DIM = 4096
DAVINCI_VPC_MIN_WSTRIDE = 32
DAVINCI_VPC_MAX_WSTRIDE = 16384
DAVINCI_VPC_MAX_DIM_8K = 8192
DAVINCI_VPC_MAX_HSTRIDE_8K = 16384


#: struct davinci_jpegd_result's @subsampling (DOC: DVPP JPEGD)
DAVINCI_JPEGD_GREY = 0
DAVINCI_JPEGD_444 = 1
DAVINCI_JPEGD_422 = 2
DAVINCI_JPEGD_420 = 3
DAVINCI_JPEGD_440 = 4


class davinci_jpegd_result(_Struct):
    """What a JPEGD_DECODE task writes at its src1 (DOC: DVPP JPEGD)."""
    _fields_ = [
        ("error", ctypes.c_int32),
        ("width", _u32),
        ("height", _u32),
        ("components", _u32),
        ("subsampling", _u32),
        ("width_stride", _u32),
        ("height_stride", _u32),
        ("progressive", _u32),
        ("out_size", _u64),
    ]


class davinci_jpege_result(_Struct):
    """What a JPEGE_ENCODE task writes at its src1 (DOC: DVPP JPEGE)."""
    _fields_ = [
        ("error", ctypes.c_int32),
        ("pad", _u32),
        ("size", _u64),
    ]


class davinci_pngd_result(_Struct):
    """What a PNGD_DECODE task writes at its src1 (DOC: DVPP PNGD)."""
    _fields_ = [
        ("error", ctypes.c_int32),
        ("width", _u32),
        ("height", _u32),
        ("bit_depth", _u32),
        ("colour_type", _u32),
        ("interlace", _u32),
        ("components", _u32),
        ("channels", _u32),
        ("width_stride", _u32),
        ("height_stride", _u32),
        ("out_size", _u64),
    ]


#: struct davinci_aipp_config's @input_format and @switches (DOC: AIPP)
DAVINCI_AIPP_YUV420SP_U8 = 1
DAVINCI_AIPP_XRGB8888_U8 = 2
DAVINCI_AIPP_RGB888_U8 = 3
DAVINCI_AIPP_CSC = 1 << 0
DAVINCI_AIPP_RBUV_SWAP = 1 << 1
DAVINCI_AIPP_AX_SWAP = 1 << 2
DAVINCI_AIPP_CROP = 1 << 3
DAVINCI_AIPP_PADDING = 1 << 4
DAVINCI_AIPP_CONFIG_VERSION = 1


class davinci_aipp_config(_Struct):
    """What an AIPP task reads at its src1 (DOC: AIPP)."""
    _fields_ = [
        ("version", _u32),
        ("input_format", _u32),
        ("src_w", _u32),
        ("src_h", _u32),
        ("switches", _u32),
        ("matrix", ctypes.c_int32 * 9),
        ("input_bias", _u32 * 3),
        ("output_bias", _u32 * 3),
        ("crop_x", _u32),
        ("crop_y", _u32),
        ("crop_w", _u32),
        ("crop_h", _u32),
        ("pad_left", _u32),
        ("pad_right", _u32),
        ("pad_top", _u32),
        ("pad_bottom", _u32),
        ("padding_value", _u32),
        ("mean", ctypes.c_int32 * 4),
        ("min", _u32 * 4),
        ("var_reci", _u32 * 4),
        ("reserved", _u32 * 3),
    ]

def _params_struct(op: dict) -> type:
    """struct davinci_params_<op>, from the op schema as the header's is."""
    ctype = {"u32": _u32, "u64": _u64}
    fields = [(f["name"], ctype[f["type"]] * f["count"] if f.get("count", 1)
               > 1 else ctype[f["type"]]) for f in op["params"]["fields"]]
    return type("davinci_params_" + op["name"].lower(), (_Struct,),
                {"_fields_": fields})


#: the parameter blocks' structs, by their C names
PARAMS_STRUCTS = {cls.__name__: cls for cls in (
    _params_struct(op) for op in _opschema.OPS
    if op.get("params") and not op.get("params_of"))}
globals().update(PARAMS_STRUCTS)


class davinci_cap(_Struct):
    _fields_ = [
        ("query", _u32),
        ("index", _u32),
        ("value", _u64),
        ("reserved", _u64 * 2),
    ]


class davinci_mem_alloc(_Struct):
    _fields_ = [
        ("size", _u64),
        ("flags", _u32),
        ("pad", _u32),
        ("handle", _u64),
        ("dev_addr", _u64),
        ("mmap_offset", _u64),
        ("alloc_size", _u64),
    ]


class davinci_mem_free(_Struct):
    _fields_ = [
        ("handle", _u64),
    ]


class davinci_mem_query(_Struct):
    _fields_ = [
        ("handle", _u64),
        ("dev_addr", _u64),
        ("size", _u64),
        ("alloc_size", _u64),
        ("mmap_offset", _u64),
        ("flags", _u32),
        ("pad", _u32),
    ]


class davinci_mem_info(_Struct):
    _fields_ = [
        ("flags", _u32),
        ("pad", _u32),
        ("total", _u64),
        ("free", _u64),
        ("largest_free", _u64),
        ("ctx_used", _u64),
        ("ctx_allocations", _u64),
    ]


class davinci_ring_header(_Struct):
    _fields_ = [
        ("head", _u32),
        ("tail", _u32),
        ("entries", _u32),
        ("overflow", _u32),
        ("flags", _u32),
        ("status", _u32),
        ("seq", _u64),
        ("reserved", _u32 * 8),
    ]


DAVINCI_RING_F_NEED_WAKEUP = 1 << 0
DAVINCI_STREAM_F_POLLED = 1 << 0
DAVINCI_STREAM_F_CONTINUE = 1 << 1     # a failed task does not stop it
DAVINCI_STREAM_FLAGS_ALL = DAVINCI_STREAM_F_POLLED | DAVINCI_STREAM_F_CONTINUE
DAVINCI_STREAM_FLAGS_MUTABLE = DAVINCI_STREAM_F_CONTINUE


class davinci_stream_create(_Struct):
    _fields_ = [
        ("sq_entries", _u32),
        ("cq_entries", _u32),
        ("priority", _u32),
        ("flags", _u32),
        ("stream_id", _u32),
        ("pad", _u32),
        ("sq_mmap_offset", _u64),
        ("cq_mmap_offset", _u64),
        ("sq_size", _u64),
        ("cq_size", _u64),
    ]


class davinci_stream_id(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("pad", _u32),
    ]


class davinci_stream_flags(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("flags", _u32),
    ]


class davinci_doorbell(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("sq_tail", _u32),
        ("first_seq", _u64),
        ("last_seq", _u64),
    ]


class davinci_stream_wait(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("timeout_ms", _u32),
        ("seq", _u64),
        ("status", _u32),
        ("pad", _u32),
        ("completed_seq", _u64),
    ]


class davinci_stream_query(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("state", _u32),
        ("submitted_seq", _u64),
        ("completed_seq", _u64),
        ("error_status", _u32),
        ("priority", _u32),
    ]


class davinci_task_query(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("pad", _u32),
        ("seq", _u64),
        ("state", _u32),
        ("status", _u32),
        ("start_ns", _u64),
        ("end_ns", _u64),
    ]


class davinci_sync(_Struct):
    _fields_ = [
        ("timeout_ms", _u32),
        ("status", _u32),
    ]


DAVINCI_GRAPH_MAX_TASKS = 16384
DAVINCI_GRAPH_MAX = 1024


class davinci_graph_capture(_Struct):
    _fields_ = [
        ("stream_id", _u32),
        ("graph_id", _u32),
        ("tasks", _u32),
        ("pad", _u32),
    ]


class davinci_graph_launch(_Struct):
    _fields_ = [
        ("graph_id", _u32),
        ("stream_id", _u32),
        ("first_seq", _u64),
        ("last_seq", _u64),
    ]


class davinci_graph_id(_Struct):
    _fields_ = [
        ("graph_id", _u32),
        ("pad", _u32),
    ]


class davinci_event_create(_Struct):
    _fields_ = [
        ("flags", _u32),
        ("event_id", _u32),
    ]


class davinci_event_id(_Struct):
    _fields_ = [
        ("event_id", _u32),
        ("pad", _u32),
    ]


class davinci_event_query(_Struct):
    _fields_ = [
        ("event_id", _u32),
        ("state", _u32),
        ("timestamp_ns", _u64),
        ("records_submitted", _u64),
        ("records_completed", _u64),
    ]


class davinci_event_wait(_Struct):
    _fields_ = [
        ("event_id", _u32),
        ("timeout_ms", _u32),
    ]


class davinci_notification(_Struct):
    _fields_ = [
        ("timeout_ms", _u32),
        ("type", _u32),
        ("stream_id", _u32),
        ("status", _u32),
        ("seq", _u64),
        ("user_data", _u64),
        ("timestamp_ns", _u64),
        ("dropped", _u32),
        ("pad", _u32),
    ]


class davinci_mmap_info(_Struct):
    _fields_ = [
        ("method", _u32),
        ("pad", _u32),
        ("arena_path", (ctypes.c_char * DAVINCI_PATH_LEN) * DAVINCI_ARENAS),
    ]


class davinci_map_hold(_Struct):
    _fields_ = [
        ("mmap_offset", _u64),
        ("length", _u64),
        ("handle", _u64),
    ]


DAVINCI_MAX_MAP_HOLDS = 65536


class davinci_map_release(_Struct):
    _fields_ = [
        ("handle", _u64),
    ]


class davinci_task(_Struct):
    _fields_ = [
        ("opcode", _u16),
        ("dtype", _u8),
        ("dst_dtype", _u8),
        ("pad0", _u32),
        ("flags", _u32),
        ("event_id", _u32),
        ("user_data", _u64),
        ("dst", _u64),
        ("src0", _u64),
        ("src1", _u64),
        ("count", _u64),
        ("m", _u32),
        ("n", _u32),
        ("k", _u32),
        ("imm", _u32),
        ("params", _u64),
        ("params_size", _u32),
        ("params_version", _u32),
        ("src2", _u64),
        ("reserved", _u64 * 4),
    ]


class davinci_completion(_Struct):
    _fields_ = [
        ("seq", _u64),
        ("user_data", _u64),
        ("start_ns", _u64),
        ("end_ns", _u64),
        ("status", _u32),
        ("opcode", _u16),
        ("aicore", _u16),
        ("reserved", _u64 * 3),
    ]


DAVINCI_TRACE_CAPACITY = 16384
DAVINCI_TRACE_NO_CORE = 0xFFFF
DAVINCI_TRACE_DOORBELL = 1
DAVINCI_TRACE_TASK_START = 3
DAVINCI_TRACE_TASK_COMPLETE = 4
DAVINCI_TRACE_MEM_ALLOC = 5
DAVINCI_TRACE_MEM_FREE = 6
DAVINCI_TRACE_EVENT_RECORD = 7
DAVINCI_TRACE_EVENT_WAIT = 8
DAVINCI_TRACE_MGMT = 9
DAVINCI_TRACE_CTX_RESET = 10
DAVINCI_TRACE_CTX_FAIL = 11
DAVINCI_TRACE_TASKS_QUEUED = 12
DAVINCI_TRACE_TASK_HELP = 13
DAVINCI_TRACE_READ_MAX = 48
DAVINCI_TRACE_F_ENABLE = 1 << 0
DAVINCI_TRACE_F_DISABLE = 1 << 1


class davinci_trace_record(_Struct):
    _fields_ = [
        ("timestamp_ns", _u64),
        ("seq", _u64),
        ("arg0", _u64),
        ("arg1", _u64),
        ("arg2", _u64),
        ("type", _u32),
        ("pid", _u32),
        ("id", _u32),
        ("status", _u32),
        ("opcode", _u16),
        ("aicore", _u16),
        ("pad", _u32),
    ]


class davinci_trace_read(_Struct):
    _fields_ = [
        ("since", _u64),
        ("next", _u64),
        ("dropped", _u64),
        ("written", _u64),
        ("flags", _u32),
        ("count", _u32),
        ("enabled", _u32),
        ("capacity", _u32),
        ("rec", davinci_trace_record * DAVINCI_TRACE_READ_MAX),
    ]


class davinci_mgmt_list(_Struct):
    _fields_ = [
        ("count", _u32),
        ("pad", _u32),
        ("index", _u32 * DAVINCI_MGMT_MAX_DEVICES),
    ]


class davinci_mgmt_info(_Struct):
    _fields_ = [
        ("index", _u32),
        ("health", _u32),
        ("aicores", _u32),
        ("aicore_util", _u32),
        ("power_mw", _u32),
        ("temp_mc", _u32),
        ("hbm_total", _u64),
        ("hbm_used", _u64),
        ("host_total", _u64),
        ("host_used", _u64),
        ("huge_total", _u32),
        ("huge_used", _u32),
        ("processes", _u32),
        ("task_timeout_ms", _u32),
        ("throttle_pct", _u32),
        ("board_id", _u32),
        ("fault_armed", _u32),
        ("resets", _u32),
        ("faults_fired", _u32 * DAVINCI_FAULT_KINDS),
        ("tasks_completed", _u64),
        ("busy_ns", _u64),
        ("name", ctypes.c_char * DAVINCI_NAME_LEN),
        ("serial", ctypes.c_char * DAVINCI_NAME_LEN),
        ("board_name", ctypes.c_char * DAVINCI_NAME_LEN),
        ("firmware_version", ctypes.c_char * DAVINCI_VERSION_LEN),
        ("driver_version", ctypes.c_char * DAVINCI_VERSION_LEN),
        ("bus_id", ctypes.c_char * DAVINCI_NAME_LEN),
        ("dispatch_sleeps", _u64),
        ("dispatch_cpu_wanted", _u64),
        ("dispatch_kicks", _u64),
        ("dispatch_grows", _u64),
        ("dispatch_shrinks", _u64),
        ("dispatch_idle_ns", _u64),
    ]


class davinci_mgmt_proc(_Struct):
    _fields_ = [
        ("pid", _u32),
        ("streams", _u32),
        ("hbm_bytes", _u64),
        ("host_bytes", _u64),
    ]


class davinci_mgmt_procs(_Struct):
    _fields_ = [
        ("index", _u32),
        ("count", _u32),
        ("total", _u32),
        ("pad", _u32),
        ("proc", davinci_mgmt_proc * DAVINCI_MGMT_MAX_PROCS),
    ]


class davinci_mgmt_reset(_Struct):
    _fields_ = [
        ("index", _u32),
        ("flags", _u32),
        ("contexts", _u32),
        ("pad", _u32),
    ]


class davinci_mgmt_fault(_Struct):
    _fields_ = [
        ("index", _u32),
        ("kind", _u32),
        ("addr", _u64),
        ("size", _u64),
        ("level", _u32),
        ("timeout_ms", _u32),
        ("flags", _u32),
        ("pad", _u32),
    ]


class davinci_mgmt_event(_Struct):
    _fields_ = [
        ("seq", _u64),
        ("timestamp_ns", _u64),
        ("device", _u32),
        ("type", _u32),
        ("fault", _u32),
        ("status", _u32),
        ("health", _u32),
        ("old_health", _u32),
        ("addr", _u64),
        ("value", _u64),
        ("reserved", _u64),
    ]


class davinci_mgmt_events(_Struct):
    _fields_ = [
        ("since_seq", _u64),
        ("device", _u32),
        ("count", _u32),
        ("next_seq", _u64),
        ("overflow", _u32),
        ("pad", _u32),
        ("ev", davinci_mgmt_event * DAVINCI_MGMT_MAX_EVENTS),
    ]


#: Every struct of the uapi header, by its C name (checked by the ABI test).
STRUCTS = {cls.__name__: cls for cls in (
    davinci_version, davinci_device_info, davinci_limits, davinci_cap,
    davinci_params_strided, *PARAMS_STRUCTS.values(), davinci_jpegd_result,
    davinci_jpege_result,
    davinci_pngd_result,
    davinci_aipp_config,
    davinci_mem_alloc, davinci_mem_free,
    davinci_mem_query, davinci_mem_info, davinci_ring_header,
    davinci_stream_create, davinci_stream_id, davinci_stream_flags,
    davinci_doorbell,
    davinci_stream_wait, davinci_stream_query, davinci_task_query,
    davinci_sync, davinci_graph_capture, davinci_graph_launch,
    davinci_graph_id, davinci_event_create, davinci_event_id,
    davinci_event_query, davinci_event_wait, davinci_notification,
    davinci_mmap_info, davinci_map_hold, davinci_map_release, davinci_task,
    davinci_completion, davinci_mgmt_list, davinci_mgmt_info, davinci_mgmt_proc,
    davinci_mgmt_procs, davinci_mgmt_reset, davinci_mgmt_fault,
    davinci_mgmt_event, davinci_mgmt_events,
    davinci_trace_record, davinci_trace_read)}

# ---------------------------------------------------------------------------
# ioctl numbers
# ---------------------------------------------------------------------------
_B = DAVINCI_IOCTL_BASE
DAVINCI_IOCTL_GET_VERSION = _IOR(_B, 0x00, davinci_version)
DAVINCI_IOCTL_DEVICE_INFO = _IOR(_B, 0x01, davinci_device_info)
DAVINCI_IOCTL_MMAP_INFO = _IOR(_B, 0x02, davinci_mmap_info)
DAVINCI_IOCTL_CTX_RESET = _IO(_B, 0x03)
DAVINCI_IOCTL_MAP_HOLD = _IOWR(_B, 0x04, davinci_map_hold)
DAVINCI_IOCTL_MAP_RELEASE = _IOW(_B, 0x05, davinci_map_release)
DAVINCI_IOCTL_GET_LIMITS = _IOR(_B, 0x06, davinci_limits)
DAVINCI_IOCTL_TRACE_READ = _IOWR(_B, 0x07, davinci_trace_read)
DAVINCI_IOCTL_GET_CAP = _IOWR(_B, 0x08, davinci_cap)
DAVINCI_IOCTL_MEM_ALLOC = _IOWR(_B, 0x10, davinci_mem_alloc)
DAVINCI_IOCTL_MEM_FREE = _IOW(_B, 0x11, davinci_mem_free)
DAVINCI_IOCTL_MEM_QUERY = _IOWR(_B, 0x12, davinci_mem_query)
DAVINCI_IOCTL_MEM_INFO = _IOWR(_B, 0x13, davinci_mem_info)
DAVINCI_IOCTL_STREAM_CREATE = _IOWR(_B, 0x20, davinci_stream_create)
DAVINCI_IOCTL_STREAM_DESTROY = _IOW(_B, 0x21, davinci_stream_id)
DAVINCI_IOCTL_DOORBELL = _IOWR(_B, 0x22, davinci_doorbell)
DAVINCI_IOCTL_STREAM_WAIT = _IOWR(_B, 0x23, davinci_stream_wait)
DAVINCI_IOCTL_STREAM_RESET = _IOW(_B, 0x24, davinci_stream_id)
DAVINCI_IOCTL_STREAM_QUERY = _IOWR(_B, 0x25, davinci_stream_query)
DAVINCI_IOCTL_TASK_QUERY = _IOWR(_B, 0x26, davinci_task_query)
DAVINCI_IOCTL_TASK_CANCEL = _IOWR(_B, 0x27, davinci_task_query)
DAVINCI_IOCTL_SYNC = _IOWR(_B, 0x28, davinci_sync)
DAVINCI_IOCTL_GRAPH_CAPTURE = _IOWR(_B, 0x29, davinci_graph_capture)
DAVINCI_IOCTL_GRAPH_END = _IOWR(_B, 0x2a, davinci_graph_capture)
DAVINCI_IOCTL_GRAPH_LAUNCH = _IOWR(_B, 0x2b, davinci_graph_launch)
DAVINCI_IOCTL_GRAPH_DESTROY = _IOW(_B, 0x2c, davinci_graph_id)
DAVINCI_IOCTL_STREAM_SET_FLAGS = _IOW(_B, 0x2d, davinci_stream_flags)
DAVINCI_IOCTL_EVENT_CREATE = _IOWR(_B, 0x30, davinci_event_create)
DAVINCI_IOCTL_EVENT_DESTROY = _IOW(_B, 0x31, davinci_event_id)
DAVINCI_IOCTL_EVENT_QUERY = _IOWR(_B, 0x32, davinci_event_query)
DAVINCI_IOCTL_EVENT_SIGNAL = _IOW(_B, 0x33, davinci_event_id)
DAVINCI_IOCTL_EVENT_WAIT = _IOW(_B, 0x34, davinci_event_wait)
DAVINCI_IOCTL_NOTIFY_WAIT = _IOWR(_B, 0x40, davinci_notification)
DAVINCI_IOCTL_MGMT_LIST = _IOR(_B, 0x80, davinci_mgmt_list)
DAVINCI_IOCTL_MGMT_INFO = _IOWR(_B, 0x81, davinci_mgmt_info)
DAVINCI_IOCTL_MGMT_PROCS = _IOWR(_B, 0x82, davinci_mgmt_procs)
DAVINCI_IOCTL_MGMT_RESET = _IOWR(_B, 0x83, davinci_mgmt_reset)
DAVINCI_IOCTL_MGMT_INJECT = _IOW(_B, 0x84, davinci_mgmt_fault)
DAVINCI_IOCTL_MGMT_EVENTS = _IOWR(_B, 0x85, davinci_mgmt_events)
del _B

#: Every ioctl number, by its C name (checked by the ABI test).
IOCTLS = {name: value for name, value in globals().items()
          if name.startswith("DAVINCI_IOCTL_") and name != "DAVINCI_IOCTL_BASE"}

#: ioctl number -> argument struct (None for _IO ioctls).
IOCTL_STRUCTS = {
    DAVINCI_IOCTL_GET_VERSION: davinci_version,
    DAVINCI_IOCTL_DEVICE_INFO: davinci_device_info,
    DAVINCI_IOCTL_MMAP_INFO: davinci_mmap_info,
    DAVINCI_IOCTL_CTX_RESET: None,
    DAVINCI_IOCTL_MAP_HOLD: davinci_map_hold,
    DAVINCI_IOCTL_MAP_RELEASE: davinci_map_release,
    DAVINCI_IOCTL_GET_LIMITS: davinci_limits,
    DAVINCI_IOCTL_TRACE_READ: davinci_trace_read,
    DAVINCI_IOCTL_GET_CAP: davinci_cap,
    DAVINCI_IOCTL_MEM_ALLOC: davinci_mem_alloc,
    DAVINCI_IOCTL_MEM_FREE: davinci_mem_free,
    DAVINCI_IOCTL_MEM_QUERY: davinci_mem_query,
    DAVINCI_IOCTL_MEM_INFO: davinci_mem_info,
    DAVINCI_IOCTL_STREAM_CREATE: davinci_stream_create,
    DAVINCI_IOCTL_STREAM_DESTROY: davinci_stream_id,
    DAVINCI_IOCTL_DOORBELL: davinci_doorbell,
    DAVINCI_IOCTL_STREAM_WAIT: davinci_stream_wait,
    DAVINCI_IOCTL_STREAM_RESET: davinci_stream_id,
    DAVINCI_IOCTL_STREAM_QUERY: davinci_stream_query,
    DAVINCI_IOCTL_TASK_QUERY: davinci_task_query,
    DAVINCI_IOCTL_TASK_CANCEL: davinci_task_query,
    DAVINCI_IOCTL_SYNC: davinci_sync,
    DAVINCI_IOCTL_GRAPH_CAPTURE: davinci_graph_capture,
    DAVINCI_IOCTL_GRAPH_END: davinci_graph_capture,
    DAVINCI_IOCTL_GRAPH_LAUNCH: davinci_graph_launch,
    DAVINCI_IOCTL_GRAPH_DESTROY: davinci_graph_id,
    DAVINCI_IOCTL_STREAM_SET_FLAGS: davinci_stream_flags,
    DAVINCI_IOCTL_EVENT_CREATE: davinci_event_create,
    DAVINCI_IOCTL_EVENT_DESTROY: davinci_event_id,
    DAVINCI_IOCTL_EVENT_QUERY: davinci_event_query,
    DAVINCI_IOCTL_EVENT_SIGNAL: davinci_event_id,
    DAVINCI_IOCTL_EVENT_WAIT: davinci_event_wait,
    DAVINCI_IOCTL_NOTIFY_WAIT: davinci_notification,
    DAVINCI_IOCTL_MGMT_LIST: davinci_mgmt_list,
    DAVINCI_IOCTL_MGMT_INFO: davinci_mgmt_info,
    DAVINCI_IOCTL_MGMT_PROCS: davinci_mgmt_procs,
    DAVINCI_IOCTL_MGMT_RESET: davinci_mgmt_reset,
    DAVINCI_IOCTL_MGMT_INJECT: davinci_mgmt_fault,
    DAVINCI_IOCTL_MGMT_EVENTS: davinci_mgmt_events,
}

#: ioctl number -> short name ("MEM_ALLOC"), for messages.
IOCTL_NAMES = {v: k[len("DAVINCI_IOCTL_"):] for k, v in IOCTLS.items()}

#: Status code -> name ("INVALID_ADDRESS").
STATUS_NAMES = {v: k[len("DAVINCI_STATUS_"):] for k, v in list(globals().items())
                if k.startswith("DAVINCI_STATUS_")}

#: Opcode -> name ("MATMUL").
#: opcode -> its name in the op schema ("ADD"), as the trace names tasks
OP_NAMES = {op["opcode"]: op["name"] for op in _opschema.OPS}

#: All integer constants of the header (checked by the ABI test).
CONSTANTS = {k: v for k, v in list(globals().items())
             if k.startswith("DAVINCI_") and isinstance(v, int)
             and not k.startswith("DAVINCI_IOCTL_")}
CONSTANTS["DAVINCI_IOCTL_BASE"] = DAVINCI_IOCTL_BASE


def cstr(value: bytes) -> str:
    """Decode a NUL-terminated ``char[]`` field."""
    return bytes(value).split(b"\0", 1)[0].decode("utf-8", "replace")

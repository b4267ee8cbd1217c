# SPDX-License-Identifier: GPL-2.0
"""acl.rt tasks: the seed article's launch_task,
register_interrupt_callback and launch_task_with_interrupt (a
compatibility layer: one op a task, described by a dict)."""

from __future__ import annotations

import davinci
from davinci.callbacks import Entry
from davinci.device import NotificationType
# _uapi is davinci's ctypes mirror of the uapi header (Decision 8): the
# ABI's op codes, data types and notification types; davinci names it no
# other way.
from davinci import _uapi as U

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api
from .memory import operand

__all__ = ["launch_task", "register_interrupt_callback",
           "launch_task_with_interrupt"]

_SEED_OPS = {
    "VectorAdd": U.DAVINCI_OP_ADD, "Add": U.DAVINCI_OP_ADD,
    "VectorSub": U.DAVINCI_OP_SUB, "Sub": U.DAVINCI_OP_SUB,
    "VectorMul": U.DAVINCI_OP_MUL, "Mul": U.DAVINCI_OP_MUL,
    "VectorDiv": U.DAVINCI_OP_DIV, "RealDiv": U.DAVINCI_OP_DIV,
    "VectorMax": U.DAVINCI_OP_MAX, "Maximum": U.DAVINCI_OP_MAX,
    "VectorMin": U.DAVINCI_OP_MIN, "Minimum": U.DAVINCI_OP_MIN,
    "Relu": U.DAVINCI_OP_RELU, "Exp": U.DAVINCI_OP_EXP,
}
_UNARY = (U.DAVINCI_OP_RELU, U.DAVINCI_OP_EXP)
_ACL_TO_DV = {C.ACL_FLOAT: (U.DAVINCI_DTYPE_FLOAT32, 4),
              C.ACL_FLOAT16: (U.DAVINCI_DTYPE_FLOAT16, 2),
              C.ACL_BF16: (U.DAVINCI_DTYPE_BFLOAT16, 2),
              C.ACL_INT32: (U.DAVINCI_DTYPE_INT32, 4)}

#: interrupt types passed to register_interrupt_callback's callback
RT_INTERRUPT_TASK_DONE = int(NotificationType.COMPLETION)
RT_INTERRUPT_TASK_FAULT = int(NotificationType.FAULT)
_interrupt = {"fn": None, "user_data": None}


def _seed_task(task_config):
    if not isinstance(task_config, dict):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "task_config must be a dict such as {'op_type': "
                      "'VectorAdd', 'input_x': ptr_x, 'input_y': ptr_y, "
                      "'output_z': ptr_z, 'count': n}")
    op = task_config.get("op_type")
    opcode = _SEED_OPS.get(op)
    if opcode is None:
        raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                      "unknown op_type %r: use one of %s"
                      % (op, ", ".join(sorted(_SEED_OPS))))
    count = task_config.get("count")
    if not isinstance(count, int) or count <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "task_config['count'] must be a positive int, not %r"
                      % (count,))
    dt = task_config.get("dtype", C.ACL_FLOAT)
    if dt not in _ACL_TO_DV:
        raise AclFail(C.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                      "dtype %r not supported: use ACL_FLOAT, ACL_FLOAT16, "
                      "ACL_BF16 or ACL_INT32" % (dt,))
    code, size = _ACL_TO_DV[dt]
    nbytes = count * size
    for k in ("input_x", "output_z") + (() if opcode in _UNARY
                                        else ("input_y",)):
        if k not in task_config:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "task_config has no %r" % k)
    x = operand(task_config["input_x"], nbytes, "input_x")
    z = operand(task_config["output_z"], nbytes, "output_z")
    y = 0 if opcode in _UNARY else operand(task_config["input_y"], nbytes,
                                           "input_y")
    return davinci.make_task(opcode, dtype=code, dst=z, src0=x, src1=y,
                             count=count)


@api(1, (0,))
def launch_task(stream, task_config):
    """(task_id, ret): the seed's call. Enqueues one op described by a dict
    (op_type VectorAdd/Add, Sub, Mul, RealDiv, Maximum, Minimum, Relu, Exp;
    input_x, input_y, output_z device pointers; count elements; dtype an
    ACL_* type, default ACL_FLOAT). task_id is the task's sequence number in
    its stream."""
    s = S.get_stream(stream)
    return s.stream.launch(_seed_task(task_config))


@api()
def register_interrupt_callback(fn, user_data=None):
    """The seed's call: ``fn(interrupt_type, task_id, user_data)`` runs on
    the device's callback thread for every task launched with
    launch_task_with_interrupt: interrupt_type RT_INTERRUPT_TASK_DONE (1),
    after RT_INTERRUPT_TASK_FAULT (3) when the task failed. ``fn`` None
    unregisters."""
    if fn is not None and not callable(fn):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "interrupt callback must be callable or None")
    _interrupt["fn"] = fn
    _interrupt["user_data"] = user_data


class _Interrupt(Entry):
    def __init__(self, disp, stream_id):
        self.disp = disp
        self.stream_id = stream_id
        self.fn = _interrupt["fn"]
        self.user_data = _interrupt["user_data"]
        self.task_id = 0

    def deliver(self, n) -> bool:
        if n.type in (NotificationType.COMPLETION, NotificationType.FAULT):
            if self.fn is not None:
                self.disp.execute(self.fn, int(n.type), int(n.seq),
                                  self.user_data)
        return n.type == NotificationType.COMPLETION


@api(1, (0,))
def launch_task_with_interrupt(stream, task_config):
    """(task_id, ret): as launch_task, and the device interrupts the host
    when the task completes: the callback of register_interrupt_callback
    runs on the callback thread."""
    s = S.get_stream(stream)
    if _interrupt["fn"] is None:
        raise AclFail(C.ACL_ERROR_RT_STREAM_NO_CB_REG,
                      "no interrupt callback: call "
                      "acl.rt.register_interrupt_callback(fn, user_data) "
                      "first")
    t = _seed_task(task_config)
    disp = s.stream.device.callbacks
    entry = _Interrupt(disp, s.stream.stream_id)
    ud = disp.notify_task(entry, t)
    try:
        seq = s.stream.launch(t)
    except BaseException:
        disp.unregister(ud)
        raise
    entry.task_id = seq
    return seq

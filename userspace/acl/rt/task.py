# SPDX-License-Identifier: GPL-2.0
"""acl.rt tasks: the seed article's launch_task,
register_interrupt_callback and launch_task_with_interrupt (a
compatibility layer: one op a task, described by a dict). Its ops are the
elementwise ops of the device's schema (davinci.schema) by their CANN
names, as acl.op runs them, and the seed's Vector* names."""

from __future__ import annotations

from davinci import opdesc, schema
from davinci.callbacks import Entry
from davinci.device import NotificationType

from .. import _state as S
from .. import constants as C
from .. import _opargs as acl_op
from .._state import AclFail, api
from .memory import operand

__all__ = ["launch_task", "register_interrupt_callback",
           "launch_task_with_interrupt"]

#: the seed article's names of CANN operators
_SEED_NAMES = {"VectorAdd": "Add", "VectorSub": "Sub", "VectorMul": "Mul",
               "VectorDiv": "RealDiv", "VectorMax": "Maximum",
               "VectorMin": "Minimum"}
#: the kinds of op one dict describes: count elements, one or two inputs
_ELEMENTWISE = ("binary", "unary")
_SEED_TYPES = sorted(list(_SEED_NAMES) + [
    name for op in schema.COMPUTE_OPS if op.kind in _ELEMENTWISE
    for name in op.acl])

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
    name = task_config.get("op_type")
    cann = _SEED_NAMES.get(name, name)
    op = schema.by_acl(cann) if isinstance(cann, str) else None
    if op is None or op.kind not in _ELEMENTWISE:
        raise AclFail(C.ACL_ERROR_OP_NOT_FOUND,
                      "unknown op_type %r: use one of %s"
                      % (name, ", ".join(_SEED_TYPES)))
    count = task_config.get("count")
    if not isinstance(count, int) or count <= 0:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "task_config['count'] must be a positive int, not %r"
                      % (count,))
    dt = task_config.get("dtype", C.ACL_FLOAT)
    if dt not in acl_op.DEVICE_DTYPES:
        raise AclFail(C.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
                      "dtype %r not supported: use ACL_FLOAT, ACL_FLOAT16, "
                      "ACL_BF16 or ACL_INT32" % (dt,))
    nbytes = count * opdesc.ITEMSIZES[acl_op.DEVICE_DTYPES[dt]]
    inputs = ("input_x", "input_y")[:opdesc.SOURCES[op.kind]]
    for k in inputs + ("output_z",):
        if k not in task_config:
            raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                          "task_config has no %r" % k)
    ins = [acl_op.Operand(operand(task_config[k], nbytes, k), k)
           for k in inputs]
    z = acl_op.Operand(operand(task_config["output_z"], nbytes, "output_z"),
                       "output_z")
    # an attribute the name does not fix (Axpy's alpha) is a key of its own
    return acl_op.describe(op, cann, dt, z,
                           [ins[i] for i in op.acl_order(cann)], count=count,
                           attr=acl_op.attribute(op, cann, task_config))


@api(1, (0,))
def launch_task(stream, task_config):
    """(task_id, ret): the seed's call. Enqueues one op described by a dict
    (op_type: VectorAdd, VectorSub, VectorMul, VectorDiv, VectorMax,
    VectorMin or a CANN name of an elementwise op of acl.op, Add, Relu,
    Less, ...; input_x, input_y (CANN's first and second input), output_z
    device pointers; count elements; dtype an ACL_* type, default
    ACL_FLOAT; an attribute the name does not fix under its own key, Axpy's
    float alpha). task_id is the task's sequence number in its stream."""
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

# SPDX-License-Identifier: GPL-2.0
"""acl.rt contexts: create_context, destroy_context, set_context,
get_context."""

from __future__ import annotations

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api
from .device import check_id, open_device

__all__ = ["create_context", "destroy_context", "set_context", "get_context"]


@api(1, (0,))
def create_context(device_id):
    """(context, ret): a new context on ``device_id``, made current."""
    # creating a context sets the device implicitly, as aclrtCreateContext
    d = open_device(check_id(device_id))
    ctx = S.AclContext(d)
    S.contexts[ctx.handle] = ctx
    S.set_current_context(ctx)
    return ctx.handle


@api()
def destroy_context(context):
    """Destroy a context made by create_context (its streams go with it)."""
    ctx = S.contexts.get(context)
    if ctx is None or ctx.default:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "context %r was not made by acl.rt.create_context or is "
                      "already destroyed" % (context,))
    for h, s in list(S.streams.items()):
        if s.ctx is ctx:
            s.stream.destroy()
            del S.streams[h]
    del S.contexts[context]
    if S.current_context() is ctx:
        S.set_current_context(None)
    d = ctx.device
    d.refs -= 1
    if d.refs <= 0:
        S.release_device(d)


@api()
def set_context(context):
    """Make ``context`` current in this thread."""
    ctx = S.contexts.get(context)
    if ctx is None:
        raise AclFail(C.ACL_ERROR_RT_INVALID_HANDLE,
                      "context %r does not exist" % (context,))
    S.set_current_context(ctx)


@api(1, (0,))
def get_context():
    """(context, ret) current in this thread."""
    return S.require_context().handle

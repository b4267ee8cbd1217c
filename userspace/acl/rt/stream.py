# SPDX-License-Identifier: GPL-2.0
"""acl.rt streams: create, destroy, synchronize and query them."""

from __future__ import annotations

import davinci

from .. import _state as S
from .. import constants as C
from .._state import AclFail, api
from .callback import forget_subscription

__all__ = ["create_stream", "create_stream_with_config", "destroy_stream",
           "synchronize_stream", "synchronize_stream_with_timeout",
           "stream_synchronize", "query_stream_status",
           "set_stream_failure_mode"]


def _new_stream(priority=0, wait_mode=None) -> int:
    ctx = S.require_context()
    return S.register(S.streams,
                      S.AclStream(ctx, int(priority), wait_mode))


@api(1, (0,))
def create_stream():
    """(stream, ret) in the current context."""
    return _new_stream()


@api(1, (0,))
def create_stream_with_config(priority=0, flag=0):
    """(stream, ret) with a priority (0 highest .. 7 lowest), clamped as
    CANN does. ``flag``: ACL_STREAM_FAST_SYNC makes synchronize_stream
    poll for completion instead of sleeping (davinci's ``spin`` wait
    mode); ACL_STREAM_FAST_LAUNCH is what every davinci stream does
    already (its rings are allocated at creation); other bits are
    ignored, as CANN ignores them."""
    fast_sync = int(flag) & C.ACL_STREAM_FAST_SYNC
    return _new_stream(min(max(int(priority), 0), 7),
                       davinci.WaitMode.SPIN if fast_sync else None)


@api()
def destroy_stream(stream):
    """Destroy a stream (queued tasks are cancelled)."""
    s = S.take_handle(S.streams, "stream", stream)
    forget_subscription(s)
    s.stream.destroy()


def _sync_stream(stream, timeout):
    with S.lock:
        s = S.get_stream(stream)
    from .. import media
    media.take_refusal()
    try:
        s.stream.synchronize(timeout)
    except davinci.TaskFailedError as exc:
        # a decode the engine refused: its record's errno, the desc's code
        note = media.take_refusal()
        if not note:
            raise
        raise davinci.TaskFailedError(
            "%s; %s" % (exc.message, note), exc.status, exc.stream_id,
            exc.seq, exc.opcode) from exc


@api(locked=False)
def synchronize_stream(stream):
    """Wait for every task of ``stream`` (0: the default stream)."""
    _sync_stream(stream, None)


@api(locked=False)
def synchronize_stream_with_timeout(stream, timeout):
    """As synchronize_stream; ``timeout`` in ms (-1: forever);
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it runs out."""
    t = None if timeout is None or timeout < 0 else timeout / 1000.0
    try:
        _sync_stream(stream, t)
    except davinci.TimeoutError as exc:
        raise AclFail(C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, str(exc)) from None


#: the seed article's spelling
stream_synchronize = synchronize_stream


@api(1, (1,))
def query_stream_status(stream):
    """(status, ret): 0 complete, 1 not ready (aclrtStreamStatus)."""
    s = S.get_stream(stream)
    st = s.stream.query()
    return 0 if st.completed_seq >= st.submitted_seq else 1


@api()
def set_stream_failure_mode(stream, mode):
    """aclrtSetStreamFailureMode: what ``stream`` (0: the default stream)
    does after a failed task. ACL_CONTINUE_ON_FAILURE (every stream's
    default, as CANN's): the failed task's error is returned once, by the
    next synchronize_stream, and the tasks after it run.
    ACL_STOP_ON_FAILURE: the tasks after it are not run (their work
    returns the failure too) and the stream takes no more work: every
    synchronize_stream returns the failure; destroy the stream. CANN sets
    the mode once per stream: a second call is refused."""
    if mode not in (C.ACL_CONTINUE_ON_FAILURE, C.ACL_STOP_ON_FAILURE):
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "set_stream_failure_mode: mode %r is neither "
                      "ACL_CONTINUE_ON_FAILURE (0) nor ACL_STOP_ON_FAILURE "
                      "(1)" % (mode,))
    s = S.get_stream(stream)
    if s.failure_mode_set:
        raise AclFail(C.ACL_ERROR_INVALID_PARAM,
                      "set_stream_failure_mode: stream %#x has its mode "
                      "already; CANN sets it once per stream (create "
                      "another stream for the other mode)" % (s.handle,))
    try:
        s.stream.set_continue_on_failure(mode == C.ACL_CONTINUE_ON_FAILURE)
    except davinci.InvalidArgumentError as exc:
        raise AclFail(C.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, str(exc)) from None
    s.failure_mode_set = True

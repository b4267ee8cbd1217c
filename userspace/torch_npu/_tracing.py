# SPDX-License-Identifier: GPL-2.0
"""Host spans of torch_npu's ATen kernels while a davinci trace runs.

:class:`TracedLibrary` is the ``torch.library.Library`` the kernels are
registered with: each kernel it registers raises torch's exception types
(below) and records a span (category
"torch", named ``aten::OP``, e.g. ``aten::add.Tensor``) into
:func:`davinci.trace.spans.active_recorder` while a trace runs
(``davinci trace``, ``DAVINCI_TRACE``, ``acl.prof``, a TraceSession), and
otherwise costs one function call and a None test per op.
"""

from __future__ import annotations

import functools
from typing import Callable

import torch

from davinci.errors import DTypeError, ShapeError
from davinci.trace.spans import active_recorder

__all__ = ["TracedLibrary", "traced"]


def traced(op_name: str, fn: Callable) -> Callable:
    """``fn``, recording a span named ``aten::<op_name>`` per call while a
    trace runs, and raising what CPU torch raises for operands an op does
    not take: a RuntimeError (with davinci's message and its error as the
    cause) where davinci raises ShapeError or DTypeError."""
    name = "aten::" + op_name

    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        try:
            rec = active_recorder()
            if rec is None:
                return fn(*args, **kwargs)
            with rec.span(name, "torch"):
                return fn(*args, **kwargs)
        except (ShapeError, DTypeError) as e:
            raise RuntimeError("%s: %s" % (name, e)) from e
    return kernel


class TracedLibrary(torch.library.Library):
    """A ``torch.library.Library`` whose :meth:`impl` registers
    :func:`traced` kernels."""

    def impl(self, op_name, fn, *args, **kwargs):
        name = op_name if isinstance(op_name, str) else str(op_name)
        return super().impl(op_name, traced(name, fn), *args, **kwargs)

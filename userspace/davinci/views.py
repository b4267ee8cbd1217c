# SPDX-License-Identifier: GPL-2.0
"""The geometry of tensor views: shapes, strides (in elements) and offsets.

A view is a tensor's memory read in another order: transposed, sliced,
expanded (stride 0 repeats an element) or broadcast against another
operand. The device reads views directly (DOC: strided operands in
davinci.h); these functions compute them, as numpy and torch do, with
ShapeError for what no view can be.
"""

from __future__ import annotations

from typing import Sequence

from .errors import ShapeError

__all__ = ["contiguous_strides", "is_contiguous", "span", "broadcast_shapes",
           "broadcast_strides", "permuted", "sliced", "expanded"]

Shape = tuple[int, ...]


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major strides of a dense tensor of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """The elements are dense in row-major order (size-1 dimensions may
    have any stride, as in torch)."""
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1 and s != step:
            return False
        step *= n
    return True


def span(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements from the first to one past the last a view reaches."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """numpy's broadcast of ``shapes``: aligned at the last dimension, each
    size 1 or the common size."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ShapeError("shapes %s do not broadcast: dimension %d is %s"
                             % (" and ".join(str(tuple(s)) for s in shapes),
                                d - ndim, " and ".join(map(str, sorted(sizes)))))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_strides(shape: Sequence[int], strides: Sequence[int],
                      to: Sequence[int]) -> Shape:
    """Strides that read a view of ``shape`` as one of shape ``to``: a
    dimension it lacks or has of size 1 repeats (stride 0)."""
    lead = len(to) - len(shape)
    if lead < 0:
        raise ShapeError("a %d-dimensional tensor cannot broadcast to shape "
                         "%s" % (len(shape), tuple(to)))
    out = [0] * lead
    for n, s, want in zip(shape, strides, to[lead:]):
        if n == want:
            out.append(s if n != 1 else 0)
        elif n == 1:
            out.append(0)
        else:
            raise ShapeError("shape %s does not broadcast to %s"
                             % (tuple(shape), tuple(to)))
    return tuple(out)


def _axis(d: int, ndim: int) -> int:
    if not -ndim <= d < ndim:
        raise ShapeError("dimension %d is out of range for %d dimensions"
                         % (d, ndim))
    return d % ndim


def permuted(shape: Shape, strides: Shape, dims: Sequence[int]
             ) -> tuple[Shape, Shape]:
    """The view with its dimensions in the order ``dims``."""
    order = [_axis(d, len(shape)) for d in dims]
    if sorted(order) != list(range(len(shape))):
        raise ShapeError("permute of a %d-dimensional tensor needs each "
                         "dimension once, got %s" % (len(shape), tuple(dims)))
    return tuple(shape[d] for d in order), tuple(strides[d] for d in order)


def sliced(shape: Shape, strides: Shape, key) -> tuple[Shape, Shape, int]:
    """The view ``key`` (ints, slices with a positive step, Ellipsis)
    selects, and its first element's offset in elements."""
    if not isinstance(key, tuple):
        key = (key,)
    if key.count(Ellipsis) > 1:
        raise ShapeError("an index can have one ellipsis (...)")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        fill = len(shape) - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > len(shape):
        raise ShapeError("%d indices for a %d-dimensional tensor"
                         % (len(key), len(shape)))
    key = key + (slice(None),) * (len(shape) - len(key))
    out_shape, out_strides, offset = [], [], 0
    for k, n, s in zip(key, shape, strides):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step <= 0:
                raise ShapeError("slices with a step below 1 need a copy: "
                                 "the device's strides are unsigned")
            count = max(0, (stop - start + step - 1) // step)
            offset += start * s if count else 0
            out_shape.append(count)
            out_strides.append(s * step)
        else:
            try:
                i = int(k)
            except TypeError:
                raise ShapeError("index %r: a view takes ints, slices and "
                                 "..." % (k,)) from None
            if not -n <= i < n:
                raise ShapeError("index %d is out of range for a dimension "
                                 "of %d" % (i, n))
            offset += (i % n) * s
    return tuple(out_shape), tuple(out_strides), offset


def expanded(shape: Shape, strides: Shape, sizes: Sequence[int]
             ) -> tuple[Shape, Shape]:
    """torch's expand: size-1 dimensions repeated to ``sizes`` (-1 keeps
    a size), new leading dimensions added."""
    sizes = tuple(int(n) for n in sizes)
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ShapeError("expand to %s has fewer dimensions than %s"
                         % (sizes, shape))
    full = tuple(shape[d - lead] if n == -1 and d >= lead else n
                 for d, n in enumerate(sizes))
    if any(n < 0 for n in full):
        raise ShapeError("expand to %s: -1 only keeps an existing size"
                         % (sizes,))
    return full, broadcast_strides(shape, strides, full)

# SPDX-License-Identifier: GPL-2.0
"""Parameter blocks (DOC: parameter blocks in davinci.h), through
DAVINCI_OP_COPY_VIEW: the driver copies a task's block when it takes the
task in and runs it from that copy; a block it cannot read or whose
contents the op refuses fails the task touching nothing; a descriptor
whose block fields do not match the op is refused at the doorbell; a
graph's tasks read their blocks again at each launch."""

import numpy as np
import pytest

import davinci
from davinci import _uapi, ops, opdesc, paramblocks, schema

VIEW = schema.by_name("COPY_VIEW")


def _dense(dev, n=64):
    x = np.arange(n, dtype=np.float32)
    return davinci.DeviceTensor.from_numpy(dev, x), x


def _block(dev, **fields):
    data = opdesc.pack_params(VIEW, **fields)
    buf = dev.malloc(len(data))
    buf.write(data)
    return buf


def _task(x, out, count, block, **over):
    t = opdesc.describe(VIEW, "float32", dst=out.dev_addr, srcs=[x.dev_addr],
                        count=count, params_at=block.dev_addr)
    for k, v in over.items():
        setattr(t, k, v)
    return t


def test_the_driver_announces_parameter_blocks(dev):
    assert dev.version.has(_uapi.DAVINCI_FEAT_PARAMS)
    assert dev.capabilities().param_versions(VIEW) == (VIEW.params.version,)


def test_the_task_runs_from_the_copy_taken_in(dev, gate):
    # taken in at the doorbell (unpolled), run after the gate opens: the
    # block is rewritten in between, the task uses what it was when taken in
    x, host = _dense(dev)
    out = davinci.DeviceTensor.empty(dev, (8, 8), "float32")
    s = dev.stream(polled=False)
    gate.block(s)
    block = _block(dev, ndim=2, sizes=[8, 8], strides=[1, 8])   # transpose
    s.launch(_task(x, out, 64, block))
    block.write(opdesc.pack_params(VIEW, ndim=1, sizes=[64], strides=[1]))
    gate.release()
    s.synchronize()
    assert np.array_equal(out.numpy(), host.reshape(8, 8).T)


def test_a_freed_block_after_take_in_is_not_read(dev, gate):
    x, host = _dense(dev)
    out = davinci.DeviceTensor.empty(dev, (4, 16), "float32")
    s = dev.stream(polled=False)
    gate.block(s)
    block = _block(dev, ndim=2, sizes=[4, 16], strides=[16, 1])
    s.launch(_task(x, out, 64, block))
    block.free()
    other = dev.malloc(4096)           # may reuse the block's memory
    other.write(np.full(1024, 0xFF, np.uint8))
    gate.release()
    s.synchronize()
    assert np.array_equal(out.numpy(), host.reshape(4, 16))
    other.free()


@pytest.mark.parametrize("fields,why", [
    (dict(ndim=0, sizes=[], strides=[]), "no dimension"),
    (dict(ndim=9, sizes=[1] * 8, strides=[1] * 8), "nine dimensions"),
    (dict(ndim=1, sizes=[32], strides=[1]), "sizes not the count"),
    (dict(ndim=1, sizes=[64], strides=[1], pad=1), "pad set"),
    (dict(ndim=1, sizes=[64, 1], strides=[1, 0]), "a size past ndim"),
    (dict(ndim=2, sizes=[8, 8], strides=[1, 1 << 62]), "a span past u64"),
])
def test_a_block_the_op_refuses_fails_the_task(dev, fields, why):
    x, _ = _dense(dev)
    out = davinci.DeviceTensor.empty(dev, (64,), "float32")
    out.buffer.write(np.full(64, 7, np.float32))
    s = dev.stream()
    block = _block(dev, **fields)
    s.launch(_task(x, out, 64, block))
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    assert e.value.status == _uapi.DAVINCI_STATUS_INVALID_TASK, why
    assert np.array_equal(out.numpy(), np.full(64, 7, np.float32))


def test_a_block_or_a_view_outside_memory_fails_the_task(dev):
    # out before x: the view that runs past x runs into no other operand
    out = davinci.DeviceTensor.empty(dev, (64,), "float32")
    x, _ = _dense(dev)
    s = dev.stream()
    block = _block(dev, ndim=1, sizes=[64], strides=[1])
    gone = block.dev_addr
    block.free()
    s.launch(_task(x, out, 64, block, params=gone))
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    assert e.value.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS
    s.reset()
    # a view that reaches past its buffer: x's 64 elements, stride 1 << 20
    far = _block(dev, ndim=2, sizes=[2, 32], strides=[1 << 20, 1])
    s.launch(_task(x, out, 64, far))
    with pytest.raises(davinci.TaskFailedError) as e:
        s.synchronize()
    assert e.value.status == _uapi.DAVINCI_STATUS_INVALID_ADDRESS


@pytest.mark.parametrize("field,value", [("params", 0),
                                         ("params_size", 8),
                                         ("params_version", 2)])
def test_block_fields_that_do_not_match_the_op_are_refused(dev, field,
                                                            value):
    x, _ = _dense(dev)
    out = davinci.DeviceTensor.empty(dev, (64,), "float32")
    block = _block(dev, ndim=1, sizes=[64], strides=[1])
    s = dev.stream(polled=False)
    with pytest.raises(davinci.InvalidArgumentError):
        s.launch(_task(x, out, 64, block, **{field: value}))


def test_a_graph_reads_its_blocks_at_each_launch(dev):
    x, host = _dense(dev)
    s = dev.stream()
    with s.capture() as g:
        out = ops.copy_view(x, (8, 8), (1, 8), stream=s)
    for _ in range(2):
        out.buffer.write(np.zeros(64, np.float32))
        g.launch()
        s.synchronize()
        assert np.array_equal(out.numpy(), host.reshape(8, 8).T)
    g.destroy()


def test_copy_view_checks_the_view_before_submitting(dev):
    x, _ = _dense(dev)
    with pytest.raises(davinci.ShapeError, match="reaches element"):
        ops.copy_view(x, (8, 9), (9, 1))
    with pytest.raises(davinci.ShapeError, match="1 to 8 sizes"):
        ops.copy_view(x, (1,) * 9, (1,) * 9)
    with pytest.raises(davinci.ShapeError, match="negative"):
        ops.copy_view(x, (8,), (-1,))


def test_copy_view_returns_its_blocks_to_the_pool(dev):
    x, _ = _dense(dev)
    blocks = dev.param_blocks
    s = dev.stream()
    for _ in range(3):
        outs = [ops.copy_view(x, (8, 8), (1, 8), stream=s)
                for _ in range(paramblocks.SLOTS_PER_SLAB // 2)]
        s.synchronize()
        s.settle()
        del outs
    # every block came back, and the pool reused them instead of growing
    assert blocks.idle == blocks.slots == paramblocks.SLOTS_PER_SLAB


def test_a_block_is_not_reused_before_its_task_completes(dev, gate):
    # a polled stream takes tasks in when the device polls, which the host
    # does not see: a block handed to the next task before its own task
    # completed could be rewritten before the driver copied it. More tasks
    # than a slab has slots wait behind the gate, each holding its block.
    x, host = _dense(dev)
    blocks = dev.param_blocks
    s = dev.stream()
    gate.block(s)
    n = paramblocks.SLOTS_PER_SLAB + 8
    views = [((8, 8), (1, 8)), ((4, 16), (16, 1)), ((2, 32), (1, 2))]
    outs = [ops.copy_view(x, *views[i % 3], stream=s) for i in range(n)]
    assert blocks.slots - blocks.idle == n
    gate.release()
    s.synchronize()
    s.settle()
    assert blocks.idle == blocks.slots
    for i, out in enumerate(outs):
        sizes, strides = views[i % 3]
        want = np.lib.stride_tricks.as_strided(
            host, sizes, [st * 4 for st in strides])
        assert np.array_equal(out.numpy(), want), i

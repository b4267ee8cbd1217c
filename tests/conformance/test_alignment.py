# SPDX-License-Identifier: GPL-2.0
"""Compute operands must be aligned to their element size (ABI 1.2).

A raw descriptor with a misaligned operand, submitted past the Python
checks, fails at the head of its stream with DAVINCI_STATUS_MISALIGNED and
writes nothing; the aligned neighbour runs. The op wrappers and
acl.op.execute_v2 refuse such an operand before anything is submitted, with
a message naming it and its alignment."""

import re

import numpy as np
import pytest

import davinci
from davinci import _uapi as U
from davinci import ops
from davinci.errors import (InvalidArgumentError, MisalignedOperandError,
                            TaskFailedError)

F32, F16, BF16, I32 = (U.DAVINCI_DTYPE_FLOAT32, U.DAVINCI_DTYPE_FLOAT16,
                       U.DAVINCI_DTYPE_BFLOAT16, U.DAVINCI_DTYPE_INT32)
SIZE = 8192
POISON = 0xEE

#: (label, opcode, fields, operand to move, bytes to move it, its element
#: size); every operand starts 64 bytes into its own buffer
CASES = [
    ("reduce_sum f16 src0+1", U.DAVINCI_OP_REDUCE_SUM,
     dict(dtype=F16, m=4, n=16), "src0", 1, 2),
    ("add f32 dst+2", U.DAVINCI_OP_ADD, dict(dtype=F32, count=64), "dst", 2,
     4),
    ("add i32 src1+1", U.DAVINCI_OP_ADD, dict(dtype=I32, count=64), "src1", 1,
     4),
    ("exp bf16 src0+1", U.DAVINCI_OP_EXP, dict(dtype=BF16, count=64),
     "src0", 1, 2),
    ("matmul f32 src1+2", U.DAVINCI_OP_MATMUL, dict(dtype=F32, m=8, n=8, k=8),
     "src1", 2, 4),
    ("softmax f16 dst+1", U.DAVINCI_OP_SOFTMAX, dict(dtype=F16, m=4, n=16),
     "dst", 1, 2),
    # CAST's dst is aligned to dst_dtype: +2 is fine for float16, not
    # for float32
    ("cast f16->f32 dst+2", U.DAVINCI_OP_CAST,
     dict(dtype=F16, dst_dtype=F32, count=64), "dst", 2, 4),
]
_USES_SRC1 = (U.DAVINCI_OP_ADD, U.DAVINCI_OP_MATMUL)


def _task(opcode, fields, bufs, move=None, by=0):
    addrs = {name: b.dev_addr + 64 for name, b in bufs.items()}
    if opcode not in _USES_SRC1:
        addrs["src1"] = 0
    if move:
        addrs[move] += by
    return davinci.make_task(opcode, **addrs, **fields)


@pytest.fixture
def bufs(dev):
    b = {name: dev.malloc(SIZE) for name in ("dst", "src0", "src1")}
    # 0x3c3c...: finite and non-zero in every dtype
    b["src0"].write(bytes([0x3C]) * SIZE)
    b["src1"].write(bytes([0x3C]) * SIZE)
    yield b
    for x in b.values():
        x.free()


def test_driver_speaks_abi_1_2(dev):
    v = dev.version
    assert (v.abi_major, v.abi_minor) >= (1, 2)
    assert U.DAVINCI_ABI_MINOR >= 2
    assert U.STATUS_NAMES[U.DAVINCI_STATUS_MISALIGNED] == "MISALIGNED"


@pytest.mark.parametrize("label,opcode,fields,move,by,es", CASES,
                         ids=[c[0] for c in CASES])
def test_raw_misaligned_task_fails_touching_nothing(dev, bufs, label, opcode,
                                                    fields, move, by, es):
    s = dev.stream()
    try:
        bufs["dst"].write(bytes([POISON]) * SIZE)
        # Stream.submit: no Python check between the descriptor and the
        # driver
        seq, = s.submit([_task(opcode, fields, bufs, move, by)])
        with pytest.raises(TaskFailedError) as ei:
            s.synchronize(timeout=10)
        e = ei.value
        assert e.status == U.DAVINCI_STATUS_MISALIGNED
        assert e.status_name == "MISALIGNED"
        assert e.seq == seq and e.opcode == opcode
        assert "MISALIGNED" in str(e)
        assert "an operand is not aligned to its element size" in str(e)
        assert s.task(seq).status == U.DAVINCI_STATUS_MISALIGNED
        assert bufs["dst"].read() == bytes([POISON]) * SIZE
        assert bufs["src0"].read() == bytes([0x3C]) * SIZE
        assert bufs["src1"].read() == bytes([0x3C]) * SIZE
        # the aligned neighbour, one element further, runs
        s.reset()
        s.submit([_task(opcode, fields, bufs, move, es)])
        s.synchronize(timeout=10)
        assert bufs["dst"].read() != bytes([POISON]) * SIZE
    finally:
        s.destroy()


def test_misaligned_task_fails_at_the_head_of_its_stream(dev, bufs):
    """Tasks before it complete; tasks after it are aborted."""
    s = dev.stream()
    try:
        bufs["dst"].write(bytes([POISON]) * SIZE)
        d = bufs["dst"].dev_addr
        seqs = s.submit([
            davinci.make_task(U.DAVINCI_OP_MEMSET, dst=d, count=16, imm=1),
            _task(U.DAVINCI_OP_REDUCE_SUM, dict(dtype=F16, m=4, n=16), bufs,
                  "src0", 1),
            davinci.make_task(U.DAVINCI_OP_MEMSET, dst=d + 16, count=16,
                              imm=2),
        ])
        with pytest.raises(TaskFailedError) as ei:
            s.synchronize(timeout=10)
        assert ei.value.status == U.DAVINCI_STATUS_MISALIGNED
        assert ei.value.seq == seqs[1]
        assert s.task(seqs[0]).status == U.DAVINCI_STATUS_OK
        assert s.task(seqs[2]).status == U.DAVINCI_STATUS_ABORTED
        got = bufs["dst"].read()
        assert got[:16] == bytes([1]) * 16
        assert got[16:] == bytes([POISON]) * (SIZE - 16)
    finally:
        s.destroy()


def _submitted(dev):
    return dev.default_stream.query().submitted_seq


def _check_message(exc, op, operand, field, addr, dtype, align):
    msg = str(exc)
    assert isinstance(exc, InvalidArgumentError)
    assert isinstance(exc, ValueError)
    assert msg.startswith(op + ": ")
    assert "operand %s (%s)" % (operand, field) in msg
    assert "%#x" % addr in msg
    assert dtype in msg
    assert "multiple of %d bytes" % align in msg
    assert re.search(r"use an offset that is a multiple of %d bytes" % align,
                     msg)
    assert (exc.operand, exc.address, exc.dtype, exc.alignment) == \
        ("%s (%s)" % (operand, field), addr, dtype, align)


def test_ops_refuse_a_misaligned_input_before_submitting(dev):
    buf = dev.malloc(4096)
    try:
        x = davinci.DeviceTensor(buf, (4, 16), "float16", offset=1)
        before = _submitted(dev)
        with pytest.raises(MisalignedOperandError) as ei:
            ops.reduce_sum(x)
        _check_message(ei.value, "reduce_sum", "x", "src0", x.dev_addr,
                       "float16", 2)
        a = davinci.DeviceTensor(buf, (64,), "float32", offset=1024)
        b = davinci.DeviceTensor(buf, (64,), "float32", offset=2050)
        with pytest.raises(MisalignedOperandError) as ei:
            ops.add(a, b)
        _check_message(ei.value, "add", "b", "src1", b.dev_addr, "float32",
                       4)
        with pytest.raises(MisalignedOperandError) as ei:
            ops.matmul(b.reshape(8, 8), a.reshape(8, 8))
        _check_message(ei.value, "matmul", "a", "src0", b.dev_addr,
                       "float32", 4)
        assert _submitted(dev) == before
    finally:
        buf.free()


def test_ops_refuse_a_misaligned_out_before_submitting(dev, rng):
    buf = dev.malloc(4096)
    try:
        x = dev.tensor(rng.standard_normal(64).astype(np.float16))
        before = _submitted(dev)
        # cast's out is aligned to the dtype it is cast to
        out = davinci.DeviceTensor(buf, (64,), "float32", offset=2)
        with pytest.raises(MisalignedOperandError) as ei:
            ops.cast(x, "float32", out=out)
        _check_message(ei.value, "cast", "out", "dst", out.dev_addr,
                       "float32", 4)
        out16 = davinci.DeviceTensor(buf, (64,), "float16", offset=1)
        with pytest.raises(MisalignedOperandError) as ei:
            ops.relu(x, out=out16)
        _check_message(ei.value, "relu", "out", "dst", out16.dev_addr,
                       "float16", 2)
        assert _submitted(dev) == before
        # the aligned neighbours work
        ok = davinci.DeviceTensor(buf, (64,), "float32", offset=4)
        ops.cast(x, "float32", out=ok)
        np.testing.assert_array_equal(ok.numpy(),
                                      x.numpy().astype(np.float32))
        ok16 = davinci.DeviceTensor(buf, (64,), "float16", offset=2)
        ops.relu(x, out=ok16)
        np.testing.assert_array_equal(ok16.numpy(), np.maximum(x.numpy(), 0))
    finally:
        buf.free()


def test_check_alignment_of_a_descriptor():
    t = davinci.make_task(U.DAVINCI_OP_CAST, dtype=F32, dst_dtype=F16,
                          dst=0x1002, src0=0x2000, count=4)
    ops.check_alignment(t)              # float16 dst at +2: fine
    t.src0 = 0x2002
    with pytest.raises(MisalignedOperandError) as ei:
        ops.check_alignment(t)
    assert str(ei.value).startswith("CAST: operand src0 at device address "
                                    "0x2002")
    assert ei.value.alignment == 4
    # not a compute task: not checked
    ops.check_alignment(davinci.make_task(U.DAVINCI_OP_MEMCPY, dst=1, src0=3,
                                          count=1))


def test_acl_execute_v2_refuses_a_misaligned_operand(acl_dev):
    acl = acl_dev
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    ptrs, descs, dbufs = [], [], []
    try:
        def tensor(off, shape, dtype, nbytes):
            p, ret = acl.rt.malloc(nbytes + 64, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
            assert ret == 0
            ptrs.append(p)
            d = acl.create_tensor_desc(dtype, shape, acl.ACL_FORMAT_ND)
            b = acl.create_data_buffer(p + off, nbytes)
            descs.append(d)
            dbufs.append(b)
            return d, b, p + off

        xd, xb, xp = tensor(1, [64], acl.ACL_FLOAT16, 128)
        od, ob, _ = tensor(0, [64], acl.ACL_FLOAT16, 128)
        ret = acl.op.execute_v2("Relu", [xd], [xb], [od], [ob], 0, stream)
        assert ret == acl.ACL_ERROR_INVALID_PARAM
        msg = acl.get_recent_err_msg()
        assert "Relu: operand input 0 (src0)" in msg
        assert "%#x" % xp in msg
        assert "multiple of 2 bytes" in msg
        # float32 output at +2: misaligned for 4-byte elements
        ad, ab, _ = tensor(0, [64], acl.ACL_FLOAT, 256)
        bd, bb, _ = tensor(0, [64], acl.ACL_FLOAT, 256)
        cd, cb, cp = tensor(2, [64], acl.ACL_FLOAT, 256)
        ret = acl.op.execute_v2("Add", [ad, bd], [ab, bb], [cd], [cb], 0,
                                stream)
        assert ret == acl.ACL_ERROR_INVALID_PARAM
        msg = acl.get_recent_err_msg()
        assert "Add: operand output 0 (dst)" in msg
        assert "%#x" % cp in msg
        assert "multiple of 4 bytes" in msg
        assert acl.rt.synchronize_stream(stream) == 0
    finally:
        for b in dbufs:
            acl.destroy_data_buffer(b)
        for d in descs:
            acl.destroy_tensor_desc(d)
        for p in ptrs:
            acl.rt.free(p)
        acl.rt.destroy_stream(stream)

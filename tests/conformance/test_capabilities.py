# SPDX-License-Identifier: GPL-2.0
"""The capability query (DAVINCI_IOCTL_GET_CAP): the driver announces the
schema's ops and dtypes, the doorbell enforces what it announced, malformed
queries are refused, and an older driver is read from its feature bits."""

import dataclasses
import errno

import pytest

import davinci
from davinci import _uapi, capabilities, opdesc, schema


def _raw(dev, query, index=0, reserved=(0, 0)):
    """(errno, value) of one GET_CAP through the device's transport."""
    cap = _uapi.davinci_cap(query=query, index=index)
    cap.reserved[0], cap.reserved[1] = reserved
    return dev.transport.try_ioctl(_uapi.DAVINCI_IOCTL_GET_CAP, cap), \
        int(cap.value)


def _schema_mask(op):
    return sum(1 << opdesc.DTYPE_CODES[name] for name in op.dtypes)


def test_the_driver_announces_the_schema(dev):
    assert dev.version.has(_uapi.DAVINCI_FEAT_CAPS)
    caps = dev.capabilities()
    assert caps.source == "query"
    assert caps.opcodes == _uapi.DAVINCI_OP_COUNT == schema.OPS[-1].opcode + 1
    assert caps.dtype_count == len(opdesc.DTYPE_CODES)
    assert caps.ops == schema.OPS
    assert caps.missing == () and caps.unknown_opcodes == ()
    for op in schema.OPS:
        assert set(caps.dtypes(op)) == set(op.dtypes), op.name
        assert caps.param_versions(op) == (
            (op.params.version,) if op.params else ()), op.name
    assert set(caps.dtype_names) == set(opdesc.DTYPE_CODES)


def test_the_ops_with_a_third_operand_are_announced(dev):
    """DAVINCI_CAP_OP_SRC2 (ABI 1.10): CONV2D's bias, and no other op's
    until the schema gives one a src2; capabilities() reads it."""
    caps = dev.capabilities()
    for op in schema.OPS:
        want = "src2" in op.uses
        assert _raw(dev, _uapi.DAVINCI_CAP_OP_SRC2, op.opcode) == (
            0, int(want)), op.name
        assert caps.takes_src2(op) == want, op.name
    assert caps.takes_src2("conv2d")
    assert not caps.takes_src2("conv2d_backward_input")


def test_every_op_the_schema_declares_is_announced_by_the_ioctl(dev):
    """The raw answers: each opcode's mask is the schema's, because the
    driver answers from the table the schema generates."""
    assert _raw(dev, _uapi.DAVINCI_CAP_OPCODES) == (0,
                                                     _uapi.DAVINCI_OP_COUNT)
    assert _raw(dev, _uapi.DAVINCI_CAP_DTYPES) == \
        (0, _uapi.DAVINCI_DTYPE_COUNT)
    for op in schema.OPS:
        assert _raw(dev, _uapi.DAVINCI_CAP_OP_DTYPES, op.opcode) == \
            (0, _schema_mask(op)), op.name
    # a number no op has (unassigned yet) is not served
    for code in range(_uapi.DAVINCI_OP_COUNT):
        if schema.by_opcode(code) is None:
            assert _raw(dev, _uapi.DAVINCI_CAP_OP_DTYPES, code) == (0, 0)
        assert _raw(dev, _uapi.DAVINCI_CAP_OP_PARAMS, op.opcode) == (
            0, 1 << op.params.version if op.params else 0)
        assert _raw(dev, _uapi.DAVINCI_CAP_OP_FLAGS, op.opcode) == (
            0, _uapi.DAVINCI_TASK_F_NOTIFY | sum(
                opdesc.FLAG_BITS[f] for f in op.flags)), op.name
    assert _raw(dev, _uapi.DAVINCI_CAP_STRIDED) == (
        0, 1 << _uapi.DAVINCI_PARAMS_STRIDED_VERSION)


#: a valid parameter block of each struct, on 8 elements (2 x 4)
_PROBE_PARAMS = {
    "COPY_VIEW": dict(ndim=1, sizes=[8], strides=[1]),
    "CONV2D": dict(n=1, c=1, h=2, w=4, k=1, r=1, s=1, stride_h=1, stride_w=1,
                   pad_h=0, pad_w=0, dilation_h=1, dilation_w=1, groups=1),
    "MAXPOOL2D": dict(n=1, c=1, h=2, w=4, r=1, s=1, stride_h=1, stride_w=1,
                      pad_h=0, pad_w=0, dilation_h=1, dilation_w=1,
                      ceil_mode=0, count_include_pad=0, divisor=0,
                      adaptive=0),
    "FILL": dict(value=0),
    "ARANGE": dict(start=0, step=0),
    "RANDOM_UNIFORM": dict(seed=0, offset=0),
    "RANDOM_NORMAL": dict(seed=0, offset=0, mean=0, std=0),
    "AIPP": dict(batch=1, channels=3, height=2, width=4, src_size=24),
    "ADAM": dict(step_size=0, bias_correction2_sqrt=0x3f800000, eps=0,
                 exp_avg_weight=0, beta2=0, exp_avg_sq_weight=0,
                 weight_decay=0, decay=0x3f800000, maximize=0, amsgrad=0),
    "SGD_MOMENTUM": dict(lr=0, momentum=0, dampening_weight=0,
                         weight_decay=0, nesterov=0, maximize=0,
                         first_step=0, pad=0),
    "BN_TRAINING_REDUCE": dict(eps=0, momentum=0),
}


#: where _probe_task's JPEGD_DECODE finds its block and a 1 x 1 grey JPEG
_JPEGD_BLOCK, _JPEGD_FILE = 512 * len(_PROBE_PARAMS), 512 * len(
    _PROBE_PARAMS) + 64
#: where AIPP finds its config: a 4 x 2 RGB888 picture as it is
_AIPP_CONFIG = _JPEGD_FILE + 512


def _probe_aipp_config() -> bytes:
    from davinci.aipp import AippConfig
    return AippConfig("RGB888_U8", 4, 2).pack()


#: where its VPC tasks find their block: NV12 32 x 6 into NV12 32 x 6
_VPC_BLOCK = _JPEGD_BLOCK + 1024
_VPC_PARAMS = dict(
    src_format=_uapi.DAVINCI_VPC_FMT_NV12, src_width=32, src_height=6,
    src_width_stride=32, src_height_stride=6,
    dst_format=_uapi.DAVINCI_VPC_FMT_NV12, dst_width=32, dst_height=6,
    dst_width_stride=32, dst_height_stride=6, crop_right=31, crop_bottom=5,
    paste_right=31, paste_bottom=5)
#: and JPEGE_ENCODE its block and a 16 x 2 NV12 picture (48 bytes)
_JPEGE_BLOCK, _JPEGE_PICTURE = _VPC_BLOCK + 128, _VPC_BLOCK + 192
#: where it finds PNGD_DECODE's block and a 1 x 1 grey PNG
_PNGD_BLOCK, _PNGD_FILE = _JPEGD_BLOCK + 32, _VPC_BLOCK + 512


def _probe_png() -> bytes:
    import io

    from PIL import Image
    b = io.BytesIO()
    Image.new("L", (1, 1)).save(b, "PNG")
    return b.getvalue()


def _probe_jpeg() -> bytes:
    import io

    from PIL import Image
    b = io.BytesIO()
    Image.new("L", (1, 1)).save(b, "JPEG", quality=50)
    return b.getvalue()


def _probe_task(op, dst, src, block):
    """A valid float32 descriptor of ``op`` on 8 elements (2 x 4); ``block``
    holds each op's parameter block at 512 bytes times its index in
    _PROBE_PARAMS."""
    tags = list(_PROBE_PARAMS)
    if op.kind == "pngd":
        # the PNG at block + _PNGD_FILE, its 6 KiB of RGB888 into dst, the
        # result record into src
        return davinci.make_task(
            op.opcode, dst=dst, src0=block.dev_addr + _PNGD_FILE,
            src1=src, count=len(_probe_png()),
            params=block.dev_addr + _PNGD_BLOCK, params_size=op.params.size,
            params_version=op.params.version)
    if op.kind == "jpegd":
        # the JPEG at block + _JPEGD_FILE, its 3 KiB of NV12 into dst, the
        # result record into src
        return davinci.make_task(
            op.opcode, dst=dst, src0=block.dev_addr + _JPEGD_FILE,
            src1=src, count=len(_probe_jpeg()),
            params=block.dev_addr + _JPEGD_BLOCK, params_size=op.params.size,
            params_version=op.params.version)
    if op.kind == "vpc":
        return davinci.make_task(
            op.opcode, dst=dst, src0=src, params=block.dev_addr + _VPC_BLOCK,
            params_size=op.params.size, params_version=op.params.version)
    if op.kind == "jpege":
        # the picture at block + _JPEGE_PICTURE, its JPEG into dst, the
        # result record into src
        return davinci.make_task(
            op.opcode, dst=dst, src0=block.dev_addr + _JPEGE_PICTURE,
            src1=src, count=48, params=block.dev_addr + _JPEGE_BLOCK,
            params_size=op.params.size, params_version=op.params.version)
    if op.kind == "aipp":   # the picture at src, its config in block
        return opdesc.describe(
            op, "float32", dst=dst,
            srcs=(src, block.dev_addr + _AIPP_CONFIG),
            params_at=block.dev_addr + 512 * tags.index(op.name))
    if op.kind in ("optimizer", "momentum"):   # no two operands overlap
        return opdesc.describe(
            op, "float32", dst=dst,
            srcs=(src, src + 64, src + 128)[:opdesc.SOURCES[op.kind]],
            count=8, params_at=block.dev_addr + 512 * tags.index(op.name))
    if op.kind == "channels":   # x [2, 2, 2] at src, distinct float32 rows
        return opdesc.describe(
            op, "float32", dst=dst, srcs=(src, src + 512, 0 if op.name ==
                                          "BN_TRAINING_UPDATE" else
                                          src + 1024), mnk=(2, 2, 2),
            params_at=block.dev_addr + 512 * tags.index(op.name)
            if op.params else 0)
    if not op.compute:
        fields = {"count": 8} if "count" in op.uses else {}
        if "dst" in op.uses:
            fields["dst"] = dst
        if "src0" in op.uses:
            fields["src0"] = src
        return davinci.make_task(op.opcode, **fields)
    return opdesc.describe(
        op, "float32", dst=dst, srcs=(src,) * opdesc.SOURCES[op.kind],
        count=8, rows=(2, 4), mnk=(2, 2, 2),
        attr=0 if op.imm is not None else None,
        dst_dtype="float32" if op.kind == "cast" else None,
        params_at=block.dev_addr + 512 * tags.index(op.params.struct)
        if op.params else 0)


def test_the_doorbell_takes_what_is_announced_and_refuses_the_rest(dev):
    """Every op without an event, in every dtype code the driver knows: a
    task is taken in when the driver announced its op in that dtype, and
    refused whole at the doorbell when it did not."""
    caps = dev.capabilities()
    s = dev.stream(polled=False)
    with dev.malloc(8192) as dst, dev.malloc(4096) as src, \
            dev.malloc(8192) as block:
        s.memset(src, 0, 4096)
        for i, (tag, fields) in enumerate(_PROBE_PARAMS.items()):
            block.write(opdesc.pack_params(tag, **fields), offset=512 * i)
        block.write(schema.by_name("JPEGD_DECODE").params.pack(
            dst_size=4096), offset=_JPEGD_BLOCK)
        block.write(_probe_jpeg(), offset=_JPEGD_FILE)
        assert _JPEGD_FILE + len(_probe_jpeg()) <= _AIPP_CONFIG
        block.write(schema.by_name("VPC_CROP").params.pack(**_VPC_PARAMS),
                    offset=_VPC_BLOCK)
        block.write(schema.by_name("JPEGE_ENCODE").params.pack(
            dst_size=4096, width=16, height=2, width_stride=16,
            height_stride=2, quality=75), offset=_JPEGE_BLOCK)
        block.write(schema.by_name("PNGD_DECODE").params.pack(
            dst_size=8192), offset=_PNGD_BLOCK)
        block.write(_probe_png(), offset=_PNGD_FILE)
        block.write(_probe_aipp_config(), offset=_AIPP_CONFIG)
        taken = 0
        for op in schema.OPS:
            if op.event:
                continue
            for code in range(caps.dtype_count):
                t = _probe_task(op, dst.dev_addr, src.dev_addr, block)
                t.dtype = code
                if caps.serves(op, code):
                    s.submit([t])
                    taken += 1
                else:
                    with pytest.raises(davinci.InvalidArgumentError):
                        s.submit([t])
        s.synchronize(timeout=30)
    assert s.query().submitted_seq == taken + 1     # and the memset
    assert taken >= len(schema.COMPUTE_OPS)


@pytest.mark.parametrize("query,index,reserved", [
    (_uapi.DAVINCI_CAP_OPCODES, 0, (1, 0)),
    (_uapi.DAVINCI_CAP_OP_DTYPES, 0, (0, 1 << 63)),
    (_uapi.DAVINCI_CAP_OP_SRC2 + 1, 0, (0, 0)),         # unknown query
    (_uapi.DAVINCI_CAP_OP_SRC2, _uapi.DAVINCI_OP_COUNT, (0, 0)),
    (0xFFFFFFFF, 0, (0, 0)),
    (_uapi.DAVINCI_CAP_OP_DTYPES, _uapi.DAVINCI_OP_COUNT, (0, 0)),
    (_uapi.DAVINCI_CAP_OP_PARAMS, 0xFFFFFFFF, (0, 0)),
    (_uapi.DAVINCI_CAP_OPCODES, 1, (0, 0)),             # takes no index
    (_uapi.DAVINCI_CAP_OP_FLAGS, _uapi.DAVINCI_OP_COUNT, (0, 0)),
    (_uapi.DAVINCI_CAP_STRIDED, 1, (0, 0)),
])
def test_malformed_queries_are_refused(dev, query, index, reserved):
    assert _raw(dev, query, index, reserved)[0] == errno.EINVAL


def test_asked_once_per_device(dev):
    first = dev.capabilities()
    before = dev.transport.ioctl_counts[_uapi.DAVINCI_IOCTL_GET_CAP]
    assert dev.capabilities() is first
    assert dev.transport.ioctl_counts[_uapi.DAVINCI_IOCTL_GET_CAP] == before


def test_an_older_driver_is_read_from_its_feature_bits(dev):
    """A driver before ABI 1.6, without DAVINCI_FEAT_FP16, _RELU_GRAD and
    _TRAIN_OPS: no query is issued, and ABI 1.0's ops are served in float32,
    bfloat16 and int32 only."""
    features = dev.version.features & ~(
        _uapi.DAVINCI_FEAT_CAPS | _uapi.DAVINCI_FEAT_FP16 |
        _uapi.DAVINCI_FEAT_RELU_GRAD | _uapi.DAVINCI_FEAT_TRAIN_OPS)
    dev._version = dataclasses.replace(dev.version, features=features)
    caps = dev.capabilities()
    assert dev.transport.ioctl_counts[_uapi.DAVINCI_IOCTL_GET_CAP] == 0
    assert caps.source == "features"
    # every op after ABI 1.0's: those with a bit lack it, the later have none
    assert [op.name for op in caps.missing] == [
        op.name for op in schema.OPS if op.opcode > _uapi.DAVINCI_OP_CAST]
    assert caps.serves("add", "int32") and caps.serves("add", "bfloat16")
    assert not caps.serves("add", "float16")
    assert caps.dtypes("exp") == ("float32", "bfloat16")
    assert caps.dtypes("NOP") == ("float32",)
    assert caps.opcodes == _uapi.DAVINCI_OP_CAST + 1


def test_the_feature_bits_agree_with_the_query(dev):
    """This driver's feature bits, read as an older driver's would be,
    imply what its query answers for every op that had a bit or predates
    them; an op added since has no bit and only the query announces it."""
    caps = dev.capabilities()
    old = capabilities.from_features(
        dev.version.features & ~_uapi.DAVINCI_FEAT_CAPS)
    for op in schema.OPS:
        if op.opcode <= _uapi.DAVINCI_OP_CMP:
            assert old.dtypes(op) == caps.dtypes(op), op.name
        else:
            assert not old.serves(op), op.name


def test_unknown_op_or_dtype_names_are_refused(dev):
    caps = dev.capabilities()
    with pytest.raises(davinci.InvalidArgumentError):
        caps.serves("winograd_conv2d")
    with pytest.raises(davinci.InvalidArgumentError):
        caps.serves("add", "float64")
    # an opcode past the schema is the driver's to answer: not served here
    assert not caps.serves(_uapi.DAVINCI_OP_COUNT)


def test_cli_info_lists_the_served_ops(capsys):
    from davinci import cli
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    listed = out.split("ops       :")[1].split("dtypes")[0].split()
    assert [op.name for op in schema.OPS] == listed[:len(schema.OPS)]
    assert "%d served (DAVINCI_IOCTL_GET_CAP)" % len(schema.OPS) in out

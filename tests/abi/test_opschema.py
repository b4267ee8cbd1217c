# SPDX-License-Identifier: GPL-2.0
"""The op schema (kmod/core/ops.toml) is the one declaration of each op:
the files generated from it agree with it, and every device op is
reachable from davinci.ops and from each frontend unless the schema says
why not."""

import os
import subprocess
import sys

import pytest

from davinci import _uapi, ops, opdesc, schema
from davinci.errors import DTypeError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GEN = os.path.join(REPO, "scripts", "gen_ops.py")


def test_generated_files_agree_with_the_schema():
    r = subprocess.run([sys.executable, GEN, "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_a_schema_edit_makes_the_check_fail(tmp_path):
    # the check compares with what the schema makes: a changed doc string
    # is a stale header
    import shutil
    for sub in ("kmod/core", "kmod/include/uapi", "userspace/davinci",
                "scripts"):
        os.makedirs(tmp_path / sub, exist_ok=True)
    for f in ("kmod/core/ops.toml", "kmod/core/opcodes.c",
              "kmod/include/uapi/davinci.h", "userspace/davinci/_opschema.py",
              "scripts/gen_ops.py"):
        shutil.copy(os.path.join(REPO, f), tmp_path / f)
    toml = tmp_path / "kmod/core/ops.toml"
    toml.write_text(toml.read_text().replace('doc = "dst = src0 - src1"',
                                             'doc = "dst = src0 minus src1"'))
    r = subprocess.run([sys.executable, str(tmp_path / "scripts/gen_ops.py"),
                        "--check"], capture_output=True, text=True)
    assert r.returncode == 1
    for f in ("davinci.h", "_opschema.py"):
        assert f in r.stderr


def test_opcodes_are_the_abis():
    for op in schema.OPS:
        assert getattr(_uapi, "DAVINCI_OP_" + op.name) == op.opcode
        assert _uapi.OP_NAMES[op.opcode] == op.name
    # one past the last; a number below it no op has is unassigned
    assert _uapi.DAVINCI_OP_COUNT == schema.OPS[-1].opcode + 1
    assert [op.opcode for op in schema.OPS] == sorted(
        {op.opcode for op in schema.OPS})


@pytest.mark.parametrize("op", schema.COMPUTE_OPS, ids=lambda o: o.name)
def test_every_compute_op_is_a_davinci_ops_function(op):
    fn = getattr(ops, op.python, None)
    assert callable(fn), "davinci.ops has no %s for DAVINCI_OP_%s" % (
        op.python, op.name)
    assert op.python in ops.__all__


@pytest.mark.parametrize("op", schema.COMPUTE_OPS, ids=lambda o: o.name)
def test_descriptors_refuse_dtypes_the_op_lacks(op):
    srcs = (0x1000,) * opdesc.SOURCES[op.kind]
    extents = {"matmul": {"mnk": (2, 2, 2)}, "rows": {"rows": (2, 2)},
               "reduce": {"rows": (2, 2)}, "triangle": {"mnk": (2, 2, 1)},
               "index": {"mnk": (1, 2, 2), "count": 2},
               "sort": {"mnk": (2, 3, 1)}, "channels": {"mnk": (2, 2, 2)}
               }.get(op.kind, {"count": 4})
    if op.kind == "cast":
        extents["dst_dtype"] = "float32"
    if op.params is not None:
        extents["params_at"] = 0x3000
    attr = {"float32": 1.0, "byte": 0, "int32": 0}.get(
        op.imm.type, op.imm.values[0] if op.imm.values else None) \
        if op.imm else None
    for dtype in opdesc.DTYPE_CODES:
        call = dict(dst=0x2000, srcs=srcs, attr=attr, **extents)
        if dtype in op.dtypes:
            t = opdesc.describe(op, dtype, **call)
            assert t.opcode == op.opcode
        else:
            with pytest.raises(DTypeError, match=op.python):
                opdesc.describe(op, dtype, **call)


@pytest.mark.parametrize("old,new,error", [
    ('Less = { predicate = "LT" }', 'Less = { predicate = "LESS" }',
     "is none of"),
    ('acl = { Relu = {} }', 'acl = { Relu = { alpha = 1.0 } }',
     "Relu fixes 'alpha'"),
    ("acl_inputs = { Axpy = [1, 0] }", "acl_inputs = { Axpy = [1, 1] }",
     "must order the op's 2 sources"),
    ("acl_inputs = { Axpy = [1, 0] }", "acl_inputs = { AXPY = [1, 0] }",
     "not a CANN name"),
])
def test_the_schema_refuses_cann_names_acl_cannot_map(tmp_path, old, new,
                                                      error):
    # what a CANN name fixes is the op's attribute, to one of its values;
    # its input order orders the op's sources
    sys.path.insert(0, os.path.dirname(GEN))
    try:
        import gen_ops
    finally:
        sys.path.pop(0)
    with open(gen_ops.SCHEMA) as f:
        text = f.read()
    assert old in text
    bad = tmp_path / "ops.toml"
    bad.write_text(text.replace(old, new))
    with pytest.raises(gen_ops.SchemaError, match=error):
        gen_ops.load(str(bad))


def test_the_readme_lists_every_davinci_ops_function():
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    start = text.index("Ops, one function per compute op")
    listed = text[text.index("`", text.index("OP_FUNCTIONS`", start) + 14)
                  + 1:].split("`", 1)[0].split()
    assert listed == list(ops.OP_FUNCTIONS)


def test_the_packaged_version_info_names_this_abi():
    path = os.path.join(REPO, "userspace", "davinci", "data", "version.info")
    with open(path) as f:
        fields = dict(line.strip().split("=", 1) for line in f if "=" in line)
    assert fields["abi_version"] == "%d.%d" % (_uapi.DAVINCI_ABI_MAJOR,
                                               _uapi.DAVINCI_ABI_MINOR)

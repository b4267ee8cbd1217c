# SPDX-License-Identifier: GPL-2.0
"""ABI test: the ctypes mirrors of the core's own structs (davinci._corelib)
against kmod/core/dv_core.h.

dvc_device_create() takes a struct dv_device_config that _corelib's
DeviceConfig copies by hand, and dvc_stats() fills a struct dv_stats that
CoreStats copies; nothing else would notice either drifting apart (the
library reads and writes whatever bytes it is given). As test_abi.py does
for the uapi, a generated C program prints sizeof, alignof and the offset
and size of every field, compiled with gcc against the core's headers; the
header's field list must also be the mirror's, so a field added in C where
padding was is caught too.
"""

import ctypes
import os
import re
import shutil
import subprocess

import pytest

from davinci import _corelib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
HEADER = os.path.join(REPO, "kmod", "core", "dv_core.h")
# the userspace build's include path (the Makefile's CORE_CFLAGS)
INCLUDES = [os.path.join(REPO, d) for d in
            ("kmod/core", "kmod/include", "userspace/libdavinci_core")]

#: C struct name -> its ctypes mirror
MIRRORS = {"dv_device_config": _corelib.DeviceConfig,
           "dv_stats": _corelib.CoreStats}


def _header_fields(struct: str) -> list[str]:
    """Field names of ``struct`` in dv_core.h, in order."""
    with open(HEADER) as f:
        text = f.read()
    m = re.search(r"^struct %s \{(.*?)^\};" % struct, text, re.M | re.S)
    assert m, "struct %s not found in %s" % (struct, HEADER)
    return re.findall(r"(\w+)\s*(?:\[[^]]*\])?;", m.group(1))


@pytest.mark.parametrize("struct", sorted(MIRRORS))
def test_mirror_has_the_header_fields_in_order(struct):
    mirrored = [name for name, _ in MIRRORS[struct]._fields_]
    assert mirrored == _header_fields(struct), (
        "%s's fields differ from struct %s in dv_core.h: update the mirror "
        "in userspace/davinci/_corelib.py" % (MIRRORS[struct].__name__,
                                              struct))


def _c_program() -> str:
    lines = ["#include <stdio.h>", "#include <stddef.h>",
             '#include "dv_core.h"', "int main(void) {"]
    for name, cls in MIRRORS.items():
        lines.append('printf("sizeof %s %%zu\\n", sizeof(struct %s));'
                     % (name, name))
        lines.append('printf("alignof %s %%zu\\n", _Alignof(struct %s));'
                     % (name, name))
        for field, _ in cls._fields_:
            lines.append(
                'printf("offsetof %s.%s %%zu\\n", offsetof(struct %s, %s));'
                % (name, field, name, field))
            lines.append(
                'printf("fieldsize %s.%s %%zu\\n", '
                'sizeof(((struct %s *)0)->%s));' % (name, field, name, field))
    lines += ["return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_values(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("core_abi")
    src = d / "core_abi.c"
    exe = d / "core_abi"
    src.write_text(_c_program())
    cmd = [cc, "-std=gnu11", "-Wall", "-Werror"]
    for inc in INCLUDES:
        cmd += ["-I", inc]
    built = subprocess.run(cmd + [str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    # a mirrored field the header lacks fails here, in offsetof
    assert built.returncode == 0, (
        "the C program of the mirrors' layout does not compile against "
        "dv_core.h (a field renamed or removed?):\n" + built.stderr)
    out = subprocess.run([str(exe)], check=True, capture_output=True,
                         text=True).stdout
    values = {}
    for line in out.splitlines():
        kind, name, value = line.split()
        values[(kind, name)] = int(value)
    return values


def test_struct_sizes(c_values):
    bad = []
    for name, cls in MIRRORS.items():
        if c_values[("sizeof", name)] != ctypes.sizeof(cls):
            bad.append("%s: C %d, ctypes %d" % (
                name, c_values[("sizeof", name)], ctypes.sizeof(cls)))
        if c_values[("alignof", name)] != ctypes.alignment(cls):
            bad.append("%s alignment: C %d, ctypes %d" % (
                name, c_values[("alignof", name)], ctypes.alignment(cls)))
    assert not bad, "\n".join(bad)


def test_field_offsets_and_sizes(c_values):
    bad = []
    for name, cls in MIRRORS.items():
        for field, ctype in cls._fields_:
            key = "%s.%s" % (name, field)
            off = getattr(cls, field).offset
            if c_values[("offsetof", key)] != off:
                bad.append("offsetof %s: C %d, ctypes %d"
                           % (key, c_values[("offsetof", key)], off))
            if c_values[("fieldsize", key)] != ctypes.sizeof(ctype):
                bad.append("sizeof %s: C %d, ctypes %d"
                           % (key, c_values[("fieldsize", key)],
                              ctypes.sizeof(ctype)))
    assert not bad, "\n".join(bad)

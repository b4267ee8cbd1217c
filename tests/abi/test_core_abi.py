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

import os
import re

import pytest
from abi_layout import (c_program_values, field_mismatches, layout_printfs,
                        size_mismatches)

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
    lines += layout_printfs(MIRRORS)
    lines += ["return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_values(tmp_path_factory):
    # a mirrored field the header lacks fails the build, in offsetof
    return c_program_values(_c_program(), INCLUDES,
                            tmp_path_factory.mktemp("core_abi"),
                            "the mirrors' layout against dv_core.h (a field "
                            "renamed or removed?)")


def test_struct_sizes(c_values):
    bad = size_mismatches(c_values, MIRRORS)
    assert not bad, "\n".join(bad)


def test_field_offsets_and_sizes(c_values):
    bad = field_mismatches(c_values, MIRRORS)
    assert not bad, "\n".join(bad)

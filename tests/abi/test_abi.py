# SPDX-License-Identifier: GPL-2.0
"""ABI test: the ctypes mirror (davinci._uapi) against the C header.

Generates a C program from the mirror's struct and field lists that prints
sizeof and offsetof of every struct and field, every ioctl number and every
constant, compiles it with gcc against kmod/include, runs it and compares.
Also fails when davinci.h declares a struct the mirror lacks.
"""

import ctypes
import os
import re

import pytest
from abi_layout import (c_program_values, field_mismatches, layout_printfs,
                        size_mismatches)

from davinci import _uapi

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
INCLUDE = os.path.join(REPO, "kmod", "include")
HEADER = os.path.join(INCLUDE, "uapi", "davinci.h")


def _header_text():
    with open(HEADER) as f:
        return f.read()


def test_every_struct_is_mirrored():
    names = set(re.findall(r"^struct (davinci_\w+) \{", _header_text(), re.M))
    assert names, "no structs found in davinci.h"
    missing = sorted(names - set(_uapi.STRUCTS))
    assert not missing, "structs of davinci.h missing from _uapi: %s" % missing
    extra = sorted(set(_uapi.STRUCTS) - names)
    assert not extra, "_uapi mirrors structs davinci.h lacks: %s" % extra


def test_every_ioctl_is_mirrored():
    names = set(re.findall(r"^#define (DAVINCI_IOCTL_\w+)\s*\\?$",
                           _header_text(), re.M))
    names.discard("DAVINCI_IOCTL_BASE")
    missing = sorted(names - set(_uapi.IOCTLS))
    assert not missing, "ioctls of davinci.h missing from _uapi: %s" % missing


def test_every_constant_is_mirrored():
    text = _header_text()
    names = set(re.findall(r"^#define (DAVINCI_\w+)[ \t]+\S", text, re.M))
    names |= set(re.findall(r"^\s*(DAVINCI_(?:OP|DTYPE)_\w+)", text, re.M))
    names = {n for n in names if not n.startswith("DAVINCI_IOCTL_")
             and n not in ("DAVINCI_MMAP_ARENA", "DAVINCI_MMAP_ARENA_OFFSET")}
    names.discard("_UAPI_DAVINCI_H")
    missing = sorted(n for n in names if not hasattr(_uapi, n))
    assert not missing, "constants of davinci.h missing from _uapi: %s" % missing


def _c_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>",
             "#include <uapi/davinci.h>", "int main(void) {"]
    lines += layout_printfs(_uapi.STRUCTS)
    for name in _uapi.IOCTLS:
        lines.append('printf("ioctl %s %%lu\\n", (unsigned long)%s);'
                     % (name, name))
    for name in _uapi.CONSTANTS:
        lines.append('printf("const %s %%llu\\n", '
                     '(unsigned long long)(%s));' % (name, name))
    lines.append('printf("macro DAVINCI_MMAP_ARENA %llu\\n", '
                 '(unsigned long long)DAVINCI_MMAP_ARENA(0x123456789abcdULL));')
    lines.append('printf("macro DAVINCI_MMAP_ARENA_OFFSET %llu\\n", '
                 '(unsigned long long)DAVINCI_MMAP_ARENA_OFFSET('
                 '0x123456789abcdULL));')
    lines += ["return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_values(tmp_path_factory):
    return c_program_values(_c_program(), [INCLUDE],
                            tmp_path_factory.mktemp("abi"),
                            "the uapi mirror against davinci.h")


def test_struct_sizes(c_values):
    bad = size_mismatches(c_values, _uapi.STRUCTS)
    assert not bad, "\n".join(bad)


def test_field_offsets_and_sizes(c_values):
    bad = field_mismatches(c_values, _uapi.STRUCTS)
    assert not bad, "\n".join(bad)


def test_ioctl_numbers(c_values):
    bad = ["%s: C %#x, python %#x" % (n, c_values[("ioctl", n)], v)
           for n, v in _uapi.IOCTLS.items() if c_values[("ioctl", n)] != v]
    assert not bad, "\n".join(bad)


def test_constants(c_values):
    bad = ["%s: C %d, python %d" % (n, c_values[("const", n)], v)
           for n, v in _uapi.CONSTANTS.items()
           if c_values[("const", n)] != v & 0xFFFFFFFFFFFFFFFF]
    assert not bad, "\n".join(bad)
    off = 0x123456789abcd
    assert c_values[("macro", "DAVINCI_MMAP_ARENA")] == \
        _uapi.DAVINCI_MMAP_ARENA(off)
    assert c_values[("macro", "DAVINCI_MMAP_ARENA_OFFSET")] == \
        _uapi.DAVINCI_MMAP_ARENA_OFFSET(off)


def test_ioctl_helpers_match_kernel_layout():
    # _IOC(dir, type, nr, size) as asm-generic/ioctl.h
    assert _uapi._IOWR(0xDA, 0x10, _uapi.davinci_mem_alloc) == \
        (3 << 30) | (48 << 16) | (0xDA << 8) | 0x10
    n = _uapi.DAVINCI_IOCTL_NOTIFY_WAIT
    assert _uapi._IOC_NR(n) == 0x40 and _uapi._IOC_TYPE(n) == 0xDA
    assert _uapi._IOC_SIZE(n) == ctypes.sizeof(_uapi.davinci_notification)
    assert _uapi._IOC_DIR(n) == _uapi._IOC_READ | _uapi._IOC_WRITE
    assert _uapi.DAVINCI_IOCTL_CTX_RESET == (0xDA << 8) | 0x03

# SPDX-License-Identifier: GPL-2.0
"""What the ABI tests share: a C program that prints the layout of the C
structs a ctypes mirror copies, built and run, and the comparison of its
figures with the mirror's.

``structs`` maps a C struct name (without ``struct``) to its
``ctypes.Structure`` mirror; the program's figures are keyed
``(kind, name)``: ``sizeof``/``alignof`` of a struct, ``offsetof``/
``fieldsize`` of ``struct.field``.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest


def layout_printfs(structs: dict[str, type]) -> list[str]:
    """C statements printing every struct's size and alignment and every
    field's offset and size."""
    lines = []
    for name, cls in structs.items():
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
    return lines


def c_program_values(source: str, includes: list[str], workdir,
                     what: str) -> dict[tuple[str, str], int]:
    """Build ``source`` with gcc (``-Wall -Werror``, ``includes`` on the
    path) in ``workdir``, run it, and parse its ``kind name value`` lines.
    Skips without a C compiler; a build error fails with gcc's message,
    ``what`` saying what the program checks."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    src = workdir / "layout.c"
    exe = workdir / "layout"
    src.write_text(source)
    cmd = [cc, "-std=gnu11", "-Wall", "-Werror"]
    for inc in includes:
        cmd += ["-I", inc]
    built = subprocess.run(cmd + [str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert built.returncode == 0, (
        "the C program of %s does not compile:\n%s" % (what, built.stderr))
    out = subprocess.run([str(exe)], check=True, capture_output=True,
                         text=True).stdout
    values = {}
    for line in out.splitlines():
        kind, name, value = line.split()
        values[(kind, name)] = int(value)
    return values


def size_mismatches(values: dict, structs: dict[str, type]) -> list[str]:
    """Structs whose size or alignment differs between C and ctypes."""
    bad = []
    for name, cls in structs.items():
        if values[("sizeof", name)] != ctypes.sizeof(cls):
            bad.append("%s: C %d, ctypes %d" % (
                name, values[("sizeof", name)], ctypes.sizeof(cls)))
        if values[("alignof", name)] != ctypes.alignment(cls):
            bad.append("%s alignment: C %d, ctypes %d" % (
                name, values[("alignof", name)], ctypes.alignment(cls)))
    return bad


def field_mismatches(values: dict, structs: dict[str, type]) -> list[str]:
    """Fields whose offset or size differs between C and ctypes."""
    bad = []
    for name, cls in structs.items():
        for field, ctype in cls._fields_:
            key = "%s.%s" % (name, field)
            off = getattr(cls, field).offset
            if values[("offsetof", key)] != off:
                bad.append("offsetof %s: C %d, ctypes %d"
                           % (key, values[("offsetof", key)], off))
            if values[("fieldsize", key)] != ctypes.sizeof(ctype):
                bad.append("sizeof %s: C %d, ctypes %d"
                           % (key, values[("fieldsize", key)],
                              ctypes.sizeof(ctype)))
    return bad

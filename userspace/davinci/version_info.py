# SPDX-License-Identifier: GPL-2.0
"""``version.info``: the installed driver package's version file.

Like the real ``/usr/local/Ascend/driver/version.info``: ``key=value`` lines
(``Version=``, ``package_version=``, ``innerversion=``,
``compatible_version=[...]``, ...). One ships with this package
(``davinci/data/version.info``); ``DAVINCI_VERSION_INFO`` points at another.
``npu-smi -v``, ``davinci doctor`` and the runtime's version check read it.
"""

from __future__ import annotations

import os

__all__ = ["default_path", "read", "parse"]


def default_path() -> str:
    """``$DAVINCI_VERSION_INFO``, else the file shipped with the package."""
    env = os.environ.get("DAVINCI_VERSION_INFO")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        "version.info")


def parse(text: str) -> "dict[str, str]":
    """Parse ``key=value`` lines; blank lines and ``#`` comments are skipped.
    Keys keep their case; ``get()`` below also matches them case-blind."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def read(path: "str | None" = None) -> "dict[str, str]":
    """The parsed file (``path`` or :func:`default_path`); {} when missing."""
    path = path or default_path()
    try:
        with open(path, encoding="utf-8") as f:
            return parse(f.read())
    except OSError:
        return {}


def get(info: "dict[str, str]", key: str, default: str = "") -> str:
    """``info[key]``, matching the key case-blind (``Innerversion=`` and
    ``innerversion=`` both occur in the wild)."""
    if key in info:
        return info[key]
    low = key.lower()
    for k, v in info.items():
        if k.lower() == low:
            return v
    return default

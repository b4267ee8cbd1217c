# SPDX-License-Identifier: GPL-2.0
"""Build (once, cached) and load torch_npu's C++ half (csrc/npu.cpp).

torch.utils.cpp_extension compiles it with the machine's g++ on first
import and caches the result under ``$TORCH_EXTENSIONS_DIR`` (default
``~/.cache/torch_extensions``), keyed by the source, so later imports only
load it. ``scripts/install-deps.sh`` warms the cache. Where the cache is
read-only (the QEMU guest sees the host's root read-only), a copy of it in
a temporary directory is used: loading takes a lock file in the build
directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from types import ModuleType

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc",
                    "npu.cpp")
_module: ModuleType | None = None


def load() -> ModuleType:
    """The compiled extension module (built on first use)."""
    global _module
    if _module is None:
        from torch.utils import cpp_extension
        try:
            _module = cpp_extension.load(
                name="torch_npu_C", sources=[_SRC],
                extra_cflags=["-O2"], verbose=False,
                build_directory=_build_directory())
        except Exception as e:      # compiler missing, headers missing...
            raise ImportError(
                "torch_npu: building its C++ extension from %s failed (%s); "
                "it needs g++ and Python headers (scripts/install-deps.sh "
                "installs them)" % (_SRC, e)) from e
    return _module


def _build_directory() -> str:
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "torch_extensions")
    path = os.path.join(root, "davinci_torch_npu")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    copy = os.path.join(tempfile.mkdtemp(prefix="torch_npu-"), "build")
    if os.path.isdir(path):
        shutil.copytree(path, copy)
    else:
        os.makedirs(copy)
    return copy


if __name__ == "__main__":      # scripts/install-deps.sh: build it now
    print(load().__file__)

# SPDX-License-Identifier: GPL-2.0
"""Build (once, cached) and load torch_npu's C++ half (csrc/*.cpp).

torch.utils.cpp_extension compiles it with the machine's g++ the first
time and the result is kept under ``$TORCH_EXTENSIONS_DIR`` (default
``~/.cache/torch_extensions``) in a folder named by the sources' hash and
torch's version. Once a build there is complete (its stamp file written
last), every later import loads the module file directly: no compiler, no
lock file, whichever copy of the source (a clone, the installed package)
asked for it, and also where the cache is read-only (the QEMU guest sees
the host's root read-only). ``scripts/install-deps.sh`` builds it.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import tempfile
from types import ModuleType

_NAME = "torch_npu_C"
_CSRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")
_SOURCES = [os.path.join(_CSRC, name) for name in ("npu.cpp", "fallback.cpp")]
_HEADERS = [os.path.join(_CSRC, "npu.h")]
_CFLAGS = ["-O2"]
_STAMP = "built"
_module: ModuleType | None = None


def load() -> ModuleType:
    """The compiled extension module (built on first use)."""
    global _module
    if _module is None:
        build = _build_directory()
        built = os.path.join(build, _NAME + ".so")
        if os.path.exists(os.path.join(build, _STAMP)):
            _module = _import(built)
        else:
            _module = _compile(build if os.access(build, os.W_OK) else
                               tempfile.mkdtemp(prefix="torch_npu-"))
    return _module


def _build_directory() -> str:
    import torch
    digest = hashlib.sha256(repr(_CFLAGS).encode())
    for path in _SOURCES + _HEADERS:
        with open(path, "rb") as f:
            digest.update(f.read())
    key = digest.hexdigest()
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "torch_extensions")
    path = os.path.join(root, "davinci_torch_npu-%s-torch%s"
                        % (key[:16], torch.__version__))
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        pass        # read-only: load() builds in a temporary folder
    return path


def _compile(build: str) -> ModuleType:
    from torch.utils import cpp_extension
    try:
        module = cpp_extension.load(name=_NAME, sources=_SOURCES,
                                    extra_cflags=_CFLAGS, verbose=False,
                                    build_directory=build)
    except Exception as e:      # compiler missing, headers missing...
        raise ImportError(
            "torch_npu: building its C++ extension from %s failed (%s); "
            "it needs g++ and Python headers (scripts/install-deps.sh "
            "installs them)" % (_CSRC, e)) from e
    stamp = os.path.join(build, _STAMP)
    with open(stamp + ".tmp", "w") as f:
        f.write(_CSRC + "\n")
    os.replace(stamp + ".tmp", stamp)
    return module


def _import(path: str) -> ModuleType:
    import torch  # noqa: F401 (the module links against torch's libraries)
    loader = importlib.machinery.ExtensionFileLoader(_NAME, path)
    spec = importlib.util.spec_from_file_location(_NAME, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


if __name__ == "__main__":      # scripts/install-deps.sh: build it now
    print(load().__file__)

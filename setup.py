"""Builds the device core into the davinci package as a plain shared library.

The core (kmod/core) is the same C the kernel module runs; here it is linked
with the POSIX OS layer (userspace/libdavinci_core) and loaded with ctypes,
so it is an extension only in name: it exports no Python module.
"""
from glob import glob

from setuptools import Extension, setup

CORE_SOURCES = sorted(glob("kmod/core/*.c") + glob("userspace/libdavinci_core/*.c"))

setup(
    ext_modules=[
        Extension(
            "davinci._libdavinci_core",
            sources=CORE_SOURCES,
            include_dirs=["kmod/core", "kmod/include", "userspace/libdavinci_core"],
            extra_compile_args=["-std=gnu11", "-O2", "-ffp-contract=off", "-fno-fast-math", "-pthread"],
            # Export the dvc_* API only (libdavinci_core.h).
            extra_link_args=["-pthread", "-Wl,--version-script="
                             "userspace/libdavinci_core/libdavinci_core.map"],
        )
    ],
)

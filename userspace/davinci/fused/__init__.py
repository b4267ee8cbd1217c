# SPDX-License-Identifier: GPL-2.0
"""davinci-fused: the userspace device core served over FUSE.

Run ``davinci-fused [--devices N] [MOUNTPOINT]`` (or ``python -m
davinci.fused``); see davinci.fused.daemon for the design.
"""

from .mount import default_mountpoint

__all__ = ["default_mountpoint", "main"]


def main(argv=None):
    from .__main__ import main as _main
    return _main(argv)

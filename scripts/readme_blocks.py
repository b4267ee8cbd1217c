# SPDX-License-Identifier: GPL-2.0
"""A block of README.md that a script writes from a registry, between two
marker lines (scripts/gen_atc_ops.py, scripts/gen_torch_ops.py)."""

from __future__ import annotations

import os
import sys
from typing import Callable

README = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "README.md")


class Block:
    """The block between ``begin`` and ``end``; ``what`` names its list in
    messages, ``script`` the file that writes it."""

    def __init__(self, begin: str, end: str, what: str, script: str):
        self.begin, self.end = begin, end
        self.what, self.script = what, script

    def text(self, body: str) -> str:
        """The block with ``body`` inside, markers included."""
        return "%s\n%s\n%s" % (self.begin, body, self.end)

    def of(self, readme: str) -> str:
        """The block as the README's text ``readme`` has it."""
        start, end = readme.find(self.begin), readme.find(self.end)
        if start < 0 or end < start:
            raise SystemExit("README.md has no %r ... %r block"
                             % (self.begin, self.end))
        return readme[start:end + len(self.end)]

    def main(self, argv: list[str], body: Callable[[], str]) -> int:
        """Rewrite the README's block from ``body()``; with --check, exit 1
        if it is stale instead."""
        with open(README, encoding="utf-8") as f:
            readme = f.read()
        old, new = self.of(readme), self.text(body())
        if "--check" in argv:
            if old != new:
                print("README.md's list of %s is stale: run scripts/%s.py"
                      % (self.what, self.script), file=sys.stderr)
                return 1
            return 0
        if old != new:
            with open(README, "w", encoding="utf-8") as f:
                f.write(readme.replace(old, new))
            print("%s: wrote README.md" % self.script)
        return 0

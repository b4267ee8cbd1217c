#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the README's list of the ONNX ops davinci-atc converts, between
its markers, from davinci-atc's registry (davinci.atc.lower.RULES).

    python scripts/gen_atc_ops.py           # rewrite README.md's list
    python scripts/gen_atc_ops.py --check   # exit 1 if it is stale

tests/atc/test_registry.py fails when the list and the registry differ.
"""

from __future__ import annotations

import os
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(REPO, "README.md")
BEGIN = ("<!-- davinci-atc's ONNX ops: scripts/gen_atc_ops.py writes them "
         "from davinci.atc.lower.RULES -->")
END = "<!-- end of davinci-atc's ONNX ops -->"


def op_list() -> str:
    """The ops of the registry as the README lists them: ONNX's own, then
    each other domain's."""
    sys.path.insert(0, os.path.join(REPO, "userspace"))
    from davinci.atc.lower import RULES
    own = sorted({r.op_type for r in RULES if not r.domain})
    others = sorted({r.domain for r in RULES if r.domain})
    parts = [", ".join(own)] + [
        "%s's %s" % (d, ", ".join(sorted({r.op_type for r in RULES
                                          if r.domain == d})))
        for d in others]
    return textwrap.fill("; ".join(parts) + ".", 76)


def block() -> str:
    return "%s\n%s\n%s" % (BEGIN, op_list(), END)


def readme_block(text: str) -> str:
    """The marked block of the README's ``text``, markers included."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit("README.md has no %r ... %r block" % (BEGIN, END))
    return text[start:end + len(END)]


def main(argv: list[str]) -> int:
    with open(README, encoding="utf-8") as f:
        text = f.read()
    old, new = readme_block(text), block()
    if "--check" in argv:
        if old != new:
            print("README.md's list of davinci-atc's ops is stale: run "
                  "scripts/gen_atc_ops.py", file=sys.stderr)
            return 1
        return 0
    if old != new:
        with open(README, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
        print("gen_atc_ops: wrote README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

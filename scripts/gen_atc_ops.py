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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_blocks import Block  # noqa: E402

BEGIN = ("<!-- davinci-atc's ONNX ops: scripts/gen_atc_ops.py writes them "
         "from davinci.atc.lower.RULES -->")
END = "<!-- end of davinci-atc's ONNX ops -->"
BLOCK = Block(BEGIN, END, "davinci-atc's ops", "gen_atc_ops")


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
    return BLOCK.text(op_list())


def readme_block(text: str) -> str:
    """The marked block of the README's ``text``, markers included."""
    return BLOCK.of(text)


def main(argv: list[str]) -> int:
    return BLOCK.main(argv, op_list)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

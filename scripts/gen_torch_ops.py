#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the README's list of the ATen ops torch_npu runs on the device,
between its markers, from torch_npu's table (torch_npu._op_table.TABLE).

    python scripts/gen_torch_ops.py           # rewrite README.md's list
    python scripts/gen_torch_ops.py --check   # exit 1 if it is stale

It imports torch_npu (torch and its built extension; no device needed).
tests/torch/test_op_table.py fails when the list and the table differ.
"""

from __future__ import annotations

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_blocks import Block  # noqa: E402

BEGIN = ("<!-- torch_npu's device ops: scripts/gen_torch_ops.py writes them "
         "from torch_npu._op_table.TABLE -->")
END = "<!-- end of torch_npu's device ops -->"
BLOCK = Block(BEGIN, END, "torch_npu's device ops", "gen_torch_ops")


def _table():
    sys.path.insert(0, os.path.join(REPO, "userspace"))
    from torch_npu import _op_table
    return _op_table


def _code(names) -> str:
    return ", ".join("`%s`" % n for n in names)


def op_list() -> str:
    """The table's rows as the README lists them: one line per device path
    (ATen op and overloads on its first), then the plumbing rows."""
    t = _table()
    lines = ["| ATen op (overloads) | device ops | dtypes | operands |",
             "|---|---|---|---|"]
    for e in t.TABLE:
        for i, p in enumerate(e.paths):
            name = "" if i else "`%s`" % e.op if list(e.kernels) == [e.op] \
                else "`%s` (%s)" % (e.op, _code(e.kernels))
            lines.append("| %s | %s | %s | %s |" % (
                name, ", ".join(p.ops), p.dtype_names, p.operands))
    plumbing = ["`%s`%s: %s" % (e.op, "" if e.key == "PrivateUse1"
                                else " (%s)" % e.key, e.note)
                for e in t.TABLE if not e.paths]
    lines += ["", "Registered with no device op of their own: " +
              "; ".join(plumbing) + "."]
    return "\n".join(lines)


def block() -> str:
    return BLOCK.text(op_list())


def readme_block(text: str) -> str:
    """The marked block of the README's ``text``, markers included."""
    return BLOCK.of(text)


def main(argv: list[str]) -> int:
    return BLOCK.main(argv, op_list)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

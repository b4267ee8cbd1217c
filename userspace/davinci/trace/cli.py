# SPDX-License-Identifier: GPL-2.0
"""The ``davinci trace`` and ``davinci trace-summary`` subcommands."""

from __future__ import annotations

import argparse
import sys

__all__ = ["COMMANDS", "add_parsers", "main"]

COMMANDS = ("trace", "trace-summary")


def add_parsers(sub) -> None:
    """Add the subcommands to ``davinci``'s subparsers."""
    pt = sub.add_parser(
        "trace", help="run a command and write a Perfetto trace of what the "
        "NPU did", description="davinci trace [-o FILE] [--png PNG] -- "
        "COMMAND [ARGS...]: open FILE in ui.perfetto.dev")
    pt.add_argument("-o", "--output", default="davinci.pftrace",
                    help="trace file (default: davinci.pftrace)")
    pt.add_argument("--png", help="also draw the timeline into this PNG")
    pt.add_argument("-q", "--quiet", action="store_true",
                    help="no summary on stderr")
    pt.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- COMMAND [ARGS...]")
    ps = sub.add_parser("trace-summary",
                        help="summarise a written trace in the terminal")
    ps.add_argument("trace", help="a trace davinci wrote")
    ps.add_argument("--png", help="also draw the timeline into this PNG")


def main(args) -> int:
    if args.cmd == "trace":
        command = args.command[1:] if args.command[:1] == ["--"] \
            else args.command
        if not command:
            print("davinci trace: give the command to trace after --",
                  file=sys.stderr)
            return 2
        from .launch import run_traced
        return run_traced(command, args.output, args.png, not args.quiet)
    from .summary import summarize
    from .timeline import load_timeline
    try:
        tl = load_timeline(args.trace)
    except (OSError, ValueError) as exc:
        print("davinci trace-summary: cannot read %s: %s (is it a trace "
              "davinci wrote?)" % (args.trace, exc), file=sys.stderr)
        return 1
    print(summarize(tl))
    if args.png:
        from .png import render_png
        render_png(tl, args.png)
    return 0

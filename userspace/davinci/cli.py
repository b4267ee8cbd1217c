# SPDX-License-Identifier: GPL-2.0
"""``davinci`` console command: ``davinci info`` lists devices, versions and
the ops the driver serves, ``davinci doctor`` walks the troubleshooting
checklist."""

from __future__ import annotations

import argparse
import sys
import textwrap


def _mib(n: int) -> str:
    return "%d MiB" % (n >> 20)


def _print_capabilities(caps) -> None:
    """The ops and dtypes the driver serves, and the schema's it lacks."""
    how = "DAVINCI_IOCTL_GET_CAP" if caps.source == "query" else \
        "its feature bits: a driver before ABI 1.6"
    names = " ".join(op.name for op in caps.ops)
    names += "".join(" opcode %d" % code for code in caps.unknown_opcodes)
    print(textwrap.fill(names, 78, initial_indent="ops       : ",
                        subsequent_indent=" " * 12))
    print("            %d served (%s)%s" % (
        len(caps.op_dtypes), how, "; missing from this runtime's schema: "
        + " ".join(op.name for op in caps.missing) if caps.missing else ""))
    print("dtypes    : %s" % " ".join(caps.dtype_names))


def cmd_info(args) -> int:
    import davinci
    from davinci import discovery
    from davinci.errors import DevicePermissionError
    try:
        backend = discovery.find_backend()
    except davinci.DavinciError as exc:
        print("davinci: %s" % exc, file=sys.stderr)
        return 1
    print("runtime   : davinci %s (ABI %d.%d)" % (
        davinci.__version__, *davinci.ABI_VERSION))
    print("backend   : %s" % backend.describe())
    indices = backend.device_indices()
    try:
        v = davinci.Version.from_struct(discovery.manager_version(backend))
        print("driver    : %s" % v)
    except DevicePermissionError as exc:
        print("davinci: %s" % exc, file=sys.stderr)
        return 1
    except davinci.DavinciError as exc:
        v = None
        if indices:
            try:
                with davinci.Device(indices[0], backend) as dev:
                    v = dev.version
            except davinci.DavinciError:
                pass
        if v is not None:
            print("driver    : %s (from davinci%d)" % (v, indices[0]))
        else:
            print("driver    : unknown (%s)" % exc)
    if indices:
        try:
            with davinci.Device(indices[0], backend) as dev:
                _print_capabilities(dev.capabilities())
        except davinci.DavinciError:
            pass        # the device list below says what failed
    print("devices   : %d" % len(indices))
    for i in indices:
        try:
            with davinci.Device(i, backend) as dev:
                inf = dev.info
                print("  davinci%-3d %-16s serial %-12s aicores %-3d health %s"
                      % (i, inf.name, inf.serial, inf.aicores,
                         inf.health_name))
                print("             HBM %s / %s used, pinned host %s / %s "
                      "used, task timeout %d ms"
                      % (_mib(inf.hbm_total - inf.hbm_free),
                         _mib(inf.hbm_total),
                         _mib(inf.host_total - inf.host_free),
                         _mib(inf.host_total), inf.task_timeout_ms))
        except davinci.DavinciError as exc:
            print("  davinci%-3d error: %s" % (i, exc))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="davinci",
                                description="davinci virtual NPU runtime")
    sub = p.add_subparsers(dest="cmd")
    sub.add_parser("info", help="list devices and versions")
    pd = sub.add_parser("doctor", help="diagnose the driver setup: module, "
                        "nodes, daemon, versions, health, memory")
    pd.add_argument("--json", action="store_true", help="JSON output")
    from .trace import cli as trace_cli
    trace_cli.add_parsers(sub)
    args = p.parse_args(argv)
    if args.cmd in (None, "info"):
        return cmd_info(args)
    if args.cmd == "doctor":
        from . import doctor
        return doctor.main(as_json=args.json)
    if args.cmd in trace_cli.COMMANDS:
        return trace_cli.main(args)
    p.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())

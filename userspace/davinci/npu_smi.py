# SPDX-License-Identifier: GPL-2.0
"""``npu-smi``: show and manage davinci NPUs, in the real tool's layout.

    npu-smi info                         the device table and the process table
    npu-smi info -l                      list the NPUs
    npu-smi info -t board|memory|usages|health -i N
    npu-smi info watch [-i N] [--count K] [--interval S]
    npu-smi -v                           versions (version.info, the driver)
    npu-smi set -t reset -i N            reset NPU N (privileged)
    npu-smi set -t fault-inject -i N --fault ecc|hang|lost|throttle
            [--addr A --size S] [--timeout-ms T] [--level P]
    npu-smi events [-i N] [--since SEQ | --all] [--count K] [--timeout S]
            [--source auto|netlink|log]

Every query takes ``--json``. Reset and fault injection need root
(CAP_SYS_ADMIN) on the kernel module, or to be the daemon's owner on FUSE.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from . import version_info
from .errors import DavinciError, DeviceNotFoundError

__all__ = ["main", "render_info", "render_table"]

_W1, _W2, _W3 = 27, 15, 52
_INNER = _W1 + _W2 + _W3 + 2
_KEY_W = 31


def _sep(ch: str) -> str:
    return "+" + ch * _W1 + "+" + ch * _W2 + "+" + ch * _W3 + "+"


def _row(a: str, b: str, c: str) -> str:
    return "|" + a.ljust(_W1)[:_W1] + "|" + b.ljust(_W2)[:_W2] + "|" + \
        c.ljust(_W3)[:_W3] + "|"


def _full(text: str) -> str:
    return "|" + text.ljust(_INNER) + "|"


def _mb(n: int) -> int:
    return n >> 20


def _usage(used, total, w_used=5, w_total=14) -> str:
    return "%s/ %s" % (str(used).ljust(w_used), str(total).ljust(w_total))


def _chip_name(name: str) -> str:
    return name[len("Ascend"):] if name.startswith("Ascend") else name


def package_version() -> str:
    """Version= of version.info; the runtime's own version without one."""
    v = version_info.get(version_info.read(), "Version")
    if not v:
        from . import __version__ as v
    return v


def render_table(infos, procs, version: str) -> "list[str]":
    """The ``npu-smi info`` text for MgmtInfo list ``infos`` and
    ``procs`` (device index -> list of ProcessInfo)."""
    out = ["+" + "-" * _INNER + "+",
           _full((" npu-smi %s" % version).ljust(34) + "Version: %s" %
                 version),
           _sep("-"),
           _row(" NPU   Name", " Health",
                " " + "Power(W)".ljust(12) + "Temp(C)".ljust(18) +
                "Hugepages-Usage(page)"),
           _row(" Chip", " Bus-Id",
                " " + "AICore(%)".ljust(12) + "Memory-Usage(MB)".ljust(18) +
                "HBM-Usage(MB)"),
           _sep("=")]
    for m in infos:
        out.append(_row(" " + str(m.index).ljust(6) + _chip_name(m.name),
                        " " + m.health_name,
                        " " + ("%.1f" % m.power_w).ljust(12) +
                        str(int(m.temp_c)).ljust(18) +
                        _usage(m.huge_used, m.huge_total)))
        out.append(_row(" 0", " " + m.bus_id,
                        " " + str(m.aicore_util).ljust(12) +
                        _usage(_mb(m.host_used), _mb(m.host_total), 5, 11) +
                        _usage(_mb(m.hbm_used), _mb(m.hbm_total))))
        out.append(_sep("="))
    out.append(_sep("-"))
    out.append(_row(" NPU     Chip", " Process id",
                    " " + "Process name".ljust(25) + "| " +
                    "Process memory(MB)"))
    out.append(_sep("="))
    for m in infos:
        ps = procs.get(m.index, [])
        if not ps:
            out.append(_full(" No running processes found in NPU %d"
                             % m.index))
        for p in ps:
            out.append(_row(" " + str(m.index).ljust(8) + "0",
                            " " + str(p.pid),
                            " " + p.name[:24].ljust(25) + "| " +
                            str(_mb(p.hbm_bytes))))
        out.append(_sep("="))
    return out


def render_info(mgr, indices=None) -> "list[str]":
    if indices is None:
        indices = mgr.devices()
    infos = [mgr.info(i) for i in indices]
    procs = {i: mgr.processes(i) for i in indices}
    return render_table(infos, procs, package_version())


def _kv(pairs) -> "list[str]":
    return ["        %s: %s" % (k.ljust(_KEY_W), v) for k, v in pairs]


def _print(lines) -> None:
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _json(obj) -> None:
    print(json.dumps(obj, indent=2, sort_keys=True))


def _manager():
    from .manager import Manager
    return Manager()


# --- info --------------------------------------------------------------------
def cmd_info(args) -> int:
    if args.watch:
        return cmd_watch(args)
    mgr = _manager()
    try:
        if args.list:
            devs = mgr.devices()
            infos = [mgr.info(i) for i in devs]
            if args.json:
                _json({"total_count": len(devs), "npus": [
                    {"npu_id": m.index, "product_name": m.board_name,
                     "chip_name": m.name, "serial_number": m.serial,
                     "chip_count": 1} for m in infos]})
                return 0
            lines = _kv([("Total Count", len(devs))])
            for m in infos:
                lines += [""] + _kv([
                    ("NPU ID", m.index), ("Product Name", m.board_name),
                    ("Serial Number", m.serial), ("Chip Count", 1)])
            _print(lines)
            return 0
        if args.type:
            if args.id is None:
                raise SystemExit("npu-smi: info -t %s needs -i <NPU id>"
                                 % args.type)
            return _info_type(mgr, args)
        indices = mgr.devices() if args.id is None else [args.id]
        if args.json:
            out = []
            for i in indices:
                d = mgr.info(i).to_dict()
                d["processes"] = [p.to_dict() for p in mgr.processes(i)]
                out.append(d)
            _json({"version": package_version(), "npus": out})
            return 0
        _print(render_info(mgr, indices))
        return 0
    finally:
        mgr.close()


def _info_type(mgr, args) -> int:
    m = mgr.info(args.id)
    t = args.type
    if t == "board":
        pairs = [("NPU ID", m.index), ("Software Version", m.driver_version),
                 ("Firmware Version", m.firmware_version),
                 ("Compatibility", "OK"),
                 ("Board ID", "0x%02x" % m.board_id),
                 ("Board Name", m.board_name), ("Chip Name", m.name),
                 ("Serial Number", m.serial), ("PCIe Bus Info", m.bus_id),
                 ("Slot ID", m.index), ("PCI Vendor ID", "0x19E5"),
                 ("PCI Device ID", "0xD802"), ("AI Core Count", m.aicores),
                 ("Chip Count", 1)]
    elif t == "memory":
        pairs = [("NPU ID", m.index),
                 ("DDR Capacity(MB)", _mb(m.host_total)),
                 ("DDR Usage(MB)", _mb(m.host_used)),
                 ("HBM Capacity(MB)", _mb(m.hbm_total)),
                 ("HBM Usage(MB)", _mb(m.hbm_used)),
                 ("HBM Usage Rate(%)", _pct(m.hbm_used, m.hbm_total)),
                 ("HBM Temperature(C)", int(m.temp_c)),
                 ("Hugepages Total(page)", m.huge_total),
                 ("Hugepages Usage(page)", m.huge_used)]
    elif t == "usages":
        pairs = [("NPU ID", m.index),
                 ("Memory Capacity(MB)", _mb(m.host_total)),
                 ("Memory Usage Rate(%)", _pct(m.host_used, m.host_total)),
                 ("HBM Capacity(MB)", _mb(m.hbm_total)),
                 ("HBM Usage Rate(%)", _pct(m.hbm_used, m.hbm_total)),
                 ("Aicore Usage Rate(%)", m.aicore_util),
                 ("Aicore Count", m.aicores),
                 ("Tasks Completed", m.tasks_completed),
                 ("Processes", m.processes)]
        if m.dispatcher is not None:
            d = m.dispatcher
            pairs += [("Dispatcher Idle Time(us)", d.idle_ns // 1000),
                      ("Dispatcher Sleeps", d.sleeps),
                      ("Dispatcher Sleeps, CPU Wanted", d.cpu_wanted),
                      ("Doorbells", d.kicks)]
    else:  # health
        err = "NA"
        if m.health_name != "OK":
            err = ", ".join(
                [("armed fault %s" % f) for f in m.faults_armed] +
                ["%s fired %d time(s)" % (k, v)
                 for k, v in m.faults_fired.items() if v]) or "NA"
        pairs = [("NPU ID", m.index), ("Health Status", m.health_name),
                 ("Error Information", err),
                 ("Temperature(C)", int(m.temp_c)),
                 ("Throttle(%)", m.throttle_pct),
                 ("Faults Armed", ", ".join(m.faults_armed) or "NA"),
                 ("ECC Errors", m.faults_fired["ecc"]),
                 ("AI Core Hangs", m.faults_fired["hang"]),
                 ("Device Lost", m.faults_fired["lost"]),
                 ("Throttled Tasks", m.faults_fired["throttle"]),
                 ("Resets", m.resets)]
    if args.json:
        _json({k: v for k, v in pairs})
    else:
        _print(_kv(pairs))
    return 0


def _pct(used: int, total: int) -> int:
    return int(used * 100 // total) if total else 0


def cmd_watch(args) -> int:
    mgr = _manager()
    n = 0
    try:
        header = ("NPU     Chip    Pwr(W)    Temp(C)   AI Core(%)  "
                  "Memory(%)   HBM(%)")
        if not args.json:
            print(header)
        while True:
            indices = mgr.devices() if args.id is None else [args.id]
            for i in indices:
                m = mgr.info(i)
                if args.json:
                    print(json.dumps(m.to_dict(), sort_keys=True))
                else:
                    print("%-8d%-8d%-10.1f%-10d%-12d%-12d%d" % (
                        m.index, 0, m.power_w, int(m.temp_c), m.aicore_util,
                        _pct(m.host_used, m.host_total),
                        _pct(m.hbm_used, m.hbm_total)))
            sys.stdout.flush()
            n += 1
            if args.count and n >= args.count:
                return 0
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0
    finally:
        mgr.close()


# --- set ---------------------------------------------------------------------
def _int(text: str) -> int:
    return int(text, 0)


def cmd_set(args) -> int:
    if args.id is None:
        raise SystemExit("npu-smi: set -t %s needs -i <NPU id>" % args.type)
    mgr = _manager()
    try:
        if args.type == "reset":
            n = mgr.reset(args.id)
            if args.json:
                _json({"npu_id": args.id, "reset": True,
                       "contexts_failed": n})
            else:
                print("Reset NPU %d successfully: %d open context(s) failed "
                      "with device lost and must reopen the device."
                      % (args.id, n))
            return 0
        if not args.fault:
            raise SystemExit("npu-smi: set -t fault-inject needs --fault "
                             "ecc|hang|lost|throttle")
        level = args.level
        if args.fault == "throttle" and level is None:
            level = 100
        mgr.inject(args.id, args.fault, addr=args.addr or 0,
                   size=args.size or 0, level=level or 0,
                   timeout_ms=args.timeout_ms or 0)
        if args.json:
            _json({"npu_id": args.id, "fault": args.fault, "addr": args.addr,
                   "size": args.size, "level": level,
                   "timeout_ms": args.timeout_ms})
        else:
            what = {
                "ecc": "the next task touching %s fails with an ECC error"
                       % ("[%#x, +%d)" % (args.addr or 0, args.size)
                          if args.size else "HBM"),
                "hang": "the next AI-core task hangs until the watchdog "
                        "times it out",
                "lost": "the device is lost until reset",
                "throttle": ("tasks take %d%% longer" % level) if level
                            else "throttle off",
            }[args.fault]
            print("Injected %s fault into NPU %d: %s." % (args.fault,
                                                         args.id, what))
        return 0
    finally:
        mgr.close()


# --- events ------------------------------------------------------------------
def cmd_events(args) -> int:
    mgr = _manager()
    try:
        since = 0 if args.all else args.since
        for ev in mgr.follow(since=since, device=args.id,
                             timeout=args.timeout, count=args.count,
                             interval=args.interval, source=args.source):
            if args.json:
                print(json.dumps(ev.to_dict(), sort_keys=True))
            else:
                print(ev.describe())
            sys.stdout.flush()
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        mgr.close()


# --- version -----------------------------------------------------------------
def cmd_version(args) -> int:
    path = version_info.default_path()
    vi = version_info.read(path)
    out = {"npu_smi_version": package_version(), "version_info": path,
           "package": vi}
    loaded = None
    try:
        mgr = _manager()
        try:
            v = mgr.version()
            from . import _uapi
            loaded = {"driver_version": _uapi.cstr(v.driver_version),
                      "abi": "%d.%d" % (v.abi_major, v.abi_minor),
                      "backend": _uapi.cstr(v.backend)}
        finally:
            mgr.close()
    except DavinciError as exc:
        loaded = {"error": str(exc)}
    out["driver"] = loaded
    if args.json:
        _json(out)
        return 0
    print("npu-smi version: %s" % package_version())
    print("driver package : %s (package_version %s, innerversion %s, "
          "compatible_version %s) from %s" % (
              version_info.get(vi, "Version", "?"),
              version_info.get(vi, "package_version", "?"),
              version_info.get(vi, "innerversion", "?"),
              version_info.get(vi, "compatible_version", "?"), path))
    if "error" in loaded:
        print("loaded driver  : none (%s)" % loaded["error"])
    else:
        print("loaded driver  : %s, ABI %s, backend %s"
              % (loaded["driver_version"], loaded["abi"], loaded["backend"]))
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="npu-smi", description="Show and manage davinci NPUs.")
    p.add_argument("-v", "--version", action="store_true",
                   help="show the npu-smi, driver package and driver "
                        "versions")
    p.add_argument("--json", action="store_true", help="JSON output")
    sub = p.add_subparsers(dest="cmd")

    def common(sp):
        sp.add_argument("--json", action="store_true", default=None,
                        help="JSON output")
        sp.add_argument("-i", "--id", type=int, help="NPU id")

    pi = sub.add_parser("info", help="device and process information")
    common(pi)
    pi.add_argument("watch", nargs="?", choices=["watch"],
                    help="refresh until Ctrl-C")
    pi.add_argument("-l", "--list", action="store_true", help="list NPUs")
    pi.add_argument("-t", "--type",
                    choices=["board", "memory", "usages", "health"])
    pi.add_argument("--count", type=int, default=0,
                    help="watch: stop after this many refreshes")
    pi.add_argument("--interval", type=float, default=1.0,
                    help="watch: seconds between refreshes")

    ps = sub.add_parser("set", help="reset or inject a fault (privileged)")
    common(ps)
    ps.add_argument("-t", "--type", required=True,
                    choices=["reset", "fault-inject"])
    ps.add_argument("--fault", choices=["ecc", "hang", "lost", "throttle"])
    ps.add_argument("--addr", type=_int, help="ecc: device address")
    ps.add_argument("--size", type=_int, default=0,
                    help="ecc: bytes of the region (0: all of HBM)")
    ps.add_argument("--level", type=int,
                    help="throttle: percent slower, 1..1000 (0: off; "
                         "default 100)")
    ps.add_argument("--timeout-ms", type=int,
                    help="hang: watchdog of the hung task (default: the "
                         "device's)")

    pe = sub.add_parser(
        "events", help="follow health changes, faults, resets, hot add and "
        "remove (netlink on the kernel module, the event log elsewhere)")
    common(pe)
    pe.add_argument("--since", type=int,
                    help="start after this sequence number (default: now)")
    pe.add_argument("--all", action="store_true",
                    help="start with every event still logged")
    pe.add_argument("--count", type=int, help="stop after this many events")
    pe.add_argument("--timeout", type=float,
                    help="stop after this many seconds")
    pe.add_argument("--interval", type=float, default=0.2,
                    help="poll interval of the event log in seconds")
    pe.add_argument("--source", choices=("auto", "netlink", "log"),
                    default="auto",
                    help="netlink: the kernel module's multicast group "
                         "(needs pyroute2); log: poll the manager's event "
                         "log; auto (default): netlink on the kernel module")
    return p


def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if getattr(args, "json", None) is None:
        args.json = False
    top_json = "--json" in (argv if argv is not None else sys.argv[1:])
    args.json = bool(args.json or top_json)
    if hasattr(args, "watch"):
        args.watch = args.watch == "watch"
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        if args.version:
            return cmd_version(args)
        if args.cmd in (None, "info"):
            if args.cmd is None:
                args.list = False
                args.type = None
                args.id = None
                args.watch = False
            return cmd_info(args)
        if args.cmd == "set":
            return cmd_set(args)
        if args.cmd == "events":
            return cmd_events(args)
    except DeviceNotFoundError as exc:
        print("npu-smi: %s" % exc, file=sys.stderr)
        return 2
    except DavinciError as exc:
        print("npu-smi: %s" % exc, file=sys.stderr)
        return 1
    p.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())

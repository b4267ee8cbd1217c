# SPDX-License-Identifier: GPL-2.0
"""davinci-fused command line: python -m davinci.fused / davinci-fused."""

import argparse
import logging
import os
import select
import sys
import time

from . import mount as mnt

log = logging.getLogger("davinci-fused")


def _parser():
    p = argparse.ArgumentParser(
        prog="davinci-fused",
        description="Serve virtual Da Vinci NPUs as davinci0..N-1 and "
        "davinci_manager in a FUSE mount, as an ordinary user (no kernel "
        "module needed). Point the runtime at it with DAVINCI_DEV_DIR=<mount>"
        " (the default mountpoint is found without it).")
    p.add_argument("mountpoint", nargs="?", default=None,
                   help="where to mount (default: %s)"
                   % mnt.default_mountpoint())
    p.add_argument("--devices", type=int, default=1, metavar="N",
                   help="number of devices (default 1)")
    p.add_argument("--hbm-mb", type=int, default=256, metavar="M",
                   help="HBM per device in MiB, rounded up to 2 MiB "
                   "(default 256)")
    p.add_argument("--host-mb", type=int, default=64, metavar="M",
                   help="pinned host memory per device in MiB (default 64)")
    p.add_argument("--aicores", type=int, default=2, metavar="K",
                   help="AI cores (worker threads) per device (default 2)")
    p.add_argument("--task-timeout-ms", type=int, default=30000, metavar="T",
                   help="task watchdog in ms, 0 disables (default 30000)")
    p.add_argument("--poll-idle-us", type=int, default=0, metavar="U",
                   help="how long each device's dispatcher polls idle rings "
                   "before it sleeps and clients must ring the doorbell, in "
                   "microseconds (default 0: the core's 200); it grows while "
                   "doorbells come soon after the dispatcher slept")
    p.add_argument("--poll-idle-max-us", type=int, default=0, metavar="U",
                   help="how long that idle time may grow, in microseconds "
                   "(default 0: 16 times --poll-idle-us; --poll-idle-us or "
                   "less: it never grows)")
    p.add_argument("--max-contexts-per-process", type=int, default=64,
                   metavar="N",
                   help="open device files (contexts) one process may hold "
                   "over all devices, 0 for no limit; beyond, open fails "
                   "with EMFILE (default 64)")
    p.add_argument("--max-contexts-per-user", type=int, default=256,
                   metavar="N",
                   help="the same for all processes of one user; beyond, "
                   "open fails with EUSERS (default 256)")
    p.add_argument("--cleanup", action="store_true",
                   help="remove what crashed daemons of yours left behind "
                   "(stale mounts, device memory directories in /dev/shm) "
                   "or, with a mountpoint, what the daemon of that "
                   "mountpoint left; say what was removed, and exit")
    p.add_argument("--foreground", "-f", action="store_true",
                   help="stay in the foreground, log to stderr")
    p.add_argument("--pidfile", default=None,
                   help="pid file (default <mountpoint>.pid beside the "
                   "mountpoint, or in the runtime dir)")
    p.add_argument("--log-file", default=None,
                   help="log file when daemonised (default <mountpoint>.log)")
    p.add_argument("--debug", action="store_true",
                   help="verbose logging and libfuse debug output")
    return p


def _fail(msg):
    sys.stderr.write("davinci-fused: %s\n" % msg)
    return 1


def _check_mountpoint(mp, say):
    """None when @mp can be mounted on (created if missing), else an error
    message. A stale mount of a crashed daemon is cleaned up."""
    try:
        state = mnt.mount_state(mp)
    except OSError as e:
        return "cannot use %s: %s" % (mp, e.strerror)
    if state == "stale":
        say("%s is a stale mount left by a crashed daemon (ENOTCONN): "
            "cleaning it with fusermount -u -z" % mp)
        if not mnt.fusermount_unmount(mp, lazy=True):
            return ("cannot clean the stale mount at %s; try `fusermount -u "
                    "-z %s`" % (mp, mp))
        state = mnt.mount_state(mp)
    if state == "mounted":
        fstype = (mnt.mount_entry(mp) or ("?", "?"))[0]
        return ("%s is busy: already mounted (%s)%s; stop that daemon or "
                "pick another mountpoint" % (
                    mp, fstype, "" if not fstype.startswith("fuse.davinci")
                    else ", a davinci-fused is already serving it"))
    if state == "notdir":
        return "%s exists and is not a directory" % mp
    if state == "nonempty":
        return ("%s is busy: the directory is not empty; pick an empty or new "
                "directory" % mp)
    if state == "empty" and os.stat(mp).st_uid != os.getuid() and \
            mp == os.path.abspath(mnt.default_mountpoint()):
        return ("%s is owned by another user; remove it or pass another "
                "mountpoint" % mp)
    if state == "missing":
        try:
            os.makedirs(mp, mode=0o700)
        except OSError as e:
            return "cannot create %s: %s" % (mp, e.strerror)
    return None


def _setup_logging(debug, stream):
    h = logging.StreamHandler(stream)
    h.setFormatter(logging.Formatter(
        "%(asctime)s davinci-fused[%(process)d] %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [h]
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    logging.getLogger("fuse").setLevel(
        logging.DEBUG if debug else logging.WARNING)


def _cleanup(mountpoint, pidfile):
    """davinci-fused --cleanup [MOUNTPOINT]: remove what crashed daemons of
    the caller left (of the one that served MOUNTPOINT only, when given:
    its stale mount and, by its pid file, its memory directory); returns
    the exit code."""
    pid = None
    if mountpoint:
        pid = mnt.read_pidfile(pidfile)
        found = mnt.find_leftovers(mountpoints=[mountpoint],
                                   pids={pid} if pid else set())
        what = "of the davinci-fused that served %s" % mountpoint
    else:
        found = mnt.find_leftovers()
        what = "of a dead davinci-fused of yours"
    if not found:
        print("davinci-fused: nothing to clean: no stale mount and no "
              "device memory directory %s" % what)
        return 0
    done = mnt.clear_leftovers(found, log=lambda m: print(
        "davinci-fused: %s" % m))
    if mountpoint and pid and not mnt.pid_alive(pid):
        mnt.remove_pidfile(pidfile, pid)
    freed = sum(lo.size for lo in done)
    print("davinci-fused: removed %d of %d leftover(s), %.1f MiB of memory "
          "freed" % (len(done), len(found), freed / (1 << 20)))
    return 0 if len(done) == len(found) else 1


def _serve(args, mp, pidfile, ready_fd=None):
    """Run the daemon in this process; returns the exit code."""
    from .. import _corelib
    from .daemon import Server
    ret = _corelib.set_limits(args.max_contexts_per_process,
                              args.max_contexts_per_user)
    if ret < 0:
        log.warning("the core library cannot set the limits on open "
                    "contexts (%s): its defaults apply", os.strerror(-ret))
    srv = Server(mp, devices=args.devices, hbm_mb=args.hbm_mb,
                 host_mb=args.host_mb, aicores=args.aicores,
                 task_timeout_ms=args.task_timeout_ms,
                 poll_idle_us=args.poll_idle_us,
                 poll_idle_max_us=args.poll_idle_max_us, pidfile=pidfile,
                 debug=args.debug)
    try:
        mnt.write_pidfile(pidfile, os.getpid())
    except OSError as e:
        log.warning("cannot write pid file %s: %s", pidfile, e)
        srv.pidfile = None
    try:
        srv.start()
    except Exception as e:     # noqa: B902
        log.error("cannot start: %s", e)
        srv.stop()
        return 1
    if not srv.wait_ready():
        log.error("the mount at %s did not come up%s", mp,
                  ": %s" % srv.error if srv.error else "")
        srv.stop()
        return 1
    log.info("ready: %d device(s) at %s", args.devices, mp)
    if ready_fd is not None:
        os.write(ready_fd, b"ready\n")
        os.close(ready_fd)
    srv.serve_forever()
    return 0 if srv.error is None else 1


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.cleanup:
        if not args.mountpoint:
            return _cleanup(None, None)
        mp = os.path.abspath(args.mountpoint)
        pidfile = os.path.abspath(args.pidfile) if args.pidfile else \
            mnt.state_paths(mp)[0]
        return _cleanup(mp, pidfile)
    if not 0 <= args.max_contexts_per_process < 1 << 32 or \
            not 0 <= args.max_contexts_per_user < 1 << 32:
        return _fail("--max-contexts-per-process and --max-contexts-per-user"
                     " must be 0 (no limit) .. 4294967295")
    if not 1 <= args.devices <= 64:
        return _fail("--devices must be 1..64")
    if args.hbm_mb < 2 or args.host_mb < 1 or not 1 <= args.aicores <= 64 \
            or args.task_timeout_ms < 0 or \
            not 0 <= args.poll_idle_us < 1 << 32 or \
            not 0 <= args.poll_idle_max_us < 1 << 32:
        return _fail("bad size: --hbm-mb >= 2, --host-mb >= 1, --aicores "
                     "1..64, --task-timeout-ms >= 0, --poll-idle-us and "
                     "--poll-idle-max-us 0..4294967295")
    args.hbm_mb = (args.hbm_mb + 1) & ~1
    try:
        import fuse  # noqa: F401
    except (ImportError, OSError, EnvironmentError) as e:
        return _fail("fusepy / libfuse 2 missing (pip install fusepy; apt "
                     "install fuse libfuse2): %s" % e)
    if not os.path.exists("/dev/fuse"):
        return _fail("/dev/fuse is missing: FUSE is not available here")
    try:
        from .. import _corelib
        _corelib.load()
    except OSError as e:
        return _fail(str(e))

    mp = os.path.abspath(args.mountpoint or mnt.default_mountpoint())
    pidfile, logfile = mnt.state_paths(mp)
    pidfile = os.path.abspath(args.pidfile) if args.pidfile else pidfile
    logfile = os.path.abspath(args.log_file) if args.log_file else logfile

    def say(msg):
        sys.stderr.write("davinci-fused: %s\n" % msg)

    mnt.clean_stale_backing(mp, log=say)
    err = _check_mountpoint(mp, say)
    if err:
        return _fail(err)

    if args.foreground:
        _setup_logging(args.debug, sys.stderr)
        return _serve(args, mp, pidfile)

    # Daemonise: the child serves, the parent returns once the nodes answer.
    try:
        logfd = mnt.open_log(logfile)
    except OSError as e:
        return _fail("cannot open log file %s: %s" % (logfile, e.strerror))
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(logfd, 1)
            os.dup2(logfd, 2)
            os.close(devnull)
            os.close(logfd)
            os.chdir("/")
            sys.stdout = os.fdopen(1, "w", buffering=1)
            sys.stderr = os.fdopen(2, "w", buffering=1)
            _setup_logging(args.debug, sys.stderr)
            code = _serve(args, mp, pidfile, ready_fd=w)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:      # noqa: B902
            logging.getLogger("davinci-fused").exception("daemon failed")
        finally:
            logging.shutdown()
            os._exit(code)
    os.close(w)
    os.close(logfd)
    buf = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rl, _, _ = select.select([r], [], [], 0.5)
        if rl:
            chunk = os.read(r, 64)
            if not chunk:
                break
            buf += chunk
            if b"ready" in buf:
                break
    os.close(r)
    if b"ready" not in buf:
        try:
            with open(logfile) as f:
                tail = f.read()[-2000:]
        except OSError:
            tail = ""
        return _fail("the daemon (pid %d) did not come up; log %s:\n%s"
                     % (pid, logfile, tail))
    print("davinci-fused: %d device(s) at %s (pid %d, log %s)"
          % (args.devices, mp, pid, logfile))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/bin/bash
# Run a command against a fresh davinci-fused mount, then stop the daemon.
#
# usage: scripts/with-fuse.sh PYTHON COMMAND [ARG...]
# The command sees DAVINCI_DEV_DIR=<mountpoint>; its exit status is ours.
# When the command fails, the daemon's log (with every daemon thread's
# stack, asked for with SIGUSR1) is printed before the daemon stops.
set -euo pipefail

bin=$(dirname "$1")
shift
mnt=$(mktemp -d /tmp/davinci-fuse.XXXXXX)
stop() {
	kill -TERM "$(cat "$mnt.pid" 2>/dev/null)" 2>/dev/null || true
	for _ in $(seq 50); do
		mountpoint -q "$mnt" || break
		sleep 0.1
	done
	rmdir "$mnt" 2>/dev/null || true
}
trap stop EXIT
"$bin/davinci-fused" --devices 2 --hbm-mb 256 "$mnt"
rc=0
DAVINCI_DEV_DIR=$mnt "$@" || rc=$?
if [ "$rc" != 0 ]; then
	kill -USR1 "$(cat "$mnt.pid" 2>/dev/null)" 2>/dev/null && sleep 1
	echo "with-fuse: the command failed ($rc); the daemon's log:" >&2
	tail -n 300 "$mnt.log" >&2 || true
fi
exit "$rc"

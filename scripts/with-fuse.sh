#!/bin/bash
# Run a command against a fresh davinci-fused mount, then stop the daemon.
#
# usage: scripts/with-fuse.sh PYTHON COMMAND [ARG...]
# The command sees DAVINCI_DEV_DIR=<mountpoint>; its exit status is ours.
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
DAVINCI_DEV_DIR=$mnt "$@"

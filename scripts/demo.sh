#!/bin/bash
# make demo: bring a davinci backend up (the kernel module when this kernel
# can load it, the FUSE daemon otherwise), run the samples, tear down.
#
# usage: scripts/demo.sh PYTHON
set -euo pipefail

py=$1
here=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
unset DAVINCI_BACKEND DAVINCI_DEV_DIR

if [ -e /proc/modules ] && [ "$(id -u)" = 0 ] &&
   [ -d "/lib/modules/$kver/build" ]; then
	echo "== bring-up: building and loading davinci.ko for $kver"
	make -s -C "$here/kmod" >/dev/null
	insmod "$here/kmod/davinci.ko" num_devices=2
	trap 'echo "== teardown: rmmod davinci"; rmmod davinci' EXIT
	DAVINCI_DEV_DIR=/dev "$here/scripts/demo-run.sh" "$py"
else
	if [ -e /proc/modules ]; then
		why="no kernel headers for $kver, or not root"
	else
		why="this kernel has no loadable-module support"
	fi
	echo "== bring-up: $why; starting the FUSE daemon"
	"$here/scripts/with-fuse.sh" "$py" "$here/scripts/demo-run.sh" "$py"
	echo "== teardown: davinci-fused stopped and unmounted"
fi

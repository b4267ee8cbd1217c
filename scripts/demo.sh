#!/bin/bash
# make demo: bring a davinci backend up (the kernel module when this kernel
# can load it, the FUSE daemon otherwise), run the samples, tear down.
#
# usage: scripts/demo.sh PYTHON
set -euo pipefail

py=$1
bin=$(dirname "$py")
here=$(cd "$(dirname "$0")/.." && pwd)
# The samples' matrices are small: one BLAS thread is fastest and keeps the
# host timings steady on a busy machine.
export OPENBLAS_NUM_THREADS=1
unset DAVINCI_BACKEND

started=
mnt=
teardown() {
	case "$started" in
	kmod)
		echo "== teardown: rmmod davinci"
		rmmod davinci || true
		;;
	fuse)
		echo "== teardown: stopping davinci-fused"
		kill -TERM "$(cat "$mnt.pid")" 2>/dev/null || true
		for _ in $(seq 50); do
			mountpoint -q "$mnt" || break
			sleep 0.1
		done
		rmdir "$mnt" 2>/dev/null || true
		;;
	esac
}
trap teardown EXIT

elapsed() {
	local t0=$1
	echo "   ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
}

t0=$(date +%s%N)
kver=$(uname -r)
if [ -e /proc/modules ] && [ "$(id -u)" = 0 ] &&
   [ -d "/lib/modules/$kver/build" ]; then
	echo "== bring-up: building and loading davinci.ko for $kver"
	make -s -C "$here/kmod" >/dev/null
	insmod "$here/kmod/davinci.ko" num_devices=2
	started=kmod
	export DAVINCI_DEV_DIR=/dev
else
	why="this kernel has no loadable-module support"
	[ -e /proc/modules ] && why="no kernel headers for $kver or not root"
	mnt=$(mktemp -d /tmp/davinci-demo.XXXXXX)
	echo "== bring-up: $why; starting the FUSE daemon on $mnt"
	"$bin/davinci-fused" --devices 2 --hbm-mb 256 "$mnt"
	started=fuse
	export DAVINCI_DEV_DIR=$mnt
fi
ls -l "$DAVINCI_DEV_DIR" | grep davinci | sed 's/^/   /'
elapsed "$t0"

echo "== davinci info"
"$bin/davinci" info | sed 's/^/   /'

t0=$(date +%s%N)
"$py" "$here/samples/seed_tour.py"

echo "== model: two-layer MLP, trained on the host, inference on the NPU"
t0=$(date +%s%N)
"$py" "$here/samples/mlp_digits.py"
elapsed "$t0"

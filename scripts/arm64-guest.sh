#!/bin/busybox sh
# /init of the arm64 guest of scripts/arm64-test.sh (busybox, in an
# initramfs with the arm64 Python, the runtime and tests/conformance):
# load davinci.ko, check its nodes, run the op digest workload on the
# module, unload, check dmesg. Reports "ARM64-GUEST ..." lines on the
# console; the last is "ARM64-GUEST DONE <failures>".
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin HOME=/tmp PYTHONDONTWRITEBYTECODE=1
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fails=0

step() {
	name=$1
	shift
	if "$@"; then
		echo "ARM64-GUEST PASS $name"
	else
		echo "ARM64-GUEST FAIL $name"
		fails=$((fails + 1))
	fi
}

nodes() {
	for n in davinci0 davinci1 davinci_manager; do
		[ -c /dev/$n ] || return 1
		[ "$(stat -c %a /dev/$n)" = 660 ] || return 1
	done
}

digest() {
	DAVINCI_DEV_DIR=/dev DAVINCI_DIGEST_FILE=/tmp/digest \
		PYTHONHOME=/usr PYTHONPATH=/src/userspace:/site \
		python3.11 -m pytest -q -p no:cacheprovider --rootdir=/src \
		/src/tests/conformance/test_digest.py || return 1
	echo "ARM64-GUEST DIGEST $(cat /tmp/digest)"
}

dmesg -c >/tmp/dmesg-boot.txt
echo "ARM64-GUEST kernel $(uname -r) $(uname -m), $(nproc) cpus"
step insmod insmod /davinci.ko num_devices=2 hbm_mb=256 aicores=2
step nodes nodes
step digest digest
step rmmod rmmod davinci
dmesg >/tmp/dmesg.txt
step dmesg-clean sh -c "! grep -E 'WARNING|BUG|Oops|Call Trace|general protection|INFO: |lock held' /tmp/dmesg.txt"
step accounting grep -q 'davinci: unloaded, all allocations returned' /tmp/dmesg.txt
[ "$fails" = 0 ] || cat /tmp/dmesg.txt
echo "ARM64-GUEST DONE $fails"
poweroff -f

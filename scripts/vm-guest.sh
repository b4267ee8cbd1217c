#!/bin/bash
# The guest half of scripts/vm-test.sh; runs as root inside virtme-ng.
#
# usage: vm-guest.sh OUT PYTHON
#   OUT: build/vm-test (shared read-write with the host); the module is
#        in OUT/kmod/davinci.ko; results go to OUT/rc, OUT/summary.txt,
#        OUT/*.xml, OUT/dmesg.txt
set -u
out=$1
py=$2
here=$(cd "$(dirname "$0")/.." && pwd)
summary=$out/summary.txt
fail=0
: >"$summary"

[ -f "$out/guest.env" ] && . "$out/guest.env"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$here/userspace${PYTHONPATH:+:$PYTHONPATH}"
# VM_PYTEST_ARGS is shell-quoted (-k 'a or b' stays one argument)
eval "pytest_args=(-q -p no:cacheprovider ${VM_PYTEST_ARGS:-})"

result() {
	echo "$1 $2" | tee -a "$summary"
	[ "$1" = PASS ] || fail=1
}

# step NAME CMD...: run CMD, record PASS or FAIL (SKIP when VM_SKIP names it)
step() {
	local name=$1 t0=$SECONDS
	shift
	case " ${VM_SKIP:-} " in
	*" $name "*)
		echo "SKIP $name (VM_SKIP)" | tee -a "$summary"
		return 0 ;;
	esac
	echo "=== $name: $*"
	if "$@"; then
		result PASS "$name ($((SECONDS - t0)) s)"
	else
		result FAIL "$name ($((SECONDS - t0)) s)"
	fi
}

check_node() {
	local node=/dev/$1 want="660 HwHiAiUser" got
	[ -c "$node" ] || { echo "$node missing"; return 1; }
	got=$(stat -c '%a %G' "$node")
	echo "$node: $got"
	[ "$got" = "$want" ]
}

check_sysfs() {
	local d=/sys/class/davinci/davinci0 v
	for f in hbm_total hbm_used aicores health serial utilization; do
		v=$(cat "$d/$f") || return 1
		echo "$f=$v"
	done
	[ "$(cat $d/hbm_total)" = $((256 << 20)) ] &&
		[ "$(cat $d/aicores)" = 2 ] &&
		[ "$(ls -d /sys/class/davinci/davinci[0-9]* | wc -l)" = 2 ]
}

echo "=== guest: $(uname -r), $(nproc) cpus, python $py"
dmesg >"$out/dmesg-boot.txt"
dmesg -C

kver=$(uname -r)
step install make -s -C "$out/kmod" install-files KVER="$kver" \
	DEPMOD_ONLY="/lib/modules/$kver/updates/davinci.ko"
udevadm control --reload-rules 2>/dev/null
step modprobe modprobe davinci num_devices=2 hbm_mb=256 aicores=2 \
	task_timeout_ms=10000
udevadm settle -t 30 2>/dev/null
step lsmod sh -c 'lsmod | grep "^davinci "'
for n in davinci0 davinci1 davinci_manager; do
	step "node-$n" check_node $n
done
step sysfs check_sysfs

if [ -d "$here/tests/conformance" ]; then
	step conformance env DAVINCI_DEV_DIR=/dev \
		DAVINCI_DIGEST_FILE="$out/digest-kmod.txt" \
		timeout 1200 "$py" -m pytest "${pytest_args[@]}" --durations=10 \
		--junitxml="$out/conformance.xml" "$here/tests/conformance"
else
	echo "SKIP conformance (tests/conformance not present)" |
		tee -a "$summary"
fi

step kmod-tests env DAVINCI_DEV_DIR=/dev timeout 400 \
	"$py" -m pytest "${pytest_args[@]}" --junitxml="$out/kmod.xml" \
	"$here/tests/kmod"

# The demo's workload on the kernel module.
step demo env DAVINCI_DEV_DIR=/dev timeout 300 \
	"$here/scripts/demo-run.sh" "$py"

step rmmod rmmod davinci
step unloaded sh -c '! lsmod | grep -q "^davinci "'

# Parameters once more, different ones; then unload for good.
reload_params() {
	modprobe davinci num_devices=3 hbm_mb=32 aicores=1 || return 1
	udevadm settle -t 30 2>/dev/null
	local n
	n=$(ls -d /sys/class/davinci/davinci[0-9]* | wc -l)
	echo "devices=$n hbm_total=$(cat /sys/class/davinci/davinci2/hbm_total)"
	[ "$n" = 3 ] && [ -c /dev/davinci2 ] &&
		[ "$(cat /sys/class/davinci/davinci2/hbm_total)" = $((32 << 20)) ] &&
		[ "$(cat /sys/class/davinci/davinci2/aicores)" = 1 ] &&
		rmmod davinci
}
step modprobe-params reload_params

dmesg >"$out/dmesg.txt"
step dmesg-clean sh -c "! grep -E 'WARNING|BUG|Oops|lockdep|leak|KASAN|UBSAN|Call Trace|general protection' '$out/dmesg.txt'"
# one clean-unload line per unload that ran
unloads=$(grep -c '^PASS \(rmmod\|modprobe-params\) ' "$summary")
step accounting sh -c "[ \$(grep -c 'davinci: unloaded, all allocations returned' '$out/dmesg.txt') = $unloads ]"

echo "$fail" >"$out/rc"
[ "$fail" = 0 ] && rm -f "$out/dmesg-boot.txt"
exit "$fail"

#!/bin/bash
# The guest half of scripts/vm-test.sh; runs as root inside virtme-ng.
#
# usage: vm-guest.sh OUT PYTHON
#   OUT: build/vm-test (shared read-write with the host); the module is
#        in OUT/kmod/davinci.ko; results go to OUT/rc, OUT/summary.txt,
#        OUT/*.xml, OUT/dmesg.txt
#
# With VM_DEBUG=1 (in OUT/guest.env; the debug kernel of
# scripts/debug-kernel.sh) the guest also takes a kmemleak baseline before
# loading, runs OUT/fuzz_ioctl with failslab after tests/kmod, scans for
# leaks after the last unload (OUT/kmemleak.txt) and fails on any KASAN,
# UBSAN, lockdep, kmemleak, BUG or WARNING line in dmesg. The conformance
# suite and the demo are left out unless VM_DEBUG_CONFORMANCE=1.
set -u
out=$1
py=$2
here=$(cd "$(dirname "$0")/.." && pwd)
summary=$out/summary.txt
fail=0
: >"$summary"

[ -f "$out/guest.env" ] && . "$out/guest.env"
debug=${VM_DEBUG:-0}
# Timeouts of the pytest steps; KASAN and lockdep under TCG run several
# times slower.
slow=1
if [ "$debug" = 1 ]; then
	slow=4
	[ "${VM_DEBUG_CONFORMANCE:-0}" = 1 ] ||
		VM_SKIP="${VM_SKIP:-} conformance torch-smoke demo kill-soak"
fi
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$here/userspace${PYTHONPATH:+:$PYTHONPATH}"
# VM_PYTEST_ARGS is shell-quoted (-k 'a or b' stays one argument)
# (a test that hangs fails after 15 min times that, with its threads' stacks)
eval "pytest_args=(-q -p no:cacheprovider -o timeout=$((900 * slow)) ${VM_PYTEST_ARGS:-})"

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

dbgfs=/sys/kernel/debug
if [ "$debug" = 1 ]; then
	mountpoint -q $dbgfs || mount -t debugfs none $dbgfs
	# What leaked before the module was loaded is not the module's:
	# report only what is found unreferenced from now on.
	kmemleak_baseline() {
		[ -w $dbgfs/kmemleak ] || { echo "kmemleak missing"; return 1; }
		echo scan >$dbgfs/kmemleak && echo clear >$dbgfs/kmemleak
	}
	step kmemleak-baseline kmemleak_baseline
fi

kver=$(uname -r)
step install make -s -C "$out/kmod" install-files KVER="$kver" \
	DEPMOD_ONLY="/lib/modules/$kver/updates/davinci.ko"
udevadm control --reload-rules 2>/dev/null
# simd=sse2: TCG emulates AVX2 at half SSE2's speed; every level gives
# the same bytes (tests/kmod/test_simd.py switches them itself).
load_params="num_devices=2 hbm_mb=256 aicores=2 task_timeout_ms=10000 simd=sse2"
# shellcheck disable=SC2086 # the parameters are words
step modprobe modprobe davinci $load_params
udevadm settle -t 30 2>/dev/null
step lsmod sh -c 'lsmod | grep "^davinci "'
for n in davinci0 davinci1 davinci_manager; do
	step "node-$n" check_node $n
done
step sysfs check_sysfs

if [ -d "$here/tests/conformance" ]; then
	# Not torch_digits.py: importing torch and training under TCG takes
	# longer than a sample may (tests/torch covers torch_npu on the
	# in-process and FUSE backends, torch-smoke on the module). Nor the
	# demo's two samples: its step below runs them on the module. Nor
	# the light model-zoo CNNs (4 GFLOP a ResNet-50 at 224 x 224, minutes
	# under TCG): test_atc_cnn's small CNN and its ops run here instead;
	# nor ONNX's 390 node tests, the converter's promise, checked
	# in-process and through FUSE; nor test_atc_export.py (torch and
	# transformers imported, three models exported: the same converted
	# ops run here in test_atc_views and test_atc_cnn).
	step conformance env DAVINCI_DEV_DIR=/dev \
		DAVINCI_DIGEST_FILE="$out/digest-kmod.txt" \
		timeout $((1200 * slow)) "$py" -m pytest "${pytest_args[@]}" \
		-k "not torch_digits and not cnn_digits and not mlp_digits and not seed_tour and not light_model and not node_test and not atc_export" \
		--durations=10 \
		--junitxml="$out/conformance.xml" "$here/tests/conformance"
else
	echo "SKIP conformance (tests/conformance not present)" |
		tee -a "$summary"
fi

# PyTorch on the module: import torch_npu, a tensor round trip and one op
# (the rest of tests/torch takes longer than TCG allows).
step torch-smoke env DAVINCI_DEV_DIR=/dev timeout $((900 * slow)) \
	"$py" -m pytest "${pytest_args[@]}" "$here/tests/torch/test_smoke.py"

# Without the whole suite (VM_SKIP), its op digest workload alone.
case " ${VM_SKIP:-} " in
*" conformance "*)
	[ "$debug" = 1 ] ||
		step digest env DAVINCI_DEV_DIR=/dev \
			DAVINCI_DIGEST_FILE="$out/digest-kmod.txt" \
			timeout 600 "$py" -m pytest "${pytest_args[@]}" \
			"$here/tests/conformance/test_digest.py" ;;
esac

step kmod-tests env DAVINCI_DEV_DIR=/dev timeout $((400 * slow)) \
	"$py" -m pytest "${pytest_args[@]}" --junitxml="$out/kmod.xml" \
	"$here/tests/kmod"

# The demo's workload on the kernel module.
step demo env DAVINCI_DEV_DIR=/dev DAVINCI_DEMO_NO_TORCH=1 \
	timeout $((300 * slow)) \
	"$here/scripts/demo-run.sh" "$py"

# make bench-vm: the benchmark rows on the module (scripts/bench.py).
[ "${VM_BENCH:-0}" = 1 ] &&
	step bench env DAVINCI_DEV_DIR=/dev timeout $((900 * slow)) \
		"$py" "$here/scripts/bench.py" --quick --json "$out/bench-kmod.json"

# VM_BENCH_AB: some rows with the module loaded with those parameters and
# without, alternating, three rounds (vm-test.sh); it ends loaded without.
# Each of its unloads prints the clean-unload line that "accounting" counts.
bench_ab_unloads=0
bench_ab() {
	local round side params
	for round in 1 2 3; do
		for side in A B; do
			params=$load_params
			[ $side = A ] && params="$params $VM_BENCH_AB"
			echo "--- round $round, $side: $params"
			modprobe -r davinci || return 1
			bench_ab_unloads=$((bench_ab_unloads + 1))
			# shellcheck disable=SC2086 # the parameters are words
			modprobe davinci $params || return 1
			udevadm settle -t 30 2>/dev/null
			DAVINCI_DEV_DIR=/dev timeout $((900 * slow)) "$py" \
				"$here/scripts/bench.py" --quick \
				--only "$VM_BENCH_ONLY" \
				--json "$out/bench-ab-$round-$side.json" || return 1
		done
	done
	echo "--- A: $VM_BENCH_AB; B: without"
	"$py" "$here/scripts/bench.py" --ab-table "$out"
}
[ -n "${VM_BENCH_AB:-}" ] && step bench-ab bench_ab

# SIGKILL clients mid-allocation, mid-submission and mid-wait; the module
# must get everything back and still compute right (scripts/kill_soak.py).
step kill-soak env DAVINCI_DEV_DIR=/dev timeout $((900 * slow)) \
	"$py" "$here/scripts/kill_soak.py" --clients "${VM_SOAK_CLIENTS:-1000}"

# The random-ioctl fuzzer (tests/kmod/fuzz_ioctl.c, built by vm-test.sh)
# with failslab: VM_FAILSLAB_PCT percent of its calls into the module fail
# one of their first slab allocations (sleeping ones included), through
# each worker's /proc/thread-self/fail-nth; the random probability stays 0
# so that nothing else fails (the guest's 9p root does not survive it).
# Failures injected: counted by the fuzzer, and failslab's times before -
# times after.
fuzz() {
	local fs=$dbgfs/failslab times0=1000000000 rc left pct
	pct=${VM_FAILSLAB_PCT:-10}
	[ -x "$out/fuzz_ioctl" ] || { echo "no $out/fuzz_ioctl"; return 1; }
	if [ "$pct" != 0 ]; then
		[ -d $fs ] || { echo "no $fs (CONFIG_FAILSLAB)"; return 1; }
		echo 0 >$fs/probability
		echo Y >$fs/task-filter
		echo N >$fs/ignore-gfp-wait
		echo 0 >$fs/verbose
		echo $times0 >$fs/times
	fi
	timeout $((${VM_FUZZ_SECONDS:-4200} + 300)) "$out/fuzz_ioctl" \
		-n "${VM_FUZZ_IOCTLS:-1000000}" -p "${VM_FUZZ_WORKERS:-4}" \
		-f "$pct" -u -t "${VM_FUZZ_SECONDS:-4200}" -o "$out/fuzz.txt"
	rc=$?
	[ "$pct" = 0 ] && return $rc
	left=$(cat $fs/times)
	echo "failslab_injections=$((times0 - left))" | tee -a "$out/fuzz.txt"
	echo "failslab_calls_pct=$pct" >>"$out/fuzz.txt"
	# With every fuzzing process gone the module holds no context: a scan
	# now names its frames in any report (the last one runs after rmmod).
	[ -w $dbgfs/kmemleak ] && echo scan >$dbgfs/kmemleak
	[ "$rc" = 0 ] && [ "$((times0 - left))" -gt 0 ]
}
if [ "$debug" = 1 ]; then
	step fuzz fuzz
	[ -f "$out/fuzz.txt" ] && echo "FUZZ $(grep -E \
		'^(seconds|ioctls|calls|kills|hotplug_adds|hotplug_dels|fail_nth_injected|failslab_injections|errno_[A-Za-z0-9]+)=' \
		"$out/fuzz.txt" | tr '\n' ' ')" | tee -a "$summary"
fi

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

# kmemleak wants two scans some seconds apart: an object is reported once
# it was found unreferenced and is old enough.
kmemleak_scan() {
	[ -w $dbgfs/kmemleak ] || { echo "kmemleak missing or off"; return 1; }
	echo scan >$dbgfs/kmemleak || return 1
	sleep 6
	echo scan >$dbgfs/kmemleak || return 1
	cat $dbgfs/kmemleak >"$out/kmemleak.txt"
	echo "kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.txt") suspected leaks"
	head -n 60 "$out/kmemleak.txt"
	[ ! -s "$out/kmemleak.txt" ]
}
[ "$debug" = 1 ] && step kmemleak kmemleak_scan

dmesg >"$out/dmesg.txt"
# KASAN, UBSAN, lockdep (circular locking, "INFO: ...", "... lock held"),
# DEBUG_ATOMIC_SLEEP ("BUG: sleeping function"), hung tasks, debugobjects
# and kmemleak all print one of these.
step dmesg-clean sh -c "! grep -E 'WARNING|BUG|Oops|lockdep|leak|KASAN|UBSAN|Call Trace|general protection|INFO: |possible circular locking|lock held|ODEBUG|kmemleak' '$out/dmesg.txt'"
# one clean-unload line per unload that ran
unloads=$(($(grep -c '^PASS \(rmmod\|modprobe-params\) ' "$summary") +
	bench_ab_unloads))
step accounting sh -c "[ \$(grep -c 'davinci: unloaded, all allocations returned' '$out/dmesg.txt') = $unloads ]"

echo "$fail" >"$out/rc"
[ "$fail" = 0 ] && rm -f "$out/dmesg-boot.txt"
exit "$fail"

#!/bin/bash
# Build davinci.ko for Debian's 6.1 or 6.12 kernel and test it in a QEMU
# guest.
#
# usage: scripts/vm-test.sh [PYTHON]
#   PYTHON: interpreter of the venv with pytest, numpy and the davinci
#           package (default /opt/davinci-venv/bin/python); virtme-ng is
#           installed into that venv when missing.
#
# The guest (virtme-ng, TCG: /dev/kvm hangs Debian's kernel here) shares
# the host's root read-only with writable overlays, and build/vm-test
# read-write: scripts/vm-guest.sh installs and modprobes the module, runs
# the conformance suite on /dev/davinci*, tests/kmod, rmmods and checks
# dmesg. Its exit status and reports come back in build/vm-test/.
#
# Environment: VM_KVER (6.1, the default, or 6.12 from bookworm-backports,
# installed when missing; or a release; 6.12's results go to
# build/vm-test-6.12/), VM_MEMORY (default 2G),
# VM_CPUS (default 2), VM_TIMEOUT (seconds, default 1800), VM_PYTEST_ARGS
# (extra pytest arguments for both suites in the guest, e.g. -x or -k),
# VM_SKIP (guest steps to leave out, e.g. "demo conformance"; a full run
# skips none; without the conformance suite the guest runs its op digest
# workload alone).
#
# Another kernel: VM_KERNEL_IMAGE (a bzImage) with VM_KDIR (its build tree,
# for the module). VM_DEBUG=1 boots the debug kernel of
# scripts/debug-kernel.sh (KASAN, lockdep, UBSAN, kmemleak, failslab; it
# must be built already) and runs the debug guest instead: tests/kmod, the
# random-ioctl fuzzer tests/kmod/fuzz_ioctl.c with hot add/remove, kills
# and failslab, rmmod and a kmemleak scan; any sanitizer, lockdep,
# kmemleak, BUG or WARNING report fails the run. Its results go to
# build/vm-test-debug/. VM_FUZZ_IOCTLS (default 1000000), VM_FUZZ_WORKERS
# (default 4), VM_FUZZ_SECONDS (its time limit, default 4200) and
# VM_FAILSLAB_PCT (default 10: percent of its calls armed to fail an
# allocation) tune the fuzzer; VM_SKIP names "fuzz" and "kmemleak" too;
# VM_DEBUG_CONFORMANCE=1 adds the conformance suite and the demo (skipped
# in the debug guest by default: they take most of an hour under TCG with
# KASAN).
#
# make bench-vm: VM_BENCH=1 runs scripts/bench.py on the module; with
# VM_BENCH_AB="PARAM=V ..." it then runs VM_BENCH_ONLY's rows (default
# latency,batches) three times with the module loaded with those
# parameters (A) and three times without (B), alternating in one boot:
# the guest's timings move too much from boot to boot to compare two.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
py=${1:-/opt/davinci-venv/bin/python}
debug=${VM_DEBUG:-0}
out=$here/build/vm-test
[ "$debug" = 1 ] && out=$here/build/vm-test-debug
memory=${VM_MEMORY:-2G}
# The debug kernel patches its own text with int3 (jump labels, ftrace) at
# boot and whenever a tracepoint is switched; under TCG another virtual CPU
# can run the half-patched code and take a stray int3 (seen: a panic in
# __mod_timer during boot, and the guest dying during trace-cmd). One
# virtual CPU cannot race with itself; preemption still interleaves the
# fuzzer's processes and the AI-core threads.
cpus=${VM_CPUS:-2}
[ "$debug" = 1 ] && cpus=${VM_CPUS:-1}
if [ "$debug" = 1 ]; then
	timeout_s=${VM_TIMEOUT:-7200}
else
	timeout_s=${VM_TIMEOUT:-1800}
fi

log() { echo "vm-test: $*"; }
die() { echo "vm-test: FAIL: $*" >&2; exit 1; }
# shellcheck source=scripts/lib.sh
. "$here/scripts/lib.sh"

# 1. Host packages: QEMU, Debian's kernel and its headers, busybox for the
# guest's initramfs, a compiler.
install_debs qemu-system-x86 linux-image-amd64 linux-headers-amd64 \
	busybox-static build-essential kmod

# 2. virtme-ng in the venv.
venv_bin=$(dirname "$py")
if [ ! -x "$py" ]; then
	log "creating venv $(dirname "$venv_bin")"
	/usr/bin/python3 -m venv "$(dirname "$venv_bin")" || die "venv"
fi
if [ ! -x "$venv_bin/vng" ]; then
	log "pip install virtme-ng"
	"$venv_bin/pip" install -q virtme-ng 2>&1 | grep -v "is ignored" || true
	[ -x "$venv_bin/vng" ] || die "virtme-ng did not install"
fi
export PATH="$venv_bin:$PATH"

# 3. The kernel: Debian's (not the host's), with its headers; or the
# debug kernel; or any image with its build tree.
if [ "$debug" = 1 ] && [ -z "${VM_KERNEL_IMAGE:-}" ]; then
	dk=$("$here/scripts/debug-kernel.sh" --path) ||
		die "the debug kernel is not built: scripts/debug-kernel.sh" \
		    "(make test-debug-kernel builds it)"
	VM_KERNEL_IMAGE=$dk/bzImage
	VM_KDIR=$dk/build
fi
if [ -n "${VM_KERNEL_IMAGE:-}" ]; then
	image=$VM_KERNEL_IMAGE
	kdir=${VM_KDIR:-}
	[ -r "$image" ] || die "VM_KERNEL_IMAGE $image not readable"
	[ -f "$kdir/include/config/kernel.release" ] ||
		die "VM_KDIR ${kdir:-(unset)} is no prepared kernel build tree"
	kver=$(cat "$kdir/include/config/kernel.release")
else
	# VM_KVER: a series (6.1, 6.12: its newest installed release) or a
	# release (6.1.0-57-amd64)
	kver=${VM_KVER:-6.1}
	if [ ! -r "/boot/vmlinuz-$kver" ]; then
		series=$kver
		kver=
		[ "$series" = 6.12 ] && install_backports_kernel
		for img in $(ls -v /boot/vmlinuz-"$series".*-amd64 2>/dev/null); do
			v=${img#/boot/vmlinuz-}
			[ -d "/usr/src/linux-headers-$v" ] &&
				[ -d "/lib/modules/$v" ] && kver=$v
		done
		[ -n "$kver" ] ||
			die "no /boot/vmlinuz-$series.*-amd64 with headers"
	fi
	# each series its own results: 6.1 in build/vm-test, 6.12 in
	# build/vm-test-6.12
	series=$(echo "$kver" | cut -d. -f1,2)
	[ "$series" = 6.1 ] || out=$here/build/vm-test-$series
	kdir=/usr/src/linux-headers-$kver
	image=/boot/vmlinuz-$kver
	[ -r "$image" ] || die "$image not readable"
fi

# 4. Build the module in a copy, so the source tree stays clean.
rm -rf "$out"
mkdir -p "$out/kmod"
cp -a "$here/kmod/." "$out/kmod/"
find "$out/kmod" \( -name '*.o' -o -name '.*.cmd' -o -name '*.ko' \
	-o -name '*.mod' -o -name '*.mod.c' \) -delete
log "building davinci.ko for $kver"
if ! make -C "$out/kmod" KDIR="$kdir" KVER="$kver" >"$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	die "module build failed (${out#$here/}/build.log)"
fi
if grep -E "warning:|error:" "$out/build.log" >&2; then
	die "module build has warnings (${out#$here/}/build.log)"
fi
if [ "$debug" = 1 ]; then
	gcc -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Werror \
		-I"$here/kmod/include" "$here/tests/kmod/fuzz_ioctl.c" \
		-o "$out/fuzz_ioctl" || die "fuzz_ioctl does not build"
fi
modinfo "$out/kmod/davinci.ko" | grep -E "^(version|vermagic|parm):" |
	sed 's/^/vm-test:   /'

# 5. Boot and run the guest half. The guest sees no host environment:
# pass what it needs in a file.
printf 'VM_PYTEST_ARGS=%q\nVM_SKIP=%q\n' "${VM_PYTEST_ARGS:-}" \
	"${VM_SKIP:-}" >"$out/guest.env"
printf '%s=%q\n' VM_DEBUG "$debug" \
	VM_DEBUG_CONFORMANCE "${VM_DEBUG_CONFORMANCE:-0}" \
	VM_FUZZ_IOCTLS "${VM_FUZZ_IOCTLS:-1000000}" \
	VM_FUZZ_WORKERS "${VM_FUZZ_WORKERS:-4}" \
	VM_FUZZ_SECONDS "${VM_FUZZ_SECONDS:-4200}" \
	VM_FAILSLAB_PCT "${VM_FAILSLAB_PCT:-10}" \
	VM_BENCH "${VM_BENCH:-0}" \
	VM_BENCH_AB "${VM_BENCH_AB:-}" \
	VM_BENCH_ONLY "${VM_BENCH_ONLY:-latency,batches}" >>"$out/guest.env"

# With more than one virtual CPU the guest kernel distrusts TCG's TSC (no
# constant_tsc flag) and falls back to the HPET, whose every read traps to
# QEMU: each clock read in the module and in Python cost microseconds.
# TCG derives every CPU's TSC from one host clock, so it is synchronized.
append=
[ "$cpus" -gt 1 ] && append=tsc=reliable

# Sets vng_rc and rc (empty when the guest wrote no result).
boot_guest() {
	log "booting $kver under TCG ($cpus cpus, $memory${append:+, $append})"
	local start end
	start=$(date +%s)
	# timeout signals its whole process group (vng and QEMU); no stdin,
	# so a terminal never stops the background group with SIGTTIN. The
	# kernel's console goes to console.log with the guest's output (an
	# oops that kills the guest is seen there); the terminal gets the
	# rest.
	timeout -k 10 "$timeout_s" \
		vng --disable-kvm --verbose --run "$image" \
		--memory "$memory" --cpus "$cpus" --rwdir "$out" --cwd "$here" \
		--exec "bash $here/scripts/vm-guest.sh $out $py" \
		${append:+--append "$append"} \
		</dev/null 2>&1 | tee "$out/console.log" | \
		{ grep --line-buffered -av '^\[ *[0-9]*\.[0-9]*\] ' || true; }
	vng_rc=${PIPESTATUS[0]}
	end=$(date +%s)
	log "VM exited with $vng_rc after $((end - start)) s"
	rc=$(cat "$out/rc" 2>/dev/null || echo "")
}

# The guest kernel oopsed on an int3 at an address outside the module:
# the text-patching race under TCG described above (seen once on 6.12
# with two CPUs, in __schedule while tests/kmod switched tracepoints).
stray_int3() {
	grep -a -A15 'Oops: int3' "$out/console.log" | grep -a -m1 'RIP:' |
		grep -qv '\[davinci\]'
}

boot_guest
# Such a guest is booted once more, its console kept: the emulator's
# fault says nothing about the module, and the second run must pass on
# its own.
if [ "$rc" != 0 ] && stray_int3; then
	mv "$out/console.log" "$out/console-stray-int3.log"
	log "the guest kernel took a stray int3 outside davinci (the TCG" \
		"text-patching race): booting it once more; the first console" \
		"is ${out#$here/}/console-stray-int3.log"
	rm -f "$out"/rc "$out"/summary.txt "$out"/*.xml "$out"/dmesg*.txt \
		"$out"/digest-kmod.txt "$out"/bench-*.json "$out"/fuzz.txt \
		"$out"/kmemleak.txt
	boot_guest
fi
if [ -z "$rc" ]; then
	log "the guest wrote no result (vng status $vng_rc); its kernel's last words:"
	grep -a '^\[ *[0-9]*\.[0-9]*\] ' "$out/console.log" | tail -n 40 |
		sed 's/^/vm-test:   /'
	rc=1
fi
# 6. Op results must be bit-identical to the userspace core's: the same
# seeded workload (tests/conformance/test_digest.py) runs in-process here.
if [ -f "$out/digest-kmod.txt" ]; then
	lib=$here/build/libdavinci_core.so
	if [ ! -f "$lib" ]; then
		lib=$out/libdavinci_core.so
		gcc -std=gnu11 -O2 -fPIC -shared -pthread -ffp-contract=off \
			-fno-fast-math -I"$here/kmod/core" -I"$here/kmod/include" \
			-I"$here/userspace/libdavinci_core" \
			"$here"/kmod/core/*.c "$here"/userspace/libdavinci_core/*.c \
			-o "$lib"
	fi
	PYTHONPATH="$here/userspace" DAVINCI_BACKEND=inproc \
		DAVINCI_CORE_LIB="$lib" DAVINCI_DIGEST_FILE="$out/digest-inproc.txt" \
		"$py" -m pytest -q -p no:cacheprovider \
		"$here/tests/conformance/test_digest.py" >"$out/digest-inproc.log" 2>&1
	k=$(cat "$out/digest-kmod.txt")
	u=$(cat "$out/digest-inproc.txt" 2>/dev/null)
	if [ -n "$u" ] && [ "$k" = "$u" ]; then
		log "op digest kmod == in-process: $k"
		echo "PASS digest-bit-identical $k" >>"$out/summary.txt"
	else
		log "op digest differs: kmod $k, in-process ${u:-none}"
		echo "FAIL digest-bit-identical kmod=$k inproc=${u:-none}" \
			>>"$out/summary.txt"
		rc=1
	fi
fi
if [ -f "$out/summary.txt" ]; then
	log "guest summary:"
	sed 's/^/vm-test:   /' "$out/summary.txt"
fi
if [ "$rc" != 0 ]; then
	log "FAILED; artifacts: ${out#$here/}/dmesg.txt console.log *.xml"
	exit 1
fi
log "PASS"
exit 0

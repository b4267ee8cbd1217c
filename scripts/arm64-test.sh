#!/bin/bash
# The core on arm64 (aarch64), on this x86_64 machine: cross-build
# libdavinci_core and the C suite with Debian's gcc-aarch64-linux-gnu, run
# the C suite and the op digest workload (tests/conformance/test_digest.py,
# through the Python runtime in-process) under qemu-aarch64-static; the
# digest must equal x86_64's (make test-digests compares it).
#
# usage: scripts/arm64-test.sh [PYTHON]
#   PYTHON: the x86_64 venv's interpreter (default /opt/davinci-venv/bin/python):
#           its numpy version is the one installed for arm64, so both
#           generate the same inputs.
#
# The arm64 Python is Debian's python3.11 for arm64, unpacked (dpkg -x) with
# the libraries it needs into build/arm64/sysroot, not installed; numpy and
# pytest for it come from PyPI as aarch64 wheels (pip --platform) into
# build/arm64/site. Both are cached there. Results: build/arm64/
# (test_core.log, digest.txt, digest.log).
#
# Step kmod cross-builds davinci.ko against Debian's arm64 6.1 headers
# (build/arm64/kmod/davinci.ko, kmod-build.log); any warning fails it.
#
# Step vm boots that kernel under qemu-system-aarch64 (TCG) with the
# module and scripts/arm64-guest.sh as the initramfs's /init: load, nodes,
# the op digest workload on /dev/davinci*, unload, a clean dmesg
# (build/arm64/vm-console.log, vm-summary.txt, digest-kmod.txt).
#
# Environment: ARM64_OUT (default build/arm64), ARM64_STEPS (default
# "core digest kmod vm"), ARM64_VM_TIMEOUT (seconds, default 1200).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
py=${1:-/opt/davinci-venv/bin/python}
out=${ARM64_OUT:-$here/build/arm64}
steps=" ${ARM64_STEPS:-core digest kmod vm} "
cc=aarch64-linux-gnu-gcc
qemu=qemu-aarch64-static

log() { echo "arm64-test: $*"; }
die() { echo "arm64-test: FAIL: $*" >&2; exit 1; }
# shellcheck source=scripts/lib.sh
. "$here/scripts/lib.sh"

install_debs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static
mkdir -p "$out"

# The core's flags (the Makefile's CORE_CFLAGS): -ffp-contract=off keeps
# GCC from fusing a*b+c into FMLA/FMADD on arm64, as on x86_64.
cflags=(-std=gnu11 -O2 -g -pthread -ffp-contract=off -fno-fast-math
	-Wall -Wextra -Werror -I"$here/kmod/core" -I"$here/kmod/include"
	-I"$here/userspace/libdavinci_core")
srcs=("$here"/kmod/core/*.c "$here"/userspace/libdavinci_core/*.c)
fail=0

if [[ $steps == *" core "* ]]; then
	t0=$SECONDS
	log "cross-building the C suite (static)"
	"$cc" "${cflags[@]}" -DDV_LOCK_CHECKS -static "$here"/tests/core/*.c \
		"${srcs[@]}" -o "$out/test_core" ||
		die "the C suite does not cross-build"
	log "tests/core under $qemu"
	if "$qemu" "$out/test_core" >"$out/test_core.log" 2>&1; then
		log "PASS tests/core: $(tail -n 1 "$out/test_core.log")" \
			"($((SECONDS - t0)) s with the build)"
	else
		tail -n 30 "$out/test_core.log" >&2
		log "FAIL tests/core (build/arm64/test_core.log)"
		fail=1
	fi
fi

# arm64 Debian packages: python3.11 and what it loads (ldd of the
# interpreter and of the stdlib's extension modules the runtime imports).
arm64_debs="libc6 libgcc-s1 libstdc++6 zlib1g libexpat1 libffi8 libssl3
libbz2-1.0 liblzma5 libuuid1 libcrypt1 libsqlite3-0 libncursesw6
libtinfo6 libreadline8 libnsl2 libtirpc3 libdb5.3 libgssapi-krb5-2
libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1
python3.11-minimal libpython3.11-minimal libpython3.11-stdlib"

# download_arm64 DIR PKG...: arm64 Debian packages (NAME:arm64[=VERSION])
# into DIR, adding the arm64 architecture to dpkg first when needed.
download_arm64() {
	local dir=$1
	shift
	[ "$(id -u)" = 0 ] || die "arm64 packages missing: run as root once"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64 && apt-get update -qq ||
			die "dpkg --add-architecture arm64 failed"
	fi
	mkdir -p "$dir"
	log "apt-get download $*"
	(cd "$dir" && apt-get download -qq -o APT::Sandbox::User=root "$@") ||
		{ apt-get update -qq && (cd "$dir" &&
			apt-get download -qq -o APT::Sandbox::User=root "$@"); } ||
		die "apt-get download $* failed"
}

# unpack_arm64 DIR PKG...: those packages unpacked (dpkg -x, not installed:
# their dependencies are arm64 toolchains that cannot sit next to the amd64
# ones) into $out/DIR, once for that list.
unpack_arm64() {
	local dir=$1 p
	shift
	[ -f "$out/$dir/.debs" ] && [ "$(cat "$out/$dir/.debs")" = "$*" ] &&
		return 0
	rm -rf "$out/$dir" "$out/$dir.debs"
	download_arm64 "$out/$dir.debs" "$@"
	for p in "$out/$dir.debs"/*.deb; do
		dpkg -x "$p" "$out/$dir" || die "dpkg -x $p"
	done
	rm -rf "$out/$dir.debs"
	echo "$*" >"$out/$dir/.debs"
}

make_sysroot() {
	local p pkgs=()
	for p in $arm64_debs; do pkgs+=("$p:arm64"); done
	unpack_arm64 sysroot "${pkgs[@]}"
}

make_site() {
	local npv
	npv=$("$py" -c 'import numpy; print(numpy.__version__)') ||
		die "$py has no numpy"
	[ -f "$out/site/.numpy-$npv" ] && return 0
	log "pip: numpy $npv and pytest for cp311 aarch64"
	rm -rf "$out/site"
	"$(dirname "$py")/pip" install -q --target "$out/site" \
		--platform manylinux2014_aarch64 --platform manylinux_2_27_aarch64 \
		--platform manylinux_2_28_aarch64 --python-version 3.11 \
		--implementation cp --only-binary=:all: \
		"numpy==$npv" pytest 2>&1 | grep -v "is ignored" ||
		true
	[ -d "$out/site/numpy" ] || die "the aarch64 numpy wheel did not install"
	touch "$out/site/.numpy-$npv"
}

# The numerics rules: no fused multiply-add (NUMERICS.md). Built with
# -ffp-contract=fast the digest differs on arm64; this names the cause.
no_fma() {
	local n
	n=$(aarch64-linux-gnu-objdump -d "$1" |
		grep -cE $'\t(fmadd|fmsub|fnmadd|fnmsub|fmla|fmls)\t')
	[ "$n" = 0 ] && return 0
	log "FAIL $(basename "$1") has $n fused multiply-add instructions"
	return 1
}

if [[ $steps == *" digest "* ]]; then
	t0=$SECONDS
	make_sysroot
	make_site
	log "cross-building libdavinci_core.so"
	"$cc" "${cflags[@]}" -fPIC -shared \
		-Wl,--version-script="$here/userspace/libdavinci_core/libdavinci_core.map" \
		"${srcs[@]}" -o "$out/libdavinci_core.so" ||
		die "libdavinci_core does not cross-build"
	no_fma "$out/libdavinci_core.so" || fail=1
	t1=$SECONDS
	log "tests/conformance/test_digest.py in-process under $qemu" \
		"(setup $((t1 - t0)) s)"
	rm -f "$out/digest.txt"
	if env -i PATH=/usr/bin:/bin HOME="$out" PYTHONDONTWRITEBYTECODE=1 \
		QEMU_LD_PREFIX="$out/sysroot" PYTHONHOME="$out/sysroot/usr" \
		PYTHONPATH="$here/userspace:$out/site" \
		DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB="$out/libdavinci_core.so" \
		DAVINCI_DIGEST_FILE="$out/digest.txt" \
		"$qemu" "$out/sysroot/usr/bin/python3.11" -m pytest -q \
		-p no:cacheprovider --rootdir="$here" \
		"$here/tests/conformance/test_digest.py" >"$out/digest.log" 2>&1 &&
		[ -s "$out/digest.txt" ]; then
		log "PASS digest $(cat "$out/digest.txt") ($((SECONDS - t1)) s)"
	else
		tail -n 30 "$out/digest.log" >&2
		log "FAIL digest (build/arm64/digest.log)"
		fail=1
	fi
fi

# arm_kver: Debian's arm64 6.1 kernel of the amd64 one installed; ver:
# their package version (that of the amd64 linux-kbuild-6.1).
arm64_kernel() {
	local abi
	ver=$(dpkg-query -W -f='${Version}' linux-kbuild-6.1) ||
		die "linux-kbuild-6.1 is not installed"
	abi=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		sed -n 's/.*linux-headers-\(6\.1\.[0-9]*-[0-9]*\)-amd64.*/\1/p')
	[ -n "$abi" ] || die "linux-headers-amd64 names no 6.1 headers"
	arm_kver=$abi-arm64
}

# davinci.ko for Debian's arm64 6.1 kernel: its headers package (the same
# version as the amd64 one installed) with the amd64 linux-kbuild-6.1 as
# its scripts (Multi-Arch: foreign, the host tools), and the cross compiler.
if [[ $steps == *" kmod "* ]]; then
	t0=$SECONDS
	install_debs linux-headers-amd64 gcc-aarch64-linux-gnu
	arm64_kernel
	unpack_arm64 kheaders "linux-headers-$arm_kver:arm64=$ver"
	kdir=$out/kheaders/usr/src/linux-headers-$arm_kver
	# its scripts -> ../../lib/linux-kbuild-6.1/scripts: the host's
	mkdir -p "$out/kheaders/usr/lib"
	ln -sfn /usr/lib/linux-kbuild-6.1 "$out/kheaders/usr/lib/linux-kbuild-6.1"
	rm -rf "$out/kmod"
	mkdir -p "$out/kmod"
	cp -a "$here/kmod/." "$out/kmod/"
	find "$out/kmod" \( -name '*.o' -o -name '.*.cmd' -o -name '*.ko' \
		-o -name '*.mod' -o -name '*.mod.c' -o -name Module.symvers \
		-o -name modules.order \) -delete
	log "cross-building davinci.ko for $arm_kver"
	if make -C "$out/kmod" KDIR="$kdir" ARCH=arm64 \
		CROSS_COMPILE=aarch64-linux-gnu- >"$out/kmod-build.log" 2>&1 &&
		! grep -E "warning:|error:" "$out/kmod-build.log" >&2; then
		log "PASS davinci.ko: $(modinfo -F vermagic "$out/kmod/davinci.ko")" \
			"($((SECONDS - t0)) s)"
		no_fma "$out/kmod/davinci.ko" || fail=1
	else
		tail -n 30 "$out/kmod-build.log" >&2
		log "FAIL davinci.ko for arm64 (build/arm64/kmod-build.log)"
		fail=1
	fi
fi

# The module in Debian's arm64 kernel under qemu-system-aarch64 (TCG): an
# initramfs of busybox, the arm64 Python with numpy and pytest, the runtime
# and tests/conformance; scripts/arm64-guest.sh loads the module, checks
# the nodes, runs the op digest workload on /dev/davinci*, unloads, and
# checks dmesg. Needs step kmod's davinci.ko.
if [[ $steps == *" vm "* ]]; then
	t0=$SECONDS
	[ -f "$out/kmod/davinci.ko" ] || die "step vm needs step kmod's davinci.ko"
	install_debs qemu-system-arm cpio
	arm64_kernel
	make_sysroot
	make_site
	unpack_arm64 kbusybox "busybox-static:arm64"
	# the kernel image alone, not its 350 MB of modules
	img=$out/vmlinuz-$arm_kver
	if [ ! -s "$img" ]; then
		download_arm64 "$out/kimage.debs" "linux-image-$arm_kver:arm64=$ver"
		dpkg-deb --fsys-tarfile "$out"/kimage.debs/*.deb |
			tar -xO "./boot/vmlinuz-$arm_kver" >"$img.tmp" &&
			mv "$img.tmp" "$img" || die "no vmlinuz in the image package"
		rm -rf "$out/kimage.debs"
	fi
	root=$out/initramfs
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/src/tests" "$root/site"
	cp -a "$out/sysroot/." "$root/"
	cp -a "$out/site/." "$root/site/"
	cp "$out/kbusybox/bin/busybox" "$root/bin/busybox"
	cp "$out/kmod/davinci.ko" "$root/davinci.ko"
	cp -a "$here/userspace" "$root/src/"
	cp -a "$here/tests/conftest.py" "$here/tests/conformance" "$root/src/tests/"
	cp "$here/pyproject.toml" "$root/src/"
	cp "$here/scripts/arm64-guest.sh" "$root/init"
	chmod 0755 "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$out/initramfs.cpio" ||
		die "cpio failed"
	rm -rf "$root"
	t1=$SECONDS
	log "booting $arm_kver under qemu-system-aarch64 TCG (setup $((t1 - t0)) s)"
	timeout -k 10 "${ARM64_VM_TIMEOUT:-1200}" qemu-system-aarch64 \
		-M virt -cpu cortex-a57 -smp 2 -m 2048 -nographic -no-reboot \
		-kernel "$img" -initrd "$out/initramfs.cpio" \
		-append "console=ttyAMA0 panic=-1 quiet" \
		</dev/null >"$out/vm-console.log" 2>&1
	rm -f "$out/initramfs.cpio"
	tr -d '\r' <"$out/vm-console.log" | grep '^ARM64-GUEST' >"$out/vm-summary.txt"
	sed 's/^/arm64-test:   /' "$out/vm-summary.txt"
	if grep -q '^ARM64-GUEST DONE 0$' "$out/vm-summary.txt"; then
		sed -n 's/^ARM64-GUEST DIGEST //p' "$out/vm-summary.txt" \
			>"$out/digest-kmod.txt"
		log "PASS arm64 guest ($((SECONDS - t1)) s)"
	else
		tail -n 40 "$out/vm-console.log" >&2
		log "FAIL arm64 guest (build/arm64/vm-console.log)"
		fail=1
	fi
fi

[ "$fail" = 0 ] || exit 1
log "PASS"

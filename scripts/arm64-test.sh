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
# Environment: ARM64_OUT (default build/arm64), ARM64_STEPS (default
# "core digest").
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
py=${1:-/opt/davinci-venv/bin/python}
out=${ARM64_OUT:-$here/build/arm64}
steps=" ${ARM64_STEPS:-core digest} "
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
	"$cc" "${cflags[@]}" -static "$here"/tests/core/*.c "${srcs[@]}" \
		-o "$out/test_core" || die "the C suite does not cross-build"
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

sysroot_ready() {
	[ -x "$out/sysroot/usr/bin/python3.11" ] &&
		[ -f "$out/sysroot/.debs" ] &&
		[ "$(cat "$out/sysroot/.debs")" = "$(echo $arm64_debs)" ]
}

make_sysroot() {
	[ "$(id -u)" = 0 ] || die "no arm64 sysroot yet: run as root once"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
		apt-get update -qq || die "apt-get update failed"
	fi
	rm -rf "$out/debs" "$out/sysroot"
	mkdir -p "$out/debs" "$out/sysroot"
	local p pkgs=()
	for p in $arm64_debs; do pkgs+=("$p:arm64"); done
	log "apt-get download ${#pkgs[@]} arm64 packages"
	(cd "$out/debs" && apt-get download -qq -o APT::Sandbox::User=root "${pkgs[@]}") ||
		{ apt-get update -qq && (cd "$out/debs" &&
			apt-get download -qq -o APT::Sandbox::User=root "${pkgs[@]}"); } ||
		die "apt-get download of the arm64 packages failed"
	for p in "$out"/debs/*.deb; do
		dpkg -x "$p" "$out/sysroot" || die "dpkg -x $p"
	done
	echo $arm64_debs >"$out/sysroot/.debs"
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

if [[ $steps == *" digest "* ]]; then
	t0=$SECONDS
	sysroot_ready || make_sysroot
	make_site
	log "cross-building libdavinci_core.so"
	"$cc" "${cflags[@]}" -fPIC -shared \
		-Wl,--version-script="$here/userspace/libdavinci_core/libdavinci_core.map" \
		"${srcs[@]}" -o "$out/libdavinci_core.so" ||
		die "libdavinci_core does not cross-build"
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

[ "$fail" = 0 ] || exit 1
log "PASS"

#!/bin/sh
# Install what building and testing davinci needs on a fresh Debian 12:
# Debian packages with apt-get, Python packages into a virtual environment
# made with Debian's /usr/bin/python3 (readable by unprivileged test users).
#
# usage: scripts/install-deps.sh VENV [vm]
#   vm: also what the QEMU kernel-module tests need
set -eu

venv=$1
want_vm=${2:-}

debs="build-essential python3-venv python3-dev fuse libfuse2 clang-14 \
libclang-rt-14-dev llvm-14 kmod"
if [ "$want_vm" = vm ]; then
	debs="$debs qemu-system-x86 linux-image-amd64 linux-headers-amd64 \
linux-source-6.1 busybox-static"
fi

missing=
for pkg in $debs; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $pkg"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: missing Debian packages:$missing" >&2
		echo "install-deps: run as root, or: sudo apt-get install$missing" >&2
		exit 1
	fi
	echo "install-deps: apt-get install$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null
fi

if [ ! -x "$venv/bin/python" ]; then
	echo "install-deps: creating $venv"
	/usr/bin/python3 -m venv "$venv"
	"$venv/bin/pip" install -q --upgrade pip
fi
pydeps="numpy pytest fusepy scikit-learn pyroute2 setuptools wheel"
[ "$want_vm" = vm ] && pydeps="$pydeps virtme-ng"
"$venv/bin/pip" install -q $pydeps 2>&1 | grep -v "is ignored: it is neither" || true
chmod -R a+rX "$venv"

#!/bin/sh
# Install what building and testing davinci needs on a fresh Debian 12:
# Debian packages with apt-get, Python packages into a virtual environment
# made with Debian's /usr/bin/python3 (readable by unprivileged test users).
#
# usage: scripts/install-deps.sh VENV [vm]
#   vm: also what the QEMU kernel-module tests need (6.1 and, from
#       bookworm-backports pinned to these packages alone, 6.12)
set -eu

venv=$1
want_vm=${2:-}

log() { echo "install-deps: $*"; }
die() { echo "install-deps: $*" >&2; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

debs="build-essential python3-venv python3-dev fuse libfuse2 clang-14 \
libclang-rt-14-dev llvm-14 kmod gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
qemu-user-static"
if [ "$want_vm" = vm ]; then
	debs="$debs qemu-system-x86 linux-image-amd64 linux-headers-amd64 \
linux-source-6.1 busybox-static qemu-system-arm cpio trace-cmd linux-perf"
fi

# shellcheck disable=SC2086  # one word a package
install_debs $debs
# the second kernel the module is tested on: 6.12 from bookworm-backports
[ "$want_vm" = vm ] && install_backports_kernel

if [ ! -x "$venv/bin/python" ]; then
	echo "install-deps: creating $venv"
	/usr/bin/python3 -m venv "$venv"
	"$venv/bin/pip" install -q --upgrade pip
fi
pydeps="numpy pytest pytest-timeout fusepy scikit-learn pyroute2 setuptools wheel perfetto matplotlib onnx onnxruntime expecttest pillow"
[ "$want_vm" = vm ] && pydeps="$pydeps virtme-ng"
"$venv/bin/pip" install -q $pydeps 2>&1 | grep -v "is ignored: it is neither" || true
# torch_npu (tests/torch): PyTorch's CPU build from the registry, pinned
# (another version or spec pulls the multi-GB CUDA build), and torch_npu's
# C++ extension compiled once into the torch extensions cache
"$venv/bin/pip" install -q torch==2.13.0
# tests/torch runs transformers' and accelerate's model code on npu (after
# torch: accelerate needs torch, and the pin keeps pip from replacing it)
"$venv/bin/pip" install -q "transformers>=5,<6" accelerate torch==2.13.0 \
	2>&1 | grep -v "is ignored: it is neither" || true
"$venv/bin/python" "$(dirname "$0")/../userspace/torch_npu/_ext.py" >/dev/null ||
	die "building torch_npu's C++ extension failed"
chmod -R a+rX "$venv"

#!/bin/bash
# Bit-identity of the op kernels between the kernel and userspace builds.
#
# Builds kmod/core's op sources twice: into a throwaway module (opsfp.ko,
# float units with the FPU flags of kmod/Kbuild) and into a userspace
# program; both run the same ops on the same pseudo-random inputs (all
# float bit patterns, NaN and inf included) and print a hash of each
# output. The module runs in a QEMU guest (virtme-ng, TCG) booting
# Debian's kernel. Exit status 0 when every hash matches.
#
# usage: tests/ops/kident/run.sh [KVER]   (default: newest /boot/vmlinuz-*)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
kver=${1:-$(ls /boot/vmlinuz-* | sed 's|/boot/vmlinuz-||' | sort -V | tail -1)}
kdir=/lib/modules/$kver/build
work=$(mktemp -d /tmp/opsfp.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PATH=/opt/davinci-venv/bin:$PATH

mkdir -p "$work/core" "$work/include/uapi"
cp "$repo"/kmod/core/{os.h,ops.h,ops_kernels.h,numerics.h,ops.c,ops_*.c,numerics.c} \
	"$here/ident.c" "$work/core/"
cp "$repo/kmod/include/uapi/davinci.h" "$work/include/uapi/"
fpu_srcs=$(cd "$work/core" && ls ops_*.c numerics*.c | sed 's/\.c$//')
objs=$(cd "$work/core" && ls *.c | sed 's|^\(.*\)\.c$|core/\1.o|' | tr '\n' ' ')
cat >"$work/Kbuild" <<KB
obj-m := opsfp.o
opsfp-y := $objs
ccflags-y := -I\$(src)/include -I\$(src)/core -ffp-contract=off
dv_fpu_remove := -mno-sse -mno-sse2 -mno-mmx -mno-3dnow -mno-avx \\
	-mno-80387 -mno-fp-ret-in-387 -msoft-float
dv_fpu_add := -msse -msse2 -mhard-float -ffp-contract=off
\$(foreach f,$(echo $fpu_srcs),\\
	\$(eval CFLAGS_REMOVE_core/\$(f).o += \$(dv_fpu_remove))\\
	\$(eval CFLAGS_core/\$(f).o += \$(dv_fpu_add)))
KB
make -s -C "$kdir" M="$work" modules >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log"; exit 1; }
gcc -std=gnu11 -O2 -ffp-contract=off -fno-fast-math -Wall -Wextra -Werror \
	-I "$work/core" -I "$work/include" "$work"/core/*.c -o "$work/ident"
"$work/ident" >"$work/user.txt"
timeout --foreground -k 10 600 vng --disable-kvm --run "/boot/vmlinuz-$kver" \
	--memory 1G --cpus 1 --rwdir "$work" \
	--exec "insmod $work/opsfp.ko; dmesg | grep 'opsfp: ' | grep -v taint | sed 's/^\[[^]]*\] //' >$work/kernel.txt" \
	>"$work/vng.log" 2>&1 || true
if [ ! -s "$work/kernel.txt" ]; then
	cat "$work/vng.log"
	echo "kident: FAIL: no output from the guest"
	exit 1
fi
if diff -u "$work/user.txt" "$work/kernel.txt"; then
	echo "kident: OK: $(grep -v done "$work/user.txt" | grep -c 'opsfp: ') op outputs bit-identical (kernel $kver vs userspace)"
else
	echo "kident: FAIL: kernel and userspace results differ"
	exit 1
fi

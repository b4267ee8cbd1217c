#!/bin/bash
# Build (once) the debug kernel that scripts/vm-test.sh boots with
# VM_DEBUG=1: Debian's linux-source-6.1, virtme-ng's minimal config
# (vng --kconfig) plus KASAN, lockdep, UBSAN, kmemleak and failslab,
# trimmed of what the QEMU guest does not use.
#
# usage: scripts/debug-kernel.sh [--build|--path|--key]
#   --build (default): build unless cached; print the cache directory
#   --path: print the cache directory if the kernel is built, else exit 1
#   --key: print the cache key
#
# The result lives outside the clone, so every clone and CI run on the
# machine shares it: $DEBUG_KERNEL_CACHE/<key>/ (default
# /var/cache/davinci/debug-kernel) holds bzImage, config, System.map,
# kernelrelease, build.log and build/, a kernel tree cleaned of objects but
# prepared for external modules (make -C kmod KDIR=<cache>/<key>/build).
# The key hashes the source package's version, the compiler, virtme-ng's
# version and this script's configuration part (between the CONFIG
# markers): change any of them and a new kernel is built beside the old.
# A build takes 15-20 minutes on 2 cores; a build that stopped half way
# resumes where it stopped.
set -u

mode=${1:---build}
cache_root=${DEBUG_KERNEL_CACHE:-/var/cache/davinci/debug-kernel}
tarball=/usr/src/linux-source-6.1.tar.xz
vng=${VNG:-/opt/davinci-venv/bin/vng}
jobs=${DEBUG_KERNEL_JOBS:-$(nproc)}

log() { echo "debug-kernel: $*" >&2; }
die() { echo "debug-kernel: FAIL: $*" >&2; exit 1; }
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# --- CONFIG begin (hashed into the cache key) ---
localversion=-davinci-debug
# What the tests look for, and what the module needs.
debug_items=(
	CONFIG_LOCALVERSION=\"$localversion\"
	CONFIG_MODULES=y CONFIG_MODULE_UNLOAD=y CONFIG_MODULE_FORCE_UNLOAD=n
	CONFIG_MODVERSIONS=n CONFIG_MODULE_SIG=n
	CONFIG_NET=y CONFIG_NETLINK_DIAG=n
	CONFIG_DEBUG_FS=y CONFIG_DEBUG_FS_ALLOW_ALL=y
	CONFIG_KALLSYMS=y CONFIG_KALLSYMS_ALL=y
	CONFIG_FRAME_POINTER=n CONFIG_UNWINDER_ORC=y
	CONFIG_KASAN=y CONFIG_KASAN_GENERIC=y CONFIG_KASAN_INLINE=y
	CONFIG_KASAN_VMALLOC=y
	CONFIG_PROVE_LOCKING=y CONFIG_DEBUG_ATOMIC_SLEEP=y
	CONFIG_DEBUG_LOCKDEP=n CONFIG_LOCK_STAT=n
	CONFIG_DEBUG_LIST=y CONFIG_DEBUG_OBJECTS=y CONFIG_DEBUG_OBJECTS_FREE=y
	CONFIG_DEBUG_OBJECTS_TIMERS=y CONFIG_DEBUG_OBJECTS_WORK=y
	CONFIG_DEBUG_KMEMLEAK=y CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF=n
	CONFIG_DEBUG_KMEMLEAK_MEM_POOL_SIZE=40000
	CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=n
	CONFIG_UBSAN=y CONFIG_UBSAN_BOUNDS=y CONFIG_UBSAN_SHIFT=y
	CONFIG_UBSAN_DIV_ZERO=y CONFIG_UBSAN_BOOL=y CONFIG_UBSAN_ENUM=y
	CONFIG_UBSAN_ALIGNMENT=n CONFIG_UBSAN_SANITIZE_ALL=y
	CONFIG_FAULT_INJECTION=y CONFIG_FAILSLAB=y
	CONFIG_FAULT_INJECTION_DEBUG_FS=y
	# (no FAULT_INJECTION_STACKTRACE_FILTER: 6.1 has it !X86_64; the
	# fuzzer's tasks are singled out with task-filter and make-it-fail)
	CONFIG_PANIC_ON_OOPS=n CONFIG_SOFTLOCKUP_DETECTOR=y
	CONFIG_DETECT_HUNG_TASK=y
)
# What the guest does not use (x86_64_defconfig builds DRM/i915, sound,
# KVM, tracing, ...): less to compile, less to boot under TCG.
trim_items=(
	CONFIG_DRM=n CONFIG_AGP=n CONFIG_FB=n CONFIG_SOUND=n CONFIG_SND=n
	CONFIG_KVM=n CONFIG_VIRTUALIZATION=n CONFIG_XEN=n
	CONFIG_FTRACE=n CONFIG_KPROBES=n CONFIG_UPROBES=n CONFIG_BPF_JIT=n
	CONFIG_BPF_SYSCALL=n CONFIG_CGROUP_BPF=n
	CONFIG_WLAN=n CONFIG_WIRELESS=n CONFIG_USB_SUPPORT=n CONFIG_INPUT_MOUSE=n
	CONFIG_INPUT_JOYSTICK=n CONFIG_INPUT_TABLET=n CONFIG_INPUT_TOUCHSCREEN=n
	CONFIG_MACINTOSH_DRIVERS=n CONFIG_PCCARD=n CONFIG_ATA=n CONFIG_MD=n
	CONFIG_NETFILTER=n CONFIG_IPV6=n CONFIG_NET_SCHED=n CONFIG_DCB=n
	CONFIG_HAMRADIO=n CONFIG_ETHERNET=n CONFIG_NFS_FS=n CONFIG_NFSD=n
	CONFIG_SQUASHFS=n CONFIG_ISO9660_FS=n CONFIG_QUOTA=n
	CONFIG_HIBERNATION=n CONFIG_SUSPEND=n CONFIG_X86_MCE=n
	CONFIG_PERF_EVENTS_INTEL_UNCORE=n CONFIG_MICROCODE=n
	CONFIG_DEBUG_INFO_NONE=y
)
# Applied after vng --kconfig, whose own list comes last (it turns DWARF
# debug info on): no debug info halves the link and the cache; kallsyms
# names every frame of a report.
post_disable=(DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT DEBUG_INFO_DWARF4
	DEBUG_INFO_DWARF5 DEBUG_INFO_BTF)
post_enable=(DEBUG_INFO_NONE)
# Must hold in the final .config, or the build stops before compiling.
required=(MODULES MODULE_UNLOAD KASAN KASAN_GENERIC KASAN_INLINE
	PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK UBSAN FAILSLAB
	FAULT_INJECTION_DEBUG_FS DEBUG_FS
	NET DEVTMPFS VIRTIO_PCI NET_9P_VIRTIO 9P_FS OVERLAY_FS TMPFS
	VIRTIO_CONSOLE SERIAL_8250_CONSOLE)
required_off=(DEBUG_KMEMLEAK_DEFAULT_OFF DRM KVM DEBUG_INFO_DWARF5)
# --- CONFIG end ---

[ -r "$tarball" ] || die "$tarball missing (apt-get install linux-source-6.1)"
src_version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)
[ -n "$src_version" ] || src_version=$(stat -c %s-%Y "$tarball")
cc_version=$(gcc --version 2>/dev/null | head -n1)
vng_version=$("$vng" --version 2>/dev/null)
config_part=$(sed -n '/^# --- CONFIG begin/,/^# --- CONFIG end/p' "$0")
key=$(printf '%s\n' "$src_version" "$cc_version" "$vng_version" \
	"$config_part" | sha256sum | cut -c1-16)
key=6.1-$src_version-$key
dir=$cache_root/$key

case $mode in
--key) echo "$key"; exit 0 ;;
--path)
	[ -f "$dir/ok" ] || exit 1
	echo "$dir"; exit 0 ;;
--build) ;;
*) die "usage: $0 [--build|--path|--key]" ;;
esac

if [ -f "$dir/ok" ]; then
	log "cached: $dir ($(cat "$dir/kernelrelease"))"
	echo "$dir"
	exit 0
fi

# 1. Build dependencies.
install_debs flex bison libelf-dev bc libssl-dev build-essential xz-utils \
	cpio kmod
[ -x "$vng" ] || die "$vng missing (scripts/vm-test.sh installs virtme-ng)"
export PATH="$(dirname "$vng"):$PATH"	# vng runs virtme-configkernel

mkdir -p "$dir" || die "cannot create $dir"
exec 9>"$dir/.lock"
if ! flock -n 9; then
	log "another build of $key is running; waiting for it"
	flock 9
	[ -f "$dir/ok" ] && { echo "$dir"; exit 0; }
fi

t0=$(date +%s)
tree=$dir/build
blog=$dir/build.log

# 2. Source and configuration (once; a resumed build keeps them).
if [ ! -f "$tree/.config.done" ]; then
	rm -rf "$tree"
	mkdir -p "$tree"
	log "unpacking $tarball ($src_version) into $tree"
	tar -xJf "$tarball" -C "$tree" --strip-components=1 ||
		die "unpacking failed"
	cargs=()
	for i in "${debug_items[@]}" "${trim_items[@]}"; do
		cargs+=(--configitem "$i")
	done
	log "configuring: vng --kconfig with ${#cargs[@]} items / 2"
	# A private HOME: a user's ~/.config/virtme-ng/kernel.config would
	# change the kernel behind the key's back.
	(cd "$tree" && mkdir -p .vng-home &&
		HOME=$tree/.vng-home "$vng" --kconfig "${cargs[@]}") \
		>"$dir/config.log" 2>&1 || {
		tail -n 30 "$dir/config.log" >&2
		die "vng --kconfig failed ($dir/config.log)"
	}
	dis=() en=()
	for o in "${post_disable[@]}"; do dis+=(--disable "$o"); done
	for o in "${post_enable[@]}"; do en+=(--enable "$o"); done
	(cd "$tree" && scripts/config "${dis[@]}" "${en[@]}" &&
		make olddefconfig) >>"$dir/config.log" 2>&1 ||
		die "olddefconfig failed ($dir/config.log)"
	bad=
	for o in "${required[@]}"; do
		grep -q "^CONFIG_$o=y" "$tree/.config" || bad="$bad $o"
	done
	for o in "${required_off[@]}"; do
		grep -q "^CONFIG_$o=y" "$tree/.config" && bad="$bad !$o"
	done
	[ -z "$bad" ] || die "the final .config lacks:$bad ($tree/.config)"
	touch "$tree/.config.done"
fi
log "building with $jobs jobs; log: $blog"

# 3. Build, with a line a minute so that a CI log shows it is alive.
make -C "$tree" -j"$jobs" all >"$blog" 2>&1 &
mpid=$!
(
	while sleep 60; do
		kill -0 "$mpid" 2>/dev/null || exit 0
		n=$(grep -c '^  CC ' "$blog")
		echo "debug-kernel: $(( ($(date +%s) - t0) / 60 )) min," \
		     "$n files compiled; $(tail -n1 "$blog" | cut -c1-80)" >&2
	done
) &
tpid=$!
wait "$mpid"
mrc=$?
kill "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null
if [ "$mrc" != 0 ]; then
	grep -E "error|Error" "$blog" | head -n 20 >&2
	die "kernel build failed ($blog)"
fi

# 4. Keep the boot image, then drop the objects: make clean keeps what an
# external module build needs (include/generated, scripts, tools);
# Module.symvers is saved across it.
cp "$tree/arch/x86/boot/bzImage" "$tree/.config" "$tree/System.map" "$dir/" ||
	die "copying the image failed"
mv "$dir/.config" "$dir/config"
cp "$tree/Module.symvers" "$dir/Module.symvers"
make -C "$tree" clean >>"$blog" 2>&1 || die "make clean failed"
cp "$dir/Module.symvers" "$tree/Module.symvers"
make -C "$tree" -j"$jobs" modules_prepare >>"$blog" 2>&1 ||
	die "modules_prepare failed"
krel=$(cat "$tree/include/config/kernel.release")
echo "$krel" >"$dir/kernelrelease"
t1=$(date +%s)
echo "$((t1 - t0))" >"$dir/build-seconds"
touch "$dir/ok"
log "built $krel in $(( (t1 - t0) / 60 )) min $(( (t1 - t0) % 60 )) s: $dir"
echo "$dir"

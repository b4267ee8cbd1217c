# davinci: a virtual Da Vinci NPU driver stack.
#
#   make demo   bring the stack up (kernel module if it loads, FUSE otherwise)
#               and run the sample workload
#   make test   install what is missing, build, run every test suite
#   make bench  the performance table as ratios from one run (JSON too);
#               make bench-vm does the same on the module in QEMU

ROOT_VENV := /opt/davinci-venv
VENV ?= $(if $(filter 0,$(shell id -u)),$(ROOT_VENV),$(CURDIR)/.venv)
PY := $(VENV)/bin/python
BUILD := build

CORE_SRCS := $(wildcard kmod/core/*.c) $(wildcard userspace/libdavinci_core/*.c)
CORE_HDRS := $(wildcard kmod/core/*.h) $(wildcard userspace/libdavinci_core/*.h) \
	kmod/include/uapi/davinci.h
CORE_CFLAGS := -std=gnu11 -O2 -g -fPIC -pthread -ffp-contract=off -fno-fast-math \
	-Wall -Wextra -Werror -Ikmod/core -Ikmod/include -Iuserspace/libdavinci_core
# The library users run leaves lock assertions out, as a kernel without
# lockdep; the tests, the sanitizer builds and the fuzzer check them.
LOCK_CHECKS := -DDV_LOCK_CHECKS
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer -DDV_LOCK_ORDER_CHECK $(LOCK_CHECKS)
FUZZ_SECONDS ?= 60
# the JPEG decoder's two fuzzers (libFuzzer in C, a mutator in Python)
JPEG_FUZZ_SECONDS ?= 30
# the PNG decoder's libFuzzer run (fuzz_pngd.c)
PNG_FUZZ_SECONDS ?= 30
# acl.media's JPEG and PNG decode on mutated files (fuzz_media.py)
MEDIA_FUZZ_SECONDS ?= 30
# clients SIGKILLed mid-work by the FUSE kill soak (the guest kills 1000)
SOAK_CLIENTS ?= 10000

.PHONY: all core deps deps-vm install-py demo kmod checkpatch gen-ops test test-core test-fuzz test-py \
	test-fuse vm-test test-digests bench bench-vm clean test-debug-kernel vm-test-debug-cached \
	trace-png

all: core

deps:
	scripts/install-deps.sh $(VENV)

deps-vm:
	scripts/install-deps.sh $(VENV) vm

core: $(BUILD)/libdavinci_core.so $(BUILD)/asan/libdavinci_core.so

# The shared library exports the dvc_* API of libdavinci_core.h only.
CORE_MAP := userspace/libdavinci_core/libdavinci_core.map
CORE_SO_LDFLAGS := -shared -Wl,--version-script=$(CORE_MAP)

$(BUILD)/libdavinci_core.so: $(CORE_SRCS) $(CORE_HDRS) $(CORE_MAP)
	@mkdir -p $(@D)
	gcc $(CORE_CFLAGS) $(CORE_SO_LDFLAGS) $(CORE_SRCS) -o $@

$(BUILD)/asan/libdavinci_core.so: $(CORE_SRCS) $(CORE_HDRS) $(CORE_MAP)
	@mkdir -p $(@D)
	gcc $(CORE_CFLAGS) $(SAN_FLAGS) $(CORE_SO_LDFLAGS) $(CORE_SRCS) -o $@

TEST_CORE_SRCS := $(wildcard tests/core/*.c)
TEST_CORE_HDRS := $(wildcard tests/core/*.h)

$(BUILD)/test_core: $(TEST_CORE_SRCS) $(TEST_CORE_HDRS) $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	gcc $(CORE_CFLAGS) $(LOCK_CHECKS) $(TEST_CORE_SRCS) $(CORE_SRCS) -o $@

$(BUILD)/asan/test_core: $(TEST_CORE_SRCS) $(TEST_CORE_HDRS) $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	gcc $(CORE_CFLAGS) $(SAN_FLAGS) $(TEST_CORE_SRCS) $(CORE_SRCS) -o $@

$(BUILD)/fuzz_dispatch: tests/fuzz/fuzz_dispatch.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	clang-14 $(filter-out -Werror,$(CORE_CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -DDV_LOCK_ORDER_CHECK $(LOCK_CHECKS) tests/fuzz/fuzz_dispatch.c $(CORE_SRCS) -o $@

$(BUILD)/fuzz_jpegd: tests/fuzz/fuzz_jpegd.c kmod/core/jpegd.c kmod/core/jpegd.h
	@mkdir -p $(@D)
	clang-14 $(filter-out -Werror,$(CORE_CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined tests/fuzz/fuzz_jpegd.c kmod/core/jpegd.c -o $@

$(BUILD)/fuzz_pngd: tests/fuzz/fuzz_pngd.c kmod/core/pngd.c kmod/core/pngd.h
	@mkdir -p $(@D)
	clang-14 $(filter-out -Werror,$(CORE_CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined tests/fuzz/fuzz_pngd.c kmod/core/pngd.c -o $@

install-py: core
	$(VENV)/bin/pip install -q . 2>&1 | grep -v "is ignored: it is neither" || true
	chmod -R a+rX $(VENV)

demo: deps install-py
	scripts/demo.sh $(PY)

test: deps-vm install-py checkpatch test-core test-fuzz test-py test-fuse vm-test vm-test-6.12 \
	test-arm64 test-digests \
	vm-test-debug-cached

test-core: $(BUILD)/test_core $(BUILD)/asan/test_core
	$(BUILD)/test_core
	ASAN_OPTIONS=detect_leaks=1 $(BUILD)/asan/test_core

test-fuzz: $(BUILD)/fuzz_dispatch $(BUILD)/fuzz_jpegd $(BUILD)/fuzz_pngd core
	@mkdir -p $(BUILD)/fuzz-corpus $(BUILD)/fuzz-corpus-jpeg $(BUILD)/fuzz-corpus-png
	$(BUILD)/fuzz_dispatch -max_total_time=$(FUZZ_SECONDS) -max_len=2048 -timeout=10 \
		-rss_limit_mb=4096 -print_final_stats=1 $(BUILD)/fuzz-corpus tests/fuzz/corpus
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/asan/libdavinci_core.so \
		LD_PRELOAD="$(ASAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=userspace \
		$(PY) tests/fuzz/fuzz_om.py --seconds $(FUZZ_SECONDS)
	$(BUILD)/fuzz_jpegd -max_total_time=$(JPEG_FUZZ_SECONDS) -max_len=4096 -timeout=10 \
		-rss_limit_mb=4096 -print_final_stats=1 $(BUILD)/fuzz-corpus-jpeg tests/fuzz/corpus-jpeg
	DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/asan/libdavinci_core.so \
		LD_PRELOAD="$(ASAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0 \
		$(PY) tests/fuzz/fuzz_jpeg.py --seconds $(JPEG_FUZZ_SECONDS)
	$(BUILD)/fuzz_pngd -max_total_time=$(PNG_FUZZ_SECONDS) -max_len=4096 -timeout=10 \
		-rss_limit_mb=4096 -print_final_stats=1 $(BUILD)/fuzz-corpus-png tests/fuzz/corpus-png
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/asan/libdavinci_core.so \
		LD_PRELOAD="$(ASAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=userspace \
		$(PY) tests/fuzz/fuzz_media.py --seconds $(MEDIA_FUZZ_SECONDS)

# The Python suites run twice on the in-process backend: plain, and with the
# core built under AddressSanitizer and UBSan (Python itself is not, so its
# leaks are not reported; the core's own accounting catches ours).
ASAN_PRELOAD = $(shell gcc -print-file-name=libasan.so) $(shell gcc -print-file-name=libubsan.so)
PYTEST = $(PY) -m pytest -q -p no:cacheprovider

DIGESTS := $(CURDIR)/$(BUILD)/digests

test-py: core
	@mkdir -p $(DIGESTS)
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/libdavinci_core.so \
		DAVINCI_DIGEST_FILE=$(DIGESTS)/inproc \
		$(PYTEST) tests/abi tests/ops tests/conformance tests/docs tests/trace tests/atc
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/libdavinci_core.so \
		$(PYTEST) tests/torch
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/asan/libdavinci_core.so \
		LD_PRELOAD="$(ASAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0 \
		DAVINCI_DIGEST_FILE=$(DIGESTS)/inproc-asan \
		$(PYTEST) tests/ops tests/conformance

# The FUSE suite (lifecycle, coherence, kill tests, unprivileged users),
# the conformance suite through a daemon's nodes, then the kill soak.
test-fuse:
	@mkdir -p $(DIGESTS)
	$(PYTEST) tests/fuse
	DAVINCI_DIGEST_FILE=$(DIGESTS)/fuse scripts/with-fuse.sh $(PY) \
		$(PYTEST) tests/conformance
	scripts/with-fuse.sh $(PY) $(PYTEST) tests/trace
	scripts/with-fuse.sh $(PY) $(PYTEST) tests/torch
	scripts/with-fuse.sh $(PY) $(PY) scripts/kill_soak.py --clients $(SOAK_CLIENTS)

# The kernel module in a QEMU guest: the same conformance suite on
# /dev/davinci*, tests/kmod, the demo's workload, a clean dmesg at rmmod.
# VM_KVER picks the kernel: 6.1 (Debian 12's) or 6.12 (bookworm-backports).
VM_KVER ?= 6.1
vm_sfx = $(filter-out -6.1,-$(shell echo $(VM_KVER) | cut -d. -f1,2))
vm-test: core
	@mkdir -p $(DIGESTS)
	VM_KVER=$(VM_KVER) VM_SKIP="$(VM_SKIP)" scripts/vm-test.sh $(PY)
	cp build/vm-test$(vm_sfx)/digest-kmod.txt $(DIGESTS)/kmod$(vm_sfx)

# make test on 6.12: tests/kmod, the op digest, the kill soak and a clean
# unload; the whole conformance suite and the demo run on 6.1 (CI budget).
VM_612_SKIP ?= conformance torch-smoke demo
vm-test-6.12:
	$(MAKE) vm-test VM_KVER=6.12 VM_SKIP="$(VM_612_SKIP)"

# The module under the debug kernel (scripts/debug-kernel.sh: KASAN,
# lockdep, UBSAN, kmemleak, failslab): tests/kmod, a million fuzzed ioctls
# with hot add/remove, kills and failslab, rmmod, a kmemleak scan; any
# report fails. Builds and caches the kernel first (15-20 min on 2 cores).
test-debug-kernel: deps-vm core
	scripts/debug-kernel.sh
	VM_DEBUG=1 scripts/vm-test.sh $(PY)

# make test runs the debug guest only when the kernel is cached already,
# with a fifth of the fuzzing (about 7 of its 34 minutes under TCG).
TEST_FUZZ_IOCTLS ?= 200000
vm-test-debug-cached:
	@if scripts/debug-kernel.sh --path >/dev/null; then \
		VM_DEBUG=1 VM_FUZZ_IOCTLS=$(TEST_FUZZ_IOCTLS) \
			scripts/vm-test.sh $(PY); \
	else \
		echo "vm-test-debug: skipped, no debug kernel cached" \
			"(make test-debug-kernel builds it)"; \
	fi

kmod:
	$(MAKE) -C kmod

checkpatch:
	$(MAKE) -C kmod checkpatch-all

# The op tables from the op schema, kmod/core/ops.toml (tests/abi checks
# that they agree with it).
gen-ops:
	python3 scripts/gen_ops.py

# arm64 (scripts/arm64-test.sh): the core's C suite and op digest workload
# cross-built and run under qemu-aarch64-static; davinci.ko cross-built for
# Debian's arm64 kernel and loaded in it under qemu-system-aarch64 (TCG),
# where the digest workload runs on the module.
test-arm64:
	@mkdir -p $(DIGESTS)
	scripts/arm64-test.sh $(PY)
	cp build/arm64/digest.txt $(DIGESTS)/arm64
	cp build/arm64/digest-kmod.txt $(DIGESTS)/kmod-arm64

test-digests:
	scripts/compare-digests.sh $(addprefix $(DIGESTS)/,inproc inproc-asan fuse kmod kmod-6.12 \
		arm64 kmod-arm64)

# Every row of the performance table as a ratio measured in one run, on
# the in-process core (with 1..16 AI cores) and through FUSE; JSON in
# build/bench/. Nothing is asserted.
bench: deps install-py core
	@mkdir -p $(BUILD)/bench
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/libdavinci_core.so \
		$(PY) scripts/bench.py --sweep-aicores --json $(BUILD)/bench/inproc.json
	scripts/with-fuse.sh $(PY) $(PY) scripts/bench.py --json $(BUILD)/bench/fuse.json
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/libdavinci_core.so \
		$(PY) scripts/bench_torch.py --json $(BUILD)/bench/torch-inproc.json
	scripts/with-fuse.sh $(PY) $(PY) scripts/bench_torch.py \
		--json $(BUILD)/bench/torch-fuse.json

# The same rows on the kernel module in the QEMU guest (under TCG: compare
# the ratios, not the absolute figures, with the host's).
bench-vm: deps-vm install-py
	@mkdir -p $(BUILD)/bench
	VM_BENCH=1 VM_SKIP="conformance digest torch-smoke kmod-tests demo kill-soak" \
		scripts/vm-test.sh $(PY)
	cp $(BUILD)/vm-test/bench-kmod.json $(BUILD)/bench/kmod.json

# The README's timeline picture: `davinci trace --png` of
# scripts/trace_demo.py on the in-process core (two AI cores).
TRACE_PNG ?= docs/trace-timeline.png
trace-png: core
	@mkdir -p $(BUILD)/trace
	DAVINCI_BACKEND=inproc DAVINCI_CORE_LIB=$(CURDIR)/$(BUILD)/libdavinci_core.so \
		PYTHONPATH=$(CURDIR)/userspace $(PY) -m davinci.cli trace -q \
		-o $(BUILD)/trace/timeline.pftrace --png $(TRACE_PNG) -- \
		$(PY) scripts/trace_demo.py

clean:
	rm -rf $(BUILD)
	$(MAKE) -C kmod clean 2>/dev/null || true

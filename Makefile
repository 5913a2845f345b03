# qgpu: top-level build. `make run` and `make test` are the two entry points;
# see README.md. Everything slow (QEMU build, .debs, guest kernel) is cached
# in $(QGPU_CACHE); everything else is built into build/.

SHELL := /bin/bash
# The guest kernel: Debian's linux-image-$(KVER)-unsigned, built against
# linux-headers-$(KVER). The one place the version is named: the scripts read
# it from here. Should that build have left Debian's archive, set-up uses the
# newest build of the same series instead (scripts/kver.sh prints which).
KVER := 6.12.117+deb12-amd64
QGPU_CACHE ?= /var/cache/qgpu
# Debian's headers for it, extracted into the cache (scripts/kernel-headers.sh)
KDIR ?= $(QGPU_CACHE)/headers-$(KV)/usr/src/linux-headers-$(KV)
KV = $(shell QGPU_CACHE='$(QGPU_CACHE)' scripts/kver.sh)
export QGPU_CACHE

B := build
CC ?= cc
AR ?= ar

# Device properties for `make run` / `make shell` (docs/hw-spec.md lists them).
RUN_PROPS ?= vram-size=256M,visible-vram-size=64M
SHELL_PROPS ?= $(RUN_PROPS)
# qgpu.ko parameters and guest memory for `make run` / `make shell`.
MODPARAMS ?=
RUN_MEM ?= 2G

WARN := -Wall -Wextra -Werror
US_CFLAGS := -O2 -g -std=gnu11 $(WARN) -MMD -MP
US_CPPFLAGS := -Iinclude/uapi/drm -Iinclude/qgpu -Iuserspace/include -I/usr/include/libdrm -Itests/vm
US_LDLIBS := -ldrm -lpthread
UNIT_CFLAGS := -O1 -g -std=gnu11 $(WARN) -MMD -MP -fsanitize=address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined
UNIT_CPPFLAGS := -DQGPU_UNIT_TEST -Ikernel -Iinclude -Iinclude/uapi/drm -Iinclude/qgpu \
	-I/usr/include/libdrm -Itests/unit -Itests/vm

LIB_SRCS := $(wildcard userspace/lib/*.c)
TOOL_SRCS := $(wildcard userspace/tools/*.c)
VMTEST_SRCS := $(wildcard tests/vm/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
LIBQGPU := $(B)/lib/libqgpu.a
TOOLS := $(patsubst userspace/tools/%.c,$(B)/bin/%,$(TOOL_SRCS))
VMTESTS := $(patsubst tests/vm/%.c,$(B)/tests/vm/%,$(VMTEST_SRCS))
UNITTESTS := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRCS))

.PHONY: all setup deps qemu guest-kernel checkpatch-tool module userspace unit \
	image run test shell clean help

all: module userspace unit

help:
	@echo "make run            boot a VM with qgpu, run qgpu-info and qgpu-demo (traced, replayed, plotted)"
	@echo "make plots TRACE=F  the plots of a qgpu trace (build/plots/)"
	@echo "make test [T=pat]   all test suites (or those matching T; see README)"
	@echo "make test KERNEL=debug [T=pat]"
	@echo "                    the VM suite on the KASAN/lockdep/kmemleak/fault-injection"
	@echo "                    debug kernel (built once from Debian's source, ~25 min)"
	@echo "make shell          interactive guest shell with the driver loaded"
	@echo "make setup          host packages, QEMU, guest kernel, module, userspace, image"
	@echo "make igt IGT_DIR=D  your IGT build's driver-agnostic tests on qgpu and virtio-gpu"
	@echo "make bench          the whole benchmark, each figure beside its limit (build/bench/)"
	@echo "make module | userspace | unit | image | sw-sync | clean"

# --- set-up -----------------------------------------------------------------
setup: deps qemu guest-kernel checkpatch-tool module userspace unit image

deps:
	@scripts/host-deps.sh

qemu: deps
	@scripts/build-qemu.sh

guest-kernel: deps
	@scripts/guest-kernel.sh

checkpatch-tool: deps
	@scripts/checkpatch.sh --fetch

# --- kernel module ------------------------------------------------------------
# kernel/Kbuild is the driver's; we only pass CONFIG_DRM_QGPU=m (see Kconfig)
# and W=e (the kernel's switch that makes every compiler warning an error).
module: | deps
	@if [ -e kernel/Kbuild ] || [ -e kernel/Makefile ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel CONFIG_DRM_QGPU=m W=e modules; \
	else \
		echo "[qgpu] kernel/Kbuild not present: no module to build"; \
	fi

# --- sw_sync.ko ----------------------------------------------------------------
# The kernel's sw_sync (CONFIG_SW_SYNC, unset in Debian's config) built out of
# tree from Debian's linux-source into build/kmod/sw_sync.ko; the guest image
# carries it as an on-demand module (see scripts/sw-sync-module.sh).
.PHONY: sw-sync
setup: sw-sync
image: sw-sync
sw-sync: guest-kernel checkpatch-tool
	@scripts/sw-sync-module.sh

# --- IGT ---------------------------------------------------------------------
# make igt IGT_DIR=DIR [IGT_TESTS="NAME ..."]: the user's own IGT build on qgpu
# and on virtio-gpu, side by side (scripts/igt.py; the list: tests/igt/tests.list).
# Without IGT_DIR it only says how to give one. The project carries no IGT.
.PHONY: igt
IGT_DIR ?=
IGT_TESTS ?=
igt: $(if $(IGT_DIR),setup)
	@scripts/igt.sh $(if $(IGT_DIR),--igt-dir '$(IGT_DIR)') $(if $(IGT_TESTS),--tests '$(IGT_TESTS)')

# The harness's self-test (suite "igt" of `make test`) runs it on a directory
# laid out like an IGT build: build/igt-fake/tests/NAME from
# tests/igt-selftest/NAME.c, linked with build/igt-fake/lib/libigt.so.0.1
# (libigt.so.0, libigt.so: links) from tests/igt-selftest/libigt.c; the
# programs in IGT_FAKE_RPATH find it by rpath, the others by LD_LIBRARY_PATH.
IGT_FAKE := $(B)/igt-fake
IGT_FAKE_LIB := $(IGT_FAKE)/lib/libigt.so.0.1
IGT_FAKE_SRCS := $(filter-out tests/igt-selftest/libigt.c,$(wildcard tests/igt-selftest/*.c))
IGT_FAKE_TESTS := $(patsubst tests/igt-selftest/%.c,$(IGT_FAKE)/tests/%,$(IGT_FAKE_SRCS))
IGT_FAKE_RPATH := fake_subtests fake_env
IGT_FAKE_RPATH_FLAG := -Wl,-rpath,'$$ORIGIN/../lib'
IGT_FAKE_CFLAGS := -O2 -g -std=gnu11 $(WARN) -Itests/igt-selftest -I/usr/include/libdrm
.PHONY: igt-fake
igt-fake: $(IGT_FAKE_TESTS)
test: igt-fake

$(IGT_FAKE_LIB): tests/igt-selftest/libigt.c tests/igt-selftest/libigt.h | deps
	@mkdir -p $(@D)
	$(CC) $(IGT_FAKE_CFLAGS) -fPIC -shared -Wl,-soname,libigt.so.0 -o $@ $<
	ln -sfn libigt.so.0.1 $(@D)/libigt.so.0
	ln -sfn libigt.so.0 $(@D)/libigt.so

$(IGT_FAKE)/tests/%: tests/igt-selftest/%.c tests/igt-selftest/libigt.h $(IGT_FAKE_LIB)
	@mkdir -p $(@D)
	$(CC) $(IGT_FAKE_CFLAGS) -o $@ $< -L$(IGT_FAKE)/lib -ligt \
		$(if $(filter $*,$(IGT_FAKE_RPATH)),$(IGT_FAKE_RPATH_FLAG))

# --- user space ---------------------------------------------------------------
# userspace/lib/*.c -> build/lib/libqgpu.a; userspace/tools/NAME.c -> build/bin/NAME;
# tests/vm/NAME.c -> build/tests/vm/NAME (all linked with libqgpu and libdrm).
userspace: $(LIBQGPU) $(TOOLS) $(VMTESTS)

$(B)/userspace/lib/%.o: userspace/lib/%.c | deps
	@mkdir -p $(@D)
	$(CC) $(US_CPPFLAGS) $(US_CFLAGS) -c -o $@ $<

$(LIBQGPU): $(LIB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/bin/%: userspace/tools/%.c $(LIBQGPU) | deps
	@mkdir -p $(@D)
	$(CC) $(US_CPPFLAGS) $(US_CFLAGS) -MF $(B)/bin/.$*.d -o $@ $< $(LIBQGPU) $(US_LDLIBS)

$(B)/tests/vm/%: tests/vm/%.c $(LIBQGPU) | deps
	@mkdir -p $(@D)
	$(CC) $(US_CPPFLAGS) $(US_CFLAGS) -MF $(B)/tests/vm/.$*.d -o $@ $< $(LIBQGPU) $(US_LDLIBS)

# qgpu-replay (tools/replay/, docs/trace-format.md): replays qgpu traces
# through the kernel's own victim policies and split check, on the host
# (and in the guest: it is in build/bin, so the image carries it).
REPLAY_SRCS := $(wildcard tools/replay/*.c) kernel/qgpu_policy.c kernel/qgpu_split.c
REPLAY := $(B)/bin/qgpu-replay
userspace: $(REPLAY)

$(REPLAY): $(REPLAY_SRCS) $(wildcard tools/replay/*.h kernel/qgpu_policy.h kernel/qgpu_split.h) | deps
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 $(WARN) -Ikernel -Itools/replay -Iinclude/uapi/drm \
		-I/usr/include/libdrm -o $@ $(REPLAY_SRCS)

# Host unit tests: tests/unit/NAME.c -> build/tests/unit/NAME, built with ASan
# and UBSan. A test links kernel/ policy sources it names on a line
#   /* unit-sources: kernel/qgpu_split.c kernel/qgpu_policy.c */
unit: $(UNITTESTS)

unit_sources = $(shell sed -n 's|.*unit-sources:\(.*\)\*/.*|\1|p; s|^// *unit-sources:\(.*\)|\1|p' $(1))

.SECONDEXPANSION:
$(B)/tests/unit/%: tests/unit/%.c $$(call unit_sources,tests/unit/$$*.c)
	@mkdir -p $(@D)
	$(CC) $(UNIT_CPPFLAGS) $(UNIT_CFLAGS) -MF $(B)/tests/unit/.$*.d -o $@ $< \
		$(call unit_sources,$<)

# --- guest image, VM, tests ---------------------------------------------------
image: guest-kernel module userspace
	@scripts/build-initramfs.sh

# The demo runs under qgpu-trace: its trace is kept (build/run/demo.qtr, taken
# out of the console log by scripts/vm-fetch.py), replayed for every policy
# and plotted (build/run/plots/).
run: setup
	@rm -rf $(B)/logs/run
	@set -o pipefail; scripts/run-vm.sh -p "$(RUN_PROPS)" --mem $(RUN_MEM) \
		$(if $(MODPARAMS),-m "$(MODPARAMS)") --log-dir $(B)/logs/run qgpu-info \
		'qgpu-trace record -o /tmp/demo.qtr -- qgpu-demo' 'qgpu-trace cat /tmp/demo.qtr' | \
		grep -v '^@@'
	@scripts/vm-fetch.py $(B)/logs/run/*.log -o $(B)/run > /dev/null
	@echo "== the demo's trace: $(B)/run/demo.qtr, replayed for every victim policy"
	@$(REPLAY) $(B)/run/demo.qtr
	@echo "== its plots"
	@scripts/plots.sh --replay $(REPLAY) -o $(B)/run/plots $(B)/run/demo.qtr

# make plots TRACE="FILE..." [PLOTS_DIR=DIR]: the residency timeline, segment
# occupancy and bytes paged per policy against the bound of each qgpu trace,
# PNG and SVG (tools/replay/plots.py; Debian's python3-matplotlib).
PLOTS_DIR ?= $(B)/plots
.PHONY: plots
plots: $(REPLAY)
	@test -n "$(TRACE)" || { echo "usage: make plots TRACE=FILE (a qgpu trace, e.g. traces/demo.qtr)"; exit 2; }
	@scripts/plots.sh --replay $(REPLAY) -o $(PLOTS_DIR) $(TRACE)

# T=PATTERN[,PATTERN...] picks tests (see README); default: every suite.
# KERNEL=debug: the VM suite on the debug kernel instead (below).
ifeq ($(KERNEL),debug)
test: test-debug
else
test: setup
	tests/run-tests.sh $(if $(T),-t '$(T)')
endif

shell: setup
	scripts/run-vm.sh --shell -p "$(SHELL_PROPS)" --mem $(RUN_MEM) $(if $(MODPARAMS),-m "$(MODPARAMS)")

clean:
	@if [ -e kernel/Kbuild ] && [ -d $(KDIR) ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean; fi
	rm -rf $(B)/bin $(B)/lib $(B)/userspace $(B)/tests $(B)/guest $(B)/logs $(B)/run $(B)/plots
	@echo "[qgpu] kept build/qemu (-> $(QGPU_CACHE)); remove $(QGPU_CACHE) to start from scratch"

# --- benchmark (README "Benchmarks") -----------------------------------------
# `make bench`: every figure beside its limit, measured in the same run
# (scripts/bench.py): paging bandwidth of BENCH_SIZES against the host's
# memcpy of the same size just before and after the VM, BENCH_RUNS timed
# moves per figure, BENCH_REPEAT runs; then the bench groups of
# tests/vm/tests.list. Device and guest memory of the paging VM: BENCH_PROPS,
# BENCH_MEM (defaults in scripts/bench.py); BENCH_QEMU: another QEMU binary
# to measure. Results in build/bench/.
.PHONY: bench
BENCH_SIZES ?= 64M,1G
BENCH_RUNS ?= 5
BENCH_REPEAT ?= 1
bench: setup
	scripts/bench.sh --sizes '$(BENCH_SIZES)' --runs $(BENCH_RUNS) --repeat $(BENCH_REPEAT) \
		$(if $(BENCH_PROPS),--props '$(BENCH_PROPS)') $(if $(BENCH_MEM),--mem '$(BENCH_MEM)') \
		$(if $(BENCH_QEMU),--qemu '$(BENCH_QEMU)')

# --- debug kernel (README "Debug kernel") ------------------------------------
# `make test KERNEL=debug`: the VM suite (tests/vm/tests.list) on a guest
# kernel with KASAN, lockdep, debug objects, kmemleak and fault injection,
# built from Debian's linux-source by scripts/debug-kernel.sh (cached in
# $(QGPU_CACHE)/kernel-debug-*). Everything else it builds is kept apart from
# the default build, in $(DBG): the module (from a copy of kernel/, so
# kernel/qgpu.ko stays the stock kernel's), the image and the logs. Timeouts
# are multiplied by DBG_TIMEOUT_FACTOR and guests get at least DBG_MEM.
DBG := $(B)/debug
DBG_TIMEOUT_FACTOR ?= 4
DBG_MEM ?= 1536M
# A KASAN guest under TCG on a busy host can go 30 s without the CPU: RCU's
# stall detector (21 s by default) would report the host's load, not a bug.
DBG_APPEND ?= rcupdate.rcu_cpu_stall_timeout=300
DBG_DIR = $(shell QGPU_CACHE='$(QGPU_CACHE)' scripts/debug-kernel.sh --dir)
.PHONY: debug-kernel debug-module debug-image test-debug

debug-kernel: | deps
	@scripts/debug-kernel.sh > /dev/null

debug-module: debug-kernel
	@mkdir -p $(DBG)/module
	@cp -p kernel/Kbuild kernel/*.[ch] $(DBG)/module/
	@rm -f $(DBG)/module/*.mod.c
	@# kernel/Kbuild finds the shared headers at ../include
	@rm -rf $(DBG)/include && cp -rp include $(DBG)/include
	$(MAKE) -C $(DBG_DIR)/src M=$(CURDIR)/$(DBG)/module CONFIG_DRM_QGPU=m W=e modules

debug-image: debug-module userspace
	@QGPU_GUEST_KERNEL_DIR='$(DBG_DIR)' QGPU_KO='$(CURDIR)/$(DBG)/module/qgpu.ko' \
		QGPU_KMOD_DIR='$(CURDIR)/$(DBG)/kmod' QGPU_IMAGE_DIR='$(CURDIR)/$(DBG)/guest' \
		scripts/build-initramfs.sh

test-debug: qemu debug-image
	QGPU_KERNEL='$(DBG_DIR)/vmlinuz' QGPU_IMAGE='$(CURDIR)/$(DBG)/guest/initramfs.cpio.gz' \
		QGPU_TIMEOUT_FACTOR=$(DBG_TIMEOUT_FACTOR) QGPU_MIN_MEM=$(DBG_MEM) \
		QGPU_KERNEL_APPEND='$(DBG_APPEND)' \
		tests/run-tests.sh --log-dir $(DBG)/logs/test-$$(date +%Y%m%d-%H%M%S) \
		$(if $(T),-t '$(T)') vm

-include $(wildcard $(B)/userspace/lib/*.d $(B)/bin/.*.d $(B)/tests/vm/.*.d $(B)/tests/unit/.*.d)

# SPDX-License-Identifier: GPL-2.0
#
# Top-level build.  `make` builds driver/mmt.ko against Debian's kernel
# headers plus the user-space build of lib/ and the tools; `make check` runs
# every test stage; `make demo` runs the two-node demo in guests.
#
# Variables you may set:
#   KVER   kernel version to build for (default: the newest installed
#          kernel of the default series, 6.1: scripts/lib.sh mmt_kver)
#   KDIR   kernel build directory (default: /lib/modules/$(KVER)/build)
#   O      user-space build directory (default: build)
#   MMT_CACHE  cache for the unpacked kernel source and the UML build
#          (default: /var/tmp/mmt-cache; deleting it only costs time)
#   MMT_PROGRESS_SECONDS  seconds between the progress lines of long
#          builds (the debug kernel, make demo's build; default 30)
#   KUNIT_KERNELS  the kernel series whose sources the KUnit stage runs
#          the suites on (default "6.1 6.12"; "6.1" for one)

# KVER and KDIR look at installed packages (the kernel headers), so they are
# resolved by the recipes that use them, never when this file is parsed, and
# not exported: `make check` and `make demo` install the packages first
# (scripts/deps.sh), then their scripts resolve the kernel once
# (scripts/lib.sh, mmt_kernel) and pass it to every stage.  A value set on
# the command line or in the environment is kept.
KVER ?= $(shell bash -c '. scripts/lib.sh && mmt_kver' 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
O ?= build
MMT_CACHE ?= /var/tmp/mmt-cache
export MMT_CACHE

CC ?= cc
CLANG ?= clang
USER_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-sign-compare -Wno-missing-field-initializers \
	-Werror=implicit-function-declaration \
	-D_GNU_SOURCE -Ilib -Iuapi -Itools/lib
TEST_CFLAGS := $(USER_CFLAGS) -Itests/user -Itests/lib
CRYPTO_LIBS := -lcrypto

# lib/ in user space: every lib/*.c but the kernel crypto backend.
ENGINE_SRCS := $(filter-out %_kernel.c,$(wildcard lib/*.c))
ENGINE_OBJS := $(patsubst %.c,$(O)/%.o,$(ENGINE_SRCS))
ENGINE_LIB := $(O)/libmmtengine.a
ENGINE_HDRS := $(wildcard lib/*.h) $(wildcard uapi/*.h)

# Shared test suites (KUnit API): tests/lib/*_test.c
UNIT_SRCS := $(wildcard tests/lib/*_test.c) tests/user/kunit/runner.c
UNIT_BIN := $(O)/mmt-unit

# libFuzzer harnesses: tests/fuzz/*_fuzz.c, corpus in tests/fuzz/corpus/<name>
FUZZ_SRCS := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -D_GNU_SOURCE -Ilib -Iuapi -Itests/lib

# User tools: tools/lib (libmmt), tools/*.c each a program.
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_BINS := $(patsubst tools/%.c,$(O)/tools/%,$(TOOL_SRCS))
LIBMMT_SRCS := $(wildcard tools/lib/*.c)
LIBMMT_OBJS := $(patsubst %.c,$(O)/%.o,$(LIBMMT_SRCS))
LIBMMT := $(O)/libmmt.a
LIBMMT_SO := $(O)/libmmt.so
LIBMMT_PIC_OBJS := $(patsubst %.c,$(O)/pic/%.o,$(LIBMMT_SRCS))

# The paper's applications (docs/PAPER.md): tools/apps/mmt-*.c each a
# program, the other tools/apps/*.c their shared code
APP_MAINS := $(wildcard tools/apps/mmt-*.c)
APP_BINS := $(patsubst tools/apps/%.c,$(O)/tools/apps/%,$(APP_MAINS))
APP_COMMON := $(filter-out $(APP_MAINS),$(wildcard tools/apps/*.c))
# mmt-wordcount-mpi, mmt-pagerank-mpi: the same programs with MPI as their
# control plane, when MPICH's or Open MPI's mpicc is installed
# (scripts/deps.sh)
MPICC ?= $(shell command -v mpicc 2>/dev/null)
APP_MPI_BINS := $(if $(MPICC),$(O)/tools/apps/mmt-wordcount-mpi $(O)/tools/apps/mmt-pagerank-mpi \
	$(O)/tests/apps/mpi-finalize)

# The CRIU plugin (docs/CRIU.md), when CRIU's plugin header is installed
# (Debian's criu package ships it: scripts/deps.sh)
CRIU_PLUGIN := $(if $(wildcard /usr/include/criu/criu-plugin.h),$(O)/tools/criu/mmt_criu.so)

.PHONY: all module user tools unit fuzz-build deps check check-debug check-kernels check-siw \
	soak lint demo \
	demo-migrate demo-attest bench bench-migrate paper \
	deb clean help

all: module user tools

help:
	@sed -n '3,19p' Makefile

module:
	@test -d '$(KDIR)' || { \
		echo "no kernel build dir '$(KDIR)'$(if $(KVER),, (no kernel headers: no /lib/modules/*/build)); run 'make deps' or set KVER= or KDIR=" >&2; \
		exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

user: $(ENGINE_LIB) $(UNIT_BIN)

tools: $(TOOL_BINS) $(LIBMMT_SO) $(APP_BINS) $(APP_MPI_BINS) $(CRIU_PLUGIN) \
	$(O)/tests/attest/mmt-attest

$(O)/%.o: %.c $(ENGINE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

$(ENGINE_LIB): $(ENGINE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIBMMT): $(LIBMMT_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIBMMT_OBJS) $(LIBMMT_PIC_OBJS): $(wildcard tools/lib/*.h)

$(O)/pic/%.o: %.c $(ENGINE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -c -o $@ $<

$(LIBMMT_SO): $(LIBMMT_PIC_OBJS)
	$(CC) -shared -Wl,-soname,libmmt.so -o $@ $^

$(O)/tools/criu/mmt_criu.so: tools/criu/mmt_criu.c $(LIBMMT_PIC_OBJS) $(wildcard tools/lib/*.h) $(wildcard uapi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -shared -o $@ $< $(LIBMMT_PIC_OBJS) -ldl

$(UNIT_BIN): $(UNIT_SRCS) $(ENGINE_LIB) $(ENGINE_HDRS) $(wildcard tests/user/kunit/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $(UNIT_SRCS) $(ENGINE_LIB) $(CRYPTO_LIBS)

$(O)/tools/%: tools/%.c $(ENGINE_LIB) $(LIBMMT) $(ENGINE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIBMMT) $(ENGINE_LIB) $(CRYPTO_LIBS) -lm

$(O)/tools/apps/%: tools/apps/%.c $(APP_COMMON) $(LIBMMT) $(wildcard tools/apps/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itools/apps -o $@ $< $(APP_COMMON) $(LIBMMT) -lm

# one MPI program: its main source ($<) with the apps' common code
define MPI_APP_LINK
@mkdir -p $(dir $@)
$(MPICC) $(USER_CFLAGS) -DMMTA_MPI -Itools/apps -o $@ $< $(APP_COMMON) $(LIBMMT) -lm
endef

$(O)/tools/apps/%-mpi: tools/apps/%.c $(APP_COMMON) $(LIBMMT) $(wildcard tools/apps/*.h)
	$(MPI_APP_LINK)

# tests/apps/run.sh's MPI_Finalize checks: apps_net.c under mpiexec
$(O)/tests/apps/mpi-finalize: tests/apps/mpi-finalize.c $(APP_COMMON) $(LIBMMT) $(wildcard tools/apps/*.h)
	$(MPI_APP_LINK)

# The attestation tools (docs/ATTESTATION.md): tools/attest/ shared code,
# OpenSSL for certificates and signatures, libtss2 (ESAPI) for the TPM.
ATTEST_SRCS := $(wildcard tools/attest/*.c)
ATTEST_HDRS := $(wildcard tools/attest/*.h)
$(O)/tools/mmt-authority: tools/mmt-authority.c $(ATTEST_SRCS) $(ATTEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itools -o $@ $< $(ATTEST_SRCS) -ltss2-mu $(CRYPTO_LIBS)

ATTEST_TPM_LIBS := -ltss2-esys -ltss2-mu -ltss2-rc -ltss2-tctildr
$(O)/tools/mmt-attest: tools/mmt-attest.c $(ATTEST_SRCS) $(ATTEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itools -o $@ $< $(ATTEST_SRCS) $(ATTEST_TPM_LIBS) \
		$(CRYPTO_LIBS)

# TEST ONLY: mmt-attest whose quote takes --node-key FILE, for
# tests/attest/run.sh, which runs without the module; never installed
ATTEST_TEST_BIN := $(O)/tests/attest/mmt-attest
$(ATTEST_TEST_BIN): tools/mmt-attest.c $(ATTEST_SRCS) $(ATTEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -DMMTA_TEST_NODE_KEY -Itools -o $@ $< \
		$(ATTEST_SRCS) $(ATTEST_TPM_LIBS) $(CRYPTO_LIBS)

# mmt-golden compiles in the golden recipe and vector (tests/vectors/README.md)
$(O)/tools/mmt-golden: tests/lib/mmt_golden.h tests/lib/mmt_golden_vector.h

$(O)/fuzz/%: tests/fuzz/%.c $(ENGINE_SRCS) $(ENGINE_HDRS) tests/lib/mmt_golden.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(ENGINE_SRCS) $(CRYPTO_LIBS)

unit: $(UNIT_BIN)
	$(UNIT_BIN)

fuzz-build: $(FUZZ_BINS)

deps:
	@scripts/deps.sh

check:
	@scripts/deps.sh
	@scripts/check.sh

# The guest runs on the debug kernel (KASAN, lockdep, kmemleak, UBSAN,
# KFENCE): builds it once into MMT_CACHE (scripts/debug-kernel.sh, tens of
# minutes cold), then the planted bugs must be reported and the attack,
# xfer, pmo, fuzz and migrate runs must pass with no report
# (docs/TESTING.md).
check-debug:
	@scripts/deps.sh
	@tests/guest/tests planted@debug attack@debug xfer@debug pmo@debug fuzz@debug migrate@debug

# The guest runs of the module's surfaces (basic, pair, xfer, attack,
# migrate, pmo, attest, criu) on each supported kernel series installed
# other than the default one, which make check boots: 6.12
# (scripts/check-kernels.sh; KERNELS_RUNS picks runs).  A series that is
# not installed is skipped with a message.
check-kernels:
	@scripts/deps.sh
	@scripts/check-kernels.sh

# The wire runs over Soft-iWARP (tests/guest/README.md "Fabrics"): xfer
# and attack over siw, and the mixed pair (rxe against siw); `make check`
# runs attack@siw and mixed (xfer@siw left out for time)
check-siw:
	@scripts/deps.sh
	@tests/guest/tests xfer@siw attack@siw mixed

# The fault soak (docs/TESTING.md "Fault soak"): three guests, a workload
# of writers, live migrations, delegations and checkpoints, a nemesis, a
# checker; SOAK_MINUTES (default 30) of workload, SOAK_MOVES (default
# all three moves).  make check runs 3 minutes of it.
soak:
	@scripts/deps.sh
	@SOAK_MINUTES=$${SOAK_MINUTES:-30} \
		SOAK_MOVES=$${SOAK_MOVES:-migrate,delegate,checkpoint} \
		tests/guest/tests --only soak

lint:
	@scripts/lint.sh

demo:
	@scripts/deps.sh
	@scripts/demo.sh

# Live migration of a key-value store between two guests (docs/MIGRATION.md)
demo-migrate:
	@scripts/deps.sh
	@scripts/demo-migrate.sh

# Nodes attest to a global authority in three guests with TPMs and IMA
# (docs/ATTESTATION.md): the guest run `attest`, narrated
demo-attest:
	@scripts/deps.sh
	@scripts/demo-attest.sh

# Debian packages mmt-dkms and mmt-utils in $(O)/deb (scripts/deb.sh)
deb:
	@O=$(O) scripts/deb.sh

# WORKERS=N: the section "parallel" at 1, 2 and N worker threads (default:
# the CPUs online); its workers pin themselves, one per CPU, past taskset
bench: $(O)/tools/mmt-engine-bench
	taskset -c 1 $(O)/tools/mmt-engine-bench --json-file $(O)/bench.json \
		$(if $(WORKERS),--workers $(WORKERS))

# Live migration against stop-and-copy and dump-then-transfer, natively
# (tools/mmt-migrate-bench.c, docs/FIGURES.md): 64 MiB and 1 GiB
bench-migrate: $(O)/tools/mmt-migrate-bench
	taskset -c 1 $(O)/tools/mmt-migrate-bench --json-file $(O)/bench-migrate.json

# The paper's evaluation (docs/PAPER.md): every item, or ITEM=table4,
# table5, fig10a, fig10b, fig13 (fig12) or fig14; each writes
# $(O)/paper/<item>.json and .png (tools/paper/run.sh; SMOKE=1 for the
# short versions make check runs); fig10a's guest part, fig10b, fig13 and
# fig14 boot QEMU guests (tests/guest/tests)
paper: $(O)/tools/mmt-engine-bench
	@scripts/deps.sh
	@O=$(O) tools/paper/run.sh $(ITEM)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(O)

# libdat: DAT 1.2 (libdat.so.1) on a Rust core.
#
#   make                 build build/lib/libdat.so.1 (+ libdat.so link), build/bin/datperf and
#                        build/bin/rawperf
#   make check           build and run every test: Rust unit/integration tests, ABI checks,
#                        ELF export check, prototype check, C conformance suite on shm (also
#                        under valgrind), datperf smoke test, install check, and the verbs
#                        tests in rxe/siw guests
#   make install PREFIX=/usr/local DESTDIR=
#   make example         run the two-process ping-pong example over shm
#   make bench           datperf against raw baselines (shm here, verbs in rxe/siw guests),
#                        interleaved rounds, medians; writes build/bench/table.md (BENCHMARKS.md)
#   make bench-callgrind instructions per steady-state operation (valgrind callgrind)

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR    ?=
CC         ?= cc
CARGO      ?= cargo
BUILD      := build
CARGO_TARGET_DIR ?= target
export CARGO_TARGET_DIR
VERSION    := 1.2.0
IA         ?= shm

RUST_STATIC := $(CARGO_TARGET_DIR)/release/libdat12.a
EXPORTS     := $(shell cat crates/dat12/exports.txt)
LIB         := $(BUILD)/lib/libdat.so.1
# datperf finds libdat.so.1 in ../lib beside its own directory: build/lib here, $(PREFIX)/lib
# once installed.
TOOLS       := $(BUILD)/bin/datperf $(BUILD)/bin/rawperf
TOOL_CFLAGS := -O2 -g -Wall -Wextra -Werror

.PHONY: all rust check check-lint check-rust check-abi check-elf check-prototypes check-c check-valgrind check-install check-tools check-vm example bench bench-callgrind install clean

all: $(LIB) $(TOOLS)

rust:
	$(CARGO) build --release -p dat12

$(RUST_STATIC): rust

# Link the Rust static library into a shared object ourselves, so our version script alone
# decides what is exported and under which version node (rustc's cdylib script would not).
$(LIB): $(RUST_STATIC) crates/dat12/libdat.map crates/dat12/exports.txt
	@mkdir -p $(BUILD)/lib
	$(CC) -shared -o $@.tmp -Wl,-soname,libdat.so.1 \
	  -Wl,--version-script=crates/dat12/libdat.map -Wl,--gc-sections -Wl,-z,defs \
	  $(addprefix -Wl$(comma)-u$(comma),$(EXPORTS)) \
	  $(RUST_STATIC) -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
	mv $@.tmp $@
	ln -sf libdat.so.1 $(BUILD)/lib/libdat.so
	sed -e 's|@PREFIX@|$(abspath .)|; s|@LIBDIR@|$(abspath $(BUILD)/lib)|; s|@INCLUDEDIR@|$(abspath include)|; s|@VERSION@|$(VERSION)|' \
	  pkgconfig/dat.pc.in > $(BUILD)/lib/dat-uninstalled.pc

comma := ,

$(BUILD)/bin/datperf: tools/datperf/datperf.c tools/datperf/dat_compat.h $(LIB)
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c99 $(TOOL_CFLAGS) -Iinclude -o $@ tools/datperf/datperf.c \
	  -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ldat

$(BUILD)/bin/rawperf: tools/baselines/rawperf.c
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 $(TOOL_CFLAGS) -o $@ tools/baselines/rawperf.c

check: all check-lint check-rust check-abi check-elf check-prototypes check-c check-valgrind check-install check-tools check-vm
	@echo "make check: all checks passed"

# Formatting and lints are part of the test: rustfmt.toml's style, clippy with warnings as errors.
check-lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings

check-rust:
	$(CARGO) test --workspace --release

check-abi:
	sh tests/abi/run.sh include

check-elf: $(LIB)
	sh tests/elf/check-exports.sh $(LIB) crates/dat12/exports.txt DAT_1.2 libdat.so.1

check-prototypes: $(LIB)
	sh tests/prototypes/check.sh crates/dat12 include $(BUILD)/prototypes

check-c: $(LIB)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh tests/c/run.sh $(IA)

check-valgrind: $(LIB)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	VALGRIND=1 sh tests/c/run.sh $(IA)

check-install: $(LIB)
	rm -rf $(BUILD)/stage
	$(MAKE) --no-print-directory install PREFIX=/usr/local DESTDIR=$(abspath $(BUILD)/stage)
	sh tests/install/check.sh staged $(abspath $(BUILD)/stage) /usr/local

# datperf over shm in every test and mode, a few iterations each: exit status and output
# fields only (no timing thresholds).
check-tools: $(TOOLS)
	sh tests/tools/datperf-smoke.sh $(BUILD)/bin

# Not part of check: timings, minutes long, and guests.
bench: $(TOOLS)
	bash tools/bench/bench.sh

bench-callgrind: $(TOOLS)
	bash tools/bench/callgrind.sh

# Real verbs (rxe and siw) in QEMU guests; needs `sudo tests/vm/install.sh` once.
check-vm: $(LIB)
	bash tests/vm/check.sh

example: $(LIB)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh examples/run-pingpong.sh $(IA)

install: $(LIB) $(TOOLS)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/dat $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/bin/datperf $(DESTDIR)$(BINDIR)/datperf
	install -m 0755 $(LIB) $(DESTDIR)$(LIBDIR)/libdat.so.1
	ln -sf libdat.so.1 $(DESTDIR)$(LIBDIR)/libdat.so
	install -m 0644 include/dat/*.h $(DESTDIR)$(INCLUDEDIR)/dat/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
	  pkgconfig/dat.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dat.pc

clean:
	rm -rf $(BUILD)
	$(CARGO) clean

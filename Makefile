# libdat: DAT 1.2 (libdat.so.1) and DAT 2.0 (libdat2.so.2) on one Rust core.
#
#   make                 build build/lib/libdat.so.1 and build/lib/libdat2.so.2 (+ libdat.so,
#                        libdat2.so links), build/bin/datinfo, build/bin/datperf,
#                        build/bin/datperf2 (DAT 2.0), build/bin/rawperf and build/bin/datscale
#   make check           build and run every test: lint, Rust unit/integration tests, model
#                        checking of the lock-free protocols (loom), ABI checks,
#                        ELF export check, prototype check, C conformance suite on shm (also
#                        under valgrind), random call sequences on shm, Debian's dapl2-utils and Intel MPI 2018 on shm, man pages, datperf smoke test, install check, and the
#                        verbs tests in rxe/siw guests
#                        (first check-deps: the Debian packages the tests use, installed when
#                        missing as root with apt, else named with the apt-get line)
#   make install PREFIX=/usr/local DESTDIR=   (both libraries, include/dat and include/dat2,
#                        dat.pc and dat2.pc, bin/datinfo, bin/datperf, man pages)
#   make example         run the two-process ping-pong example over shm
#   make bench           datperf against raw baselines (shm here, verbs in rxe/siw guests),
#                        interleaved rounds, medians; writes build/bench/table.md (BENCHMARKS.md)
#                        and a shm size sweep drawn as build/bench/shm-{latency,bandwidth}.png
#   make bench-callgrind instructions per steady-state operation (valgrind callgrind)
#   make scale           EPs, LMRs and connections by count on shm: creation rate, memory,
#                        and the data path's cost beside them (BENCHMARKS.md, "Scale")
#   make fuzz            each fuzz target (fuzz/) for FUZZ_SECONDS, then datinfo --conf on the
#                        dat.conf inputs found (docs/testing.md, "Fuzzing")
#   make soak            SOAK_PROCS (8) processes connecting, sending, RDMA-ing, killed and closed
#                        abruptly at random, everything checked: an hour on shm (soak-shm), then
#                        20 minutes in an rxe guest (soak-vm); SOAK_SECONDS, SOAK_SEED
#                        (docs/testing.md, "Soak")

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=
CC         ?= cc
CARGO      ?= cargo
BUILD      := build
CARGO_TARGET_DIR ?= target
export CARGO_TARGET_DIR
VERSION    := 1.2.0
VERSION2   := 2.0.0
IA         ?= shm
OFI_IAS    ?= ofi-tcp-lo ofi-tcp_rxm-lo ofi-shm

RUST_STATIC := $(CARGO_TARGET_DIR)/release/libdat12.a
EXPORTS     := $(shell cat crates/dat12/exports.txt)
LIB         := $(BUILD)/lib/libdat.so.1
RUST_STATIC2 := $(CARGO_TARGET_DIR)/release/libdat20.a
EXPORTS2    := $(shell cat crates/dat20/exports.txt)
LIB2        := $(BUILD)/lib/libdat2.so.2
DATINFO     := $(BUILD)/bin/datinfo
# datperf finds libdat.so.1 (datperf2: libdat2.so.2) in ../lib beside its own directory:
# build/lib here, $(PREFIX)/lib once installed.
TOOLS       := $(BUILD)/bin/datperf $(BUILD)/bin/datperf2 $(BUILD)/bin/rawperf $(BUILD)/bin/datscale
TOOL_CFLAGS := -O2 -g -Wall -Wextra -Werror

.PHONY: all rust check check-lint check-rust check-loom check-abi check-elf check-prototypes check-c check-ofi check-apirand check-dat2 check-dapl2-shm check-impi check-valgrind check-install check-tools check-vm check-vm-auto example bench bench-callgrind scale install clean

all: $(LIB) $(LIB2) $(DATINFO) $(TOOLS)

rust:
	$(CARGO) build --release -p dat12 -p dat20 -p datinfo

# An (empty) recipe makes make re-read the archive's time after cargo ran, so the link below
# follows every Rust change.
$(RUST_STATIC) $(RUST_STATIC2): rust
	@:

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

# The DAT 2.0 face, linked the same way under its own version script (node DAT_2.0).
$(LIB2): $(RUST_STATIC2) crates/dat20/libdat2.map crates/dat20/exports.txt
	@mkdir -p $(BUILD)/lib
	$(CC) -shared -o $@.tmp -Wl,-soname,libdat2.so.2 \
	  -Wl,--version-script=crates/dat20/libdat2.map -Wl,--gc-sections -Wl,-z,defs \
	  $(addprefix -Wl$(comma)-u$(comma),$(EXPORTS2)) \
	  $(RUST_STATIC2) -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
	mv $@.tmp $@
	ln -sf libdat2.so.2 $(BUILD)/lib/libdat2.so
	sed -e 's|@PREFIX@|$(abspath .)|; s|@LIBDIR@|$(abspath $(BUILD)/lib)|; s|@INCLUDEDIR@|$(abspath include)|; s|@VERSION@|$(VERSION2)|' \
	  pkgconfig/dat2.pc.in > $(BUILD)/lib/dat2-uninstalled.pc

# datinfo: which IA names open on this host, and why the others do not (tools/datinfo).
$(DATINFO): rust
	@mkdir -p $(BUILD)/bin
	cp $(CARGO_TARGET_DIR)/release/datinfo $@

$(BUILD)/bin/datperf: tools/datperf/datperf.c tools/datperf/dat_compat.h $(LIB)
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c99 $(TOOL_CFLAGS) -Iinclude -o $@ tools/datperf/datperf.c \
	  -L$(BUILD)/lib -Wl,-rpath,'$$ORIGIN/../lib' -ldat

# The same datperf on the DAT 2.0 face: <dat2/udat.h>, linked with our libdat2.so.2 by path (a
# -ldat2 would quietly take OFED's from the system when ours is missing); LD_LIBRARY_PATH can
# still run it on OFED's library.
$(BUILD)/bin/datperf2: tools/datperf/datperf.c tools/datperf/dat_compat.h $(LIB2)
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c99 $(TOOL_CFLAGS) -DDATPERF_DAT2 -Iinclude -o $@ tools/datperf/datperf.c \
	  $(LIB2) -Wl,-rpath,'$$ORIGIN/../lib'

# datscale: creation cost, memory and data-path cost by count of EPs, LMRs and connections
# (DAT 2.0 face, linked with our libdat2.so.2 by path as datperf2).
$(BUILD)/bin/datscale: tools/scale/datscale.c $(LIB2)
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 $(TOOL_CFLAGS) -Iinclude -o $@ tools/scale/datscale.c $(LIB2) -Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bin/rawperf: tools/baselines/rawperf.c
	@mkdir -p $(BUILD)/bin
	$(CC) -std=c11 $(TOOL_CFLAGS) -o $@ tools/baselines/rawperf.c

check: check-deps all check-lint check-rust check-loom check-fuzz check-abi check-elf check-prototypes check-c check-ofi check-apirand check-dat2 check-dapl2-shm check-impi check-valgrind check-man check-tools check-install check-vm-auto
	@echo "make check: all checks passed"

# The Debian packages the tests and make bench use (tests/deps.sh): installed when missing if we
# are root with apt, else named with the apt-get line that installs them.
.PHONY: check-deps check-docs
check-deps:
	bash tests/deps.sh

# Formatting and lints are part of the test: rustfmt.toml's style, clippy with warnings as errors;
# and the documents speak of the software, not of how the work was organized (tests/docs).
check-lint: check-docs
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) clippy -p datcore --features fuzzing --release -- -D warnings

check-docs:
	bash tests/docs/check-words.sh

check-rust:
	$(CARGO) test --workspace --release

# Model checking (loom) of the lock-free protocols, every interleaving of the modelled threads;
# built with --cfg loom in a target directory of its own, so the library's build is untouched.
check-loom:
	CARGO_TARGET_DIR=$(CARGO_TARGET_DIR)/loom RUSTFLAGS="--cfg loom" $(CARGO) test -p datcore --lib --release loom_model

check-abi:
	sh tests/abi/run.sh include dat
	sh tests/abi/run.sh include dat2
	@if [ -d ../shared/reference/dat ]; then $(MAKE) --no-print-directory -C tests/abi regen-check REF=$(abspath ../shared/reference/dat); \
	else echo "SKIPPED abi regen-check: no ../shared/reference/dat beside the checkout"; fi

check-elf: $(LIB) $(LIB2)
	sh tests/elf/check-exports.sh $(LIB) crates/dat12/exports.txt DAT_1.2 libdat.so.1
	sh tests/elf/check-exports.sh $(LIB2) crates/dat20/exports.txt DAT_2.0 libdat2.so.2

check-prototypes: $(LIB) $(LIB2)
	sh tests/prototypes/check.sh crates/dat12 include $(BUILD)/prototypes dat
	sh tests/prototypes/check.sh crates/dat20 include $(BUILD)/prototypes2 dat2

# The C conformance suite on both faces: dat_conformance on libdat.so.1, then dat2_conformance
# (the same cases built against include/dat2, plus the 2.0-only ones) on libdat2.so.2. Each run
# prints a header and a summary naming its face; both run even when the first fails, and the
# failure names the face(s). $(1): environment for both runs (VALGRIND=1).
define conformance_both_faces
	@failed=; $(1) sh tests/c/run.sh $(or $(2),$(IA)) || failed="$$failed 1.2"; \
	$(1) DAT_FACE=dat2 sh tests/c/run.sh $(or $(2),$(IA)) || failed="$$failed 2.0"; \
	[ -z "$$failed" ] || { echo "FAIL $@: the C conformance suite failed on DAT$$failed"; exit 1; }
endef

check-c: $(LIB) $(LIB2)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c dat2
	$(call conformance_both_faces,)

# Random call sequences with valid and invalid arguments on both faces over $(IA), one and four
# threads, a few seconds per seed, and a short run under valgrind (tests/c/apirand/run.sh).
check-apirand: $(LIB) $(LIB2)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c dat2
	sh tests/c/apirand/run.sh $(IA)

# The C conformance suite, both faces, over the ofi provider on each of OFI_IAS (libfabric1 from
# check-deps): libfabric's tcp on the loopback (FI_EP_MSG), tcp under rxm and shm (FI_EP_RDM).
# A name libfabric does not offer here is reported SKIPPED; OFI_IAS=... picks others.
check-ofi: $(LIB) $(LIB2) $(DATINFO)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c dat2
	@offered=$$(LD_LIBRARY_PATH=$(BUILD)/lib $(DATINFO) 2>/dev/null | awk '$$NF == "usable" {print $$1}'); \
	failed=; for ia in $(OFI_IAS); do \
	  if ! echo "$$offered" | grep -qx "$$ia"; then echo "SKIPPED check-ofi on $$ia: libfabric does not offer it here"; continue; fi; \
	  sh tests/c/run.sh $$ia || failed="$$failed $$ia/1.2"; \
	  DAT_FACE=dat2 sh tests/c/run.sh $$ia || failed="$$failed $$ia/2.0"; \
	done; [ -z "$$failed" ] || { echo "FAIL check-ofi:$$failed"; exit 1; }

# The DAT 2.0 face from C: tests/dat2/smoke.c over $(IA) (two processes).
check-dat2: $(LIB2)
	sh tests/dat2/run.sh include $(BUILD)/lib $(BUILD)/tests/dat2 $(IA)

# Debian's unmodified dapl2-utils (dtest, dtestx, dtestcm, dtestsrq, dapltest) on our
# libdat2.so.2 over shm, by LD_LIBRARY_PATH and by LD_PRELOAD, in a private network namespace
# (tests/dapl2/shm.sh; the same programs run on soft RDMA in check-vm).
check-dapl2-shm: $(LIB2)
	bash tests/dapl2/shm.sh -L $(BUILD)/lib

# Intel MPI 2018 Update 3 (pip's impi wheel, fetched once into /var/tmp/impi; SKIPPED with the
# command when it cannot be had) over our libdat2.so.2 on $(IA): a data-checked ping-pong and
# checked collectives, I_MPI_FABRICS dapl:dapl and shm:dapl, RC and UD (tests/impi/run.sh); first
# Intel's own shm:shm, without DAT, as the harness's control.
check-impi: $(LIB2)
	bash tests/impi/run.sh -L $(BUILD)/lib -P $(IA) shm dapl dapl-ud shm:dapl shm:dapl-ud

check-valgrind: $(LIB) $(LIB2)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c dat2
	$(call conformance_both_faces,VALGRIND=1)

check-install: $(LIB) $(LIB2)
	rm -rf $(BUILD)/stage
	$(MAKE) --no-print-directory install PREFIX=/usr/local DESTDIR=$(abspath $(BUILD)/stage)
	sh tests/install/check.sh staged $(abspath $(BUILD)/stage) /usr/local

# datperf over shm in every test and mode, a few iterations each: exit status and output
# fields only (no timing thresholds).
check-tools: $(TOOLS)
	sh tests/tools/datperf-smoke.sh $(BUILD)/bin
	DATPERF=datperf2 sh tests/tools/datperf-smoke.sh $(BUILD)/bin

# Coverage-guided fuzzing (fuzz/: libFuzzer through libfuzzer-sys on the stable compiler;
# docs/testing.md, "Fuzzing"). check-fuzz: lint the fuzz crate, replay every target's corpus and
# run each target FUZZ_CHECK_SECONDS, then `datinfo --conf` on every committed dat.conf seed;
# `make fuzz`: each target FUZZ_SECONDS, then datinfo on every dat.conf input found.
FUZZ_CHECK_SECONDS ?= 5
FUZZ_SECONDS ?= 600
.PHONY: check-fuzz fuzz
check-fuzz: $(DATINFO) $(LIB2)
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml --check
	RUSTFLAGS= $(CARGO) clippy --manifest-path fuzz/Cargo.toml --release --target-dir $(BUILD)/fuzz/lint -- -D warnings
	bash fuzz/run.sh $(FUZZ_CHECK_SECONDS)
	bash fuzz/datinfo-conf.sh $(BUILD)/bin

fuzz: $(DATINFO) $(LIB2)
	bash fuzz/run.sh $(FUZZ_SECONDS)
	bash fuzz/datinfo-conf.sh $(BUILD)/bin $(BUILD)/fuzz/corpus/conf

# Not part of check: a soak of SOAK_PROCS processes connecting, moving checked data, killing
# and closing abruptly at random for SOAK_SECONDS (default an hour on shm, 20 minutes in an rxe
# or siw guest), every completion and byte checked, hangs and resource growth failing it
# (tests/soak/soak.c; docs/testing.md, "Soak"). SOAK_SEED repeats a run's choices; SOAK_GDB=1
# prints every thread's backtrace of a process that hangs; SOAK_SIW_DEBUG=1 switches on siw's
# queue-pair debug messages in the guest, whose latest a failed completion prints.
SOAK_PROCS ?= 8
SOAK_SECONDS ?=
SOAK_SEED ?=
SOAK_ARGS = -n $(SOAK_PROCS) $(if $(SOAK_SEED),-s $(SOAK_SEED))
.PHONY: soak soak-shm soak-vm
soak: soak-shm soak-vm

soak-shm: $(LIB2)
	sh tests/soak/run.sh -P $(IA) -d $(or $(SOAK_SECONDS),3600) $(SOAK_ARGS)

# One guest at a time machine-wide: /tmp/dat-vm.lock, as make bench's guests. SOAK_VM_DEVICE:
# rxe (default) or siw.
SOAK_VM_DEVICE ?= rxe
soak-vm: $(LIB2)
	@bash tests/vm/install.sh --check || { echo "FAIL soak-vm: guest harness not installed: run sudo tests/vm/install.sh"; exit 1; }
	sh tests/soak/run.sh --build-only
	flock /tmp/dat-vm.lock tests/vm/rdma-guest.sh --timing --$(SOAK_VM_DEVICE) --timeout $$(( $(or $(SOAK_SECONDS),1200) + 900 )) \
	  $(if $(SOAK_GDB),--env SOAK_GDB=1) $(if $(SOAK_SIW_DEBUG),--env SOAK_SIW_DEBUG=1) -- \
	  tests/vm/soak-guest.sh -d $(or $(SOAK_SECONDS),1200) $(SOAK_ARGS)

# Not part of check: timings, minutes long, and guests.
bench: $(TOOLS)
	bash tools/bench/bench.sh

bench-callgrind: $(TOOLS)
	bash tools/bench/callgrind.sh

# Scale on shm: EPs, LMRs and connections by count (tools/scale/datscale.c; BENCHMARKS.md, "Scale").
scale: $(BUILD)/bin/datscale
	$(BUILD)/bin/datscale -P $(IA)

# Real verbs (rxe and siw) in QEMU guests. `make check-vm` fails loudly when the guest harness
# is not installed; `make check` installs it on first use where it can (root with apt) and
# otherwise reports the guest part as SKIPPED with the command that enables it.
check-vm: $(LIB)
	@bash tests/vm/install.sh --check || { echo "FAIL vm: guest harness not installed: run sudo tests/vm/install.sh"; exit 1; }
	bash tests/vm/check.sh

check-vm-auto: $(LIB)
	@if bash tests/vm/install.sh --check >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "vm: installing the soft-RDMA guest harness (tests/vm/install.sh, once)"; bash tests/vm/install.sh; \
	fi
	@if bash tests/vm/install.sh --check; then bash tests/vm/check.sh; \
	else echo "SKIPPED vm: the verbs tests need the guest harness; enable with: sudo tests/vm/install.sh"; fi

example: $(LIB)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh examples/run-pingpong.sh $(IA)

install: $(LIB) $(LIB2) $(DATINFO) $(TOOLS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/dat $(DESTDIR)$(INCLUDEDIR)/dat2 $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(BUILD)/bin/datperf $(DESTDIR)$(BINDIR)/datperf
	install -m 0755 $(BUILD)/bin/datperf2 $(DESTDIR)$(BINDIR)/datperf2
	install -m 0755 $(LIB) $(DESTDIR)$(LIBDIR)/libdat.so.1
	install -m 0755 $(LIB2) $(DESTDIR)$(LIBDIR)/libdat2.so.2
	install -m 0755 $(DATINFO) $(DESTDIR)$(BINDIR)/datinfo
	ln -sf libdat.so.1 $(DESTDIR)$(LIBDIR)/libdat.so
	ln -sf libdat2.so.2 $(DESTDIR)$(LIBDIR)/libdat2.so
	install -m 0644 include/dat/*.h $(DESTDIR)$(INCLUDEDIR)/dat/
	install -m 0644 include/dat2/*.h $(DESTDIR)$(INCLUDEDIR)/dat2/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
	  pkgconfig/dat.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dat.pc
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION2)|' \
	  pkgconfig/dat2.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dat2.pc

# Man pages (man/): a section-3 page per DAT 1.2 function (grouped pages are `.so` links),
# dat.conf(5) and libdat(7). check-man: every export has a page, every page renders without
# warnings, every SYNOPSIS equals the header prototype.
.PHONY: install-man check-man
install: install-man

install-man:
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 0644 man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 man/man5/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/man7/*.7 $(DESTDIR)$(MANDIR)/man7/

check-man:
	sh tests/man/check.sh man crates/dat12/exports.txt include dat
	sh tests/man/check.sh man crates/dat20/exports.txt include dat2

clean:
	rm -rf $(BUILD)
	$(CARGO) clean

# libdat: DAT 1.2 (libdat.so.1) on a Rust core.
#
#   make                 build build/lib/libdat.so.1 (+ libdat.so link)
#   make check           build and run every test: Rust unit/integration tests, ABI checks,
#                        ELF export check, prototype check, C conformance suite on shm (also
#                        under valgrind), install check, and the verbs tests in rxe/siw guests
#   make install PREFIX=/usr/local DESTDIR=
#   make example         run the two-process ping-pong example over shm

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
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

.PHONY: all rust check check-lint check-rust check-abi check-elf check-prototypes check-c check-valgrind check-install check-vm example install clean

all: $(LIB)

rust: $(RUST_STATIC)

# Cargo decides whether to rebuild; the recipe on the file itself makes make look at the
# file's time again afterwards (with only a phony prerequisite and no recipe it would not,
# and the first `make` after a source change left libdat.so.1 unlinked).
$(RUST_STATIC): FORCE
	$(CARGO) build --release -p dat12

.PHONY: FORCE
FORCE:

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

check: all check-lint check-rust check-abi check-elf check-prototypes check-c check-valgrind check-install check-vm
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

# Real verbs (rxe and siw) in QEMU guests; needs `sudo tests/vm/install.sh` once.
check-vm: $(LIB)
	bash tests/vm/check.sh

example: $(LIB)
	sh tests/c/build.sh include $(BUILD)/lib $(BUILD)/tests/c
	sh examples/run-pingpong.sh $(IA)

install: $(LIB)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/dat $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(LIB) $(DESTDIR)$(LIBDIR)/libdat.so.1
	ln -sf libdat.so.1 $(DESTDIR)$(LIBDIR)/libdat.so
	install -m 0644 include/dat/*.h $(DESTDIR)$(INCLUDEDIR)/dat/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
	  pkgconfig/dat.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dat.pc

clean:
	rm -rf $(BUILD)
	$(CARGO) clean

#!/bin/sh
# Prototype check: cbindgen emits the C prototypes of the functions a Rust face exports; a C
# file includes them after our hand-written headers under -Werror, so a prototype that differs
# from the header (a parameter type, a pointer level, the return type) is a compile error.
# Exports written in C (the variadic dat_extension_op of the DAT 2.0 face) include the header
# themselves, so the C compiler already holds them to it; they are counted, not re-emitted.
# usage: check.sh CRATE_DIR INCLUDE_DIR OUT_DIR [HEADER_DIR]   (HEADER_DIR: dat (default) or dat2)
set -eu
crate=$1 inc=$2 out=$3 hdr=${4:-dat}
mkdir -p "$out"
# cbindgen runs as a library inside the workspace tool tools/export-prototypes (pinned by
# Cargo.lock), so no globally installed binary is needed.
${CARGO:-cargo} run --quiet --release -p export-prototypes -- "$crate" cbindgen.toml "$out/rust_exports.h"
n=$(grep -c '^DAT_RETURN dats\?_' "$out/rust_exports.h" || true)
in_c=$(cat "$crate"/src/*.c 2>/dev/null | grep -c '^DAT_RETURN dats\?_[a-z_]*(' || true)
cat > "$out/prototypes.c" <<C
#include <$hdr/udat.h>
#include <$hdr/dat_registry.h>
#include "rust_exports.h"
int main(void) { return 0; }
C
${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -I"$out" -c "$out/prototypes.c" -o "$out/prototypes.o"
echo "ok   $n Rust export prototypes match include/$hdr ($in_c more defined in C)"
expected=$(grep -c . "$crate/exports.txt")
if [ $((n + in_c)) -ne "$expected" ]; then
  echo "FAIL cbindgen saw $n exports and C defines $in_c, expected $expected"; echo "1 passed, 1 failed"; exit 1
fi
echo "2 passed, 0 failed"

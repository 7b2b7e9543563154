#!/bin/sh
# Prototype check: cbindgen emits the C prototypes of the functions the Rust face exports; a C
# file includes them after our hand-written headers under -Werror, so a prototype that differs
# from the header (a parameter type, a pointer level, the return type) is a compile error.
# usage: check.sh CRATE_DIR INCLUDE_DIR OUT_DIR
set -eu
crate=$1 inc=$2 out=$3
mkdir -p "$out"
# cbindgen runs as a library inside the workspace tool tools/export-prototypes (pinned by
# Cargo.lock), so no globally installed binary is needed.
${CARGO:-cargo} run --quiet --release -p export-prototypes -- "$crate" cbindgen.toml "$out/rust_exports.h"
n=$(grep -c '^DAT_RETURN dat_' "$out/rust_exports.h" || true)
cat > "$out/prototypes.c" <<'C'
#include <dat/udat.h>
#include <dat/dat_registry.h>
#include "rust_exports.h"
int main(void) { return 0; }
C
${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -I"$out" -c "$out/prototypes.c" -o "$out/prototypes.o"
echo "ok   $n Rust export prototypes match include/dat"
expected=$(grep -c . crates/dat12/exports.txt)
if [ "$n" -ne "$expected" ]; then echo "FAIL cbindgen saw $n exports, expected $expected"; echo "1 passed, 1 failed"; exit 1; fi
echo "2 passed, 0 failed"

#!/bin/sh
# Checks the man pages in MAN_DIR:
#  - every function in EXPORTS has a section-3 page, its own or a `.so` link to a grouped page
#    (and every `.so` link points to a page that exists);
#  - every page renders without a warning (groff -man -ww, else mandoc -Tlint);
#  - each SYNOPSIS prototype is the one in the headers under INCLUDE_DIR/FACE (FACE: dat, the
#    DAT 1.2 face, or dat2, the DAT 2.0 face). One page serves both faces: a prototype under
#    `#include <dat2/udat.h>` in a SYNOPSIS is the 2.0 one; a function without one has the same
#    prototype in both faces.
#   check.sh MAN_DIR EXPORTS INCLUDE_DIR [FACE]
set -eu
man=$1 exports=$2 include=$3 face=${4:-dat}
fails=0
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# The page that holds a name's text: the page itself, or the target of its `.so` line.
source_page() {
    p="$man/man3/$1.3"
    if head -n 1 "$p" | grep -q '^\.so '; then
        echo "$man/$(head -n 1 "$p" | sed 's/^\.so //')"
    else
        echo "$p"
    fi
}

# Prints one prototype per line, whitespace normalised, from C headers (stdin):
# `DAT_RETURN name(TYPE arg, ...);` (the variadic `...` included).
protos_from_headers() {
    awk '
        /^(DAT_EXPORT |extern )?DAT_RETURN [a-z_0-9]+\(/ { on = 1; s = "" }
        on { s = s " " $0 }
        on && /\);/ { sub(/^ *(DAT_EXPORT|extern) /, "", s); print s; on = 0 }
    ' | normalise
}

# The same from roff SYNOPSIS blocks (stdin): `.BI "DAT_RETURN name("` then one `.BI` line per
# argument; the quoted and bare words of a .BI line are joined without spaces. Each line starts
# with the face the prototype was written for: `dat2 ` after `#include <dat2/...>`, else `dat `.
protos_from_page() {
    awk '
        function words(line,   out, i, c, q) {
            out = ""; q = 0
            for (i = 1; i <= length(line); i++) {
                c = substr(line, i, 1)
                if (c == "\"") { q = !q; continue }
                if (c == " " && !q) continue
                out = out c
            }
            return out
        }
        /^\.TH / { face = "dat" }
        /^\.B #include <dat2\// { face = "dat2" }
        /^\.B #include <dat\// { face = "dat" }
        /^\.BI "DAT_RETURN [a-z_0-9]+\("$/ { on = 1; s = ""; sub(/^\.BI /, ""); s = words($0); next }
        on && /^\.BI / { sub(/^\.BI /, ""); s = s " " words($0) }
        on && /\);"$/ { print face " " s; on = 0 }
    ' | normalise
}

normalise() {
    sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//' \
        -e 's/( /(/g' -e 's/ )/)/g' -e 's/ ,/,/g' -e 's/\* /*/g' -e 's/ \*/ */g'
}

# 1. Pages for every export, and .so targets that exist.
for f in $(cat "$exports"); do
    if [ ! -f "$man/man3/$f.3" ]; then
        bad "$f: no page man3/$f.3"
        continue
    fi
    src=$(source_page "$f")
    [ -f "$src" ] || bad "$f: man3/$f.3 links to missing $src"
done
# Every installed command has a section-1 page.
for t in ${MAN_COMMANDS:-datinfo datperf}; do
    [ -f "$man/man1/$t.1" ] || bad "$t: no page man1/$t.1"
done
for p in "$man"/man*/*.[0-9]; do
    if head -n 1 "$p" | grep -q '^\.so '; then
        t="$man/$(head -n 1 "$p" | sed 's/^\.so //')"
        [ -f "$t" ] || bad "$p: .so target $t missing"
    fi
done

# 2. Rendering without warnings (run from MAN_DIR so `.so man3/x.3` resolves as man(1) does).
if command -v groff >/dev/null 2>&1; then
    render() { (cd "$man" && groff -man -ww -z -Tutf8 "$1") 2>&1; }
    renderer="groff -man -ww"
elif command -v mandoc >/dev/null 2>&1; then
    # `.so` link pages are what the man page layout asks for; mandoc's style note about them
    # is not a rendering problem.
    render() { (cd "$man" && mandoc -Tlint -W warning "$1") 2>&1 | grep -v '\.so is fragile' || true; }
    renderer="mandoc -Tlint"
else
    echo "FAIL neither groff nor mandoc is installed: apt-get install groff-base (or mandoc)"
    exit 1
fi
n=0 before=$fails
for p in "$man"/man*/*.[0-9]; do
    rel=${p#"$man"/}
    msg=$(render "$rel")
    if [ -n "$msg" ]; then
        bad "$rel: $renderer warns:"
        echo "$msg" | sed 's/^/     /'
    fi
    n=$((n + 1))
done
[ "$fails" -eq "$before" ] && echo "ok   $n pages render without warnings ($renderer)"

# 3. SYNOPSIS prototypes equal the headers'.
cat "$include/$face"/*.h | protos_from_headers | sort -u >"$out/headers"
cat "$man"/man3/*.3 | protos_from_page | sort -u >"$out/pages"
for f in $(cat "$exports"); do
    h=$(grep "^DAT_RETURN $f(" "$out/headers" || true)
    # The face's own SYNOPSIS prototype; for the 2.0 face, the shared one where there is none.
    pg=$(sed -n "s/^$face DAT_RETURN $f(/DAT_RETURN $f(/p" "$out/pages")
    if [ -z "$pg" ] && [ "$face" = dat2 ]; then
        pg=$(sed -n "s/^dat DAT_RETURN $f(/DAT_RETURN $f(/p" "$out/pages")
    fi
    if [ -z "$h" ]; then
        bad "$f: no prototype found in $include/$face/*.h"
    elif [ -z "$pg" ]; then
        bad "$f: no SYNOPSIS prototype in $(source_page "$f")"
    elif [ "$h" != "$pg" ]; then
        bad "$f: SYNOPSIS differs from the header"
        echo "     header: $h"
        echo "     page:   $pg"
    fi
done

total=$(wc -w <"$exports")
if [ "$fails" -ne 0 ]; then
    echo "man pages: $fails failed"
    exit 1
fi
echo "ok   $total exported functions of the $face face have a page whose SYNOPSIS matches the header"

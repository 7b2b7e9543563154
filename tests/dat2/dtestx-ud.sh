#!/bin/sh
# tests/dat2/dtestx-ud.sh LIB_DIR [IA_NAME]
# Runs Debian's unmodified dtestx (dapl2-utils) in its UD modes, -u (four address exchanges each
# way on one UD endpoint per side) and -u -m (one per endpoint), server and client, against the
# libdat2.so.2 in LIB_DIR (by LD_LIBRARY_PATH) on IA_NAME (default shm). Skipped (exit 0) when
# dtestx is not installed. dtestx swaps addresses over TCP port 15828; as root the pair runs in
# a private network namespace so that other dtestx runs on the host cannot meet it.
set -eu
lib=$(cd "$1" && pwd) ia=${2:-shm}
command -v dtestx >/dev/null || { echo "SKIP dtestx not installed (dapl2-utils)"; exit 0; }
if [ "${DTESTX_UD_NETNS:-}" != 1 ] && [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
    exec env DTESTX_UD_NETNS=1 unshare -n sh -c 'ip link set lo up 2>/dev/null || ifconfig lo up; exec sh "$0" "$@"' \
        "$0" "$@"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
for mode in "-u" "-u -m"; do
    # shellcheck disable=SC2086 # the mode is two words on purpose
    LD_LIBRARY_PATH=$lib timeout 120 dtestx -s $mode -P "$ia" >"$work/server" 2>&1 &
    server=$!
    # ready once it listens on dtestx's TCP port 15828 (0x3DD4; state 0A: listening)
    for _ in $(seq 100); do
        grep -q '^ *[0-9]*: [0-9A-F]*:3DD4 [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null && break
        sleep 0.1
    done
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH=$lib timeout 120 dtestx -c $mode -h 127.0.0.1 -P "$ia" >"$work/client" 2>&1 || true
    wait $server || true
    for side in server client; do
        if grep -q 'UD test PASSED' "$work/$side" && ! grep -q FAIL "$work/$side"; then
            echo "PASS dtestx $mode $side on $ia"
        else
            echo "FAIL dtestx $mode $side on $ia:"; sed 's/^/    /' "$work/$side"; fail=1
        fi
    done
done
exit $fail

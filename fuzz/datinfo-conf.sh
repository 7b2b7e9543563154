#!/bin/bash
# fuzz/datinfo-conf.sh BINDIR [DIR...] -- `datinfo --conf` (text, --json, --dat2) on dat.conf
# files: the committed conf seeds (fuzz/corpus/conf) and every file of the DIRs (the conf
# target's grown corpus, build/fuzz/corpus/conf, in `make fuzz`). Each run must end with exit
# status 0 or 1 (an IA usable or not) within 20 s: a signal, a panic or a hang fails.
set -u
cd "$(dirname "$0")/.."
bindir=${1:?usage: fuzz/datinfo-conf.sh BINDIR [DIR...]}
shift
n=0
failed=0
for f in fuzz/corpus/conf/* $(for d in "$@"; do find "$d" -type f; done); do
    for args in "--conf" "--json --conf" "--dat2 --conf"; do
        # shellcheck disable=SC2086
        DAT_OVERRIDE=$f timeout 20 "$bindir/datinfo" $args >/dev/null 2>/tmp/datinfo-conf.$$
        rc=$?
        n=$((n + 1))
        if [ $rc -gt 1 ]; then
            echo "FAIL datinfo $args on $f: exit $rc"
            tail -n 5 /tmp/datinfo-conf.$$
            failed=$((failed + 1))
        fi
    done
done
rm -f /tmp/datinfo-conf.$$
[ $failed = 0 ] || { echo "FAIL datinfo --conf: $failed of $n runs"; exit 1; }
echo "fuzz datinfo --conf: $n runs on $((n / 3)) dat.conf files, each exit 0 or 1"

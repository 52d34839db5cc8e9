#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# reader_outputs.sh: every output of the reader and the decoder on every sample, saved, then
# compared byte for byte with a later build's (the reader's changes keep them the same).
#
#   bench/reader_outputs.sh save  BUILD DIR   # writes DIR/*.out from BUILD/src/etwtop
#   bench/reader_outputs.sh check BUILD DIR   # the same outputs, compared with DIR's
#
# Per sample (SAMPLES/*.etl, and the two zipped ones as CMake unpacks them into BUILD/samples):
# `--dump` (every event with every field decoded), `--dump --totals`, and `--replay --export
# csv-events` (every event's fields through the model). SAMPLES: ETWTOP_SAMPLES_DIR, else
# ../shared/samples from the repository.
set -u
mode=${1:?usage: reader_outputs.sh save|check BUILD DIR}
build=${2:?usage: reader_outputs.sh save|check BUILD DIR}
dir=${3:?usage: reader_outputs.sh save|check BUILD DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
samples=${ETWTOP_SAMPLES_DIR:-$here/../shared/samples}
etwtop=$build/src/etwtop
[ -x "$etwtop" ] || { echo "reader_outputs.sh: no $etwtop (build first)" >&2; exit 2; }
case $mode in save | check) ;; *) echo "reader_outputs.sh: save or check, not $mode" >&2; exit 2 ;; esac
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ETWTOP_NO_HOST=1

files=("$samples"/*.etl)
for f in "$build/samples/net.4.5.2.x64.etl" "$build/samples/gcevents/PerfViewData.etl"; do
        [ -f "$f" ] && files+=("$f")
done

nr_fail=0
nr_same=0
# one NAME COMMAND...: the command's stdout, stderr and status into NAME.out
one() {
        local name=$1 out
        shift
        out=$([ "$mode" = save ] && echo "$dir/$name.out" || echo "$tmp/$name.out")
        { "$@" 2>&1; echo "exit $?"; } >"$out"
        if [ "$mode" = check ]; then
                if cmp -s "$out" "$dir/$name.out"; then
                        nr_same=$((nr_same + 1))
                else
                        echo "DIFFERS: $name ($*)"
                        diff "$dir/$name.out" "$out" | head -5
                        nr_fail=$((nr_fail + 1))
                fi
        fi
}

for f in "${files[@]}"; do
        b=$(basename "$f" .etl)
        one "$b.dump" "$etwtop" --dump "$f"
        one "$b.totals" "$etwtop" --dump --totals "$f"
        one "$b.csv-events" "$etwtop" --replay "$f" --export csv-events -o - --force
done
if [ "$mode" = save ]; then
        echo "saved $(ls "$dir"/*.out | wc -l) outputs of ${#files[@]} samples in $dir"
        exit 0
fi
echo "$nr_same the same, $nr_fail different"
[ "$nr_fail" = 0 ]

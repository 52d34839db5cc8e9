#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# replay_same.sh: `etwtop --replay F -b --top 40` of two builds, output compared byte for byte
# (stdout, and stderr with its exit status) for every .etl sample, every perf.data sample and
# the recordings given, by function and with --sort process, thread and module: a change meant
# to cost less must print the same.
#
# Usage: bench/replay_same.sh OLD_ETWTOP NEW_ETWTOP [RECORDING...]
#   the samples come from ETWTOP_SAMPLES_DIR (default ../shared/samples from the repository:
#   *.etl, *.etl.zip unpacked into a scratch folder, perf/* perf.data files with
#   --symbol-path perf/). Prints one line per file and exits 1 when any output differs.
set -euo pipefail
export LC_ALL=C
[ $# -ge 2 ] || { echo "usage: $0 OLD_ETWTOP NEW_ETWTOP [RECORDING...]" >&2; exit 2; }
old=$1 new=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
samples=${ETWTOP_SAMPLES_DIR:-$here/../../shared/samples}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=()
for f in "$samples"/*.etl; do [ -f "$f" ] && files+=("$f"); done
for z in "$samples"/*.etl.zip; do
        [ -f "$z" ] || continue
        mkdir -p "$work/unzipped" && (cd "$work/unzipped" && cmake -E tar xf "$z")
done
for f in "$work"/unzipped/*.etl "$work"/unzipped/*/*.etl; do [ -f "$f" ] && files+=("$f"); done
for f in "$samples"/perf/*; do
        # perf.data files only: PERFILE2 (perf's own, piped or not)
        [ -f "$f" ] && [ "$(head -c 8 "$f" | tr -d '\0')" = PERFILE2 ] && files+=("$f")
done
files+=("$@")
run() { # BIN FILE OUT [ARG...]
        local bin=$1 file=$2 out=$3 extra=()
        shift 3
        case $file in "$samples"/perf/*) extra=(--symbol-path "$samples/perf") ;; esac
        local rc=0
        "$bin" --replay "$file" -b --top 40 "${extra[@]}" "$@" >"$out.out" 2>"$out.err" || rc=$?
        echo "rc=$rc" >>"$out.err"
}
bad=0
# each file by function (the default), and with the other groupings of the functions' rows
for f in "${files[@]}"; do
        for sort in "" process thread module; do
                args=()
                [ -n "$sort" ] && args=(--sort "$sort")
                run "$old" "$f" "$work/old" "${args[@]}"
                run "$new" "$f" "$work/new" "${args[@]}"
                if cmp -s "$work/old.out" "$work/new.out" &&
                        cmp -s "$work/old.err" "$work/new.err"; then
                        echo "same      $(wc -c <"$work/new.out") bytes  $f ${args[*]}"
                else
                        echo "DIFFERENT $f ${args[*]}"
                        diff "$work/old.out" "$work/new.out" | head -20 || true
                        diff "$work/old.err" "$work/new.err" | head -5 || true
                        bad=1
                fi
        done
done
exit $bad

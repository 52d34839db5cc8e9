#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_threads.sh: perf.data directories written by perf record --threads (the file data,
# then a data.N per recording thread), recorded here with call chains and with compressed DWARF
# stacks, read by etwtop as perf reads them: the samples `perf script` counts, in the replay's
# title, --dump's SampledProfile events and --export folded's stacks; the replay's hottest
# function as perf report's; a data.N made a symbolic link refused with its name. Skips without
# perf, or where perf record cannot sample here.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
. "$(dirname "$0")/../lib/perf_rec.sh"
perf_test_start
perf_home

record() { # NAME OPTIONS...: a perf.data directory of a short pipe ping-pong
        local name=$1
        shift
        perf_record "$tmp/$name.data" "$tmp/$name.rec.err" --threads -e cpu-clock -F 2000 "$@" \
                -- perf bench sched pipe -l 20000
}
if ! record probe || [ ! -f "$tmp/probe.data/data" ]; then
        echo "SKIP: perf record --threads cannot record here: $(head -c 300 "$tmp/probe.rec.err")"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
fi

for v in "g:-g" "dwarf:-z --call-graph dwarf,2048"; do
        name=${v%%:*}
        # shellcheck disable=SC2086 # the options are words
        if ! record "$name" ${v#*:}; then
                skip "$name: perf record failed: $(head -c 200 "$tmp/$name.rec.err")"
                continue
        fi
        d=$tmp/$name.data
        parts=$(find "$d" -maxdepth 1 -name 'data.*' -size +0 | wc -l)
        check "$name: perf wrote data.N files ($parts with records)" [ "$parts" -ge 1 ]
        if ! perf script -i "$d" -F event >"$tmp/$name.events" 2>/dev/null; then
                # Debian's perf 6.1 sometimes aborts on an assertion in util/build-id.c
                skip "$name: perf script cannot read the recording"
                continue
        fi
        n=$(wc -l <"$tmp/$name.events")
        check "$name: perf script reads samples ($n)" [ "$n" -gt 0 ]
        "$ETWTOP" --replay "$d" -b -n 5 >"$tmp/$name.txt" 2>"$tmp/$name.err"
        check "$name: replay exits 0" [ $? = 0 ]
        title=$(grep -oE 'Hot functions \(Timer, [0-9]+ samples' "$tmp/$name.txt" | grep -oE '[0-9]+')
        check "$name: the replay's samples, perf script's ($title, $n)" [ "$title" = "$n" ]
        check "$name: nothing said" [ ! -s "$tmp/$name.err" ]
        dumped=$("$ETWTOP" --dump "$d" 2>>"$tmp/$name.err" | awk '$5 == "PerfInfo/SampledProfile"' | wc -l)
        check "$name: --dump's SampledProfile events ($dumped)" [ "$dumped" = "$n" ]
        folded=$("$ETWTOP" --replay "$d" --export folded -o - 2>>"$tmp/$name.err" |
                awk '{s += $NF} END {print s + 0}')
        check "$name: --export folded's stacks ($folded)" [ "$folded" = "$n" ]
        # the hottest function's samples (by self) as perf report counts them (by count: the
        # two may name an alias of one address apart, __GI___write and __GI___libc_write)
        ours=$(awk '/^Hot functions/ {t++; next} t == 1 && /^ +[0-9.]+%/ {print $3, $NF; exit}' \
                "$tmp/$name.txt")
        theirs=$(perf report -i "$d" --stdio --no-children -g none -F sample,sym 2>/dev/null |
                awk '/^ +[0-9]+ / {print $1, $NF; exit}')
        check "$name: the hottest function's samples, perf report's ($ours; $theirs)" \
                [ -n "$ours" -a "${ours%% *}" = "${theirs%% *}" ]
        # a kernel function perf names is named (a -z recording has no build-ids: the running
        # kernel's symbols, as perf report takes them)
        case "$theirs" in
        *" 0x"* | "") ;;
        *) check "$name: the hottest function named ($ours)" \
                bash -c "! grep -q '^[0-9]* \[kernel.kallsyms\]+0x' <<<'$ours'" ;;
        esac
done

# a data.N that is a symbolic link: refused, named
d=$tmp/g.data
if [ -d "$d" ]; then
        ln -s "$d/data.0" "$d/data.99"
        "$ETWTOP" --replay "$d" -b >/dev/null 2>"$tmp/link.err"
        check "link: refused" [ $? != 0 ]
        check "link: the message names data.99" grep -q "data.99: not a regular file" "$tmp/link.err"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ $nr_fail = 0 ]

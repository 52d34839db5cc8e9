#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_data_counts.sh: every perf.data of the shared samples (real hardware: PMC samples, LBR
# stacks, lost records) read by etwtop and counted against Debian's perf: samples per event
# (`perf script -F event`), lost events (`perf report -D`), and the LBR entries aggregated by
# (from, to) with their mispredictions and cycles (`perf script -F brstack`), both as the
# converter writes them (--dump) and as the branch view counts them (--export csv-branches);
# the hot-function titles and the header name every event. Skips without perf.
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES:?}"
dir=$ETWTOP_SAMPLES/perf
command -v perf >/dev/null && perf version >/dev/null 2>&1 ||
        { echo "SKIP: perf is not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
[ -d "$dir" ] || { echo "SKIP: no $dir"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
tmp=$(mktemp -d)
trap "${KEEP_TMP:+:} rm -rf $tmp" EXIT
. "$(dirname "$0")/../lib/check.sh"

# perf's event names as ETW names its profile sources (doc/perf-data.md); others keep their own.
# The file's first timer event ($first_timer, perf evlist's first cpu-clock or task-clock) is
# ETW's Timer; another (cpu-clock and task-clock, cpu-clock:u and cpu-clock:k) keeps its name.
first_timer=
etw_name() {
        awk -v timer="$first_timer" '{
                n = $1; sub(/:.*/, "", n)
                if ((n == "cpu-clock" || n == "task-clock") && $1 != timer) { print; next }
                # perf 6.4 and later name a hardware event by its PMU: cpu/cycles/Pu
                if (n ~ /^cpu\/[a-z-]+\/[a-zA-Z]*$/) { split(n, pm, "/"); n = pm[2] }
                m["cycles"] = "TotalCycles"; m["cpu-cycles"] = "TotalCycles"
                m["instructions"] = "InstructionRetired"; m["cache-references"] = "LLCReference"
                m["cache-misses"] = "CacheMisses"; m["branches"] = "BranchInstructions"
                m["branch-instructions"] = "BranchInstructions"
                m["branch-misses"] = "BranchMispredictions"
                m["ref-cycles"] = "UnhaltedReferenceCycles"
                m["stalled-cycles-frontend"] = "PipelineDry"
                m["stalled-cycles-backend"] = "PipelineFrozen"
                m["cpu-clock"] = "Timer"; m["task-clock"] = "Timer"
                if (n in m) $1 = m[n]
                print
        }'
}

# brstack entries (perf script's "0xFROM/0xTO/M|P|-/X/A/CYCLES/...") or --dump's LBR entries
# ("0xFROM->0xTO[/M|P|-/CYCLES]") -> "from to taken mispredicted known cycles_sum nr_cycles"
aggregate() {
        awk -v form="$1" '{
                for (i = 1; i <= NF; i++) {
                        t = $i
                        if (form == "perf") {
                                if (split(t, f, "/") < 6 || f[1] !~ /^0x/) continue
                                from = f[1]; to = f[2]; pred = f[3]; cyc = f[6] + 0
                        } else {
                                if (t !~ /^0x[0-9a-f]+->0x/) continue
                                split(t, f, "/"); split(f[1], a, "->")
                                from = a[1]; to = a[2]; pred = (2 in f) ? f[2] : "-"
                                cyc = (3 in f) ? f[3] + 0 : 0
                        }
                        if (from == "0x0" || to == "0x0") continue
                        k = from " " to
                        n[k]++
                        if (pred == "M") mis[k]++
                        if (pred == "M" || pred == "P") known[k]++
                        if (cyc) { cs[k] += cyc; cn[k]++ }
                }
        } END {
                for (k in n) print k, n[k], mis[k] + 0, known[k] + 0, cs[k] + 0, cn[k] + 0
        }' | sort
}

nr_files=0
for f in "$dir"/*; do
        [ "$(head -c 8 "$f" 2>/dev/null | tr -d "\0")" = PERFILE2 ] || continue
        name=$(basename "$f")
        nr_files=$((nr_files + 1))
        "$ETWTOP" --replay "$f" -b --top 1 >"$tmp/$name.b" 2>"$tmp/$name.err"
        check "$name: --replay -b reads it" [ $? = 0 ]
        # standard input ("-"), file or pipe mode: the same tables as the file's (the first
        # line names the input)
        "$ETWTOP" --replay - -b --top 1 <"$f" 2>/dev/null | tail -n +2 >"$tmp/$name.stdin"
        check "$name: read from standard input (-), the same tables" \
                cmp -s <(tail -n +2 "$tmp/$name.b") "$tmp/$name.stdin"
        if ! perf script -i "$f" -G -F event >"$tmp/$name.events" 2>"$tmp/$name.perr"; then
                # perf 6.1 refuses some files (sleep.compressed.data: "incompatible file
                # format"); etwtop must still read them
                skip "$name: perf cannot read it ($(head -1 "$tmp/$name.perr"))"
                # a recording killed before its first sample (data size 0, only the records
                # perf synthesized at its start) has none to count
                if grep -q 'data size 0 (perf record did not finish)' "$tmp/$name.err" &&
                        grep -q '^No samples in this trace' "$tmp/$name.b"; then
                        skip "$name: perf record was stopped before its first sample"
                        continue
                fi
                check "$name: etwtop counts its samples" \
                        grep -q '^Hot functions ([^,]*, [1-9][0-9]* samples' "$tmp/$name.b"
                continue
        fi

        first_timer=$(perf evlist -i "$f" 2>/dev/null | awk '{ n = $1; sub(/:.*/, "", n) }
                n == "cpu-clock" || n == "task-clock" { print $1; exit }')

        # perf stat record's file: counts, no samples (perf script prints its counts' table)
        if grep -q "perf stat record's counts" "$tmp/$name.b" &&
                ! perf report -D -i "$f" 2>/dev/null | grep -q 'PERF_RECORD_SAMPLE'; then
                check "$name: perf stat record's counts, no samples, said" \
                        grep -q '^No samples in this trace' "$tmp/$name.b"
                continue
        fi
        # samples per event
        sed 's/^ *//; s/: *$//' "$tmp/$name.events" | etw_name | sort | uniq -c |
                awk '{print $2, $1}' | sort >"$tmp/$name.perf-counts"
        # sched_switch's samples are context switches (Thread/CSwitch), sched_waking's (else
        # sched_wakeup's) wake-ups (Thread/ReadyThread): counted in the events by type, not as
        # hot functions (doc/perf-data.md)
        sched_evs=
        if grep -q '^sched:sched_switch ' "$tmp/$name.perf-counts"; then
                sched_evs="sched:sched_switch"
                echo "sched:sched_switch $(awk '/ Thread\/CSwitch \(/ {print $1}' "$tmp/$name.b")"
        fi >"$tmp/$name.etw-sched"
        for w in sched:sched_waking sched:sched_wakeup; do
                grep -q "^$w " "$tmp/$name.perf-counts" || continue
                sched_evs="$sched_evs $w"
                echo "$w $(awk '/ Thread\/ReadyThread \(/ {print $1}' "$tmp/$name.b")" \
                        >>"$tmp/$name.etw-sched"
                break
        done
        { sed -n 's/^Hot functions (\(.*\), \([0-9]*\) samples, by self.*/\1 \2/p' "$tmp/$name.b"
          cat "$tmp/$name.etw-sched"; } | sort >"$tmp/$name.etw-counts"
        # the events that are no hot functions' (a pattern that matches none where none are)
        not_hot='^$'
        [ -z "$sched_evs" ] || not_hot="^(${sched_evs// /|})\$"
        check "$name: samples per event as perf script's ($(tr '\n' ' ' <"$tmp/$name.perf-counts"))" \
                cmp -s "$tmp/$name.perf-counts" "$tmp/$name.etw-counts"
        # --source takes each event by perf's name for it ("cycles:u", "task-clock"): that
        # event's table alone, with perf script's count
        for ev in $(sed 's/^ *//; s/: *$//' "$tmp/$name.events" | sort -u | grep -Ev "$not_hot"); do
                want=$(echo "$ev" | etw_name | awk 'NR == FNR { k = $1; next } $1 == k { print $2 }' \
                        - "$tmp/$name.perf-counts")
                got=$("$ETWTOP" --replay "$f" -b --top 1 --source "$ev" 2>/dev/null |
                        sed -n 's/^Hot functions (.*, \([0-9]*\) samples, by self.*/\1/p' | tr '\n' ' ')
                check "$name: --source $ev: its table alone, $want samples ($got)" [ "$got" = "$want " ]
        done
        # the tables in perf report's order of the events (the file's), not their first samples'
        # (a group's members, which perf report shows as one, are left out)
        perf report -i "$f" --stdio 2>/dev/null |
                sed -n "s/^# Samples: .* of event '\([^']*\)'\$/\1/p" | etw_name |
                grep -Ev "$not_hot" >"$tmp/$name.perf-order"
        sed -n 's/^Hot functions (\(.*\), [0-9]* samples, by self.*/\1/p' "$tmp/$name.b" \
                >"$tmp/$name.etw-order"
        if [ "$(wc -l <"$tmp/$name.perf-order")" -gt 1 ]; then
                check "$name: the tables in perf report's order ($(tr '\n' ' ' <"$tmp/$name.perf-order"))" \
                        cmp -s "$tmp/$name.perf-order" "$tmp/$name.etw-order"
        fi
        # every event in the header (the hot functions' titles are ETW's names, never "PMC"),
        # or, where they do not all fit on its line (`-e 'syscalls:*'`), as many as perf
        # evlist has said: those it names and "and N more"
        check "$name: no source titled PMC" eval "! grep -q '^Hot functions (PMC' '$tmp/$name.b'"
        more=$(head -1 "$tmp/$name.b" | sed -n 's/.* and \([0-9]*\) more; command: .*/\1/p')
        if [ -n "$more" ]; then
                named=$(head -1 "$tmp/$name.b" | sed 's/; command: .*//; s/.*; events: //' |
                        tr ',' '\n' | grep -c .)
                all=$(perf evlist -i "$f" 2>/dev/null | grep -v '^#' | grep -cv '^dummy')
                check "$name: the header names $named events and $more more, perf evlist's $all" \
                        [ $((named + more)) = "$all" ]
        else
                for ev in $(sed 's/^ *//; s/: *$//' "$tmp/$name.events" | sort -u); do
                        check "$name: the header names $ev" grep -q "events:.*$ev" "$tmp/$name.b"
                done
        fi

        # samples per event and module (perf's dso, by its file name; two files of one name,
        # ~/.cargo/bin/cargo and a toolchain's, one row; a kernel module, which perf calls
        # [i915] or by its .ko's path, [i915]): the samples placed in the images
        # the file's maps give, in time order with them (an anonymous executable map, perf's
        # perf-PID.map, is perf report's "[JIT] tid PID"; the kernel, which perf names by the vmlinux
        # the recording found, is [kernel.kallsyms]). perf.data.lost_samples-4.4: 3 :pp
        # samples skidded across the kernel boundary (a kernel address with the user mode bit,
        # a user address with the kernel's); perf 6.1 looks them up in the mode's maps and
        # finds nothing, etwtop places them by address (2 kernel, 1 ld-2.23.so)
        "$ETWTOP" --replay "$f" -b --top 100000 2>/dev/null |
                awk '/^Hot modules \(/ {t = $3; gsub(/[()]/, "", t); getline; next}
                     /^$/ {t = ""} t && $2 > 0 {m = $3; if (sub(/\.ko(\.[a-z]+)?$/, "", m)) { gsub(/-/, "_", m); m = "[" m "]" }
                                                 n[t " " m] += $2}
                     END {for (k in n) print k, n[k]}' | sort >"$tmp/$name.etw-modules"
        perf script -i "$f" -G -F event,ip,dso 2>/dev/null | awk '{
                        e = $1; sub(/:$/, "", e)
                        d = $0; sub(/^[^(]*\(/, "", d); sub(/\)$/, "", d); sub(/ \(deleted\)$/, "", d)
                        n = split(d, a, "/"); m = a[n]; if (m ~ /^perf-[0-9]+\.map$/) m = "[JIT]"
                        if (m ~ /^vmlinux/ && d ~ /^\//) m = "[kernel.kallsyms]"
                        if (sub(/\.ko(\.[a-z]+)?$/, "", m)) { gsub(/-/, "_", m); m = "[" m "]" }
                        print e, m }' | etw_name | awk -v x="$not_hot" '$1 !~ x' | sort | uniq -c |
                awk '{print $2, $3, $1}' | sort >"$tmp/$name.perf-modules"
        if [ "$name" = perf.data.lost_samples-4.4 ]; then
                check "$name: samples per module as perf's but the 3 that skidded" \
                        [ "$(comm -3 "$tmp/$name.perf-modules" "$tmp/$name.etw-modules" |
                                tr -d '\t' | tr '\n' ' ')" = "TotalCycles [kernel.kallsyms] 63 TotalCycles [kernel.kallsyms] 65 TotalCycles [unknown] 3 TotalCycles ld-2.23.so 22 TotalCycles ld-2.23.so 23 " ]
        else
                check "$name: samples per event and module as perf script's" \
                        cmp -s "$tmp/$name.perf-modules" "$tmp/$name.etw-modules"
        fi

        # lost events: LOST records' and LOST_SAMPLES records' counts
        perf_lost=$(perf report -D -i "$f" 2>/dev/null | awk '
                /PERF_RECORD_LOST_SAMPLES/ { sub(/.*lost samples :/, ""); n += $1; next }
                /PERF_RECORD_LOST:/ { sub(/.*lost:/, ""); n += $1 }
                END { print n + 0 }')
        etw_lost=$(sed -n '1s/.*, \([0-9]*\) lost$/\1/p' "$tmp/$name.b")
        check "$name: $perf_lost lost, as perf report -D (etwtop: $etw_lost)" \
                [ "$perf_lost" = "$etw_lost" ]

        # LBR edges
        perf script -i "$f" -F brstack 2>/dev/null | aggregate perf >"$tmp/$name.perf-edges"
        "$ETWTOP" --dump "$f" 2>/dev/null | grep 'LastBranchRecord/LBR' | aggregate etw \
                >"$tmp/$name.etw-edges"
        nr_edges=$(wc -l <"$tmp/$name.perf-edges")
        check "$name: the converter's LBR edges, mispredictions and cycles are perf's ($nr_edges)" \
                cmp -s "$tmp/$name.perf-edges" "$tmp/$name.etw-edges"
        [ "$nr_edges" -gt 0 ] || continue
        # the branch view's exact edges: taken, mispredicted and known counts and the average
        # cycles, as perf's per (from, to) (one process's edges: module+offset is one address)
        awk '{ printf "%d %s %s %s\n", $3, ($5 ? $4 : ""), ($5 ? $5 : ""),
                        ($7 ? sprintf("%.2f", $6 / $7) : "") }' "$tmp/$name.perf-edges" |
                sort >"$tmp/$name.perf-rows"
        "$ETWTOP" --replay "$f" --export csv-branches -o "$tmp/$name.csv" 2>/dev/null
        tr -d '\r' <"$tmp/$name.csv" | awk -F, 'NR > 1 { print $2, $5, $6, $7 }' |
                sort >"$tmp/$name.etw-rows"
        sum() { awk -v c="$2" '{ n += $c } END { print n + 0 }' "$1"; }
        check "$name: the branch view counts every entry ($(sum "$tmp/$name.perf-rows" 1))" \
                [ "$(sum "$tmp/$name.perf-rows" 1)" = "$(sum "$tmp/$name.etw-rows" 1)" ]
        check "$name: and every misprediction ($(sum "$tmp/$name.perf-rows" 2))" \
                [ "$(sum "$tmp/$name.perf-rows" 2)" = "$(sum "$tmp/$name.etw-rows" 2)" ]
        if [ "$(awk '{print $1}' <<<"$(perf script -i "$f" -F pid 2>/dev/null)" | sort -u |
                wc -l)" = 1 ]; then
                check "$name: the branch view's edges are perf's, one by one" \
                        cmp -s "$tmp/$name.perf-rows" "$tmp/$name.etw-rows"
        fi
done
check "perf.data files found in $dir ($nr_files)" [ "$nr_files" -gt 0 ]

# IPC per module and function where cycles and instructions are both sampled: the event group
# {cycles:pp,instructions:pp,branch-instructions:pp} of perf.data.lost_samples-4.4, each with
# period 20003: libc's 5 instruction samples over its 6 cycle samples (perf script's counts)
l=$dir/perf.data.lost_samples-4.4
if [ -f "$l" ]; then
        "$ETWTOP" --replay "$l" -b >"$tmp/lost.b" 2>/dev/null
        check "lost_samples: IPC per module, weighed by the periods" \
                grep -q '^IPC per module (InstructionRetired samples x 20003 / TotalCycles samples x 20003)$' "$tmp/lost.b"
        c=$(perf script -i "$l" -F event,ip,dso 2>/dev/null | grep -c '^ *cycles:pp:.*libc-2.23.so')
        i=$(perf script -i "$l" -F event,ip,dso 2>/dev/null | grep -c '^ *instructions:pp:.*libc-2.23.so')
        ipc=$(awk -v i="$i" -v c="$c" 'BEGIN { printf "%.2f", i / c }')
        check "lost_samples: libc's IPC $ipc = $i / $c instructions / cycles samples" \
                grep -Eq "^ +$ipc +$c +$i  libc-2.23.so\$" "$tmp/lost.b"
        check "lost_samples: IPC per function" grep -q '^IPC per function' "$tmp/lost.b"
fi

# propeller_sample_1: the program beside the file names the edges' functions, found by its
# build-id (572ac72487ae1966, which perf 4.15 wrote padded to 20 bytes) in a symbol path laid out
# as a build-id store (it was recorded as propeller_sample_1.bin.gen), exact edges and function
# pairs, with cycles
p=$dir/propeller_sample_1.perfdata1
if [ -f "$p" ] && [ -f "$dir/propeller_sample_1.bin" ]; then
        mkdir -p "$tmp/sym/.build-id/57"
        ln -s "$dir/propeller_sample_1.bin" "$tmp/sym/.build-id/57/2ac72487ae1966"
        "$ETWTOP" --replay "$p" -b --symbol-path "$tmp/sym" >"$tmp/prop.b" 2>/dev/null
        awk '/^Hot branch edges by function/ {t = 1; getline; next} t && /^$/ {t = 0} t' \
                "$tmp/prop.b" >"$tmp/prop.fn"
        check "propeller: function pairs named (main -> compute_flag)" \
                grep -q '[0-9]  .*!main -> .*!compute_flag$' "$tmp/prop.fn"
        check "propeller: the top pair is main -> main with its average cycles" \
                grep -qE '^ +[0-9.]+% +[0-9]+ +[0-9.]+% +[0-9.]+ +[^ ]*!main -> [^ ]*!main$' \
                <(head -1 "$tmp/prop.fn")
        awk '/^Hot branch edges \(LBR/ {t = 1; getline; next} t && /^$/ {t = 0} t' \
                "$tmp/prop.b" >"$tmp/prop.edges"
        check "propeller: exact edges at function offsets" \
                grep -q '!main+0x[0-9a-f]* -> .*!compute_flag$' "$tmp/prop.edges"
        # annotate on a perf.data: each instruction's cycles samples, summing to the function's
        # self count, and the LBR edges at their instructions, counted as the edges table
        "$ETWTOP" --replay "$p" -b --annotate compute_flag --symbol-path "$tmp/sym" \
                >"$tmp/prop.ann" 2>/dev/null
        self=$(awk '$NF == "compute_flag" && $1 ~ /%$/ {print $3; exit}' "$tmp/prop.b")
        ann=$(awk '/^ +[0-9.]+ +[0-9]+ +[0-9a-f]+:/ {n += $2} END {print n + 0}' "$tmp/prop.ann")
        check "propeller: annotate compute_flag: its instructions' samples ($ann) are its own ($self)" \
                [ -n "$self" ] && [ "$ann" = "$self" ]
        read -r edge < <(awk '/!main\+0x[0-9a-f]* -> [^ ]*!compute_flag$/ {print $2; exit}' "$tmp/prop.edges")
        check "propeller: annotate: the call's LBR count as the edges table's (${edge:-none})" \
                grep -q "LBR: reached ${edge:-x} times from propeller_sample_1.bin.gen!main+0x" "$tmp/prop.ann"
fi

# --symbol-path folders are scanned for the build-id (symbols/build_id_scan.c): the binaries
# copied beside the recordings under other names than recorded (perf_b.data's "/elf",
# propeller's "...bin.gen") are found in a plain folder, a FIFO and a text file there skipped
if [ -f "$dir/perf_b.data" ] && [ -f "$dir/perf_b.elf" ] && [ -f "$dir/propeller_sample_1.bin" ]; then
        mkdir -p "$tmp/plain"
        cp "$dir/perf_b.elf" "$tmp/plain/copied.bin"
        cp "$dir/propeller_sample_1.bin" "$tmp/plain/another-name"
        echo notes >"$tmp/plain/README"
        mkfifo "$tmp/plain/fifo"
        timeout 60 "$ETWTOP" --replay "$dir/perf_b.data" -b --top 3 --symbol-path "$tmp/plain" \
                >"$tmp/scan.b" 2>/dev/null
        check "scan: perf_b's /elf found by build-id as copied.bin (GlobalFunc)" \
                grep -qE '^ +74\.00% +74\.00% +111 +111  elf +GlobalFunc$' "$tmp/scan.b"
        check "scan: the module names the file its symbols came from" \
                grep -q " elf  .*from $tmp/plain/copied.bin" "$tmp/scan.b"
        timeout 60 "$ETWTOP" --replay "$dir/propeller_sample_1.perfdata1" -b --top 3 \
                --symbol-path "$tmp/plain" >"$tmp/scan.p" 2>/dev/null
        check "scan: propeller's binary by its 8-byte build-id (main)" \
                grep -qE '^ +[0-9.]+% .* propeller_sample_1.bin.gen +main$' "$tmp/scan.p"
fi

# a perf.data is read through a temporary .etl removed once opened: never synced to the disk
# (the writer syncs a recording at each flush and at its close: a replay of a large perf.data
# waited for its scratch copy to reach the disk, twice for an export); --merge's file still is
if command -v strace >/dev/null && [ -f "$dir/perf_b.data" ]; then
        # LeakSanitizer does not run under ptrace (a sanitizer build's leak check is off here)
        export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
        strace -f -qq -e trace=fsync,fdatasync -o "$tmp/sync.trace" \
                "$ETWTOP" --replay "$dir/perf_b.data" --export pprof -o "$tmp/sync.pb.gz" \
                2>/dev/null
        check "scratch: --export of a perf.data succeeds under strace" [ -s "$tmp/sync.pb.gz" ]
        no_sync() { ! grep -q 'sync(' "$1"; }
        check "scratch: --export of a perf.data syncs nothing" no_sync "$tmp/sync.trace"
        strace -f -qq -e trace=fsync,fdatasync -o "$tmp/sync2.trace" \
                "$ETWTOP" --merge -o "$tmp/merged.etl" "$dir/perf_b.data" >/dev/null 2>&1
        check "scratch: --merge's file of it is synced" grep -q 'sync(' "$tmp/sync2.trace"
else
        skip "strace missing: the scratch file's syncs not counted"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]

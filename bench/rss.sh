#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rss.sh: memory and CPU over a long run. The live screen and perf top (the settings of top.sh:
# 4 kHz samples with call chains, every context switch and wake-up) run side by side on a busy
# machine for SECONDS; once a minute, each tool's resident set size and the CPU seconds it took
# in that minute are printed. etwtop is the screen and the etwtop-host process that runs its
# session (started for this run, in a runtime directory of its own); its CPU per minute under a
# steady load is the cost of its refreshes and events, which must not grow with the processes
# that came and went. The machine is busy the way that grows a profiler's tables: spinning
# shells, a pipe ping-pong, clang compiling in a loop (many functions, many stacks) and a
# process storm (/bin/true in a loop: hundreds of processes and threads a second, each with its
# images). Then the growth: each tool's memory from the first minute to the end and over the
# second half, and etwtop's CPU per minute in the first and the last five minutes; and where the
# screen's memory is at the end (its heap's span, resident and marked for huge pages). The budget
# (DESIGN.md): etwtop's memory is bounded by its settings (doc/etwtop.1, MEMORY), not by run
# time, i.e. flat once its capped tables have filled.
# Usage: bench/rss.sh [BUILD_DIR] [SECONDS]   (default ./build, 1800 s; needs root, perf, tmux)
# RSS_SITES=1: the screen's mmap, munmap and mremap calls are recorded with their stacks
# (perf record) and, at the end, its mapped memory is printed by the code that asked for it at
# each tenth of the run (bench/mmap_sites.sh): which table grew when; and once a minute its
# resident pages are read (bench/resident_runs.py), to print what of each site was resident;
# RSS_KEEP=DIR keeps the recording and the readings there (bench/mmap_sites.sh reads them again)
# RSS_HEAP=SECONDS: heaptrack joins the screen at that second (a multiple of 60; gdb injects it) and
# the screen is killed at the end rather than quit, so that what it allocated from then on and
# still held is printed by the code that asked for it (bench/heap_growth.sh): the growth of its
# heap of small blocks, which the mappings above do not show; heaptrack's cost slows the screen,
# so such a run's figures are not the item's (RSS_KEEP=DIR keeps its file there)
# RSS_WATCH_KB: the jump over the last minute's lowest reading that counts as a transient (40960)
set -u
. "$(dirname "$0")/work_c.sh"
build=${1:-./build}
secs=${2:-1800}
name=rss.sh
. "$(dirname "$0")/screen_common.sh"
if [ -n "${RSS_HEAP:-}" ]; then
        command -v heaptrack >/dev/null && command -v gdb >/dev/null ||
                die "RSS_HEAP: heaptrack and gdb are needed (Debian: heaptrack, gdb)"
        [ $((RSS_HEAP % 60)) = 0 ] && [ "$RSS_HEAP" -lt "$secs" ] ||
                die "RSS_HEAP=$RSS_HEAP: a multiple of 60 seconds, before the run's end ($secs)"
fi
# a host of its own: not one another etwtop on this machine started
export ETWTOP_RUNTIME_DIR="$tmp/run"
for ((i = 0; i < ncpu; i++)); do
        (end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do :; done) &
done
timeout $((secs + 10)) perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
write_work_c "$tmp/work.c"
if command -v clang >/dev/null; then
        (end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do
                clang -O2 -c "$tmp/work.c" -o "$tmp/work.o" 2>/dev/null; done) &
fi
(end=$((SECONDS + secs + 10)); while [ $SECONDS -lt $end ]; do /bin/true; done) &
tmux -L "$sock" new-session -d -s e -x 160 -y 50 "$etwtop_cmd; sleep $((secs + 60))"
tmux -L "$sock" new-session -d -s p -x 160 -y 50 "$perf_top_cmd; sleep $((secs + 60))"
sleep 2
tmux -L "$sock" send-keys -t p Enter # perf top's event chooser: the first event's browser
# each tool is the child of its pane's shell; etwtop's host is the etwtop-host process in this
# run's runtime directory
epid=$(pgrep -P "$(tmux -L "$sock" display -p -t e '#{pane_pid}')" | head -1)
ppid=$(pgrep -P "$(tmux -L "$sock" display -p -t p '#{pane_pid}')" | head -1)
hpid=""
for ((i = 0; i < 20 && ${#hpid} == 0; i++)); do
        sleep 0.5
        for p in $(pgrep -x etwtop-host); do
                tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
                        grep -qx "ETWTOP_RUNTIME_DIR=$ETWTOP_RUNTIME_DIR" && hpid=$p
        done
done
[ -n "$epid" ] && [ -n "$hpid" ] ||
        die "etwtop did not start (screen '$epid', host '$hpid'): $(
                tmux -L "$sock" capture-pane -t e -p | grep -v '^$' | tail -2 | tr '\n' ' ' | tr -s ' ')"
trap 'tmux -L $sock kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; kill "$hpid" 2>/dev/null; rm -rf "$tmp"' EXIT
if [ -n "${RSS_SITES:-}" ]; then
        perf record -q -k monotonic -e syscalls:sys_enter_mmap -e syscalls:sys_exit_mmap \
                -e syscalls:sys_enter_munmap -e syscalls:sys_enter_mremap \
                -e syscalls:sys_exit_mremap --call-graph dwarf,8192 -p "$epid" \
                -o "$tmp/mmap.data" >/dev/null 2>"$tmp/mmap.err" &
        sites_pid=$!
fi
tck=$(getconf CLK_TCK)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# the screen's own: its resident pages less those it maps of its host's memory files (the
# session's buffers, which it reads in place, resident in the host's figure already)
rss_own() { awk '/^VmRSS:/ {r = $2} /^RssShmem:/ {s = $2} END {print r - s}' "/proc/$1/status" 2>/dev/null; }
cpu() { awk -v k="$tck" '{printf "%.2f", ($14 + $15) / k}' "/proc/$1/stat" 2>/dev/null; }
# why perf top ended: the OOM killer says so in the kernel log
perf_end() {
        local why
        why=$(dmesg 2>/dev/null | grep -E "Out of memory: Killed process $ppid |oom-kill.*pid=$ppid[,) ]" | tail -1)
        if [ -n "$why" ]; then
                echo "perf top was killed by the OOM killer at $1 s: ${why#*] }"
        else
                echo "perf top exited (crashed?) at $1 s: $(tmux -L "$sock" capture-pane -t p -p | grep -v '^$' | tail -2 | tr '\n' ' ' | tr -s ' ')"
        fi
}
echo "each minute: resident KB, and CPU seconds taken in that minute (etwtop: screen + host; the screen without the host's buffers it maps, counted in the host's)"
printf "%7s %10s %10s %10s %12s %11s %11s %11s\n" seconds "etwtop KB" "screen KB" "host KB" \
        "perf top KB" "etwtop CPU" "screen CPU" "perf CPU"
ecpu_prev=0 scpu_prev=0 pcpu_prev=0 p_gone="" series="$tmp/series"
: >"$series"
if [ -z "$ppid" ]; then
        p_gone=0
        perf_end 0
fi
# every 10 s, the screen's resident memory; a reading 40 MB or more above the lowest of the last
# minute is a transient to attribute: its largest mappings (smaps) and the machine's largest
# and newest processes at that moment are kept, and printed at the end
watch="$tmp/watch"
: >"$watch"
(low=() start=$SECONDS
        while kill -0 "$epid" 2>/dev/null; do
                sleep 10
                r=$(rss_own "$epid") || break
                [ -n "$r" ] || break
                low+=("$r")
                [ ${#low[@]} -gt 6 ] && low=("${low[@]:1}")
                min=$(printf '%s\n' "${low[@]}" | sort -n | head -1)
                if [ $((r - min)) -ge "${RSS_WATCH_KB:-40960}" ]; then
                        {
                                echo "at $((SECONDS - start)) s: screen $r KB, $(((r - min) / 1024)) MB over the last minute's lowest"
                                awk '/^[0-9a-f]+-[0-9a-f]+ / { m = NF >= 6 ? $6 : "[anon]" }
                                     /^Rss:/ { r[m] += $2 }
                                     END { for (k in r) if (r[k] >= 4096) printf "    %8d KB  %s\n", r[k], k }' \
                                        "/proc/$epid/smaps" 2>/dev/null | sort -rn | head -6
                                echo "    processes (rss KB, seconds, name), largest and newest:"
                                ps -eo rss=,etimes=,comm= --sort=-rss | head -4 | sed 's/^/      /'
                                ps -eo rss=,etimes=,comm= --sort=etimes | head -6 | sed 's/^/      /'
                        } >>"$watch"
                fi
        done) &
for ((t = 60; t <= secs; t += 60)); do
        sleep 60
        es=$(rss_own "$epid") eh=$(rss "$hpid") p=$(rss "$ppid")
        [ -n "$es" ] || die "etwtop exited at ${t} s: $(tmux -L "$sock" capture-pane -t e -p | grep -v '^$' | tail -3)"
        [ -n "$eh" ] || die "etwtop's host exited at ${t} s"
        sc=$(cpu "$epid")
        ec=$(awk -v a="$sc" -v b="$(cpu "$hpid")" 'BEGIN {printf "%.2f", a + b}')
        if [ -z "$p" ] && [ -z "$p_gone" ]; then
                p_gone=$t
                perf_end "$t"
        fi
        if [ -n "$p_gone" ]; then
                p=- pc=- pd=-
        else
                pc=$(cpu "$ppid")
                pd=$(awk -v a="$pc" -v b="$pcpu_prev" 'BEGIN {printf "%.2f", a - b}')
        fi
        ed=$(awk -v a="$ec" -v b="$ecpu_prev" 'BEGIN {printf "%.2f", a - b}')
        sd=$(awk -v a="$sc" -v b="$scpu_prev" 'BEGIN {printf "%.2f", a - b}')
        printf "%7d %10d %10d %10d %12s %11s %11s %11s\n" "$t" $((es + eh)) "$es" "$eh" "$p" "$ed" \
                "$sd" "$pd"
        echo "$t $((es + eh)) $p $ed $sd $pd" >>"$series"
        [ -z "${RSS_SITES:-}" ] || python3 "$(dirname "$0")/resident_runs.py" "$epid" >"$tmp/resident.$t" 2>/dev/null
        if [ "$t" = "${RSS_HEAP:-}" ]; then
                (cd "$tmp" && exec heaptrack -p "$epid" >"$tmp/heaptrack.out" 2>&1) &
                heap_pid=$!
        fi
        ecpu_prev=$ec scpu_prev=$sc
        [ "$pd" = - ] || pcpu_prev=$pc
done
if [ -s "$watch" ]; then
        echo
        echo "the screen's transients (40 MB or more over the lowest of the minute before):"
        cat "$watch"
fi
# where the screen's memory is at the end: its heap (the span glibc took with brk, what of it is
# resident, what of it is marked for huge pages) and its other anonymous memory
awk 'function hex(s,  i, n) {
             for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
             return n
     }
     /^[0-9a-f]+-[0-9a-f]+ / { split($1, r, "-"); heap = $NF == "[heap]"; anon = NF == 5
                               span = (hex(r[2]) - hex(r[1])) / 1024
                               if (heap) hs += span }
     /^Rss:/ { if (heap) hr += $2; else if (anon) ar += $2 }
     /^AnonHugePages:/ { ahp += $2 }
     /^VmFlags:/ && / hg/ && heap { hh += span }
     END { printf "\nthe screen at the end: heap %d MB (%d MB resident, %d MB marked for huge " \
           "pages), other anonymous memory %d MB resident; in huge pages, %d MB in all\n",
           hs / 1024, hr / 1024, hh / 1024, ar / 1024, ahp / 1024 }' "/proc/$epid/smaps" 2>/dev/null
awk -v p_gone="$p_gone" '
{ t[NR] = $1; e[NR] = $2; p[NR] = $3; ec[NR] = $4; sc[NR] = $5; n = NR }
END {
        if (n < 2) exit
        h = int((n + 1) / 2)
        printf "\ngrowth after the first minute: etwtop %+d KB", e[n] - e[1]
        lp = n; while (lp > 1 && p[lp] == "-") lp--
        if (p[1] != "-") printf ", perf top %+d KB%s", p[lp] - p[1], lp < n ? " (until it ended)" : ""
        printf "\ngrowth over the second half:  etwtop %+d KB (%+.1f%%)", e[n] - e[h], 100 * (e[n] - e[h]) / e[h]
        if (lp >= h && p[h] != "-")
                printf ", perf top %+d KB (%+.1f%%)", p[lp] - p[h], 100 * (p[lp] - p[h]) / p[h]
        # CPU per minute: at the start (the tables filling), at the half, at the end
        k = n >= 10 ? 5 : int(n / 2); if (k < 1) k = 1
        for (i = 1; i <= k; i++) {
                a += ec[i]; m += ec[h + i - 1]; b += ec[n - k + i]
                c += sc[i]; q += sc[h + i - 1]; d += sc[n - k + i]
        }
        printf "\netwtop CPU per minute: %.2f s in the first %d min, %.2f s from the half on, " \
               "%.2f s in the last %d (%+.1f%% over the second half)", a / k, k, m / k, b / k, k,
               m ? 100 * (b - m) / m : 0
        printf "\n  of it the screen (events into the model, refreshes): %.2f s, %.2f s, %.2f s " \
               "(%+.1f%%)\n", c / k, q / k, d / k, q ? 100 * (d - q) / q : 0
        if (p_gone != "") printf "perf top ended at %d s\n", p_gone
        # issue 25 item 7 budget: the end within 10% of the tenth minute; and the median of the
        # last five minutes beside it (one reading a minute can fall on a large program and its
        # symbols, loaded while it runs and given back after it: say which it is)
        if (n >= 10) {
                g = 100 * (e[n] - e[10]) / e[10]
                v = (g <= 10 && g >= -10) ? "met" : "MISSED"
                printf "the end against the tenth minute: %+.1f%% (%s, budget 10%%)", g, v
                k = n - 9 < 5 ? n - 9 : 5
                for (i = 0; i < k; i++) l[i] = e[n - i]
                for (i = 0; i < k; i++) for (j = i + 1; j < k; j++) if (l[j] < l[i]) { x = l[i]; l[i] = l[j]; l[j] = x }
                md = l[int(k / 2)]
                printf "; the median of the last %d minutes %+.1f%%\n", k, 100 * (md - e[10]) / e[10]
        }
}' "$series"
if [ -n "${heap_pid:-}" ]; then
        kill -KILL "$epid" 2>/dev/null
        wait "$heap_pid" 2>/dev/null
        echo
        echo "the screen's heap: what it allocated from ${RSS_HEAP} s on and held at the end, by the code that asked:"
        hfile=$(ls "$tmp"/heaptrack.*.zst 2>/dev/null | head -1)
        if [ -n "$hfile" ]; then
                bash "$(dirname "$0")/heap_growth.sh" "$hfile"
                [ -z "${RSS_KEEP:-}" ] || { mkdir -p "$RSS_KEEP" && cp "$hfile" "$RSS_KEEP/" &&
                        echo "kept in $RSS_KEEP: $(basename "$hfile")"; }
        else
                echo "(heaptrack wrote nothing: $(tail -3 "$tmp/heaptrack.out" | tr '\n' ' '))"
        fi
fi
if [ -n "${RSS_SITES:-}" ]; then
        kill -INT "$sites_pid" 2>/dev/null
        wait "$sites_pid" 2>/dev/null
        echo
        echo "the screen's anonymous mappings, by the code that asked for them (mapped; then resident, each third minute):"
        times="" res=""
        for ((i = 1; i <= 10; i++)); do times+=" $((secs * i / 10))"; done
        for ((t = 180; t <= secs; t += 180)); do [ -s "$tmp/resident.$t" ] && res+=" $tmp/resident.$t"; done
        SITES_RESIDENT="$res" "$(dirname "$0")/mmap_sites.sh" "$tmp/mmap.data" "$etwtop" $times ||
                echo "(not read: $(head -3 "$tmp/mmap.err"))"
        if [ -n "${RSS_KEEP:-}" ]; then
                mkdir -p "$RSS_KEEP" && cp "$tmp/mmap.data" "$tmp"/resident.* "$RSS_KEEP/" &&
                        echo "kept in $RSS_KEEP: mmap.data, resident.SECONDS"
        fi
fi

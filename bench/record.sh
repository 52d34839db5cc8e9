#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record.sh: etwtop --record against perf record with the same settings on a busy machine:
# CPU time of the recorder, file size, events, lost events, printed side by side as ratios.
# Usage: [MODE=samples] bench/record.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (default ./build, 10 s,
#        3 rounds; needs root and perf). The two recorders take turns, ROUNDS times each; CPU
#        times, events and lost events are summed over the rounds, file sizes are the last
#        round's. MODE=samples: timer samples with stacks only (no switches, no wake-ups).
#        MODE=together: the switch-heavy session, both recorders at once on the same load, so
#        that both see the same switches (a recorder's kernel work per switch is charged to the
#        switching tasks: taking turns, the load switches less beside the costlier one and the
#        two write different work); the per-event ratio is then like for like.
#        MODE=pinned: what each recorder costs the load per switch: perf bench sched pipe on
#        CPU 0 (7 runs of 50,000 round trips, 2 switches each) beside nothing, etwtop --record
#        and perf record (each on the last CPU, ROUNDS times); the least and median us a round
#        trip. Needs 2 CPUs and SECONDS >= 12. It also runs perf record --switch-events: the
#        context-switch records etwtop asks for too, without which sched_switch alone misses
#        switches on some kernels (bench/README.md, "Item 2, seventh pass"), so that perf writes
#        every switch, as etwtop does.
#        PERF_SWITCH_EVENTS=1 (switches, together): perf record with --switch-events as well.
#        MODE=execs: the samples-only session with a loop of execs beside the busy loops (a
#        build's load: every new process is a fork and an exec whose command line etwtop
#        reads from /proc, as ETW's Process/Start carries it), both recorders at once on the
#        same load; budget: perf record's CPU or less.
# The recorders' CPU is counted twice: by GNU time (%U %S, 10 ms steps) and by perf stat's
# task-clock around it (microseconds; it also counts time(1) itself, about a millisecond, on
# both sides), whose ratio tells the small differences that GNU time's steps hide.
# Budget (DESIGN.md, issue 25): etwtop's CPU <= perf record's (in total and per event written),
# <= 0.5x on the samples-only run; file size within 1.5x of perf.data. "Events" to compare per
# event: the samples, CSwitch and ReadyThread etwtop wrote, and perf's samples (perf script).
set -u
build=${1:-./build}
secs=${2:-10}
rounds=${3:-3}
etwtop=$build/src/etwtop
die() { echo "record.sh: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)
mode=${MODE:-switches}
case "$mode" in
switches | together | pinned)
        e_on=PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER e_walk=Profile+CSwitch+ReadyThread
        p_tp=(-e sched:sched_switch -e sched:sched_waking)
        cpu_target=1
        ;;
samples) e_on=PROC_THREAD+LOADER+PROFILE e_walk=Profile p_tp=() cpu_target=0.5 ;;
execs) e_on=PROC_THREAD+LOADER+PROFILE e_walk=Profile p_tp=() cpu_target=1 ;;
*) die "MODE is switches, samples, together, execs or pinned, not $mode" ;;
esac

# The same session for both: 4 kHz timer samples with call chains on every CPU, context
# switches and wake-ups (with stacks), process/thread/image side band.
# Busy machine: a spinning shell per CPU, plus two processes ping-ponging over a pipe
# (perf bench sched pipe), which switch contexts and wake each other all the time.
load() {
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + secs + 3)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout $((secs + 3)) perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
        if [ "$mode" = execs ]; then
                (end=$((SECONDS + secs + 3)); while [ $SECONDS -lt $end ]; do /bin/true; done) &
        fi
}

# CPU seconds (user + system) of a finished child: from bash's `times` is too coarse, so the
# recorder runs under /usr/bin/time -f "%U %S".
cpu_of() { awk '{printf "%.3f", $1 + $2}' "$1"; }
# the same from perf stat -x, -e task-clock (msec) around it
task_of() { awk -F, '/task-clock/ {printf "%.4f", $1 / 1000}' "$1"; }

etwtop_rec() {
        # the session in-process (ETWTOP_NO_HOST=1): with a host, the session's work is done
        # in the etwtop-host daemon, which is no child of time(1) (bench/attach.sh counts the
        # screen with its host: about 1.1x the in-process CPU)
        ETWTOP_NO_HOST=1 perf stat -x, -e task-clock -o "$tmp/etwtop.stat" -- \
                /usr/bin/time -f "%U %S" -o "$tmp/etwtop.time" \
                "$etwtop" --record "$tmp/e.etl" --force --duration "$secs" --set-prof-int 2500 \
                --on "$e_on" --stackwalk "$e_walk" --stackwalk-mode fp \
                2>"$tmp/etwtop.err" || die "etwtop --record failed: $(cat "$tmp/etwtop.err")"
}
p_sw=()
[ "${PERF_SWITCH_EVENTS:-0}" = 1 ] && p_sw=(--switch-events)
perf_rec() {
        rm -f "$tmp/p.data" "$tmp/p.data.old"
        perf stat -x, -e task-clock -o "$tmp/perf.stat" -- /usr/bin/time -f "%U %S" -o "$tmp/perf.time" \
                perf record -q -B -N -o "$tmp/p.data" -a -g -e cpu-clock/period=250000/ \
                "${p_tp[@]}" "${p_sw[@]}" -- sleep "$secs" \
                2>"$tmp/perf.err" ||
                die "perf record failed: $(cat "$tmp/perf.err")"
}
perf_rec_sw() {
        local p_sw=(--switch-events)
        perf_rec
}
run_etwtop() {
        load
        sleep 1
        etwtop_rec
        wait
}
run_perf() {
        load
        sleep 1
        perf_rec
        wait
}
# both at once: each recorder in its own subshell, each checked once both are done
run_together() {
        load
        sleep 1
        (etwtop_rec) &
        local e=$!
        (perf_rec) &
        local p=$!
        wait $e || exit 1
        wait $p || exit 1
        wait
}

# the pipe's least and median us a round trip, seven runs on CPU 0
pipe_us() {
        for i in 1 2 3 4 5 6 7; do
                taskset -c 0 perf bench sched pipe -l 50000 2>/dev/null | awk '/usecs\/op/ {print $1}'
        done | sort -n | awk '{v[NR] = $1} END {printf "%.2f %.2f", v[1], v[4]}'
}
run_pinned() { # name [recorder function]
        local rp=
        if [ -n "${2:-}" ]; then
                (taskset -cp $((ncpu - 1)) $BASHPID >/dev/null; $2) &
                rp=$!
                sleep 2.5 # started, its rundown done
        fi
        local us
        us=$(pipe_us)
        [ -z "$rp" ] || wait $rp || exit 1
        echo "$1 $us"
}
if [ "$mode" = pinned ]; then
        ((ncpu >= 2)) || die "MODE=pinned needs 2 CPUs"
        ((secs >= 12)) || die "MODE=pinned needs SECONDS >= 12"
        for ((r = 1; r <= rounds; r++)); do
                run_pinned nothing
                if ((r % 2)); then
                        run_pinned etwtop etwtop_rec
                        run_pinned perf perf_rec
                        run_pinned perfsw perf_rec_sw
                else
                        run_pinned perfsw perf_rec_sw
                        run_pinned perf perf_rec
                        run_pinned etwtop etwtop_rec
                fi
        done | awk '{n[$1]++; lo[$1] = (n[$1] == 1 || $2 < lo[$1]) ? $2 : lo[$1]; md[$1] = md[$1] " " $3}
        END {
                printf "load beside each recorder: perf bench sched pipe on CPU 0, the recorder on CPU %d\n", '"$ncpu"' - 1
                printf "%-16s %12s  %s\n", "beside", "least us/rt", "medians (us a round trip of 2 switches)"
                printf "%-16s %12.2f %s\n", "nothing", lo["nothing"], md["nothing"]
                printf "%-16s %12.2f %s\n", "etwtop --record", lo["etwtop"], md["etwtop"]
                printf "%-16s %12.2f %s\n", "perf record", lo["perf"], md["perf"]
                printf "%-16s %12.2f %s\n", " --switch-events", lo["perfsw"], md["perfsw"]
                printf "\nper switch beyond nothing: etwtop / perf record %.2fx (least)\n",
                        (lo["etwtop"] - lo["nothing"]) / (lo["perf"] - lo["nothing"])
                printf "                           etwtop / perf record --switch-events %.2fx (least)\n",
                        (lo["etwtop"] - lo["nothing"]) / (lo["perfsw"] - lo["nothing"])
        }'
        exit 0
fi

e_cpu=0 p_cpu=0 e_task=0 p_task=0 e_events=0 p_events=0 e_lost=0 p_lost=0 e_like=0
e_kinds="0 0 0" p_kinds="0 0 0"
for ((r = 1; r <= rounds; r++)); do
        # who goes first alternates, so that neither always meets a warmer machine
        if [ "$mode" = together ] || [ "$mode" = execs ]; then
                run_together
        elif ((r % 2)); then run_etwtop; run_perf; else run_perf; run_etwtop; fi
        ec=$(cpu_of "$tmp/etwtop.time")
        pc=$(cpu_of "$tmp/perf.time")
        et=$(task_of "$tmp/etwtop.stat")
        pt=$(task_of "$tmp/perf.stat")
        "$etwtop" --dump --totals "$tmp/e.etl" >"$tmp/e.totals"
        ee=$(awk '/events in all/ {print $1}' "$tmp/e.totals")
        el=$(awk '/^Events lost:/ {n=$3} END {print n+0}' "$tmp/e.totals")
        # the events perf record has too: samples, switches, wake-ups (not their stacks)
        elike=$(awk '/ (PerfInfo\/SampledProfile|Thread\/CSwitch|Thread\/ReadyThread) / {n += $1}
                END {print n + 0}' "$tmp/e.totals")
        # perf's samples from the file's own counts (perf script, which this count came from
        # before, stopped part way through some busy rounds' files and counted a tenth)
        perf report -i "$tmp/p.data" --stats >"$tmp/p.stats" 2>/dev/null
        pe=$(awk '/SAMPLE events:/ {print $3; exit}' "$tmp/p.stats")
        [ -n "$pe" ] || pe=$(perf script -i "$tmp/p.data" -F event 2>/dev/null | wc -l)
        pl=$(awk '/LOST/ {n += $NF} END {print n + 0}' "$tmp/p.stats")
        # each kind (samples, switches, wake-ups) summed over the rounds, to compare like counts
        e_kinds=$(awk -v k="$e_kinds" 'BEGIN {split(k, a, " ")}
                / PerfInfo\/SampledProfile / {a[1] += $1} / Thread\/CSwitch / {a[2] += $1}
                / Thread\/ReadyThread / {a[3] += $1} END {print a[1], a[2], a[3]}' "$tmp/e.totals")
        p_kinds=$(awk -v k="$p_kinds" 'BEGIN {split(k, a, " ")} / stats:$/ {ev = $1}
                /SAMPLE events:/ && ev ~ /^cpu-clock/ {a[1] += $3}
                /SAMPLE events:/ && ev ~ /sched_switch/ {a[2] += $3}
                /SAMPLE events:/ && ev ~ /sched_waking/ {a[3] += $3}
                END {print a[1], a[2], a[3]}' "$tmp/p.stats")
        printf "round %d: etwtop %.3f s CPU (task-clock %.4f), %d events, %d lost; perf record %.3f s CPU (task-clock %.4f), %d events, %d lost\n" \
                "$r" "$ec" "$et" "$ee" "$el" "$pc" "$pt" "$pe" "$pl"
        e_cpu=$(awk -v a="$e_cpu" -v b="$ec" 'BEGIN {printf "%.3f", a + b}')
        p_cpu=$(awk -v a="$p_cpu" -v b="$pc" 'BEGIN {printf "%.3f", a + b}')
        e_task=$(awk -v a="$e_task" -v b="$et" 'BEGIN {printf "%.4f", a + b}')
        p_task=$(awk -v a="$p_task" -v b="$pt" 'BEGIN {printf "%.4f", a + b}')
        e_events=$((e_events + ee)) p_events=$((p_events + pe)) e_like=$((e_like + elike))
        e_lost=$((e_lost + el)) p_lost=$((p_lost + pl))
done
e_size=$(stat -c %s "$tmp/e.etl")
p_size=$(stat -c %s "$tmp/p.data")
echo

awk -v secs="$secs" -v rounds="$rounds" -v ncpu="$ncpu" -v e_cpu="$e_cpu" -v p_cpu="$p_cpu" -v e_size="$e_size" \
        -v p_size="$p_size" -v e_events="$e_events" -v p_events="$p_events" -v e_lost="$e_lost" \
        -v p_lost="$p_lost" -v e_like="$e_like" -v mode="$mode" -v cpu_target="$cpu_target" \
        -v e_kinds="$e_kinds" -v p_kinds="$p_kinds" -v psw="${#p_sw[@]}" -v e_task="$e_task" \
        -v p_task="$p_task" 'BEGIN {
        if (mode == "together")
                printf "record benchmark (both recorders at once on the same load): %d rounds of %d s, %d CPUs\nbusy, 4 kHz samples with stacks, context switches, wake-ups with stacks, process/thread/image events", rounds, secs, ncpu
        else if (mode == "execs")
                printf "record benchmark (samples only, both recorders at once on a loop of execs): %d rounds of %d s,\n%d CPUs busy, 4 kHz samples with stacks, process/thread/image events", rounds, secs, ncpu
        else if (mode == "samples")
                printf "record benchmark (samples only): %d rounds of %d s, %d CPUs busy, 4 kHz samples with\nstacks, process/thread/image events", rounds, secs, ncpu
        else
                printf "record benchmark: %d rounds of %d s, %d CPUs busy, 4 kHz samples with stacks, context\nswitches, wake-ups with stacks, process/thread/image events", rounds, secs, ncpu
        printf " (CPU, events, lost: sums over the\nrounds; file sizes: the last round; like: samples, switches and wake-ups)\n"
        if (psw) printf "perf record with --switch-events (the context-switch records etwtop asks for too)\n"
        printf "\n"
        printf "%-16s %10s %12s %10s %10s %8s %12s\n", "recorder", "CPU s", "file MB", "events", "like", "lost", "CPU s/M like"
        printf "%-16s %10.3f %12.2f %10d %10d %8d %12.3f\n", "etwtop --record", e_cpu, e_size / 1e6, e_events, e_like, e_lost, e_like ? e_cpu * 1e6 / e_like : 0
        printf "%-16s %10.3f %12.2f %10d %10d %8d %12.3f\n", "perf record", p_cpu, p_size / 1e6, p_events, p_events, p_lost, p_events ? p_cpu * 1e6 / p_events : 0
        cpu_ratio = p_cpu > 0 ? e_cpu / p_cpu : 0
        per_ratio = (p_cpu > 0 && e_like > 0) ? (e_cpu / e_like) / (p_cpu / p_events) : 0
        size_ratio = p_size > 0 ? e_size / p_size : 0
        printf "\n%-36s %8s %8s %s\n", "ratio", "value", "target", "result"
        printf "%-36s %7.2fx %7sx %s\n", "CPU: etwtop / perf record", cpu_ratio, "<= " cpu_target, cpu_ratio <= cpu_target ? "PASS" : "MISS"
        printf "%-36s %7.2fx %7sx %s\n", "CPU per like event: etwtop / perf", per_ratio, "<= " cpu_target, per_ratio <= cpu_target ? "PASS" : "MISS"
        task_ratio = p_task > 0 ? e_task / p_task : 0
        printf "%-36s %7.2fx %7sx %s  (%.4f s / %.4f s)\n", "CPU by task-clock: etwtop / perf", task_ratio, "<= " cpu_target, task_ratio <= cpu_target ? "PASS" : "MISS", e_task, p_task
        printf "%-36s %7.2fx %8s %s\n", "file size: etwtop / perf record", size_ratio, "<= 1.5x", size_ratio <= 1.5 ? "PASS" : "MISS"
        split(e_kinds, ek, " "); split(p_kinds, pk, " ")
        printf "\n%-16s %12s %12s %12s\n", "like events", "samples", "switches", "wake-ups"
        printf "%-16s %12d %12d %12d\n", "etwtop --record", ek[1], ek[2], ek[3]
        printf "%-16s %12d %12d %12d\n", "perf record", pk[1], pk[2], pk[3]
        printf "\nevents: perf counts samples and tracepoint records; etwtop counts ETW records, where\n"
        printf "a sample and its stack are two records and the rundown adds process/thread/image events.\n"
}'

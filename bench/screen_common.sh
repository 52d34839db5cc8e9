# SPDX-License-Identifier: MIT
# screen_common.sh: sourced by top.sh, rss.sh and the screen's diagnostics, which run the live
# screen (and perf top) side by side in tmux: the checks, the temporary directory and tmux
# server they share, and the one place that says what "the same settings" are. Before
# sourcing: name (for messages), build. After: etwtop, sock, tmp, ncpu, die,
# cg_make/cg_seconds/cg_since, busy_load, and the two command lines below (MODE=samples: those
# of the samples-only settings).
etwtop=$(realpath "$build/src/etwtop")
die() { echo "$name: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
command -v tmux >/dev/null || die "tmux not found"
sock=etwtop-$name-$$
tmp=$(mktemp -d)
trap 'tmux -L $sock kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; cg_remove; rm -rf "$tmp"' EXIT
# A tool's CPU to the microsecond: its processes in a cgroup (v2) of their own, whose cpu.stat
# counts every thread of every process in it, those that exited too. /proc/PID/stat's utime and
# stime are each floored to a tick (10 ms): a screen and its host are four values, about 20 ms
# low on average, a sixth of a samples-only screen's 0.13 s in a 20 s round. cg_make NAME prints
# the group's directory (nothing where no cgroup v2 can be made: the callers count ticks then);
# the pane's shell joins it before it starts the tool, whose children (etwtop's host) follow.
cg_root=
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [ -f "$d/cgroup.controllers" ] && [ -w "$d" ]; then
                cg_root=$d
                break
        fi
done
cg_make() {
        [ -n "$cg_root" ] || return 0
        local g=$cg_root/etwtop-bench-$$-$1
        mkdir "$g" 2>/dev/null && [ -f "$g/cpu.stat" ] || return 0
        # a process can be moved in (a container may refuse it): a shell that tries, then
        # exits (its CPU is in the group: callers take cg_seconds just after as the start)
        if sh -c "echo \$\$ > '$g/cgroup.procs'" 2>/dev/null; then
                echo "$g"
        else
                rmdir "$g" 2>/dev/null
        fi
}
# the group's CPU seconds so far; and since it read START
cg_seconds() { awk '/^usage_usec/ {printf "%.3f", $2 / 1e6}' "$1/cpu.stat"; }
cg_since() { awk -v s="$2" '/^usage_usec/ {printf "%.3f", $2 / 1e6 - s}' "$1/cpu.stat"; }
# the groups made, once their processes are gone
cg_remove() {
        [ -n "$cg_root" ] || return 0
        local g
        for g in "$cg_root"/etwtop-bench-$$-*; do
                [ -d "$g" ] || continue
                for ((i = 0; i < 50; i++)); do
                        rmdir "$g" 2>/dev/null && break
                        sleep 0.1
                done
        done
}
ncpu=$(nproc)
# busy_load SECONDS: top.sh's load, in the background for SECONDS: a busy loop a CPU and a pipe
# ping-pong (perf bench sched pipe), which switch contexts and wake each other all the time
busy_load() {
        for ((i = 0; i < ncpu; i++)); do
                (end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do :; done) &
        done
        timeout "$1" perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
}
# 4 kHz timer samples on every CPU, every context switch and every wake-up, all with call
# chains, a 1 s refresh. perf top gets -c 1 for the tracepoints (its -F would sample them at
# 4 kHz too, where CSwitch is every switch) and a 250 us period for cpu-clock. Both walk frame
# pointers (etwtop's default, auto, unwinds the samples' stacks from DWARF: bench/unwind.sh
# measures that against perf top --call-graph dwarf).
etwtop_cmd="$etwtop -d 1 --set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER --stackwalk Profile+CSwitch+ReadyThread --stackwalk-mode fp"
perf_top_cmd="perf top -g -d 1 -c 1 -e cpu-clock/period=250000/ -e sched:sched_switch -e sched:sched_waking"
# MODE=samples (top.sh, screen_threads.sh): the timer samples with their call chains alone
# (etwtop: PROC_THREAD+LOADER+PROFILE, stacks on Profile; perf top: the one cpu-clock event)
if [ "${MODE:-full}" = samples ]; then
        etwtop_cmd="$etwtop -d 1 --set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE --stackwalk Profile --stackwalk-mode fp"
        perf_top_cmd="perf top -g -d 1 --no-bpf-event -e cpu-clock/period=250000/"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# switch_gaps.sh: which context switches the kernel does not deliver as sched:sched_switch
# samples, per CPU, named by the thread that left the CPU: perf record -a of sched_switch with
# the context-switch side band (--switch-events) for SECONDS while a sleeper on every CPU makes
# it idle and wake, then every switch-in record (written in the incoming thread's context) whose
# switch no sched_switch sample announced on that CPU. On the VM of bench/README.md's "Item 2,
# seventh pass" the missing ones are the switches out of pid 1's threads (on every CPU) and out
# of the idle task of every CPU but 0; on a kernel that hides nothing the counts are 0.
# Usage: bench/switch_gaps.sh [SECONDS]   (default 5; needs root and perf)
set -u
secs=${1:-5}
die() { echo "switch_gaps.sh: $*" >&2; exit 1; }
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)
ls /proc/1/task >"$tmp/pid1.tids" 2>/dev/null || true

# a sleeper per CPU: each CPU idles and is woken 500 times a second
for ((c = 0; c < ncpu; c++)); do
        taskset -c $c bash -c "end=\$((SECONDS + $secs + 2)); while [ \$SECONDS -lt \$end ]; do sleep 0.002; done" &
done
perf record -q -o "$tmp/p.data" -a -e sched:sched_switch --switch-events -- sleep "$secs" \
        >/dev/null 2>&1 || die "perf record failed"
kill $(jobs -p) 2>/dev/null
perf script -i "$tmp/p.data" -F cpu,pid,tid,event,trace --show-switch-events 2>/dev/null |
        awk -v tids="$tmp/pid1.tids" '
BEGIN { while ((getline t < tids) > 0) pid1[t + 0] = 1 }
{
        if (!match($0, /\[[0-9]+\]/)) next
        cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0
        split($1, pt, "/"); tid = pt[2] + 0
        if ($0 ~ /sched:sched_switch:/) {
                match($0, /prev_pid=[0-9]+/); prev = substr($0, RSTART + 9, RLENGTH - 9) + 0
                match($0, /next_pid=[0-9]+/); next_ = substr($0, RSTART + 9, RLENGTH - 9) + 0
                tp[cpu]++
                if (prev == 0) from_idle[cpu]++
                if (next_ == 0) to_idle[cpu]++
                if (prev in pid1) from_pid1[cpu]++
                # the gaps seen before this sample are inside the sampled stretch: counted
                gap_idle[cpu] += p_idle[cpu]; gap_pid1[cpu] += p_pid1[cpu]
                gap_other[cpu] += p_other[cpu]
                p_idle[cpu] = p_pid1[cpu] = p_other[cpu] = 0
                cur[cpu] = next_; seen[cpu] = 1
                next
        }
        if ($0 !~ /PERF_RECORD_SWITCH_CPU_WIDE IN/ || !(cpu in seen)) next
        if (cur[cpu] != tid) {
                match($0, /pid\/tid: *-?[0-9]+\/-?[0-9]+/)
                s = substr($0, RSTART, RLENGTH); sub(/.*\//, "", s); prev = s + 0
                if (prev == 0) p_idle[cpu]++
                else if (prev in pid1) p_pid1[cpu]++
                else p_other[cpu]++
        }
        cur[cpu] = tid
}
END {
        printf "%-4s %10s %10s %10s %10s | %-30s\n", "cpu", "sched_sw", "to idle", "from idle",
               "from pid1", "switch-ins sched_switch missed"
        for (c = 0; c in seen; c++)
                printf "%-4d %10d %10d %10d %10d | idle %d, pid 1 threads %d, other %d\n", c,
                       tp[c], to_idle[c], from_idle[c], from_pid1[c], gap_idle[c], gap_pid1[c],
                       gap_other[c]
}'

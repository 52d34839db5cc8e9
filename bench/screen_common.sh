# SPDX-License-Identifier: MIT
# screen_common.sh: sourced by top.sh and rss.sh, which run the live screen and perf top side by
# side in tmux: the checks, the temporary directory and tmux server they share, and the one
# place that says what "the same settings" are. Before sourcing: name (for messages), build.
# After: etwtop, sock, tmp, ncpu, die, and the two command lines below.
etwtop=$(realpath "$build/src/etwtop")
die() { echo "$name: $*" >&2; exit 1; }
[ -x "$etwtop" ] || die "$etwtop not built"
command -v perf >/dev/null || die "perf not found (Debian: linux-perf)"
command -v tmux >/dev/null || die "tmux not found"
sock=etwtop-$name-$$
tmp=$(mktemp -d)
trap 'tmux -L $sock kill-server 2>/dev/null; kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
ncpu=$(nproc)
# 4 kHz timer samples on every CPU, every context switch and every wake-up, all with call
# chains, a 1 s refresh. perf top gets -c 1 for the tracepoints (its -F would sample them at
# 4 kHz too, where CSwitch is every switch) and a 250 us period for cpu-clock. Both walk frame
# pointers (etwtop's default, auto, unwinds the samples' stacks from DWARF: bench/unwind.sh
# measures that against perf top --call-graph dwarf).
etwtop_cmd="$etwtop -d 1 --set-prof-int 2500 --on PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER --stackwalk Profile+CSwitch+ReadyThread --stackwalk-mode fp"
perf_top_cmd="perf top -g -d 1 -c 1 -e cpu-clock/period=250000/ -e sched:sched_switch -e sched:sched_waking"

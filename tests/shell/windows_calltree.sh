#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# windows_calltree.sh: call trees of a Windows trace (issue 15, section 1). PerfView's x64 sample
# carries each sample's stack in parts: the kernel part at the sample, the user part when the
# thread returns to user mode, most of them as StackKeyUser references whose definitions come
# at the end (KeyDelete, KeyRundown). The replay joins them: a function's Total counts the
# samples with it anywhere on their joined stack. Pinned against counts made here, independently,
# from the stacks --dump prints (each sample's StackWalk events, matched by event_time), for
# functions named by the trace's CLR method events; and the interactive screen opens Main's
# callees.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
net=${ETWTOP_SAMPLES_UNPACKED:-}/net.4.5.2.x64.etl
[ -f "$net" ] || { echo "SKIP: the PerfView x64 sample is not unpacked ($net)"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
tmp=$(mktemp -d)
sock=etwtop-wincalltree-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT

"$ETWTOP" --dump "$net" >"$tmp/dump.txt" 2>&1
check "--dump reads the sample" [ $? = 0 ]
"$ETWTOP" --replay "$net" -b --top 100000 >"$tmp/replay.txt" 2>&1
check "--replay -b reads the sample" [ $? = 0 ]

# independent: Self and Total of the CLR method namespace.name over every process's timer
# samples, from --dump's text: a process's method events (load, rundown) name its range there
count() {
        awk -v ns="$1" -v name="$2" '
        function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3))
                for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                return v }
        function field(k,   i) { for (i = 6; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
        # first pass: the ranges (a rundown comes at the end, after the samples)
        NR == FNR {
                if ($5 ~ /^DotNETRuntime(Rundown)?\/Method(Load|DCStart|DCEnd)Verbose$/ && !($3 in lo) &&
                    $0 ~ "namespace=\"" ns "\" name=\"" name "\"") {
                        lo[$3] = hex(field("start")); hi[$3] = lo[$3] + hex(field("size")) }
                next }
        $5 == "PerfInfo/SampledProfile" && ($3 in lo) {
                a = hex(field("ip")); sample[$1] = $3
                if (a >= lo[$3] && a < hi[$3]) { self++; in_it[$1] = 1 }
                next }
        $5 == "StackWalk/Stack" {
                t = field("event_time")
                if (!(t in sample) || (t in in_it)) next
                p = sample[t]
                for (i = 7; i <= NF; i++)
                        if ($i ~ /^0x/) { a = hex($i); if (a >= lo[p] && a < hi[p]) { in_it[t] = 1; break } } }
        END { for (t in in_it) total++; printf "%d %d\n", self, total }' "$tmp/dump.txt" "$tmp/dump.txt"
}
# the replay's Self and Total of the row whose function starts with $1
row() {
        awk -v f="$1" '/^Hot functions \(Timer/ {t = 1; next} t && /^$/ {exit}
                t && index($0, f) {print $3, $4; exit}' "$tmp/replay.txt"
}
pid=$(awk '$5 == "Process/Start" && /image="Test.x64.exe"/ {sub("pid=", "", $6); print $6; exit}' "$tmp/dump.txt")
check "the sample's test program found (pid $pid)" [ -n "$pid" ]

main_dump=$(count Test.Program Main)
main_replay=$(row 'Test.Program.Main(')
check "Main: Self and Total as the dump's stacks count them (replay '$main_replay', dump '$main_dump')" \
        [ -n "$main_replay" -a "$main_replay" = "$main_dump" ]
read -r m_self m_total <<<"$main_replay"
check "Main: a call tree under it (Total $m_total > 50 x Self $m_self)" \
        [ "${m_total:-0}" -gt $((50 * ${m_self:-1})) ]
for f in "System.TimeZoneInfo TransitionTimeToDateTime" "System.DateTime GetDatePart" "System.DateTime get_Now"; do
        set -- $f
        d=$(count "$1" "$2")
        r=$(row "$1.$2(")
        check "$1.$2: Self and Total as the dump counts them (replay '$r', dump '$d')" \
                [ -n "$r" -a "$r" = "$d" ]
done
check "samples with joined stacks reported" grep -q '^Samples with stacks: [1-9]' "$tmp/replay.txt"

# interactive: Main's row opens onto its callees
if command -v tmux >/dev/null; then
        tm() { tmux -L "$sock" "$@"; }
        tm_new -d -s s -x 160 -y 40 "$ETWTOP --replay '$net'; sleep 30"
        . "$(dirname "$0")/../lib/tmux_screen.sh" # snap, wait_for, until_screen
        ok=
        # read to its end (the header says "loading" until then)
        for _ in $(seq 1 150); do
                snap
                grep -q 'ntoskrnl' "$tmp/screen" && ! grep -q '^etwtop - replay .*loading' "$tmp/screen" &&
                        { ok=1; break; }
                sleep 0.2
        done
        check "screen: the replay draws" [ -n "$ok" ]
        # (the keys are read in order: + opens the row the search went to)
        tm send-keys -t s / $(sed 's/./& /g' <<<"Program.Main") Enter
        tm send-keys -t s +
        check "screen: Main opens" wait_for ' - Test.Program.Main(' 10
        callees() { awk '/ - Test.Program.Main\(/ {t = 1; next} t' "$tmp/screen" | grep -q 'System\.\(DateTime\|TimeZoneInfo\)'; }
        check "screen: its callees under it (the TimeZoneInfo and DateTime code it calls)" \
                until_screen 10 callees
else
        skip "tmux not installed: the interactive call tree is not checked"
fi

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# events_cli.sh: the generic events table outside the screen: `--replay FILE -b` prints every
# event type with its count, and `--export csv-events` writes every event with its fields; both
# count what `--dump --totals` counts, type by type, on a user-mode provider's trace and on the
# PerfView sample; --from/--to narrow them as they narrow the other tables.
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES:?}" "${ETWTOP_SAMPLES_UNPACKED:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"

# per_name FILE: "count name" lines of a "count ... name (vN)" table, summed over versions
dump_counts() {
        awk '/^Totals per event type/ {t=1; next} t && /^ +[0-9]+ +[0-9]+  / {
                n=$1; $1=""; $2=""; sub(/^ +/, ""); sub(/ \(v[0-9]+\)$/, ""); c[$0]+=n}
                END {for (k in c) print c[k], k}' "$1" | sort
}
b_counts() {
        awk '/^Events by type/ {t=1; next} t && /^ +[0-9]+ +[0-9.]+%  / {
                n=$1; $1=""; $2=""; sub(/^ +/, ""); sub(/ \(v[0-9]+\)$/, ""); c[$0]+=n}
                END {for (k in c) print c[k], k}' "$1" | sort
}
# the event column of csv-events (no event name in these samples holds a comma or a quote)
csv_counts() {
        tr -d '\r' <"$1" | awk -F, 'NR > 1 {c[$5]++} END {for (k in c) print c[k], k}' | sort
}
b_total() { awk '/events in all$/ {n=$1} END {print n + 0}' "$1"; }

for f in "$ETWTOP_SAMPLES/krabsetw_powershell.etl" "$ETWTOP_SAMPLES_UNPACKED/net.4.5.2.x64.etl"; do
        name=$(basename "$f")
        if [ ! -f "$f" ]; then
                skip "$name not found"
                continue
        fi
        "$ETWTOP" --dump --totals "$f" >"$tmp/dump.txt" 2>"$tmp/err"
        check "$name: --dump --totals runs" [ -s "$tmp/dump.txt" ]
        dump_counts "$tmp/dump.txt" >"$tmp/dump.cnt"
        check "$name: the dump has types" [ -s "$tmp/dump.cnt" ]

        "$ETWTOP" --replay "$f" -b >"$tmp/b.txt" 2>"$tmp/err"
        check "$name: -b exits 0" [ $? -eq 0 ]
        check "$name: -b prints the events table" grep -q '^Events by type' "$tmp/b.txt"
        b_counts "$tmp/b.txt" >"$tmp/b.cnt"
        check "$name: -b's counts per type are --dump --totals's" cmp -s "$tmp/b.cnt" "$tmp/dump.cnt"
        check "$name: -b's total is the dump's" \
                [ "$(b_total "$tmp/b.txt")" = "$(awk '/events in all/ {print $1}' "$tmp/dump.txt")" ]

        rm -f "$tmp/ev.csv"
        "$ETWTOP" --replay "$f" --export csv-events -o "$tmp/ev.csv" 2>"$tmp/err"
        check "$name: csv-events exits 0 ($(cat "$tmp/err"))" [ $? -eq 0 ]
        check "$name: csv-events' header" \
                [ "$(head -1 "$tmp/ev.csv" | tr -d '\r')" = "time_s,cpu,pid,tid,event,fields" ]
        csv_counts "$tmp/ev.csv" >"$tmp/csv.cnt"
        check "$name: csv-events' rows per type are --dump --totals's" \
                cmp -s "$tmp/csv.cnt" "$tmp/dump.cnt"
done

# the fields: the logfile header's, as --dump prints them
f="$ETWTOP_SAMPLES/krabsetw_powershell.etl"
rm -f "$tmp/ev.csv"
"$ETWTOP" --replay "$f" --export csv-events -o "$tmp/ev.csv" 2>/dev/null
check "csv-events: the header event's fields" \
        grep -q '^0\.000000000,0,6268,2344,EventTrace/Header,logger=usermode_trace,file=' "$tmp/ev.csv"
check "csv-events: CRLF line ends" [ "$(head -1 "$tmp/ev.csv" | od -c | grep -c '\\r')" = 1 ]
# an existing file is not replaced without --force
"$ETWTOP" --replay "$f" --export csv-events -o "$tmp/ev.csv" 2>"$tmp/err"
check "csv-events: an existing file is kept" grep -q 'exists' "$tmp/err"

# --from/--to: fewer events, the same in -b and csv-events
u="$ETWTOP_SAMPLES_UNPACKED/net.4.5.2.x64.etl"
if [ -f "$u" ]; then
        "$ETWTOP" --replay "$u" -b --from 1 --to 2 >"$tmp/b.txt" 2>/dev/null
        rm -f "$tmp/ev.csv"
        "$ETWTOP" --replay "$u" --export csv-events --from 1 --to 2 -o "$tmp/ev.csv" 2>/dev/null
        n=$(b_total "$tmp/b.txt")
        check "--from/--to: fewer events ($n)" [ "$n" -gt 0 ] && [ "$n" -lt 179474 ]
        check "--from/--to: csv-events has -b's $n" [ "$(($(wc -l <"$tmp/ev.csv") - 1))" = "$n" ]
        # (the logfile header comes first whatever the range, as ProcessTrace gives it)
        check "--from/--to: every row in the range" \
                awk -F, 'NR > 1 && $5 != "EventTrace/Header" && ($1 < 1 || $1 >= 2) {bad = 1}
                        END {exit bad}' "$tmp/ev.csv"
fi

echo "events_cli: $nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# untrusted_paths.sh: root opens the paths a recorded program names only when they are regular
# files. Two programs are built here: one names its source in its DWARF, and the source is then
# a FIFO: --annotate lists the function's instructions, without source text, and returns (it
# hung on the FIFO's open); the other is stripped, with a .gnu_debuglink to a FIFO beside it:
# the replay returns, and with a real debug file there instead it names the program's function.
# Every run is bounded: a hang fails.
set -u
: "${ETWTOP:?}"
tmp=$(mktemp -d)
spin=
cleanup() {
        [ -n "$spin" ] && kill "$spin" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib/check.sh"
cc=$(command -v cc || command -v gcc || command -v clang)
if [ -z "$cc" ]; then
        skip "no C compiler to build the program whose DWARF names a FIFO"
elif ! timeout 60 "$ETWTOP" --record "$tmp/probe.etl" --duration 0.2 --on PROC_THREAD \
        >/dev/null 2>"$tmp/probe.err"; then
        skip "etwtop --record cannot run here: $(cat "$tmp/probe.err")"
else
        mkdir "$tmp/src"
        cat >"$tmp/src/fifo_spin.c" <<'C'
#include <stdlib.h>
#include <time.h>
volatile unsigned long fifo_sink;
__attribute__((noinline)) void fifo_spin(time_t end)
{
        while (time(NULL) < end)
                for (unsigned long i = 0; i < 100000; i++)
                        fifo_sink += i;
}
int main(int argc, char **argv)
{
        fifo_spin(time(NULL) + (argc > 1 ? atoi(argv[1]) : 3));
        return 0;
}
C
        "$cc" -g -O1 -fno-omit-frame-pointer -o "$tmp/fifo_spin" "$tmp/src/fifo_spin.c"
        check "the program builds" [ -x "$tmp/fifo_spin" ]
        rm "$tmp/src/fifo_spin.c"
        mkfifo "$tmp/src/fifo_spin.c"
        "$tmp/fifo_spin" 4 &
        spin=$!
        timeout 60 "$ETWTOP" --record "$tmp/rec.etl" --duration 2 >/dev/null 2>"$tmp/rec.err"
        check "recorded ($(head -c 200 "$tmp/rec.err"))" [ $? = 0 ]
        wait "$spin"
        spin=
        timeout 60 "$ETWTOP" --replay "$tmp/rec.etl" -b --annotate fifo_spin >"$tmp/ann.txt" 2>"$tmp/ann.err"
        rc=$?
        on_fail() { head -c 2000 "$tmp/ann.txt" "$tmp/ann.err"; }
        check "--annotate with its source a FIFO: returns (rc $rc, 124 is a hang)" [ $rc = 0 ]
        check "...the function annotated" grep -q '^Annotate fifo_spin in fifo_spin (' "$tmp/ann.txt"
        check "...its instructions listed" bash -c "awk 'substr(\$0, 31, 3) == \":  \"' '$tmp/ann.txt' | grep -q ."
        check "...the FIFO still a FIFO" [ -p "$tmp/src/fifo_spin.c" ]
        unset -f on_fail

        # a stripped program whose debug link names a FIFO beside it
        mkdir "$tmp/dl"
        cp "$tmp/fifo_spin" "$tmp/dl/full"
        if command -v objcopy >/dev/null && command -v strip >/dev/null &&
                objcopy --only-keep-debug "$tmp/dl/full" "$tmp/dl/dl_spin.debug" &&
                strip --strip-all -o "$tmp/dl/dl_spin" "$tmp/dl/full" &&
                objcopy --add-gnu-debuglink="$tmp/dl/dl_spin.debug" "$tmp/dl/dl_spin"; then
                mv "$tmp/dl/dl_spin.debug" "$tmp/dl/real.debug"
                mkfifo "$tmp/dl/dl_spin.debug"
                "$tmp/dl/dl_spin" 4 &
                spin=$!
                timeout 60 "$ETWTOP" --record "$tmp/dl.etl" --duration 2 >/dev/null 2>"$tmp/rec.err"
                check "dl: recorded ($(head -c 200 "$tmp/rec.err"))" [ $? = 0 ]
                wait "$spin"
                spin=
                timeout 60 "$ETWTOP" --replay "$tmp/dl.etl" -b --top 100 >"$tmp/dl.txt" 2>&1
                rc=$?
                check "a debug link naming a FIFO: the replay returns (rc $rc, 124 is a hang)" [ $rc = 0 ]
                check "...the program's samples counted" grep -q ' dl_spin ' "$tmp/dl.txt"
                check "...the FIFO still a FIFO" [ -p "$tmp/dl/dl_spin.debug" ]
                rm "$tmp/dl/dl_spin.debug"
                mv "$tmp/dl/real.debug" "$tmp/dl/dl_spin.debug"
                timeout 60 "$ETWTOP" --replay "$tmp/dl.etl" -b --top 100 >"$tmp/dl2.txt" 2>&1
                check "a real debug file there: the function named from it" \
                        grep -Eq ' dl_spin +fifo_spin$' "$tmp/dl2.txt"
        else
                skip "objcopy and strip are needed for the debug link case"
        fi
fi
echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]

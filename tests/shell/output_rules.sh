#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# output_rules.sh: etwtop runs as root, and --force replaces only a regular file of the caller's:
#   a FIFO, a device node, a symbolic link (to a device, as /dev/stdout is, or to a file) or
#   another user's file given to --export, --merge or --record is refused with a message and
#   left as it was, and nothing blocks on a FIFO. `-o -` writes every export format and --merge
#   to standard output, the same bytes as a file.
set -u
: "${ETWTOP:?}" "${ETL_FIXTURE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"
cd "$tmp" || exit 1 # "-o -" must write no file named -: none is made where this runs

# run_bounded OUT ARGS...: etwtop ARGS with a 60 s bound (a hang on a FIFO fails, rc 124)
run_bounded() {
        local out=$1
        shift
        timeout 60 "$ETWTOP" "$@" >"$out" 2>"$tmp/err"
}
# same_node PATH LSTAT-BEFORE: PATH is still what it was (type, inode)
node() { stat -c '%F %i' "$1"; }

"$ETL_FIXTURE" "$tmp/fix.etl" >/dev/null
check "fixture written" [ -s "$tmp/fix.etl" ]

mkfifo "$tmp/fifo"
echo target >"$tmp/target"
ln -s "$tmp/target" "$tmp/link"
ln -s /dev/null "$tmp/stdout"
nodes=(fifo link stdout)
if mknod "$tmp/null" c 1 3 2>/dev/null; then
        nodes+=(null)
else
        skip "mknod needs root: no device node of our own to refuse"
fi
if [ "$(id -u)" = 0 ] && echo theirs >"$tmp/theirs" && chown 65534 "$tmp/theirs"; then
        nodes+=(theirs)
else
        skip "only root can give a file to another user"
fi

for n in "${nodes[@]}"; do
        before=$(node "$tmp/$n")
        run_bounded "$tmp/out" --replay "$tmp/fix.etl" --export folded -o "$tmp/$n" --force
        rc=$?
        check "--export -o $n --force: refused, no hang (rc $rc)" [ $rc != 0 ] && [ $rc != 124 ]
        check "--export -o $n --force: the message names it" grep -q "$tmp/$n.*not replaced" "$tmp/err"
        check "--export -o $n --force: left as it was" [ "$(node "$tmp/$n")" = "$before" ]
        run_bounded "$tmp/out" --merge -o "$tmp/$n" --force "$tmp/fix.etl"
        rc=$?
        check "--merge -o $n --force: refused, no hang (rc $rc)" [ $rc != 0 ] && [ $rc != 124 ]
        check "--merge -o $n --force: left as it was" [ "$(node "$tmp/$n")" = "$before" ]
        run_bounded "$tmp/out" --record "$tmp/$n" --force --duration 0.2 --on PROC_THREAD
        rc=$?
        check "--record $n --force: refused, no hang (rc $rc)" [ $rc != 0 ] && [ $rc != 124 ]
        check "--record $n --force: left as it was" [ "$(node "$tmp/$n")" = "$before" ]
done
# read side: a FIFO or a device given as the trace is not waited on (an open of a FIFO with no
# writer never returns), whichever verb reads it
for n in fifo null; do
        [ -e "$tmp/$n" ] || continue
        for verb in --dump --replay --merge; do
                case $verb in
                --dump) run_bounded "$tmp/out" --dump "$tmp/$n" ;;
                --replay) run_bounded "$tmp/out" --replay "$tmp/$n" -b -n 1 ;;
                --merge) run_bounded "$tmp/out" --merge -o "$tmp/m-$n.etl" "$tmp/$n" ;;
                esac
                rc=$?
                check "$verb $n: refused, no hang (rc $rc)" [ $rc != 0 ] && [ $rc != 124 ]
                check "$verb $n: says it is not a regular file" grep -q "$tmp/$n: not a regular file" "$tmp/err"
        done
done
check "the symlinks' target kept" [ "$(cat "$tmp/target")" = target ]
[ -e "$tmp/theirs" ] && check "the other user's file kept" [ "$(cat "$tmp/theirs")" = theirs ]

# --force on a regular file of ours replaces it
echo old >"$tmp/ours"
run_bounded "$tmp/out" --replay "$tmp/fix.etl" --export csv -o "$tmp/ours" --force
check "--export --force: our regular file replaced" grep -q '^Source,' "$tmp/ours"
check "--export --force: no temporary left" [ "$(ls -A "$tmp" | grep -c '^\.ours\.')" = 0 ]

# -o -: every format to standard output, the same bytes as the file
for f in pprof folded speedscope csv csv-modules csv-lines csv-switches csv-branches; do
        run_bounded "$tmp/$f.file" --replay "$tmp/fix.etl" --export "$f" -o "$tmp/$f.out"
        run_bounded "$tmp/$f.stdout" --replay "$tmp/fix.etl" --export "$f" -o -
        check "--export $f -o -: exits 0" [ $? = 0 ]
        check "--export $f -o -: the file's bytes on stdout" cmp -s "$tmp/$f.out" "$tmp/$f.stdout"
        check "--export $f -o -: no file named -" [ ! -e ./- ]
done
run_bounded "$tmp/merged.stdout" --merge -o - "$tmp/fix.etl"
check "--merge -o -: exits 0" [ $? = 0 ]
"$ETWTOP" --dump --totals "$tmp/merged.stdout" >"$tmp/merged.dump" 2>&1
check "--merge -o -: stdout is a trace that reads" [ $? = 0 ]
check "--merge -o -: no file named -" [ ! -e ./- ]

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]

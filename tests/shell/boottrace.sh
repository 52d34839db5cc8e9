#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# boottrace.sh: boot-time tracing (issue 14) without a reboot: --boottrace writes the config,
# the unit and the link that enables it (in a private configuration directory); systemd-analyze
# verify passes on the unit; its ExecStart, run as the unit runs it (its environment, from /,
# its umask), starts the configured session in the host; --stop GlobalLogger -d ends it and the
# file replays; the next boot keeps the last boot's file; a wrong config is named by line;
# --boottrace off removes all three. A binary another user can change (it or a directory above
# it) is refused, and --boottrace alone installs nothing.
set -u
: "${ETWTOP:?}"
. "$(dirname "$0")/../lib/check.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: the boot session is root's"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
tmp=$(mktemp -d)
export ETWTOP_SYSCONF_DIR=$tmp/etc ETWTOP_RUNTIME_DIR=$tmp/rt ETWTOP_HOST_GRACE_MS=300
unset ETWTOP_NO_HOST
trap '"$ETWTOP" --stop GlobalLogger >/dev/null 2>&1; rm -rf "$tmp"' EXIT
on_fail() { echo "--- last output:"; cat "$tmp/out" "$tmp/err" 2>/dev/null | head -30; }
run() { "$ETWTOP" "$@" >"$tmp/out" 2>"$tmp/err"; }
conf=$tmp/etc/etwtop/boottrace.conf
unit=$tmp/etc/systemd/system/etwtop-boottrace.service
link=$tmp/etc/systemd/system/sysinit.target.wants/etwtop-boottrace.service

# The unit runs etwtop's binary as root at every boot: only a binary that root alone can change
# (it, and every directory above it) is installed. The build tree's may sit anywhere: a copy in
# a directory of root's is the one installed.
mkdir -p "$tmp/bin" "$tmp/gw"
chmod 0755 "$tmp/bin"
cp "$ETWTOP" "$tmp/bin/etwtop"
chmod 0755 "$tmp/bin/etwtop"
nothing_written() { [ ! -e "$conf" ] && [ ! -e "$unit" ] && [ ! -L "$link" ]; }
cp "$tmp/bin/etwtop" "$tmp/bin/theirs"
chown 65534 "$tmp/bin/theirs"
"$tmp/bin/theirs" --boottrace -f "$tmp/log/boot.etl" >"$tmp/out" 2>"$tmp/err"
check "--boottrace from a binary another user owns: refused" [ $? != 0 ]
check "...the message names it" grep -q "$tmp/bin/theirs belongs to a user other than root" "$tmp/err"
check "...nothing written" nothing_written
cp "$tmp/bin/etwtop" "$tmp/bin/open"
chmod 0757 "$tmp/bin/open"
"$tmp/bin/open" --boottrace -f "$tmp/log/boot.etl" >"$tmp/out" 2>"$tmp/err"
check "--boottrace from a binary others can write: refused" grep -q "$tmp/bin/open is writable by users other than root" "$tmp/err"
check "...nothing written" nothing_written
cp "$tmp/bin/etwtop" "$tmp/gw/etwtop"
chmod 0775 "$tmp/gw"
"$tmp/gw/etwtop" --boottrace -f "$tmp/log/boot.etl" >"$tmp/out" 2>"$tmp/err"
check "--boottrace from a directory its group can write: refused" grep -q "$tmp/gw is writable by users other than root" "$tmp/err"
check "...nothing written" nothing_written
ETWTOP=$tmp/bin/etwtop

run --boottrace
check "--boottrace alone: refused (it would install a root unit unasked)" [ $? = 2 ]
check "...says what it needs" grep -q 'give -f FILE' "$tmp/err"
check "...nothing written" nothing_written
run --help
check "--help lists --boottrace" grep -q -- '--boottrace -f OUT.etl' "$tmp/out"

run --boottrace --on PROC_THREAD+LOADER+NO_SUCH
rc=$?
check "--boottrace with a flag xperf does not know: refused, named" \
        bash -c "[ $rc = 2 ] && grep -q NO_SUCH '$tmp/err'"
check "...and nothing written" [ ! -e "$conf" -a ! -e "$unit" ]
run --boottrace -f boot.etl
check "--boottrace -f with a relative path: refused" grep -q 'absolute path' "$tmp/err"

run --boottrace -f "$tmp/log/boot.etl" --on PROC_THREAD+LOADER+PROFILE+CSWITCH --stackwalk Profile+CSwitch --set-prof-int 5000 \
        --stackwalk-mode dwarf,4096 --min-buffers 1024
check "--boottrace: exit 0" [ $? = 0 ]
check "--boottrace: says what runs as root and how to undo it" \
        bash -c "grep -q 'systemd runs $tmp/bin/etwtop --boottrace-start $conf as root' '$tmp/out' && grep -q 'to undo: etwtop --boottrace off' '$tmp/out'"
check "--boottrace: the config, 0600" [ "$(stat -c %a "$conf" 2>/dev/null)" = 600 ]
check "--boottrace: the unit" [ -f "$unit" ]
check "--boottrace: enabled (the early-boot target wants it)" [ "$(readlink "$link")" = "$unit" ]
check "--boottrace: the config holds the settings" \
        bash -c "grep -qx 'on=PROC_THREAD+LOADER+PROFILE+CSWITCH' '$conf' && grep -qx 'stackwalk=Profile+CSwitch' '$conf' && grep -qx 'set-prof-int=5000' '$conf' && grep -qx 'stackwalk-mode=dwarf,4096' '$conf' && grep -qx 'file=$tmp/log/boot.etl' '$conf'"
check "--boottrace: the boot file has a maximum size by default (--max-file-size)" \
        grep -qx 'max-file-size=1024' "$conf"
check "--boottrace: the config holds --min-buffers" grep -qx 'min-buffers=1024' "$conf"
check "the unit starts early: DefaultDependencies=no, before sysinit.target" \
        bash -c "grep -qx 'DefaultDependencies=no' '$unit' && grep -q '^Before=sysinit.target' '$unit'"
if command -v systemd-analyze >/dev/null; then
        systemd-analyze verify "$unit" >"$tmp/verify.txt" 2>&1
        rc=$?
        check "systemd-analyze verify passes on the unit ($(head -c 300 "$tmp/verify.txt"))" [ $rc = 0 ]
else
        skip "systemd-analyze not installed: the unit is not verified"
fi

# The unit's start, without a reboot: its ExecStart with its Environment (the runtime directory
# kept private to this test), from /, with its UMask
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
env_line=$(sed -n 's/^Environment=//p' "$unit")
check "the unit names a runtime directory for the host" [ "$env_line" = "ETWTOP_RUNTIME_DIR=/run/etwtop" ]
( cd / && umask 0077 && $exec_start ) >"$tmp/out" 2>"$tmp/err"
check "ExecStart: exit 0 and returns (oneshot)" [ $? = 0 ]
( end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do :; done ) &
spin=$!
run --loggers
check "the boot session runs in the host" grep -q '^"GlobalLogger" (handle 0x[0-9a-f]*): real-time file$' "$tmp/out"
check "...with the configured flags" grep -q '^  flags: *PROC_THREAD+LOADER+PROFILE+CSWITCH$' "$tmp/out"
check "...stacks" grep -q '^  stackwalk: *Profile+CSwitch$' "$tmp/out"
check "...interval" grep -q '^  interval: *5000 (100 ns)$' "$tmp/out"
check "...user stacks unwound from 4 KiB copies" \
        grep -q '^  user stacks: dwarf, 4096-byte stack copies$' "$tmp/out"
check "...to its file" grep -q "^  file: *$tmp/log/boot.etl\$" "$tmp/out"
check "...1024 buffers at least (--min-buffers)" \
        bash -c "awk '/^\"GlobalLogger\"/ {s = 1} s && \$1 == \"buffers:\" {print \$2; exit}' '$tmp/out' | awk '{exit \$1 >= 1024 ? 0 : 1}'"
check "the log directory is private (0700)" [ "$(stat -c %a "$tmp/log")" = 700 ]
wait "$spin"
run --stop GlobalLogger -d "$tmp/boot-d.etl"
check "--stop GlobalLogger -d: exit 0" [ $? = 0 ]
"$ETWTOP" --dump "$tmp/log/boot.etl" >"$tmp/boot.txt" 2>&1
check "the boot file reads, finalized" bash -c "! grep -q '^End time: *0$' '$tmp/boot.txt' && grep -q '^Damaged buffers: *0$' '$tmp/boot.txt'"
check "the boot file: its logger name" grep -q '^Logger name: *GlobalLogger' "$tmp/boot.txt"
check "the boot file: samples with stacks, switches" \
        bash -c "grep -q PerfInfo/SampledProfile '$tmp/boot.txt' && grep -q StackWalk/Stack '$tmp/boot.txt' && grep -q Thread/CSwitch '$tmp/boot.txt'"
"$ETWTOP" --replay "$tmp/boot-d.etl" -b --top 5 >"$tmp/replay.txt" 2>&1
check "-d's file replays" grep -q 'Hot functions' "$tmp/replay.txt"

# The next boot keeps the last one's file
( cd / && umask 0077 && $exec_start ) >"$tmp/out" 2>"$tmp/err"
check "a second boot's start: exit 0" [ $? = 0 ]
run --stop GlobalLogger
check "the last boot's file kept beside the new one" \
        bash -c "ls '$tmp/log' | grep -q '^boot\.etl\.[0-9]\{8\}-[0-9]\{6\}$' && [ -f '$tmp/log/boot.etl' ]"
kept=$(ls "$tmp/log" | grep '^boot\.etl\.' | head -1)
"$ETWTOP" --dump --totals "$tmp/log/$kept" >"$tmp/kept.txt" 2>&1
check "the kept file still reads" [ $? = 0 ]
"$ETWTOP" --dump --totals "$tmp/log/boot.etl" >"$tmp/new.txt" 2>&1
check "the kept file is the first boot's: the same start time" \
        [ "$(grep '^Start time:' "$tmp/kept.txt")" = "$(grep '^Start time:' "$tmp/boot.txt")" ]
check "the new file is the second boot's: a later start" \
        [ "$(grep '^Start time:' "$tmp/new.txt")" != "$(grep '^Start time:' "$tmp/boot.txt")" ]

# A config the boot cannot take: the line named, no session started
cp "$conf" "$tmp/bad.conf"
echo "stackwalk-typo=Profile" >>"$tmp/bad.conf"
run --boottrace-start "$tmp/bad.conf"
check "a wrong key: exit 1, the line named" \
        bash -c "[ $? = 1 ] && grep -q 'bad.conf:[0-9]*: unknown key \"stackwalk-typo\"' '$tmp/err'"
run --loggers
check "...and no session started" grep -q '^0 sessions$' "$tmp/out"

run --boottrace off
check "--boottrace off: exit 0" [ $? = 0 ]
check "--boottrace off: config, unit and link removed" [ ! -e "$conf" -a ! -e "$unit" -a ! -L "$link" ]
run --boottrace off
check "--boottrace off again: says nothing was configured" grep -q 'no boot trace was configured' "$tmp/out"

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" = 0 ]

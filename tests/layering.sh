#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# layering.sh: the arrows of DESIGN.md that include paths alone cannot enforce: only ui/ includes
# curses, the model makes no system calls and draws nothing, backend/ and symbols/ include
# nothing of the other folders.
set -u
cd "$(dirname "$0")/.."
nr_fail=0
nr_pass=0
fail() { echo "FAIL: $*" >&2; nr_fail=$((nr_fail + 1)); }

hits=$(grep -rlE '#include *[<"](n?curses|ncursesw/)' --include='*.[ch]' backend symbols src tests bench 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "curses included outside ui/: $hits"

# (model_util.h's madvise is the one exception: a placement hint for its big tables, no I/O)
hits=$(grep -rnE '#include *<(unistd|fcntl|poll|sys/[a-z]+)\.h>|\b(printf|fprintf|puts)\(' --include='*.[ch]' src/model 2>/dev/null |
        grep -v '^src/model/model_util.h:[0-9]*:#include <sys/mman.h>$')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "src/model makes system calls or prints: $hits"

hits=$(grep -rnE '#include *"(model|ui|symbols)/' --include='*.[ch]' backend 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend includes another folder: $hits"

hits=$(grep -rnE '#include *"(model|ui|etw|kevent|etl_)' --include='*.[ch]' symbols 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "symbols includes another folder: $hits"

hits=$(grep -rnE '\b(printf|fprintf|puts|perror)\(' --include='*.c' backend symbols 2>/dev/null |
        grep -v 'snprintf\|vsnprintf')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend or symbols print: $hits"

echo "$nr_pass passed, $nr_fail failed"
[ "$nr_fail" = 0 ]

# SPDX-License-Identifier: MIT
# check.sh: sourced by the shell tests: their pass/fail/skip counts and the check that keeps
# them. A test may define on_fail (run after a failed check's message, to stderr) to show more.
nr_pass=0 nr_fail=0 nr_skip=0
# check DESCRIPTION COMMAND...: counts COMMAND's outcome; says FAIL: DESCRIPTION when it fails
check() {
        local what=$1
        shift
        if "$@"; then
                nr_pass=$((nr_pass + 1))
        else
                nr_fail=$((nr_fail + 1))
                echo "FAIL: $what" >&2
                if declare -F on_fail >/dev/null; then on_fail >&2; fi
        fi
}
skip() {
        nr_skip=$((nr_skip + 1))
        echo "SKIP: $*" >&2
}

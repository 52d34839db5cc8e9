# SPDX-License-Identifier: MIT
# tmux_screen.sh: sourced by the tests that drive the screen in tmux (screen_tmux.sh,
# attach_tmux.sh): reading the pane. Before sourcing: tm (tmux on the test's own socket) and
# tmp. The session is "s"; the screen's text goes to $tmp/screen.

# the screen once it holds still: a capture can fall in the middle of a frame being drawn (a
# line inserted and not yet written), so two captures 0.1 s apart must agree
# (snap -e: with the attributes' escapes)
snap() {
        local i
        tm capture-pane -t s -p "$@" >"$tmp/screen"
        for ((i = 0; i < 20; i++)); do
                sleep 0.1
                tm capture-pane -t s -p "$@" >"$tmp/screen.next"
                cmp -s "$tmp/screen" "$tmp/screen.next" && return 0
                mv "$tmp/screen.next" "$tmp/screen"
        done
}
has() { grep -q -- "$1" "$tmp/screen"; }
# waits up to $2 seconds for text $1 on the screen
wait_for() {
        local i
        for ((i = 0; i < ${2:-10} * 5; i++)); do
                snap
                has "$1" && return 0
                sleep 0.2
        done
        return 1
}
# waits up to $2 seconds for text $1 to be gone from the screen
wait_gone() {
        local i
        for ((i = 0; i < ${2:-10} * 5; i++)); do
                snap
                has "$1" || return 0
                sleep 0.2
        done
        return 1
}

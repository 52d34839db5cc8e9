# SPDX-License-Identifier: MIT
# tmux_screen.sh: sourced by the tests that drive the screen in tmux (screen_tmux.sh, lost_tmux.sh,
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
# The waits below are bounded by the clock: $2 seconds times SCREEN_WAIT_SCALE (3: an etwtop
# built with the sanitizers answers a key in seconds on a loaded machine, tests/under_load.sh);
# they return as soon as the screen shows what they wait for.
screen_scaled() { echo $((${1%.*} * ${SCREEN_WAIT_SCALE:-3})); }
screen_deadline() { echo $((SECONDS + $(screen_scaled "$1") + 1)); }
# whether the screen's pane still runs its command (tm_new keeps a pane whose command ended)
pane_alive() { [ "$(tm display-message -p -t s '#{pane_dead}' 2>/dev/null)" = 0 ]; }
# whether the screen's command has ended (or its session is gone): a wait then fails at once
# rather than looking for the rest of its bound (a screen that ended early made each wait after
# it take its whole bound: a test tens of minutes long, failing only at the end); said once,
# with how it ended and the pane's last lines
screen_gone() {
        pane_alive && return 1
        if [ -z "${screen_gone_said-}" ]; then
                local how
                how=$(tm display-message -p -t s \
                        'exit status #{pane_dead_status}, signal #{pane_dead_signal}' 2>&1)
                echo "the screen's command has ended ($how); its pane's last lines:" >&2
                tm capture-pane -p -t s -S -20 2>&1 | grep -v '^$' | tail -n 12 >&2
                screen_gone_said=1
        fi
        return 0
}
# waits for text $1 on the screen (bound: $2 seconds, scaled): one capture a look, and the
# screen held still (snap) once a capture shows it, where the checks after it read the rest;
# where the held screen no longer shows it (a status message goes after 5 s, and holding a
# screen that redraws every 0.25 s still can take longer than that on a loaded machine), the
# capture that showed it is kept
wait_for() {
        local end
        end=$(screen_deadline "${2:-10}")
        while :; do
                tm capture-pane -t s -p >"$tmp/screen"
                if has "$1"; then
                        cp "$tmp/screen" "$tmp/screen.seen"
                        snap
                        has "$1" || mv "$tmp/screen.seen" "$tmp/screen"
                        return 0
                fi
                [ "$SECONDS" -ge "$end" ] && return 1
                screen_gone && return 1
                sleep 0.1
        done
}
# waits for text $1 to be gone from the screen (bound: $2 seconds, scaled); as wait_for
wait_gone() {
        local end
        end=$(screen_deadline "${2:-10}")
        while :; do
                tm capture-pane -t s -p >"$tmp/screen"
                if ! has "$1"; then
                        snap
                        has "$1" || return 0
                fi
                [ "$SECONDS" -ge "$end" ] && return 1
                sleep 0.1
        done
}
# until_screen SECONDS COMMAND...: snaps the screen until COMMAND (run in this shell, reading
# $tmp/screen) succeeds; 1 when SECONDS (scaled) pass first
until_screen() {
        local end
        end=$(screen_deadline "$1")
        shift
        while :; do
                snap
                "$@" && return 0
                [ "$SECONDS" -ge "$end" ] && return 1
                screen_gone && return 1
                sleep 0.2
        done
}

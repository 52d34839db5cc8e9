/* SPDX-License-Identifier: MIT */
/* app_tick.c: owns the live view's clocks on the model: the refresh tick (the rates, the rows,
   the aggregation step) and the caps' upkeep between refreshes (app_upkeep). */
#include "app_int.h"

#include "model/profile.h"
#include "symbols/symbols.h"

/* The refresh tick: rates, then the rows (unless paused), then the model's aggregation step. */
void app_tick(struct app *a, int64_t now)
{
        uint64_t n = profile_trace(a->profile)->nr_events;
        /* over a second at least: the session delivers its buffers once a second (FlushTimer),
           so a faster refresh would read 0 every other frame */
        double secs = (double)(now - a->rate_since_ns) / 1e9;
        if (secs >= 0.95) {
                a->events_per_s = (double)(n - a->nr_events_prev) / secs;
                a->nr_events_prev = n;
                a->rate_since_ns = now;
        }
        if (a->st.is_paused)
                return;
        /* a replay's rows final once no name they asked for is still loading; the store's
           generation before the build: a load that ends during it is news (one build more) */
        struct sym_store *store = profile_store(a->profile);
        uint64_t generation = sym_store_generation(store);
        app_build_tables(a);
        if (a->st.is_live) {
                profile_refresh(a->profile);
                a->upkeep_ns = now;
        } else {
                a->naming_generation = generation;
                a->is_naming = !sym_store_is_settled(store);
        }
}

void app_upkeep(struct app *a, int64_t now)
{
        if (!a->st.is_live)
                return;
        int64_t since = now - a->upkeep_ns;
        if (since < PROFILE_UPKEEP_NS &&
            (since < PROFILE_UPKEEP_CROWDED_NS || !profile_is_crowded(a->profile)))
                return;
        profile_upkeep(a->profile);
        a->upkeep_ns = now;
}

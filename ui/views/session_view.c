/* SPDX-License-Identifier: MIT */
/* session_view.c: owns the session panel: a row per setting of the running session (group
   masks, stack-walk hooks and mode, the timer interval, the PMC source, LBR and its filters),
   marked as
   the session reports them; Enter edits a copy for the loop to apply. */
#include "ui/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "util/xalloc.h"

enum setting_kind { SET_FLAG, SET_HOOK, SET_WALK, SET_INTERVAL, SET_PMC, SET_LBR };

struct setting {
        enum setting_kind kind;
        const char *name;
        const char *help;
        uint32_t value; /* SET_FLAG EnableFlags bits; SET_HOOK hook id; SET_WALK
                           ETWTOP_STACKWALK_*; SET_INTERVAL 100 ns units; SET_PMC
                           KPROFILE_SOURCE; SET_LBR filter bit (0: LBR itself) */
};

/* Kernel flags only: the session derives the groups they imply (ControlTrace(UPDATE)). */
static const struct setting settings[] = {
        {SET_FLAG, "PROC_THREAD", "process and thread start and end",
         EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD},
        {SET_FLAG, "LOADER", "image loads (the symbols need them)", EVENT_TRACE_FLAG_IMAGE_LOAD},
        {SET_FLAG, "PROFILE", "timer samples", EVENT_TRACE_FLAG_PROFILE},
        {SET_FLAG, "CSWITCH", "context switches", EVENT_TRACE_FLAG_CSWITCH},
        {SET_FLAG, "DISPATCHER", "ready-thread (wake-up) events", EVENT_TRACE_FLAG_DISPATCHER},
        {SET_HOOK, "stack: Profile", "call stacks on timer samples",
         PERFINFO_LOG_TYPE_SAMPLED_PROFILE},
        {SET_HOOK, "stack: CSwitch", "call stacks on context switches", WMI_LOG_TYPE_CONTEXT_SWAP},
        {SET_HOOK, "stack: ReadyThread", "call stacks on wake-ups", WMI_LOG_TYPE_READY_THREAD},
        {SET_HOOK, "stack: PmcInterrupt", "call stacks on PMC samples",
         PERFINFO_LOG_TYPE_PMC_INTERRUPT},
        {SET_WALK, "user stacks: frame pointers",
         "the kernel follows rbp (broken where code has none)", ETWTOP_STACKWALK_FP},
        {SET_WALK, "user stacks: DWARF",
         "every stack unwound from a stack copy (.eh_frame), switches' too",
         ETWTOP_STACKWALK_DWARF},
        {SET_WALK, "user stacks: auto",
         "samples' stacks through code without frame pointers: DWARF", ETWTOP_STACKWALK_AUTO},
        {SET_INTERVAL, "interval 0.125 ms", "8 kHz timer sampling", 1250},
        {SET_INTERVAL, "interval 0.25 ms", "4 kHz timer sampling", 2500},
        {SET_INTERVAL, "interval 1 ms", "1 kHz timer sampling", 10000},
        {SET_INTERVAL, "interval 10 ms", "100 Hz timer sampling", 100000},
        {SET_PMC, "PMC: BranchMispredictions", "sample branch mispredictions", 11},
        {SET_PMC, "PMC: CacheMisses", "sample cache misses", 10},
        {SET_LBR, "LBR on Profile", "last branch records on timer samples", 0},
        {SET_LBR, "LBR filter: KERNEL", "leave out kernel branches", EVNTRACE_LBR_FILTER_KERNEL},
        {SET_LBR, "LBR filter: USER", "leave out user branches", EVNTRACE_LBR_FILTER_USER},
        {SET_LBR, "LBR filter: JCC", "leave out conditional jumps", EVNTRACE_LBR_FILTER_JCC},
        {SET_LBR, "LBR filter: NEAR_REL_CALL", "leave out relative calls",
         EVNTRACE_LBR_FILTER_NEAR_REL_CALL},
        {SET_LBR, "LBR filter: NEAR_RET", "leave out returns", EVNTRACE_LBR_FILTER_NEAR_RET},
};
#define NR_SETTINGS (sizeof(settings) / sizeof(settings[0]))

enum { COL_ON, COL_SETTING, COL_WHAT, NR_COLS };

static const struct ui_column cols[NR_COLS] = {
        {"On", UI_COL_TEXT, 4, 0},
        {"Setting", UI_COL_TEXT, 28, 0},
        {"What it does, or why it is unavailable", UI_COL_TEXT, 0, 0},
};

struct session_view {
        struct ui_view view;
        bool is_live;
        struct etw_machine_caps caps;
        struct panel_values now;  /* as the session reports them */
        struct panel_values want; /* the edited copy, while pending */
        const struct setting *pending;
};

static struct session_view *of(struct ui_view *v)
{
        return ui_view_of(v, struct session_view);
}

static bool has_hook(const struct panel_values *pv, uint16_t hook)
{
        for (uint32_t i = 0; i < pv->nr_hooks; i++)
                if (pv->hooks[i] == hook)
                        return true;
        return false;
}

static bool is_on(const struct panel_values *pv, const struct setting *s)
{
        switch (s->kind) {
        case SET_FLAG: return (pv->masks[0] & s->value) == s->value;
        case SET_HOOK: return has_hook(pv, (uint16_t)s->value);
        case SET_WALK: return pv->stack_walk == s->value;
        case SET_INTERVAL: return pv->interval_100ns == s->value;
        case SET_PMC: /* sampled: the source chosen and its group on */
                return pv->pmc_source == s->value &&
                       (pv->masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] &
                        PERF_GET_MASK_GROUP(PERF_PMC_PROFILE));
        case SET_LBR: return s->value ? (pv->lbr_filters & s->value) != 0 : pv->is_lbr_on;
        }
        return false;
}

/* Why a setting cannot be used here, or NULL. The session still answers when asked. */
static const char *why_not(const struct session_view *sv, const struct setting *s)
{
        if (!sv->is_live)
                return "a recording: its settings are fixed";
        if (s->kind == SET_LBR && !sv->caps.has_lbr)
                return sv->caps.why_no_lbr[0] ? sv->caps.why_no_lbr : "no LBR on this machine";
        if ((s->kind == SET_PMC ||
             (s->kind == SET_HOOK && s->value == PERFINFO_LOG_TYPE_PMC_INTERRUPT)) &&
            !sv->caps.has_pmu)
                return sv->caps.why_no_pmu[0] ? sv->caps.why_no_pmu : "no hardware PMU";
        return NULL;
}

/* The setting turned on or off in a copy of the session's values. */
static void toggle(struct panel_values *pv, const struct setting *s)
{
        bool is_on_next = !is_on(pv, s);
        switch (s->kind) {
        case SET_FLAG:
                pv->masks[0] = is_on_next ? pv->masks[0] | s->value : pv->masks[0] & ~s->value;
                break;
        case SET_HOOK:
                if (!is_on_next) {
                        uint32_t o = 0;
                        for (uint32_t i = 0; i < pv->nr_hooks; i++)
                                if (pv->hooks[i] != s->value)
                                        pv->hooks[o++] = pv->hooks[i];
                        pv->nr_hooks = o;
                } else if (pv->nr_hooks < sizeof(pv->hooks) / sizeof(pv->hooks[0])) {
                        pv->hooks[pv->nr_hooks++] = (uint16_t)s->value;
                }
                break;
        case SET_WALK: pv->stack_walk = s->value; break;
        case SET_INTERVAL: pv->interval_100ns = s->value; break;
        case SET_PMC:
                /* the source and the group that samples it go on and off together */
                pv->pmc_source = is_on_next ? s->value : 0;
                if (is_on_next)
                        pv->masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] |=
                                PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
                else
                        pv->masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] &=
                                ~PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
                break;
        case SET_LBR:
                if (s->value)
                        pv->lbr_filters ^= s->value;
                else
                        pv->is_lbr_on = is_on_next;
                break;
        }
}

static void build(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t)
{
        (void)m;
        struct session_view *sv = of(v);
        ui_table_clear(t);
        for (uint32_t i = 0; i < NR_SETTINGS; i++) {
                const struct setting *s = &settings[i];
                const char *why = why_not(sv, s);
                uint32_t r = ui_table_add(t, i + 1, 0,
                                          (why ? UI_ROW_GREYED : 0) |
                                                  (is_on(&sv->now, s) ? UI_ROW_CHECKED : 0));
                ui_table_text(t, r, COL_ON, is_on(&sv->now, s) ? "[x]" : "[ ]");
                ui_table_text(t, r, COL_SETTING, s->name);
                ui_table_text(t, r, COL_WHAT, why ? why : s->help);
        }
}

static unsigned act_toggle(struct ui_key_ctx *c)
{
        struct session_view *sv = of(c->view);
        if (c->row_key == 0 || c->row_key > NR_SETTINGS)
                return 0;
        const struct setting *s = &settings[c->row_key - 1];
        if (!sv->is_live) {
                snprintf(c->st->status, sizeof(c->st->status), "%s: %s", s->name, why_not(sv, s));
                return UI_REDRAW;
        }
        /* what the machine lacks is still asked of the session: its answer is the reason; but
           a filter without LBR is only stored by it, refused here with the reason */
        const char *why = why_not(sv, s);
        if (why && s->kind == SET_LBR && s->value) {
                snprintf(c->st->status, sizeof(c->st->status), "%s: %s (not applied)", s->name,
                         why);
                return UI_REDRAW;
        }
        sv->want = sv->now;
        toggle(&sv->want, s);
        sv->pending = s;
        return UI_APPLY | UI_REBUILD | UI_REDRAW;
}

static const struct ui_key keys[] = {
        {'\n', "Enter", act_toggle,
         "turn the setting on or off in the running session (what the session then reports is "
         "marked)",
         NULL},
};

void session_view_set(struct ui_view *v, bool is_live, const struct etw_machine_caps *caps,
                      const struct panel_values *now)
{
        struct session_view *sv = of(v);
        sv->is_live = is_live;
        if (caps)
                sv->caps = *caps;
        sv->now = *now;
}

bool session_view_pending(struct ui_view *v, struct panel_values *want, const char **name)
{
        struct session_view *sv = of(v);
        if (!sv->pending)
                return false;
        *want = sv->want;
        *name = sv->pending->name;
        return true;
}

void session_view_result(struct ui_view *v, unsigned long status, const char *why, char *buf,
                         uint32_t size)
{
        struct session_view *sv = of(v);
        const struct setting *s = sv->pending;
        sv->pending = NULL;
        if (!s)
                return;
        if (status == ERROR_SUCCESS) {
                snprintf(buf, size, "%s %s: applied to the running session", s->name,
                         is_on(&sv->now, s) ? "on" : "off");
                return;
        }
        const char *reason = why_not(sv, s);
        snprintf(buf, size, "%s: %s (Win32 error %lu)", s->name,
                 reason ? reason : (why && *why ? why : "refused"), status);
}

static void view_free(struct ui_view *v)
{
        free(of(v));
}

struct ui_view *session_view_new(void)
{
        struct session_view *sv = xcalloc(1, sizeof(*sv));
        sv->view = (struct ui_view){
                "Session", cols,          NR_COLS,  keys, sizeof(keys) / sizeof(keys[0]),
                build,     ui_no_row_pid, view_free};
        return &sv->view;
}

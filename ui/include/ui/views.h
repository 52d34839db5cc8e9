/* SPDX-License-Identifier: MIT */
/* views.h: the screen's five views, each in its own file under ui/views/: hot functions and the
   call tree, branch edges, context switches, the session panel, and the trace's events. */
#ifndef ETWTOP_UI_VIEWS_H
#define ETWTOP_UI_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "etw/etwtop_ext.h"
#include "ui/view.h"

enum { VIEW_FUNCTIONS, VIEW_BRANCHES, VIEW_SWITCHES, VIEW_SESSION, VIEW_EVENTS, NR_VIEWS };

/* Hot functions with their callers under each (Enter, + - *), or the call tree top-down (c). */
struct ui_view *functions_view_new(void);
/* How the hot functions are grouped (--sort, p). */
enum functions_group {
        FUNCTIONS_BY_FUNCTION, /* a row per function (--sort sym) */
        FUNCTIONS_BY_PROCESS,  /* a row per process and function (--sort comm,sym) */
        FUNCTIONS_BY_THREAD,   /* a row per thread and function (--sort tid,sym) */
        FUNCTIONS_BY_MODULE,   /* the modules, their functions under them (--sort dso) */
        FUNCTIONS_NR_GROUPS
};
void functions_view_set_group(struct ui_view *v, enum functions_group group);
/* Asks p's call tree for the callers the view's rows show (by process or thread: those trees
   are made only while asked for) and for the top-down tree while the view shows it; the loop
   calls it before the first event and each build again. false: they count only the samples
   from now on (the screen says so; a replay reads the file again). */
struct profile;
bool functions_view_ask(struct ui_view *v, struct profile *p);
/* Whether the view shows the call tree top-down (c), not the hot functions. */
bool functions_view_is_top_down(const struct ui_view *v);
/* The rows the screen shows: from top (among the rows as built, neither sorted nor filtered),
   nr of them (0: the screen sorts or filters them, or there is no screen: every row), the
   cursor on the row of cursor_key (0: none). The next build looks up the callers (whether a row
   opens) of those rows, a page past them, the cursor's and the open ones only. */
void functions_view_show(struct ui_view *v, uint32_t top, uint32_t nr, uint64_t cursor_key);
/* Whether the last build looked up the callers of rows [top, top + nr) (nr 0: of every row):
   else the screen, moved there, builds again. */
bool functions_view_covers(const struct ui_view *v, uint32_t top, uint32_t nr);
/* Hot branch edges from LBR, by exact edge or by function pair (g). */
struct ui_view *branches_view_new(void);
/* Context switches by thread (Enter opens its waits, where it blocked, who readied it, its
   CPUs), by process, by CPU or by wait reason (g); t zooms on the row's process. */
struct ui_view *switches_view_new(void);

/* The generic events: every event type with its count (p: per process, per thread); Enter
   lists a type's recent events with their fields in columns, Esc goes back. */
struct ui_view *events_view_new(void);
/* Whether it shows one type's events (else the types). */
bool events_view_is_list(struct ui_view *v);

/* What a kernel session collects, as the session panel shows and edits it. */
struct panel_values {
        uint32_t masks[8];  /* PERFINFO_GROUPMASK; Masks[0] is EnableFlags */
        uint16_t hooks[32]; /* stack-walk hook ids */
        uint32_t nr_hooks;
        uint32_t interval_100ns; /* the timer's */
        uint32_t pmc_source;     /* KPROFILE_SOURCE under PMC_PROFILE (0: none) */
        bool is_lbr_on;
        uint32_t lbr_filters; /* EVNTRACE_LBR_FILTER_* */
        uint32_t stack_walk;  /* ETWTOP_STACKWALK_*: user stacks by frame pointers, DWARF, auto */
};

/* The session panel: a row per setting; Enter edits a copy of what the session reports and asks
   the loop to apply it (UI_APPLY). */
struct ui_view *session_view_new(void);
/* What the session collects now, read back from it (or, for a recording, what it recorded:
   is_live false, every row fixed); caps: what this machine can do. */
void session_view_set(struct ui_view *v, bool is_live, const struct etw_machine_caps *caps,
                      const struct panel_values *now);
/* The edited copy to apply after UI_APPLY, and the setting's name; false: none pending. */
bool session_view_pending(struct ui_view *v, struct panel_values *want, const char **name);
/* After the loop applied the pending edit (status ERROR_SUCCESS or the API's code, why its
   message) and set the values read back: the status line's text. */
void session_view_result(struct ui_view *v, unsigned long status, const char *why, char *buf,
                         uint32_t size);

#endif

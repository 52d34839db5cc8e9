/* SPDX-License-Identifier: MIT */
/* app_actions.c: owns the screen's actions that write or show something of their own: the
   annotate page, and the save key (live: the recent events as .etl; replay: pprof). */
#include "app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "annotate.h"
#include "export/export.h"
#include "feed.h"
#include "outbuf.h"
#include "util/xalloc.h"
#include "symbols/symbols.h"

void app_page_close(struct app *a)
{
        for (uint32_t i = 0; i < a->nr_page; i++)
                free(a->page[i]);
        free(a->page);
        a->page = NULL;
        a->nr_page = a->page_top = 0;
}

/* a: the function annotated (annotate_print) on a page of its own, until a key closes it. */
void app_annotate_page(struct app *a, const char *function)
{
        FILE *tf = tmpfile();
        if (!tf) {
                snprintf(a->st.status, sizeof(a->st.status), "annotate: no temporary file");
                return;
        }
        struct outbuf o;
        outbuf_init(&o, fileno(tf));
        char err[512] = "";
        sym_store_wait(profile_store(a->profile));
        int rc = annotate_print(a->profile, function, 10, &o, err, sizeof(err));
        outbuf_flush(&o);
        /* its rows are rebuilt: annotate asked the hot table again */
        app_build_tables(a);
        if (rc < 0) {
                snprintf(a->st.status, sizeof(a->st.status), "annotate: %s", err);
                fclose(tf);
                return;
        }
        app_page_close(a);
        rewind(tf);
        char line[1024];
        uint32_t cap = 0;
        while (fgets(line, sizeof(line), tf)) {
                line[strcspn(line, "\n")] = '\0';
                if (a->nr_page == cap) {
                        cap = cap ? cap * 2 : 256;
                        a->page = xrealloc(a->page, cap * sizeof(*a->page));
                }
                a->page[a->nr_page++] = xstrdup(line);
        }
        fclose(tf);
        snprintf(a->st.status, sizeof(a->st.status),
                 "annotate %s: Up/Down/PgUp/PgDn scroll, q or Esc closes", function);
}

/* A replay's save: the profile the views count (the time range applied) as pprof, for the
   tools that read it (doc/export.md). */
static void export_window(struct app *a)
{
        char path[64], err[400];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(path, sizeof(path), "etwtop-%Y%m%d-%H%M%S.pb.gz", &tm);
        const struct profile *p = a->profile;
        int64_t window_from, window_to;
        bool has_window = profile_window(p, &window_from, &window_to);
        struct export_options eo = {.path = a->o->replay_path,
                                    .out_path = path,
                                    .format = EXPORT_PPROF,
                                    .symbol_path = a->o->symbol_path,
                                    .nr_symbol_path = a->o->nr_symbol_path,
                                    .is_no_demangle = a->o->is_no_demangle,
                                    .pid = profile_zoom_pid(p),
                                    .has_from = has_window,
                                    .has_to = has_window,
                                    .from_s = (double)window_from / 1e9,
                                    .to_s = (double)window_to / 1e9};
        if (export_run(&eo, err, sizeof(err)) < 0)
                snprintf(a->st.status, sizeof(a->st.status), "export failed: %s", err);
        else
                snprintf(a->st.status, sizeof(a->st.status),
                         "exported the %s as pprof to %s (go tool pprof %s)",
                         has_window ? "time range" : "whole trace", path, path);
}

/* The save key: the session's recent buffers and a rundown, as a self-contained .etl in the
   current directory. */
void app_save_window(struct app *a)
{
        if (!a->st.is_live) {
                export_window(a);
                return;
        }
        char path[64], err[400];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(path, sizeof(path), "etwtop-%Y%m%d-%H%M%S.etl", &tm);
        if (etw_client_save(&a->client, path, err, sizeof(err)) != ERROR_SUCCESS)
                snprintf(a->st.status, sizeof(a->st.status), "save failed: %s", err);
        else
                snprintf(a->st.status, sizeof(a->st.status),
                         "saved the recent events to %s (etwtop --replay %s)", path, path);
}

/* SPDX-License-Identifier: MIT */
/* profgen.c: owns `--export profgen`: a trace's LBR samples as the perf script text
   llvm-profgen reads (`perf script -F ip,brstack --show-mmap-events`): each executable mapping
   as its PERF_RECORD_MMAP2 line, each LBR record as its sample's line (the sampled ip, then
   the branches, most recent first), in the order the trace gives them, written as it is
   read. profgen-cs: each LBR sample with its call stack as perf script prints a sample of
   `perf record -g -b` (a blank line, the frames innermost first, then the branches): the
   hybrid samples llvm-profgen makes a context-sensitive profile of (CSSPGO). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/pgo_format.h"
#include "export/writers.h"
#include "feed.h"
#include "model/profile.h"
#include "outbuf.h"
#include "util/out_file.h"
#include "util/xalloc.h"

/* The frames written of a stack: perf script's (its --max-stack default, the kernel's
   perf_event_max_stack) */
#define PROFGEN_MAX_STACK 127

struct profgen {
        struct outbuf out;
        /* the last sample: its LBR record comes right after it, with its timestamp */
        uint64_t sample_timestamp;
        uint64_t sample_ip;
        uint32_t sample_tid;
        bool has_sample;
        uint64_t nr_lbr;   /* LBR records written */
        uint64_t nr_no_ip; /* of them, with no sample to give the ip */
        /* profgen-cs: the stack of the last sample (its parts joined: Windows gives kernel and
           user parts), as it came before its LBR record */
        bool is_cs;
        uint64_t stack_timestamp;
        uint32_t nr_frames;
        uint64_t frames[512];
        uint64_t nr_no_stack; /* LBR samples written without their stack */
        char line[4096];
};

static void put_line(struct profgen *g, size_t n, size_t (*again)(char *, size_t, void *),
                     void *arg)
{
        if (n < sizeof(g->line)) {
                outbuf_put(&g->out, g->line, n);
                return;
        }
        char *big = xmalloc(n + 1); /* a path longer than the line */
        again(big, n + 1, arg);
        outbuf_put(&g->out, big, n);
        free(big);
}

static size_t mmap_again(char *buf, size_t size, void *arg)
{
        const struct kevent *ev = arg;
        return pgo_perf_mmap2(buf, size, ev->image_identity.pid, ev->image_identity.pid,
                              ev->image_identity.base, ev->image_identity.size,
                              ev->image_identity.file_offset, ev->image_identity.path);
}

static void on_event(void *ctx, const struct kevent *ev)
{
        struct profgen *g = ctx;
        switch (ev->type) {
        case KEV_IMAGE_IDENTITY:
                /* an ELF mapping (etwtop's ImageIdentity: perf's MMAP2 before it was an
                   Image/Load); a Windows image has no such event and no use to llvm-profgen */
                if (!ev->image_identity.path[0] || !ev->image_identity.size)
                        break;
                put_line(g, mmap_again(g->line, sizeof(g->line), (void *)ev), mmap_again,
                         (void *)ev);
                break;
        case KEV_SAMPLE:
                g->sample_timestamp = ev->timestamp;
                g->sample_ip = ev->sample.ip;
                g->sample_tid = ev->sample.tid;
                g->has_sample = true;
                break;
        case KEV_PMC_SAMPLE:
                g->sample_timestamp = ev->timestamp;
                g->sample_ip = ev->pmc_sample.ip;
                g->sample_tid = ev->pmc_sample.tid;
                g->has_sample = true;
                break;
        case KEV_STACK:
                if (!g->is_cs)
                        break;
                if (ev->stack.event_timestamp != g->stack_timestamp)
                        g->nr_frames = 0;
                g->stack_timestamp = ev->stack.event_timestamp;
                for (uint32_t i = 0; i < ev->stack.nr_frames &&
                                     g->nr_frames < sizeof(g->frames) / sizeof(g->frames[0]);
                     i++)
                        g->frames[g->nr_frames++] = ev->stack.frames[i];
                break;
        case KEV_LBR: {
                bool has_ip = g->has_sample && g->sample_timestamp == ev->lbr.event_timestamp &&
                              (ev->lbr.tid == UINT32_MAX || g->sample_tid == ev->lbr.tid);
                size_t n;
                if (g->is_cs) {
                        /* perf script -g: a blank line, the call stack, then the branches on a
                           line of their own */
                        bool has_stack =
                                g->nr_frames && g->stack_timestamp == ev->lbr.event_timestamp;
                        outbuf_putc(&g->out, '\n');
                        if (has_stack)
                                for (uint32_t i = 0; i < g->nr_frames && i < PROFGEN_MAX_STACK;
                                     i++) {
                                        n = pgo_perf_frame(g->line, sizeof(g->line), g->frames[i]);
                                        outbuf_put(&g->out, g->line, n);
                                }
                        else if (has_ip) {
                                n = pgo_perf_frame(g->line, sizeof(g->line), g->sample_ip);
                                outbuf_put(&g->out, g->line, n);
                        }
                        g->nr_no_stack += !has_stack;
                        g->nr_frames = 0;
                } else {
                        n = pgo_perf_ip(g->line, sizeof(g->line), g->sample_ip, has_ip);
                        outbuf_put(&g->out, g->line, n);
                }
                for (uint32_t i = 0; i < ev->lbr.nr_entries; i++) {
                        const struct kevent_lbr_entry *e = &ev->lbr.entries[i];
                        n = pgo_perf_branch(g->line, sizeof(g->line), e->from, e->to,
                                            ev->lbr.info ? ev->lbr.info[i] : 0);
                        outbuf_put(&g->out, g->line, n);
                }
                outbuf_putc(&g->out, '\n');
                g->has_sample = false;
                g->nr_lbr++;
                g->nr_no_ip += !has_ip;
                break;
        }
        default: break;
        }
}

int export_profgen_run(const struct export_options *opts, char *err, size_t err_size)
{
        int rc = -1;
        struct profile_options po = {.symbol_path = opts->symbol_path,
                                     .nr_symbol_path = opts->nr_symbol_path,
                                     .is_no_demangle = opts->is_no_demangle};
        struct profile *p = profile_new(&po);
        events_table_set_max_recent(profile_events(p), 0); /* nothing kept: written as it comes */
        if (opts->pid)
                profile_zoom(p, opts->pid);
        struct profgen *g = xcalloc(1, sizeof(*g));
        g->is_cs = opts->format == EXPORT_PROFGEN_CS;
        struct feed *f = NULL;
        struct out_file of = {.fd = -1};
        if (out_file_open(&of, opts->out_path,
                          OUT_FILE_STDOUT | (opts->is_force ? OUT_FILE_FORCE : 0), err,
                          err_size) < 0)
                goto out;
        outbuf_init(&g->out, of.fd);
        profile_set_event_sink(p, on_event, g);
        if (feed_replay_file(&f, p, opts->path, opts->has_from, opts->from_s, opts->has_to,
                             opts->to_s, err, err_size) < 0) {
                outbuf_flush(&g->out);
                out_file_abort(&of);
                goto out;
        }
        profile_end(p);
        if (!g->nr_lbr) {
                snprintf(err, err_size,
                         "%s has no LBR records: llvm-profgen reads branch stacks (perf record "
                         "-b, etwtop --lastbranch); %s not written",
                         opts->path, opts->out_path);
                outbuf_flush(&g->out);
                out_file_abort(&of);
                goto out;
        }
        int wrc = outbuf_flush(&g->out);
        if (wrc < 0) {
                snprintf(err, err_size, "writing %s: %s", opts->out_path, strerror(-wrc));
                out_file_abort(&of);
                goto out;
        }
        if (out_file_commit(&of, err, err_size) < 0)
                goto out;
        if (g->is_cs && g->nr_no_stack)
                fprintf(stderr,
                        "etwtop: %llu of %llu LBR samples came without a call stack: theirs is "
                        "their ip alone (record with -g, etwtop --stackwalk PmcInterrupt)\n",
                        (unsigned long long)g->nr_no_stack, (unsigned long long)g->nr_lbr);
        if (g->nr_no_ip)
                fprintf(stderr,
                        "etwtop: %llu of %llu LBR records came without their sample: their "
                        "lines have no ip (llvm-profgen reads the branches alone)\n",
                        (unsigned long long)g->nr_no_ip, (unsigned long long)g->nr_lbr);
        rc = 0;
out:
        feed_close(f);
        free(g);
        profile_free(p);
        return rc;
}

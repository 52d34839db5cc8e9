/* SPDX-License-Identifier: MIT */
/* kdecoder.c: owns the decoder of EVENT_RECORDs into struct kevent
   (ETL-FORMAT.md 3): its life, the session clock, the thread table, and the choice of decoder
   for each record (kernel, etwtop's, CLR, MOF tables, the trace's own metadata). */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder_int.h"
#include "kevent_mof.h"
#include "tdh_meta.h"
#include "etw_manifest.h"
#include "tracelogging.h"
#include "known_templates.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "payloads are read as little-endian");

#define KEV_TIDS_MIN 1024u
#define KEV_TIDS_MAX (1u << 22) /* entries; past this the table starts over */

/* ---- the tid -> pid table ---- */

static int tid_map_resize(struct tid_map *m, uint32_t cap)
{
        struct tid_slot *slots = malloc((size_t)cap * sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        memset(slots, 0xFF, (size_t)cap * sizeof(*slots));
        for (uint32_t i = 0; m->slots && i <= m->mask; i++) {
                if (m->slots[i].tid == KEV_NONE)
                        continue;
                uint32_t j = tid_index(m->slots[i].tid, cap - 1);

                while (slots[j].tid != KEV_NONE)
                        j = (j + 1) & (cap - 1);
                slots[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = slots;
        m->mask = cap - 1;
        return 0;
}

uint32_t kdecoder_pid_of_tid(const struct kdecoder *d, uint32_t tid)
{
        return kdecoder_tid_get(d, tid);
}

void kdecoder_tid_set(struct kdecoder *d, uint32_t tid, uint32_t pid)
{
        struct tid_map *m = &d->tids;

        if (tid == KEV_NONE || !m->slots)
                return;
        if (m->nr >= KEV_TIDS_MAX) {
                /* Bounded memory: start over rather than grow without end. */
                memset(m->slots, 0xFF, ((size_t)m->mask + 1) * sizeof(*m->slots));
                m->nr = 0;
        }
        if ((m->nr + 1) * 2 > m->mask + 1 && tid_map_resize(m, (m->mask + 1) * 2))
                return;
        for (uint32_t i = tid_index(tid, m->mask);; i = (i + 1) & m->mask) {
                if (m->slots[i].tid == tid) {
                        m->slots[i].pid = pid;
                        return;
                }
                if (m->slots[i].tid == KEV_NONE) {
                        m->slots[i].tid = tid;
                        m->slots[i].pid = pid;
                        m->nr++;
                        return;
                }
        }
}

/* ---- the session clock (ETL-FORMAT.md 1.8) ---- */

void kdecoder_clock_setup(struct kdecoder *d, uint64_t ts0)
{
        const TRACE_LOGFILE_HEADER *h = &d->header;
        uint64_t num = 1000000000u, den;

        if (h->PerfFreq.QuadPart > 0)
                den = (uint64_t)h->PerfFreq.QuadPart;
        else
                den = 10000000u; /* PerfFreq 0: assume the 10 MHz QPC of Windows 10 */
        if (!d->is_raw_timestamp) {
                d->clk_base = (uint64_t)h->StartTime.QuadPart;
                num = 100;
                den = 1;
        } else {
                d->clk_base = ts0;
                if (h->ReservedFlags == EVENT_TRACE_CLOCK_SYSTEMTIME) {
                        num = 100;
                        den = 1;
                } else if (h->ReservedFlags == EVENT_TRACE_CLOCK_CPUCYCLE && h->CpuSpeedInMHz) {
                        num = 1000;
                        den = h->CpuSpeedInMHz;
                }
        }
        /* ns = mag * num / den without a division per event: the integer part, plus mag times
           a 128-bit fixed-point fraction rounded up. Its error is below mag / 2^128 < 1 / den,
           which never crosses an integer, so the result is exactly floor(mag * num / den). */
        kev_u128 r = (kev_u128)(num % den) << 64;
        uint64_t hi = (uint64_t)(r / den);
        kev_u128 r2 = (r % den) << 64;
        uint64_t lo = (uint64_t)(r2 / den);

        if (r2 % den && ++lo == 0)
                hi++;
        d->clk_int = num / den;
        d->clk_frac_hi = hi;
        d->clk_frac_lo = lo;
        /* The fraction adds less than mag, so mag * (clk_int + 1) bounds the result: up to
           KEVENT_TIME_NS_MAX / (clk_int + 1) ticks, neither the product nor the sum can
           overflow or pass KEVENT_TIME_NS_MAX, and kdecoder_session_ns skips its checks. */
        d->clk_fast_max = (uint64_t)KEVENT_TIME_NS_MAX / (d->clk_int + 1);
        d->has_clock = true;
}

/* ---- fields decoded when asked (kevent_fields) ---- */

static uint32_t lazy_get(struct kevent_lazy *base, const struct kevent_field **list)
{
        struct kdecoder_lazy *l = (struct kdecoder_lazy *)base;

        if (l->state == LAZY_ARMED) {
                uint32_t nr = 0;
                int rc = l->fill(l->d, l->desc, l->table, l->p, l->len, l->psize, &nr);

                /* the payload's layout was checked when the record was decoded */
                assert(rc == 0);
                l->nr = rc ? 0 : nr;
                l->state = LAZY_DONE;
        }
        *list = l->d->fields;
        return l->state == LAZY_DONE ? l->nr : 0;
}

struct kevent_lazy *kdecoder_lazy_arm(struct kdecoder *d, kdecoder_fill_fn fill, const void *desc,
                                      const void *table, const uint8_t *p, size_t len,
                                      unsigned psize)
{
        struct kdecoder_lazy *l = &d->lazy;

        l->base.get = lazy_get;
        l->d = d;
        l->fill = fill;
        l->desc = desc;
        l->table = table;
        l->p = p;
        l->len = len;
        l->psize = psize;
        l->nr = 0;
        l->state = LAZY_ARMED;
        return &l->base;
}

/* A TraceLogging event (its schema in an extended item): named by its schema's event name
   (src/dump.c), its Id (often 0) telling nothing apart. */
static bool is_tracelogging(const EVENT_RECORD *rec)
{
        for (USHORT i = 0; rec->ExtendedData && i < rec->ExtendedDataCount; i++)
                if (rec->ExtendedData[i].ExtType == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL)
                        return true;
        return false;
}

/* ---- the exported interface ---- */

/* Returns a decoder (free with kdecoder_free), or NULL without memory. */
struct kdecoder *kdecoder_new(bool is_raw_timestamp)
{
        struct kdecoder *d = calloc(1, sizeof(*d));

        if (!d)
                return NULL;
        d->is_raw_timestamp = is_raw_timestamp;
        d->str_cap = KEV_STR_ARENA;
        d->str = malloc(d->str_cap);
        d->frames = malloc(KEV_MAX_FRAMES * sizeof(*d->frames));
        d->lbr = malloc(KEV_MAX_LBR * sizeof(*d->lbr));
        d->lbr_info = malloc(KEV_MAX_LBR * sizeof(*d->lbr_info));
        if (!d->str || !d->frames || !d->lbr || !d->lbr_info ||
            tid_map_resize(&d->tids, KEV_TIDS_MIN))
                goto fail;
        return d;
fail:
        kdecoder_free(d);
        return NULL;
}

/* Frees d and everything it owns; NULL and half-built decoders are fine. */
void kdecoder_free(struct kdecoder *d)
{
        if (!d)
                return;
        for (int k = 0; k < KP_MAX; k++)
                for (int op = 0; op < 256; op++)
                        free(d->op_names[k][op]);
        unnamed_free(d);
        tdh_registry_free(d->meta);
        etw_manifests_free(d->manifests);
        tl_cache_free(d->tl);
        stack_keys_free(d);
        free(d->tids.slots);
        free(d->lbr);
        free(d->lbr_info);
        free(d->frames);
        free(d->str);
        free(d);
}

/* Keeps what a MetaData EventInfo or EventMapInfo event describes (tdh_meta.c); the event
   itself stays one without a layout. A damaged description is counted short. */
static void meta_take(struct kdecoder *d, uint8_t op, const struct payload *pl)
{
        char err[128];
        int rc;

        if (!d->meta)
                d->meta = tdh_registry_new();
        if (op == KTC_METADATA_EVENT_INFO)
                rc = tdh_registry_add_event_info(d->meta, pl->p, pl->len, err, sizeof(err));
        else
                rc = tdh_registry_add_map_info(d->meta, pl->p, pl->len, err, sizeof(err));
        if (rc)
                d->st.nr_short++;
}

/* An EventSource's ManifestData (Id 0xFFFE, opcode 254): a chunk of its manifest. */
static int manifest_take(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                         const GUID *g)
{
        char err[sizeof(d->st.warning)] = "";
        int rc;

        if (!d->meta)
                d->meta = tdh_registry_new();
        if (!d->manifests)
                d->manifests = etw_manifests_new();

        const char *name = etw_manifests_chunk(d->manifests, d->meta, g, pl->p, pl->len, &rc, err,
                                               sizeof(err));

        if (name)
                ev->name = name;
        if (!rc && err[0] && !d->st.warning[0]) /* not read, not damaged: for the user */
                snprintf(d->st.warning, sizeof(d->st.warning), "%s", err);
        return rc ? rc : KEV_NO_LAYOUT;
}

/* Decodes ev by the trace's own metadata for it, if the trace described it. A name the decoder
   already gives the event (xperf's, PerfView's) is kept: the metadata adds its fields. */
static int meta_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                       const GUID *g, uint16_t key, bool is_classic, bool is_named)
{
        const struct tdh_event *e =
                d->meta ? tdh_registry_find(d->meta, g, key, ev->version, is_classic) : NULL;
        const char *name = ev->name;

        if (!e)
                return KEV_NO_LAYOUT;

        int rc = tdh_decode(d->meta, e, d, ev, pl->p, pl->len, pl->psize);

        if (is_named)
                ev->name = name;
        return rc;
}

bool kdecoder_peek_sample(struct kdecoder *d, const EVENT_RECORD *rec, uint64_t *ip, uint32_t *tid,
                          uint32_t *pid)
{
        const EVENT_HEADER *h = &rec->EventHeader;
        if (h->EventDescriptor.Opcode != (PERFINFO_LOG_TYPE_SAMPLED_PROFILE & 0xFF) ||
            !(h->Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) || !rec->UserData ||
            kprov_slot_cached(d, &h->ProviderId)->k != KP_PERFINFO)
                return false;
        /* dec_sample's layout */
        unsigned psize = (h->Flags & EVENT_HEADER_FLAG_32_BIT_HEADER) &&
                                         !(h->Flags & EVENT_HEADER_FLAG_64_BIT_HEADER)
                                 ? 4
                                 : 8;
        const uint8_t *p = rec->UserData;
        if (rec->UserDataLength < psize + 8)
                return false;
        *ip = ldptr(p, psize);
        *tid = le_get32(p + psize);
        *pid = kdecoder_tid_get(d, *tid);
        return true;
}

/* kernel_decode's events of no layout it knows: the MOF tables', then the trace's metadata. */
static __attribute__((noinline)) int decode_no_layout(struct kdecoder *d, const EVENT_HEADER *h,
                                                      enum kprov k, struct kevent *ev,
                                                      struct payload *pl)
{
        int rc = kevent_mof_decode(d, kprov_name(k), ev, pl->p, pl->len, pl->psize);
        if (rc == KEV_NO_LAYOUT)
                rc = meta_decode(d, ev, pl, &h->ProviderId, ev->opcode, true,
                                 kprov_opcode_name(k, ev->opcode));
        return rc;
}

/* kdecoder_decode's events of etwtop's own provider, WPP messages, manifest, TraceLogging and
   CLR events, the trace's metadata and classic events of no known provider: what a known
   kernel provider's event is not. */
static __attribute__((noinline)) int decode_other(struct kdecoder *d, const EVENT_RECORD *rec,
                                                  enum kprov k, uint32_t clr_rank,
                                                  struct kevent *ev, struct payload *pl)
{
        const EVENT_HEADER *h = &rec->EventHeader;
        int rc;
        if (k == KP_ETWTOP) {
                /* etwtop's events all have opcode 0 and differ by Id: the Id stands in */
                ev->opcode = (uint8_t)h->EventDescriptor.Id;
                ev->name = own_event_name(h->EventDescriptor.Id);
                rc = own_decode(d, ev, pl, h->EventDescriptor.Id);
        } else if (h->Flags & EVENT_HEADER_FLAG_TRACE_MESSAGE) {
                /* a WPP message: its arguments need the provider's format files (TMF), which a
                   trace does not carry */
                rc = KEV_NO_LAYOUT;
        } else if (k == KP_UNKNOWN && (h->Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) == 0) {
                const struct clr_event_def *c = clr_event_find(clr_rank, h->EventDescriptor.Id);
                if (c)
                        ev->name = c->name;
                rc = c ? clr_decode(d, c, ev, pl) : KEV_NO_LAYOUT;
                bool is_named = c != NULL;
                if (!c) {
                        const char *before = ev->name;
                        rc = clr_private_decode(d, ev, pl, &h->ProviderId, h->EventDescriptor.Id);
                        is_named = ev->name != before;
                }
                if (rc == KEV_NO_LAYOUT && h->EventDescriptor.Id == ETW_MANIFEST_DATA_ID &&
                    ev->opcode == ETW_MANIFEST_DATA_OPCODE)
                        rc = manifest_take(d, ev, pl, &h->ProviderId);
                else if (rc == KEV_NO_LAYOUT)
                        rc = meta_decode(d, ev, pl, &h->ProviderId, h->EventDescriptor.Id, false,
                                         is_named);
                if (rc == KEV_NO_LAYOUT) /* (extended items or none: a session's own) */
                        rc = known_template_decode(d, ev, pl->p, pl->len, pl->psize, &h->ProviderId,
                                                   h->EventDescriptor.Id);
                if (rc == KEV_NO_LAYOUT && !is_named && rec->ExtendedDataCount)
                        rc = tl_decode(d, rec, ev, pl->p, pl->len, pl->psize);
        } else {
                if (k == KP_METADATA && (ev->opcode == KTC_METADATA_EVENT_INFO ||
                                         ev->opcode == KTC_METADATA_EVENT_MAP_INFO))
                        meta_take(d, ev->opcode, pl);
                rc = kernel_decode(d, k, ev, pl);
                if (rc == KEV_NO_LAYOUT)
                        rc = k != KP_UNKNOWN ? decode_no_layout(d, h, k, ev, pl)
                                             : meta_decode(d, ev, pl, &h->ProviderId, ev->opcode,
                                                           true, false);
        }
        return rc;
}

/* See kevent.h. The event and everything it points to live until sink returns; sink must not
   call back into the same decoder. sink may be NULL (the decoder's state still advances). */
int kdecoder_decode(struct kdecoder *d, const EVENT_RECORD *rec, kevent_sink_fn sink, void *ctx)
{
        if (!d || !rec)
                return -EINVAL;

        const EVENT_HEADER *h = &rec->EventHeader;
        const struct kprov_slot *slot = kprov_slot_cached(d, &h->ProviderId);
        enum kprov k = (enum kprov)slot->k;
        uint32_t clr_rank = slot->clr_rank;
        struct kevent ev;
        struct payload pl;
        int rc;

        ev.type = KEV_OTHER;
        ev.provider = &h->ProviderId;
        ev.opcode = h->EventDescriptor.Opcode;
        ev.version = h->EventDescriptor.Version;
        /* 4 where the header says 32 bits and not 64 (one test of both flags) */
        ev.pointer_size =
                (h->Flags & (EVENT_HEADER_FLAG_32_BIT_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER)) ==
                                EVENT_HEADER_FLAG_32_BIT_HEADER
                        ? 4
                        : 8;
        ev.timestamp = (uint64_t)h->TimeStamp.QuadPart;
        ev.time_ns = kdecoder_session_ns(d, ev.timestamp);
        ev.cpu = rec->BufferContext.ProcessorIndex;
        ev.pid = h->ProcessId;
        ev.tid = h->ThreadId;
        ev.name = kprov_event_name_cached(d, k, ev.opcode);
        ev.nr_pmc = 0;
        memset(ev.pmc, 0, sizeof(ev.pmc));
        for (USHORT i = 0; rec->ExtendedData && i < rec->ExtendedDataCount; i++) {
                const EVENT_HEADER_EXTENDED_DATA_ITEM *x = &rec->ExtendedData[i];

                if (x->ExtType != EVENT_HEADER_EXT_TYPE_PMC_COUNTERS || !x->DataPtr)
                        continue;
                uint32_t n = x->DataSize / 8u;

                ev.nr_pmc = n < KEV_MAX_PMC ? n : KEV_MAX_PMC;
                memcpy(ev.pmc, (const void *)(uintptr_t)x->DataPtr, ev.nr_pmc * 8u);
        }

        d->str_len = 0;
        pl.p = rec->UserData;
        pl.len = rec->UserData ? rec->UserDataLength : 0;
        pl.psize = ev.pointer_size;
        if (k != KP_ETWTOP && k != KP_UNKNOWN && k != KP_METADATA &&
            !(h->Flags & EVENT_HEADER_FLAG_TRACE_MESSAGE)) {
                /* a kernel provider's event, nearly every record of a trace: the others' paths
                   out of line, where their frames and registers do not weigh on this one */
                rc = kernel_decode(d, k, &ev, &pl);
                if (rc == KEV_NO_LAYOUT)
                        rc = decode_no_layout(d, h, k, &ev, &pl);
        } else {
                rc = decode_other(d, rec, k, clr_rank, &ev, &pl);
        }
        if (rc == -EBADMSG || rc == KEV_NO_LAYOUT) {
                /* The common fields only: drop whatever a decoder had filled in. */
                size_t u = offsetof(struct kevent, trace_header);

                memset((char *)&ev + u, 0, sizeof(ev) - u);
                ev.type = KEV_OTHER;
                ev.pid = h->ProcessId;
                ev.tid = h->ThreadId;
                if (rc == -EBADMSG) {
                        d->st.nr_short++;
                } else {
                        d->st.nr_other++;
                        rc = 0;
                }
        } else {
                d->st.nr_decoded++;
        }
        /* a manifest event nothing named: by its provider and Id, never by its opcode alone
           (a provider's events of one opcode are of many types) */
        if (k == KP_UNKNOWN && (!ev.name || !ev.name[0]) &&
            (h->Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) == 0 && !is_tracelogging(rec))
                ev.name = unnamed_event_name(d, &h->ProviderId, h->EventDescriptor.Id,
                                             (h->Flags & EVENT_HEADER_FLAG_TRACE_MESSAGE) != 0);

        if (sink)
                sink(ctx, &ev);
        /* the payload is the record's: no fields, no names after the sink */
        d->lazy.state = LAZY_OFF;
        d->lazy_names.state = LAZY_OFF;
        if (ev.type == KEV_STACK_KEY_DEF)
                stack_keys_def_after(d, &ev, sink, ctx);
        else if (ev.type == KEV_STACK_KEY)
                stack_keys_ref_after(d, &ev, sink, ctx);
        return rc;
}

/* Copies the counters; the dropped pending references are not in the public struct. */
void kdecoder_get_stats(const struct kdecoder *d, struct kdecoder_stats *st)
{
        if (!st)
                return;
        if (!d) {
                memset(st, 0, sizeof(*st));
                return;
        }
        *st = d->st;
}

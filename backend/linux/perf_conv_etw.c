/* SPDX-License-Identifier: MIT */
/* perf_conv_etw.c: the ETW payload builders: strings, group masks, profile sources, process, thread
 * and image events. */
#include "perf_conv_int.h"
#include "util/utf.h"

/* ---- strings ---- */

/* Copies at most max bytes of s (never cutting it mid-record: a plain byte limit), with NUL. */
uint32_t conv_put_cstr(uint8_t *dst, const char *s, size_t max)
{
        size_t n = strnlen(s, max);
        memcpy(dst, s, n);
        dst[n] = 0;
        return (uint32_t)n + 1;
}

/* s truncated to max bytes into buf (buf has max + 1 bytes). */
const char *conv_clip(char *buf, const char *s, size_t max)
{
        size_t n = strnlen(s, max);
        memcpy(buf, s, n);
        buf[n] = 0;
        return buf;
}

/* ---- ETW payload builders ---- */

uint32_t perf_etw_group_masks(uint8_t *dst, uint16_t hook, uint64_t ts,
                              const PERFINFO_GROUPMASK *masks)
{
        uint8_t p[36];
        for (int i = 0; i < 8; i++)
                st32(p + 4 * i, masks->Masks[i]);
        st32(p + 32, KERNEL_VERSION);
        return etl_record_perfinfo64(dst, hook, 2, ts, NULL, 0, p, sizeof(p));
}

uint32_t perf_etw_profile_interval(uint8_t *dst, uint16_t hook, uint64_t ts, uint32_t source,
                                   uint32_t new_interval, uint32_t old_interval,
                                   const char *source_name)
{
        uint8_t p[12 + 2 * 256];
        char name[256]; /* a perf event's own name (a PMU's event string runs past 63) */
        st32(p, source);
        st32(p + 4, new_interval);
        st32(p + 8, old_interval);
        uint32_t n = 12 + utf8_to_utf16le(p + 12, conv_clip(name, source_name, sizeof(name) - 1));
        return etl_record_perfinfo64(dst, hook, 3, ts, NULL, 0, p, n);
}

uint32_t perf_etw_pmc_config(uint8_t *dst, uint64_t ts, const char *const *names, uint32_t nr)
{
        uint8_t p[4 + 8 * 2 * 64];
        char name[63];
        uint32_t n = 4;
        if (nr > 8)
                nr = 8;
        st32(p, nr);
        for (uint32_t i = 0; i < nr; i++)
                n += utf8_to_utf16le(p + n, conv_clip(name, names[i], sizeof(name) - 1));
        return etl_record_perfinfo64(dst, PERFINFO_LOG_TYPE_PMC_CONFIG, 2, ts, NULL, 0, p, n);
}

uint32_t perf_etw_session_cpu(uint8_t *dst, uint64_t ts, uint32_t cpu, uint32_t nr_cpus,
                              uint32_t nr_online, uint32_t traced_pid)
{
        uint8_t p[16];
        st32(p, cpu);
        st32(p + 4, nr_cpus);
        st32(p + 8, nr_online);
        st32(p + 12, traced_pid);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_SESSION_CPU, 1, 0, 4, 0, 0, 0};
        return etl_record_event64(dst, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0, p,
                                  sizeof(p));
}

/* A SYSTEM64 record with inline PMC counters (ETL-FORMAT.md 2.3/2.4: bits 8-10 of Version). */
uint32_t conv_record_system64_pmc(uint8_t *dst, uint16_t hook, uint8_t version, uint32_t tid,
                                  uint32_t pid, uint64_t ts, const uint64_t *pmc, uint32_t nr_pmc,
                                  const uint8_t *payload, uint32_t size)
{
        if (nr_pmc > 7)
                nr_pmc = 7;
        uint32_t n = etl_record_system64(dst, hook, version, tid, pid, ts, NULL, 0);
        for (uint32_t i = 0; i < nr_pmc; i++)
                st64(dst + n + 8 * i, pmc[i]);
        n += 8 * nr_pmc;
        memcpy(dst + n, payload, size);
        n += size;
        st16(dst, (uint16_t)(version | nr_pmc << 8));
        st16(dst + 4, (uint16_t)n);
        return n;
}

/* UserSID (ETL-FORMAT.md 3.8) at p, as Windows writes it on x64: TOKEN_USER (the Sid pointer,
   Attributes 0, 4 bytes of padding: 16 bytes), then the SID. The owner uid's SID is S-1-22-1-uid,
   the "Unix user" SID Samba and NFS give Linux users; an unknown owner has the Null SID S-1-0-0.
   Returns the bytes written (32, or 28 for the Null SID). */
static uint32_t put_user_sid(uint8_t *p, uint32_t uid)
{
        bool is_known = uid != PERF_CONV_NO_UID;
        memset(p, 0, 32);
        st64(p, SID_POINTER);
        p[16] = 1;                /* Revision */
        p[17] = is_known ? 2 : 1; /* SubAuthorityCount */
        if (is_known) {           /* IdentifierAuthority: 6 bytes, big-endian */
                p[23] = SID_UNIX_USER_AUTHORITY;
                st32(p + 24, 1); /* 1: users (2: groups) */
                st32(p + 28, uid);
                return 32;
        }
        return 28; /* S-1-0-0: authority 0, sub-authority 0 */
}

/* Process v4 payload (ETL-FORMAT.md 3.8). */
static uint32_t build_process(struct perf_conv *c, uint32_t pid, uint32_t ppid, uint32_t session,
                              int32_t exit_status, uint32_t uid, const char *name,
                              const char *cmdline)
{
        uint8_t *p = c->payload;
        char clipped[CONV_MAX_CMDLINE + 1];

        memset(p, 0, 36);
        st32(p + 8, pid);
        st32(p + 12, ppid);
        st32(p + 16, session);
        st32(p + 20, (uint32_t)exit_status);
        /* UniqueProcessKey @0, DirectoryTableBase @24 and Flags @32: 0 */
        uint32_t n = 36 + put_user_sid(p + 36, uid);
        /* ImageFileName: ANSI; comm is at most 15 bytes */
        n += conv_put_cstr(p + n, name, 255);
        n += utf8_to_utf16le(p + n, conv_clip(clipped, cmdline, CONV_MAX_CMDLINE));
        n += utf8_to_utf16le(p + n, ""); /* PackageFullName */
        n += utf8_to_utf16le(p + n, ""); /* ApplicationId */
        return n;
}

int conv_emit_process(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                      uint32_t hdr_tid, uint32_t hdr_pid, uint32_t pid, uint32_t ppid,
                      uint32_t session, int32_t exit_status, uint32_t uid, const char *name,
                      const char *cmdline)
{
        uint32_t n = build_process(c, pid, ppid, session, exit_status, uid, name, cmdline);
        uint32_t size;
        if (hook == WMI_LOG_TYPE_PROCESS_DC_START || hook == WMI_LOG_TYPE_PROCESS_DC_END)
                size = etl_record_perfinfo64(c->rec, hook, 4, ts, NULL, 0, c->payload, n);
        else
                size = etl_record_system64(c->rec, hook, 4, hdr_tid, hdr_pid, ts, c->payload, n);
        return conv_emit(c, cpu, size);
}

/* Thread v4 payload (ETL-FORMAT.md 3.7). */
int conv_emit_thread(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                     uint32_t hdr_tid, uint32_t hdr_pid, uint32_t pid, uint32_t tid, int64_t prio,
                     const char *name)
{
        uint8_t *p = c->payload;
        char clipped[64];

        memset(p, 0, 72);
        st32(p, pid);
        st32(p + 4, tid);
        p[68] = (uint8_t)perf_prio_to_etw(prio < 0 ? 120 : prio); /* BasePriority */
        p[69] = 5;                                                /* PagePriority: normal */
        p[70] = 2;                                                /* IoPriority: normal */
        uint32_t n = 72 + utf8_to_utf16le(p + 72, conv_clip(clipped, name, 63));
        uint32_t size = etl_record_system64(c->rec, hook, 4, hdr_tid, hdr_pid, ts, p, n);
        return conv_emit(c, cpu, size);
}

int conv_emit_thread_name(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid,
                          uint32_t tid, const char *name)
{
        uint8_t *p = c->payload;
        char clipped[64];
        st32(p, pid);
        st32(p + 4, tid);
        uint32_t n = 8 + utf8_to_utf16le(p + 8, conv_clip(clipped, name, 63));
        uint32_t size =
                etl_record_system64(c->rec, WMI_LOG_TYPE_THREAD_SET_NAME, 2, tid, pid, ts, p, n);
        return conv_emit(c, cpu, size);
}

/* etwtop ImageIdentity v1 (doc/etwtop-provider.md), then the Image event v3 (3.9). */
int conv_emit_image(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts, uint32_t hdr_tid,
                    const struct perf_conv_image *im)
{
        uint8_t *p = c->payload;
        char path[CONV_MAX_PATH + 1];
        uint32_t bid = im->build_id && im->build_id_size <= BUILD_ID_MAX ? im->build_id_size : 0;
        int rc;

        conv_clip(path, im->path, CONV_MAX_PATH);
        memset(p, 0, 52);
        st64(p, im->base);
        st64(p + 8, im->size);
        st64(p + 16, im->pgoff);
        st32(p + 24, im->pid);
        p[28] = (uint8_t)bid;
        st16(p + 30, (uint16_t)im->flags);
        if (bid)
                memcpy(p + 32, im->build_id, bid);
        uint32_t n = 52 + conv_put_cstr(p + 52, path, CONV_MAX_PATH);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_IMAGE_IDENTITY, 1, 0, 4, 0, 0, 0};
        uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, hdr_tid, im->pid,
                                           ts, NULL, 0, p, n);
        rc = conv_emit(c, cpu, size);
        if (rc < 0)
                return rc;

        memset(p, 0, 56);
        st64(p, im->base);
        st64(p + 8, im->size);
        st32(p + 16, im->pid);
        n = 56 + utf8_to_utf16le(p + 56, path);
        if (hook == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE)
                size = etl_record_system64(c->rec, hook, 3, hdr_tid, im->pid, ts, p, n);
        else
                size = etl_record_perfinfo64(c->rec, hook, 3, ts, NULL, 0, p, n);
        return conv_emit(c, cpu, size);
}

/* etwtop RecordsNotShown v1 (doc/etwtop-provider.md): Type, Reserved, Count, Name. */
int perf_conv_records_not_shown(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t type,
                                uint64_t count, const char *name)
{
        uint8_t *p = c->payload;
        st32(p, type);
        st32(p + 4, 0);
        st64(p + 8, count);
        uint32_t n = 16 + conv_put_cstr(p + 16, name ? name : "", 63);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_RECORDS_NOT_SHOWN, 1, 0, 4, 0, 0, 0};
        uint32_t size =
                etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0, p, n);
        return conv_emit(c, cpu, size);
}

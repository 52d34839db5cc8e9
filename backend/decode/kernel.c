/* SPDX-License-Identifier: MIT */
/* kernel.c: owns the kernel logger's payload decoders: the trace header, processes,
   threads, context switches, images, samples, PMC, stacks and stack keys, LBR
   (ETL-FORMAT.md 3). */
#include <errno.h>
#include <string.h>

#include "kdecoder_int.h"

static int dec_trace_header(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, trace_header);
        /* ETL-FORMAT.md 1.6: 0x118 bytes x64, 0x110 x86, then two UTF-16 strings. */
        size_t fixed = pl->psize == 8 ? 0x118 : 0x110;
        size_t tz = pl->psize == 8 ? 0x48 : 0x40;
        size_t t = tz + sizeof(TIME_ZONE_INFORMATION) + 4; /* BootTime, after padding */
        TRACE_LOGFILE_HEADER *h = &d->header;
        size_t next;

        if (pl->len < fixed)
                return -EBADMSG;
        memset(h, 0, sizeof(*h));
        memcpy(h, pl->p, offsetof(TRACE_LOGFILE_HEADER, LoggerName));
        memcpy(&h->TimeZone, pl->p + tz, sizeof(h->TimeZone));
        h->BootTime.QuadPart = (LONGLONG)le_get64(pl->p + t);
        h->PerfFreq.QuadPart = (LONGLONG)le_get64(pl->p + t + 8);
        h->StartTime.QuadPart = (LONGLONG)le_get64(pl->p + t + 16);
        h->ReservedFlags = le_get32(pl->p + t + 24);
        h->BuffersLost = le_get32(pl->p + t + 28);
        ev->type = KEV_TRACE_HEADER;
        ev->trace_header.header = h;
        ev->trace_header.logger_name = kstr_utf16(d, pl, fixed, &next);
        ev->trace_header.log_file_name = kstr_utf16(d, pl, next, &next);
        if (!d->has_clock) {
                kdecoder_clock_setup(d, ev->timestamp);
                ev->time_ns = kdecoder_session_ns(d, ev->timestamp);
        }
        return 0;
}

static int dec_group_mask(struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, group_mask);
        /* ETW_KERNEL_HEADER_EXTENSION: Masks[8], then Version (absent from some writers). */
        if (pl->len < 32)
                return -EBADMSG;
        ev->type = KEV_GROUP_MASK;
        for (int i = 0; i < 8; i++)
                ev->group_mask.masks[i] = le_get32(pl->p + 4 * i);
        ev->group_mask.kernel_version = pl->len >= 36 ? le_get32(pl->p + 32) : 0;
        ev->group_mask.is_previous = ev->opcode == WMI_LOG_TYPE_GROUP_MASKS_END;
        return 0;
}

static enum kevent_phase phase_of(uint8_t op)
{
        switch (op) {
        case EVENT_TRACE_TYPE_START: return KEV_PHASE_START;
        case EVENT_TRACE_TYPE_END: return KEV_PHASE_END;
        case EVENT_TRACE_TYPE_DC_START: return KEV_PHASE_DC_START;
        case EVENT_TRACE_TYPE_DC_END: return KEV_PHASE_DC_END;
        case EVENT_TRACE_TYPE_LOAD: return KEV_PHASE_START;
        case WMI_LOG_TYPE_PROCESS_DEFUNCT & 0xFF: return KEV_PHASE_DEFUNCT;
        }
        return KEV_PHASE_NONE;
}

/* Whether the UserSID at off, whose first 32 bits are 0, is a TOKEN_USER whose SID pointer is
   null but whose SID follows all the same (as test and replayed traces write it: a SID of
   revision 1 with 1 to 15 sub-authorities after two zero pointers) rather than the 4 bytes of
   no SID, which an image name (or two empty strings) follows. */
static bool is_null_token_user(const uint8_t *p, size_t len, size_t off, size_t ps)
{
        size_t sid = off + 2 * ps;
        if (len < sid + 8)
                return false;
        for (size_t i = off; i < sid; i++)
                if (p[i])
                        return false;
        unsigned count = p[sid + 1];
        return p[sid] == 1 && count >= 1 && count <= 15 && p[sid + 2] == 0 && p[sid + 3] == 0 &&
               len >= sid + 8 + 4 * (size_t)count;
}

static int dec_process(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, process);
        /* WMI_PROCESS_INFORMATION (ETL-FORMAT.md 3.8; older versions as PerfView reads them). */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize, sid_off, off;
        uint8_t v = ev->version;

        if (v == 0) {
                if (pl->len < 2 * ps)
                        return -EBADMSG;
                ev->process.pid = (uint32_t)ldptr(p, pl->psize);
                ev->process.parent_pid = (uint32_t)ldptr(p + ps, pl->psize);
                sid_off = 2 * ps;
        } else {
                size_t fixed = v >= 4 ? 2 * ps + 20 : v == 3 ? 2 * ps + 16 : ps + 16;

                if (pl->len < fixed)
                        return -EBADMSG;
                if (v >= 2)
                        ev->process.unique_key = ldptr(p, pl->psize);
                else
                        ev->process.directory_table_base = ldptr(p, pl->psize);
                ev->process.pid = le_get32(p + ps);
                ev->process.parent_pid = le_get32(p + ps + 4);
                ev->process.session_id = le_get32(p + ps + 8);
                ev->process.exit_status = (int32_t)le_get32(p + ps + 12);
                if (v >= 3)
                        ev->process.directory_table_base = ldptr(p + ps + 16, pl->psize);
                if (v >= 4)
                        ev->process.flags = le_get32(p + 2 * ps + 16);
                sid_off = fixed;
        }

        ev->type = KEV_PROCESS;
        ev->process.phase = phase_of(ev->opcode);
        ev->process.user_sid = "";
        ev->process.image_name = "";
        ev->process.command_line = "";
        ev->process.package_full_name = "";
        ev->process.application_id = "";
        ev->pid = ev->process.pid;
        ev->tid = KEV_NONE;

        /* UserSID: u32 0, or TOKEN_USER (2 pointers) + SID of 8 + 4 * count bytes. */
        off = sid_off;
        if (pl->len - off < 4)
                return 0;
        if (le_get32(p + off) == 0 && !is_null_token_user(p, pl->len, off, ps)) {
                off += 4;
        } else {
                size_t sid = off + 2 * ps;

                if (pl->len < sid + 8)
                        return 0;
                unsigned count = p[sid + 1];

                if (pl->len < sid + 8 + 4 * (size_t)count)
                        return 0;
                ev->process.user_sid = kstr_sid(d, p + sid, count);
                off = sid + 8 + 4 * (size_t)count;
        }
        ev->process.image_name = kstr_ansi(d, pl, off, &off);
        if (v >= 2)
                ev->process.command_line = kstr_utf16(d, pl, off, &off);
        if (v >= 4) {
                ev->process.package_full_name = kstr_utf16(d, pl, off, &off);
                ev->process.application_id = kstr_utf16(d, pl, off, &off);
        }
        if (v >= 5 && ev->opcode == (WMI_LOG_TYPE_PROCESS_DEFUNCT & 0xFF) && pl->len - off >= 8)
                ev->process.exit_time = le_get64(p + off);
        return 0;
}

static int dec_thread(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, thread);
        /* WMI_EXTENDED_THREAD_INFORMATION (ETL-FORMAT.md 3.7). */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize;
        size_t fixed = ev->version >= 2 ? 8 + 7 * ps + 4 : 8;
        size_t prio = 8 + 7 * ps + 4, next;

        if (pl->len < fixed)
                return -EBADMSG;
        ev->type = KEV_THREAD;
        ev->thread.phase = phase_of(ev->opcode);
        ev->thread.name = "";
        if (ev->version == 0) {
                ev->thread.tid = le_get32(p);
                ev->thread.pid = le_get32(p + 4);
        } else {
                ev->thread.pid = le_get32(p);
                ev->thread.tid = le_get32(p + 4);
        }
        if (ev->version >= 2) {
                ev->thread.stack_base = ldptr(p + 8, pl->psize);
                ev->thread.stack_limit = ldptr(p + 8 + ps, pl->psize);
                ev->thread.user_stack_base = ldptr(p + 8 + 2 * ps, pl->psize);
                ev->thread.user_stack_limit = ldptr(p + 8 + 3 * ps, pl->psize);
                ev->thread.affinity = ldptr(p + 8 + 4 * ps, pl->psize);
                ev->thread.win32_start_addr = ldptr(p + 8 + 5 * ps, pl->psize);
                ev->thread.teb_base = ldptr(p + 8 + 6 * ps, pl->psize);
                ev->thread.sub_process_tag = le_get32(p + 8 + 7 * ps);
        }
        if (ev->version >= 3 && pl->len >= prio + 4) {
                ev->thread.base_priority = (int8_t)p[prio];
                ev->thread.page_priority = p[prio + 1];
                ev->thread.io_priority = p[prio + 2];
                ev->thread.thread_flags = p[prio + 3];
                ev->thread.name = kstr_utf16(d, pl, prio + 4, &next);
        }
        ev->pid = ev->thread.pid;
        ev->tid = ev->thread.tid;
        kdecoder_tid_set(d, ev->thread.tid, ev->thread.pid);
        return 0;
}

static int dec_thread_name(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, thread_name);
        size_t next;

        if (pl->len < 8)
                return -EBADMSG;
        ev->type = KEV_THREAD_NAME;
        ev->thread_name.pid = le_get32(pl->p);
        ev->thread_name.tid = le_get32(pl->p + 4);
        ev->thread_name.name = kstr_utf16(d, pl, 8, &next);
        ev->pid = ev->thread_name.pid;
        ev->tid = ev->thread_name.tid;
        kdecoder_tid_set(d, ev->thread_name.tid, ev->thread_name.pid);
        return 0;
}

static int dec_cswitch(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, cswitch);
        /* WMI_CONTEXTSWAP (ETL-FORMAT.md 3.5): 16 bytes in v1, 24 from v2. */
        const uint8_t *p = pl->p;

        if (pl->len < (ev->version >= 2 ? 24u : 16u))
                return -EBADMSG;
        ev->type = KEV_CSWITCH;
        ev->cswitch.new_tid = le_get32(p);
        ev->cswitch.old_tid = le_get32(p + 4);
        ev->cswitch.new_priority = (int8_t)p[8];
        ev->cswitch.old_priority = (int8_t)p[9];
        ev->cswitch.previous_cstate = p[10];
        ev->cswitch.old_wait_reason = p[12];
        ev->cswitch.old_wait_mode = p[13] & 1;
        ev->cswitch.old_state = p[14];
        ev->cswitch.old_ideal_processor = p[15];
        if (ev->version >= 2) {
                ev->cswitch.new_wait_time = le_get32(p + 16);
                ev->cswitch.old_remaining_quantum = (int32_t)le_get32(p + 20);
        }
        ev->cswitch.new_pid = kdecoder_tid_get(d, ev->cswitch.new_tid);
        ev->cswitch.old_pid = kdecoder_tid_get(d, ev->cswitch.old_tid);
        ev->pid = ev->cswitch.new_pid;
        ev->tid = ev->cswitch.new_tid;
        return 0;
}

static int dec_ready_thread(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, ready_thread);
        /* ETW_READY_THREAD_EVENT (ETL-FORMAT.md 3.6). */
        if (pl->len < 8)
                return -EBADMSG;
        ev->type = KEV_READY_THREAD;
        ev->ready_thread.tid = le_get32(pl->p);
        ev->ready_thread.adjust_reason = pl->p[4];
        ev->ready_thread.adjust_increment = (int8_t)pl->p[5];
        ev->ready_thread.flags = pl->p[6];
        ev->ready_thread.readying_tid = ev->tid;
        ev->ready_thread.readying_pid = ev->pid;
        ev->tid = ev->ready_thread.tid;
        ev->pid = kdecoder_tid_get(d, ev->ready_thread.tid);
        return 0;
}

static int dec_image(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, image);
        /* WMI_IMAGELOAD_INFORMATION (ETL-FORMAT.md 3.9); v0/v1 as PerfView reads them. */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize, name, next;

        if (ev->version == 0)
                name = 2 * ps;
        else if (ev->version == 1)
                name = 2 * ps + 4;
        else
                name = 3 * ps + 32;
        if (pl->len < name)
                return -EBADMSG;
        ev->type = KEV_IMAGE;
        ev->image.phase = phase_of(ev->opcode);
        ev->image.base = ldptr(p, pl->psize);
        ev->image.size = ldptr(p + ps, pl->psize);
        ev->image.pid = ev->pid;
        if (ev->version >= 1)
                ev->image.pid = le_get32(p + 2 * ps);
        if (ev->version >= 2) {
                ev->image.checksum = le_get32(p + 2 * ps + 4);
                ev->image.time_date_stamp = le_get32(p + 2 * ps + 8);
                ev->image.signature_level = p[2 * ps + 12];
                ev->image.signature_type = p[2 * ps + 13];
                ev->image.default_base = ldptr(p + 2 * ps + 16, pl->psize);
        }
        ev->image.file_name = kstr_utf16(d, pl, name, &next);
        ev->pid = ev->image.pid;
        return 0;
}

static int dec_image_id(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, image_id);
        /* KernelTraceControl ImageID (ETL-FORMAT.md 3.10). */
        size_t ps = pl->psize, next;

        if (pl->len < 2 * ps + 8)
                return -EBADMSG;
        ev->type = KEV_IMAGE_ID;
        ev->image_id.base = ldptr(pl->p, pl->psize);
        ev->image_id.size = ldptr(pl->p + ps, pl->psize);
        ev->image_id.pid = le_get32(pl->p + 2 * ps);
        ev->image_id.time_date_stamp = le_get32(pl->p + 2 * ps + 4);
        ev->image_id.original_file_name = kstr_utf16(d, pl, 2 * ps + 8, &next);
        ev->pid = ev->image_id.pid;
        return 0;
}

static int dec_dbg_id(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, dbg_id);
        /* KernelTraceControl DbgID_* (ETL-FORMAT.md 3.10). */
        size_t ps = pl->psize, next;
        bool is_rsds = ev->opcode == KTC_DBGID_RSDS || ev->opcode == KTC_DBGID_ILRSDS;
        size_t fixed = is_rsds ? ps + 24 : ev->opcode == KTC_DBGID_PPDB ? ps + 12 : ps + 4;

        if (pl->len < fixed)
                return -EBADMSG;
        ev->type = KEV_DBG_ID;
        ev->dbg_id.base = ldptr(pl->p, pl->psize);
        ev->dbg_id.pid = le_get32(pl->p + ps);
        ev->dbg_id.pdb_file_name = "";
        if (is_rsds) {
                ev->dbg_id.has_pdb = true;
                memcpy(&ev->dbg_id.guid_sig, pl->p + ps + 4, sizeof(GUID));
                ev->dbg_id.age = le_get32(pl->p + ps + 20);
                ev->dbg_id.pdb_file_name = kstr_ansi(d, pl, ps + 24, &next);
        } else if (ev->opcode == KTC_DBGID_PPDB) {
                ev->dbg_id.has_ppdb = true;
                ev->dbg_id.time_date_stamp = le_get32(pl->p + ps + 4);
                ev->dbg_id.major_version = le_get16(pl->p + ps + 8);
                ev->dbg_id.minor_version = le_get16(pl->p + ps + 10);
        }
        ev->pid = ev->dbg_id.pid;
        return 0;
}

static int dec_file_version(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, file_version);
        /* KernelTraceControl FileVersion: two u32, then ten UTF-16 strings. */
        size_t off = 8;

        if (pl->len < 8)
                return -EBADMSG;
        ev->type = KEV_FILE_VERSION;
        ev->file_version.image_size = le_get32(pl->p);
        ev->file_version.time_date_stamp = le_get32(pl->p + 4);
        ev->file_version.orig_file_name = kstr_utf16(d, pl, off, &off);
        ev->file_version.file_description = kstr_utf16(d, pl, off, &off);
        ev->file_version.file_version = kstr_utf16(d, pl, off, &off);
        (void)kstr_utf16(d, pl, off, &off); /* BinFileVersion */
        (void)kstr_utf16(d, pl, off, &off); /* VerLanguage */
        ev->file_version.product_name = kstr_utf16(d, pl, off, &off);
        ev->file_version.company_name = kstr_utf16(d, pl, off, &off);
        ev->file_version.product_version = kstr_utf16(d, pl, off, &off);
        return 0;
}

static int dec_sample(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, sample);
        /* PERFINFO_SAMPLED_PROFILE_INFORMATION (ETL-FORMAT.md 3.2). */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize;

        if (pl->len < ps + 8)
                return -EBADMSG;
        ev->type = KEV_SAMPLE;
        ev->sample.ip = ldptr(p, pl->psize);
        ev->sample.tid = le_get32(p + ps);
        ev->sample.count = le_get16(p + ps + 4);
        ev->sample.flags = p[ps + 6] & 0x07;
        ev->sample.priority = p[ps + 6] >> 3;
        ev->sample.rank = p[ps + 7];
        ev->tid = ev->sample.tid;
        ev->pid = kdecoder_tid_get(d, ev->sample.tid);
        return 0;
}

static int dec_pmc_sample(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, pmc_sample);
        /* PERFINFO_PMC_SAMPLE_INFORMATION (ETL-FORMAT.md 3.3). */
        size_t ps = pl->psize;

        if (pl->len < ps + 8)
                return -EBADMSG;
        ev->type = KEV_PMC_SAMPLE;
        ev->pmc_sample.ip = ldptr(pl->p, pl->psize);
        ev->pmc_sample.tid = le_get32(pl->p + ps);
        ev->pmc_sample.source = le_get16(pl->p + ps + 4);
        ev->tid = ev->pmc_sample.tid;
        ev->pid = kdecoder_tid_get(d, ev->pmc_sample.tid);
        return 0;
}

static int dec_pmc_config(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, pmc_config);
        size_t off = 4;

        if (pl->len < 4)
                return -EBADMSG;
        ev->type = KEV_PMC_CONFIG;
        ev->pmc_config.nr_counters = le_get32(pl->p);
        for (uint32_t i = 0; i < KEV_MAX_PMC; i++) {
                ev->pmc_config.names[i] = "";
                if (i < ev->pmc_config.nr_counters)
                        ev->pmc_config.names[i] = kstr_utf16(d, pl, off, &off);
        }
        return 0;
}

static int dec_profile_interval(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, profile_interval);
        size_t next;

        if (pl->len < 12)
                return -EBADMSG;
        ev->type = KEV_PROFILE_INTERVAL;
        ev->profile_interval.source = le_get32(pl->p);
        ev->profile_interval.new_interval_100ns = le_get32(pl->p + 4);
        ev->profile_interval.old_interval_100ns = le_get32(pl->p + 8);
        ev->profile_interval.source_name = "";
        if (ev->version >= 3)
                ev->profile_interval.source_name = kstr_utf16(d, pl, 12, &next);
        return 0;
}

/* Copies n pointer-sized frames at p into the frame scratch, widened to 64 bits. */
static const uint64_t *widen_frames(struct kdecoder *d, const uint8_t *p, size_t n, unsigned psize)
{
        if (psize == 8) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                /* the payload itself when it is aligned (ETW records are 8-aligned) */
                if (((uintptr_t)p & 7) == 0)
                        return (const uint64_t *)(const void *)p;
#endif
                memcpy(d->frames, p, n * 8);
        } else {
                for (size_t i = 0; i < n; i++)
                        d->frames[i] = le_get32(p + 4 * i);
        }
        return d->frames;
}

static int dec_stack(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, stack);
        /* STACK_WALK_EVENT_DATA (ETL-FORMAT.md 3.4). */
        size_t n;

        if (pl->len < 16)
                return -EBADMSG;
        n = (pl->len - 16) / pl->psize;
        ev->type = KEV_STACK;
        ev->stack.event_timestamp = le_get64(pl->p);
        ev->stack.event_time_ns = kdecoder_session_ns(d, ev->stack.event_timestamp);
        ev->stack.pid = le_get32(pl->p + 8);
        ev->stack.tid = le_get32(pl->p + 12);
        ev->stack.nr_frames = (uint32_t)n;
        ev->stack.frames = widen_frames(d, pl->p + 16, n, pl->psize);
        ev->pid = ev->stack.pid;
        ev->tid = ev->stack.tid;
        /* a stack names its thread's process: a thread no Thread event has named yet (a live
           session's CPU buffer can come before the rundown's) is known from here on */
        if (ev->stack.pid != KEV_NONE && ev->stack.tid != 0 &&
            kdecoder_tid_get(d, ev->stack.tid) == KEV_NONE)
                kdecoder_tid_set(d, ev->stack.tid, ev->stack.pid);
        return 0;
}

static int dec_stack_key(struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, stack_key);
        if (pl->len < 16 + (size_t)pl->psize)
                return -EBADMSG;
        ev->type = KEV_STACK_KEY;
        ev->stack_key.event_timestamp = le_get64(pl->p);
        ev->stack_key.pid = le_get32(pl->p + 8);
        ev->stack_key.tid = le_get32(pl->p + 12);
        ev->stack_key.key = ldptr(pl->p + 16, pl->psize);
        ev->stack_key.is_kernel = ev->opcode == (WMI_LOG_TYPE_STACK_KEY_KERNEL & 0xFF);
        ev->pid = ev->stack_key.pid;
        ev->tid = ev->stack_key.tid;
        return 0;
}

static int dec_stack_key_def(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, stack_key_def);
        size_t ps = pl->psize, n;

        if (pl->len < ps)
                return -EBADMSG;
        n = (pl->len - ps) / ps;
        ev->type = KEV_STACK_KEY_DEF;
        ev->stack_key_def.key = ldptr(pl->p, pl->psize);
        ev->stack_key_def.nr_frames = (uint32_t)n;
        ev->stack_key_def.frames = widen_frames(d, pl->p + ps, n, pl->psize);

        ev->stack_key_def.nr_resolved = stack_keys_nr_pending(d, ev->stack_key_def.key);
        return 0;
}

static int dec_lbr(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, lbr);
        /* _LBR_TRACE_EVENT_DATA (ETL-FORMAT.md 3.11): entries of From, To, Reserved. */
        size_t ps = pl->psize, first = ps == 8 ? 24 : 20, n;

        if (pl->len < first)
                return -EBADMSG;
        n = (pl->len - first) / (3 * ps);
        ev->type = KEV_LBR;
        ev->lbr.event_timestamp = le_get64(pl->p);
        ev->lbr.pid = le_get32(pl->p + 8);
        ev->lbr.tid = le_get32(pl->p + 12);
        ev->lbr.options = le_get32(pl->p + 16);
        for (size_t i = 0; i < n; i++) {
                const uint8_t *e = pl->p + first + i * 3 * ps;

                d->lbr[i].from = ldptr(e, pl->psize);
                d->lbr[i].to = ldptr(e + ps, pl->psize);
                d->lbr_info[i] = ldptr(e + 2 * ps, pl->psize);
        }
        ev->lbr.nr_entries = (uint32_t)n;
        ev->lbr.entries = d->lbr;
        ev->lbr.info = d->lbr_info;
        ev->pid = ev->lbr.pid;
        ev->tid = ev->lbr.tid;
        return 0;
}

/* Decodes the payload into ev by (provider, opcode, version, pointer size). */
int kernel_decode(struct kdecoder *d, enum kprov k, struct kevent *ev, const struct payload *pl)
{
        uint8_t op = ev->opcode;

        switch (k) {
        case KP_PERFINFO:
                switch (op) {
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE & 0xFF: return dec_sample(d, ev, pl);
                case PERFINFO_LOG_TYPE_PMC_INTERRUPT & 0xFF: return dec_pmc_sample(d, ev, pl);
                case PERFINFO_LOG_TYPE_PMC_CONFIG & 0xFF: return dec_pmc_config(d, ev, pl);
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL & 0xFF:
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START & 0xFF:
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_END & 0xFF:
                        return dec_profile_interval(d, ev, pl);
                }
                break;
        case KP_STACKWALK:
                switch (op) {
                case WMI_LOG_TYPE_STACKWALK & 0xFF: return dec_stack(d, ev, pl);
                case WMI_LOG_TYPE_STACK_KEY_KERNEL & 0xFF:
                case WMI_LOG_TYPE_STACK_KEY_USER & 0xFF: return dec_stack_key(ev, pl);
                case WMI_LOG_TYPE_STACK_KEY_CREATE & 0xFF:
                case WMI_LOG_TYPE_STACK_KEY_DELETE & 0xFF:
                case WMI_LOG_TYPE_STACK_KEY_RUNDOWN & 0xFF: return dec_stack_key_def(d, ev, pl);
                }
                break;
        case KP_THREAD:
                switch (op) {
                case WMI_LOG_TYPE_CONTEXT_SWAP & 0xFF: return dec_cswitch(d, ev, pl);
                case WMI_LOG_TYPE_READY_THREAD & 0xFF: return dec_ready_thread(d, ev, pl);
                case WMI_LOG_TYPE_THREAD_CREATE & 0xFF:
                case WMI_LOG_TYPE_THREAD_DELETE & 0xFF:
                case WMI_LOG_TYPE_THREAD_DC_START & 0xFF:
                case WMI_LOG_TYPE_THREAD_DC_END & 0xFF: return dec_thread(d, ev, pl);
                case WMI_LOG_TYPE_THREAD_SET_NAME & 0xFF: return dec_thread_name(d, ev, pl);
                }
                break;
        case KP_PROCESS:
                switch (op) {
                case WMI_LOG_TYPE_PROCESS_CREATE & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DELETE & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DC_START & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DC_END & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DEFUNCT & 0xFF: return dec_process(d, ev, pl);
                case WMI_LOG_TYPE_PROCESS_LOAD_IMAGE & 0xFF: return dec_image(d, ev, pl);
                }
                break;
        case KP_IMAGE:
                switch (op) {
                case WMI_LOG_TYPE_IMAGE_LOAD & 0xFF:
                case WMI_LOG_TYPE_IMAGE_UNLOAD & 0xFF:
                case WMI_LOG_TYPE_IMAGE_DC_START & 0xFF:
                case WMI_LOG_TYPE_IMAGE_DC_END & 0xFF: return dec_image(d, ev, pl);
                }
                break;
        case KP_LBR:
                if (op == EVENT_TRACE_LAST_BRANCH_EVENT_OPCODE)
                        return dec_lbr(d, ev, pl);
                break;
        case KP_EVENT_TRACE:
                switch (op) {
                case WMI_LOG_TYPE_HEADER: return dec_trace_header(d, ev, pl);
                case WMI_LOG_TYPE_HEADER_EXTENSION:
                case WMI_LOG_TYPE_GROUP_MASKS_END: return dec_group_mask(ev, pl);
                }
                break;
        case KP_KTC:
                switch (op) {
                case KTC_IMAGE_ID: return dec_image_id(d, ev, pl);
                case KTC_DBGID_NONE:
                case KTC_DBGID_RSDS:
                case KTC_DBGID_ILRSDS:
                case KTC_DBGID_PPDB:
                case KTC_DBGID_DETERM: return dec_dbg_id(d, ev, pl);
                case KTC_FILE_VERSION: return dec_file_version(d, ev, pl);
                }
                break;
        default: break;
        }
        return KEV_NO_LAYOUT;
}

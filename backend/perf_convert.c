/* SPDX-License-Identifier: MIT */
/* perf_convert.c: turns perf ring records into kernel-logger records, bytes in, bytes out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "le_bytes.h"
#include "perf_convert.h"
#include "etl_writer.h"
#include "unwind/unwind.h"
#include "util/xalloc.h"

_Static_assert(PERF_CONV_NR_UNWIND_STOPS == UNWIND_NR_STOPS, "UnwindStats stops are unwind_stop's");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are read as little-endian");

/* doc/etwtop-provider.md */

#define CONV_NONE        0xFFFFFFFFu /* an empty slot key, an unknown tid/pid */
#define CONV_MAX_FRAMES  1024u
#define CONV_MAX_CMDLINE 4096u
#define CONV_MAX_PATH    4096u
/* a StackWalk record's PERFINFO header and payload head (EventTimeStamp, pid, tid) */
#define STACK_REC_HEAD  32u
#define CONV_KADDR_MAX  (1u << 20) /* kernel addresses remembered for the symbol events */
#define CONV_MAX_IMAGES 4096u      /* per process */
#define BUILD_ID_MAX    20u
#define KERNEL_VERSION  85u      /* ETW_KERNEL_HEADER_EXTENSION Version, as Windows 10 writes it */
#define DEFAULT_TICK_NS 1000000u /* NewThreadWaitTime unit: TimerResolution 10000 (1 ms) */
/* Switch-out stacks kept for the threads' next switch-in (the CSwitch stack Windows writes). */
#define CONV_MAX_SAVED_STACKS 16384u
/* UserSID (ETL-FORMAT.md 3.8): the TOKEN_USER's Sid pointer. Windows writes the SID's kernel
   address; readers only test it for 0 (PerfView's SkipSID; etwtop's decoder tests its low
   32 bits), so any non-zero value will do. */
#define SID_POINTER             0xFFFF800000001000ull
#define SID_UNIX_USER_AUTHORITY 22 /* S-1-22-1-uid: the "Unix user" SIDs of Samba and NFS */

/* EVNTRACE_LBR_FILTER_* type bits (LINUX-MAPPING.md 1.3). */
#define LBR_JCC   EVNTRACE_LBR_FILTER_JCC
#define LBR_RCALL EVNTRACE_LBR_FILTER_NEAR_REL_CALL
#define LBR_ICALL EVNTRACE_LBR_FILTER_NEAR_IND_CALL
#define LBR_RET   EVNTRACE_LBR_FILTER_NEAR_RET
#define LBR_IJMP  EVNTRACE_LBR_FILTER_NEAR_IND_JMP
#define LBR_RJMP  EVNTRACE_LBR_FILTER_NEAR_REL_JMP
#define LBR_FAR   EVNTRACE_LBR_FILTER_FAR_BRANCH
#define LBR_TYPES (LBR_JCC | LBR_RCALL | LBR_ICALL | LBR_RET | LBR_IJMP | LBR_RJMP | LBR_FAR)

/* KTHREAD_STATE and KWAIT_REASON values used below (ETL-FORMAT.md 3.5). */
enum {
        KSTATE_READY = 1,
        KSTATE_TERMINATED = 4,
        KSTATE_WAITING = 5,
};
enum {
        KWAIT_EXECUTIVE = 0,
        KWAIT_DELAY_EXECUTION = 4,
        KWAIT_SUSPENDED = 5,
        KWAIT_USER_REQUEST = 6,
        KWAIT_WR_PAGE_IN = 9,
        KWAIT_WR_RESOURCE = 27,
        KWAIT_WR_MUTEX = 29,
        KWAIT_WR_ALERT_BY_THREAD_ID = 37,
        KWAIT_WR_TERMINATED = 22,
        KWAIT_WR_KERNEL = 26,
        KWAIT_WR_PREEMPTED = 32,
        KWAIT_WR_YIELD_EXECUTION = 33,
};

/* trace_flag_type (include/linux/trace_events.h, 6.x): common_flags bits of a tracepoint. */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10

/* ---- little-endian helpers ---- */

static inline void st16(uint8_t *p, uint16_t v)
{
        memcpy(p, &v, 2);
}

static inline void st32(uint8_t *p, uint32_t v)
{
        memcpy(p, &v, 4);
}

static inline void st64(uint8_t *p, uint64_t v)
{
        memcpy(p, &v, 8);
}

static inline uint64_t hash64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        return x;
}

static inline bool is_kernel_addr(uint64_t a)
{
        return a >> 63;
}

/* ---- strings ---- */

uint32_t perf_put_utf16(uint8_t *dst, const char *s)
{
        const uint8_t *u = (const uint8_t *)s;
        uint32_t n = 0;

        while (*u) {
                uint32_t cp, len;

                if (u[0] < 0x80) {
                        cp = u[0];
                        len = 1;
                } else if ((u[0] & 0xE0) == 0xC0 && (u[1] & 0xC0) == 0x80) {
                        cp = (uint32_t)(u[0] & 0x1F) << 6 | (u[1] & 0x3F);
                        len = 2;
                } else if ((u[0] & 0xF0) == 0xE0 && (u[1] & 0xC0) == 0x80 &&
                           (u[2] & 0xC0) == 0x80) {
                        cp = (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 |
                             (u[2] & 0x3F);
                        len = 3;
                } else if ((u[0] & 0xF8) == 0xF0 && (u[1] & 0xC0) == 0x80 &&
                           (u[2] & 0xC0) == 0x80 && (u[3] & 0xC0) == 0x80) {
                        cp = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 |
                             (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
                        len = 4;
                } else {
                        cp = 0xFFFD;
                        len = 1;
                }
                if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                        cp = 0xFFFD;
                if (cp >= 0x10000) {
                        cp -= 0x10000;
                        st16(dst + n, (uint16_t)(0xD800 | cp >> 10));
                        st16(dst + n + 2, (uint16_t)(0xDC00 | (cp & 0x3FF)));
                        n += 4;
                } else {
                        st16(dst + n, (uint16_t)cp);
                        n += 2;
                }
                u += len;
        }
        st16(dst + n, 0);
        return n + 2;
}

/* Copies at most max bytes of s (never cutting it mid-record: a plain byte limit), with NUL. */
static uint32_t put_cstr(uint8_t *dst, const char *s, size_t max)
{
        size_t n = strnlen(s, max);
        memcpy(dst, s, n);
        dst[n] = 0;
        return (uint32_t)n + 1;
}

/* s truncated to max bytes into buf (buf has max + 1 bytes). */
static const char *clip(char *buf, const char *s, size_t max)
{
        size_t n = strnlen(s, max);
        memcpy(buf, s, n);
        buf[n] = 0;
        return buf;
}

/* ---- tracepoint formats ---- */

static const char *skip_ws(const char *p, const char *end)
{
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

/* Parses "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;" of one line. */
static bool parse_field_line(const char *p, const char *end, struct perf_tp_field *f)
{
        const char *semi = memchr(p, ';', (size_t)(end - p));
        if (!semi)
                return false;
        /* the name: the last identifier before ';' or '[' */
        const char *name_end = semi;
        const char *br = memchr(p, '[', (size_t)(semi - p));
        if (br)
                name_end = br;
        const char *name = name_end;
        while (name > p &&
               (name[-1] == '_' || (name[-1] >= 'a' && name[-1] <= 'z') ||
                (name[-1] >= 'A' && name[-1] <= 'Z') || (name[-1] >= '0' && name[-1] <= '9')))
                name--;
        size_t len = (size_t)(name_end - name);
        if (len == 0 || len >= sizeof(f->name))
                return false;
        memcpy(f->name, name, len);
        f->name[len] = 0;

        size_t rest = (size_t)(end - semi);
        const char *o = memmem(semi, rest, "offset:", 7);
        const char *s = memmem(semi, rest, "size:", 5);
        const char *g = memmem(semi, rest, "signed:", 7);
        if (!o || !s)
                return false;
        f->offset = (uint16_t)strtoul(o + 7, NULL, 10);
        f->size = (uint16_t)strtoul(s + 5, NULL, 10);
        f->is_signed = g && g + 7 < end && g[7] == '1';
        return f->size > 0;
}

/* Parses the first __print_flags(...) table: { 0x01, "S" }, ... */
static void parse_print_flags(const char *p, const char *end, struct perf_tp_format *fmt)
{
        const char *pf = NULL;
        for (const char *q = p; q + 13 < end; q++) {
                if (memcmp(q, "__print_flags", 13) == 0) {
                        pf = q;
                        break;
                }
        }
        if (!pf)
                return;
        uint64_t highest = 0;
        char last = 0; /* the last character that was not blank */
        for (const char *q = pf + 13; q < end && fmt->nr_flags < PERF_TP_MAX_FLAGS; q++) {
                if (*q == ')' && last == '}')
                        break; /* the call's closing parenthesis, after the pairs */
                if (*q != ' ' && *q != '\t')
                        last = *q;
                if (*q != '{')
                        continue;
                char *num_end;
                const char *n = skip_ws(q + 1, end);
                uint64_t v = strtoull(n, &num_end, 0);
                const char *quote = memchr(num_end, '"', (size_t)(end - num_end));
                if (!quote || quote + 2 >= end || num_end == n)
                        continue;
                fmt->flags[fmt->nr_flags].value = v;
                fmt->flags[fmt->nr_flags].letter = quote[1];
                fmt->nr_flags++;
                if (v > highest)
                        highest = v;
                const char *close = memchr(quote + 1, '}', (size_t)(end - quote - 1));
                if (!close)
                        break;
                q = close;
                last = '}';
        }
        fmt->preempt_bit = highest << 1;
}

int perf_tp_format_parse(const char *text, size_t len, struct perf_tp_format *fmt)
{
        const char *p = text, *end = text + len;

        memset(fmt, 0, sizeof(*fmt));
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *le = nl ? nl : end;
                const char *q = skip_ws(p, le);

                if ((size_t)(le - q) > 3 && memcmp(q, "ID:", 3) == 0) {
                        fmt->id = (uint32_t)strtoul(q + 3, NULL, 10);
                } else if ((size_t)(le - q) > 6 && memcmp(q, "field:", 6) == 0) {
                        if (fmt->nr_fields < PERF_TP_MAX_FIELDS &&
                            parse_field_line(q + 6, le, &fmt->fields[fmt->nr_fields]))
                                fmt->nr_fields++;
                } else if ((size_t)(le - q) > 10 && memcmp(q, "print fmt:", 10) == 0) {
                        parse_print_flags(q, le, fmt);
                }
                p = le + 1;
        }
        return fmt->nr_fields ? 0 : -EBADMSG;
}

const struct perf_tp_field *perf_tp_field_find(const struct perf_tp_format *fmt, const char *name)
{
        if (!fmt)
                return NULL;
        for (uint32_t i = 0; i < fmt->nr_memo; i++)
                if (fmt->memo[i].name == name)
                        return fmt->memo[i].index < 0 ? NULL : &fmt->fields[fmt->memo[i].index];
        int32_t index = -1;
        for (uint32_t i = 0; i < fmt->nr_fields && index < 0; i++)
                if (strcmp(fmt->fields[i].name, name) == 0)
                        index = (int32_t)i;
        /* the format is never defined const: the memo is the only part that changes */
        struct perf_tp_format *m = (struct perf_tp_format *)fmt;
        if (m->nr_memo < sizeof(m->memo) / sizeof(m->memo[0])) {
                m->memo[m->nr_memo].name = name;
                m->memo[m->nr_memo].index = index;
                m->nr_memo++;
        }
        return index < 0 ? NULL : &fmt->fields[index];
}

bool perf_tp_field_get(const struct perf_tp_field *f, const uint8_t *raw, uint32_t size,
                       int64_t *value)
{
        if (!f || (uint32_t)f->offset + f->size > size)
                return false;
        const uint8_t *p = raw + f->offset;
        switch (f->size) {
        case 1: *value = f->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0]; break;
        case 2: *value = f->is_signed ? (int64_t)(int16_t)le_get16(p) : (int64_t)le_get16(p); break;
        case 4: *value = f->is_signed ? (int64_t)(int32_t)le_get32(p) : (int64_t)le_get32(p); break;
        case 8: *value = (int64_t)le_get64(p); break;
        default: return false;
        }
        return true;
}

/* The letter of the format's flag table that bits contain, in order of precedence; the table
   of Linux 4.14+ (S D T t X Z P I, preempted 0x100) when the format had none. */
static bool has_letter(const struct perf_tp_format *fmt, uint64_t bits, char letter)
{
        static const struct {
                uint64_t value;
                char letter;
        } def[] = {{0x01, 'S'}, {0x02, 'D'}, {0x04, 'T'}, {0x08, 't'},
                   {0x10, 'X'}, {0x20, 'Z'}, {0x40, 'P'}, {0x80, 'I'}};

        if (fmt && fmt->nr_flags) {
                for (uint32_t i = 0; i < fmt->nr_flags; i++) {
                        if (fmt->flags[i].letter == letter && (bits & fmt->flags[i].value))
                                return true;
                }
                return false;
        }
        for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++) {
                if (def[i].letter == letter && (bits & def[i].value))
                        return true;
        }
        return false;
}

/* prev_state -> (KTHREAD_STATE, KWAIT_REASON). Linux has no wait reasons; the letters the
   tracepoint's own print fmt prints say how the thread left the CPU:
     R+, R (runnable)                  -> Ready   / WrPreempted (32)
     S  (interruptible sleep)          -> Waiting / UserRequest (6)
     D  (uninterruptible, e.g. I/O)    -> Waiting / Executive (0)
     T, t (stopped, traced)            -> Waiting / Suspended (5)
     I, P (idle or parked kthread)     -> Waiting / WrKernel (26)
     X, Z (dead, zombie)               -> Terminated / WrTerminated (22)
   Anything else -> Waiting / Executive. The "+" (preempted in the kernel) does not tell a
   preemption from a yield: on current kernels a thread preempted at the tick leaves through
   schedule() on its return to user space (exit_to_user_mode_loop) with prev_state R and no
   "+", as a sched_yield does. A switch with a kernel callchain says more: a sleep (S, D) is
   refined by where it slept, a runnable thread is WrYieldExecution (33) only when it left
   through do_sched_yield (wait_reason_of_stack, perf_wait_reason_of_function). */
struct perf_thread_state perf_prev_state_to_etw(const struct perf_tp_format *fmt,
                                                uint64_t prev_state)
{
        uint64_t table = 0;

        if (fmt && fmt->nr_flags) {
                for (uint32_t i = 0; i < fmt->nr_flags; i++)
                        table |= fmt->flags[i].value;
        } else {
                table = 0xFF;
        }
        /* no letter: R, with or without the "+" bit (above the table) */
        uint64_t bits = prev_state & table;
        if (bits == 0)
                return (struct perf_thread_state){KSTATE_READY, KWAIT_WR_PREEMPTED};
        if (has_letter(fmt, bits, 'X') || has_letter(fmt, bits, 'Z'))
                return (struct perf_thread_state){KSTATE_TERMINATED, KWAIT_WR_TERMINATED};
        if (has_letter(fmt, bits, 'T') || has_letter(fmt, bits, 't'))
                return (struct perf_thread_state){KSTATE_WAITING, KWAIT_SUSPENDED};
        if (has_letter(fmt, bits, 'D'))
                return (struct perf_thread_state){KSTATE_WAITING, KWAIT_EXECUTIVE};
        if (has_letter(fmt, bits, 'I') || has_letter(fmt, bits, 'P'))
                return (struct perf_thread_state){KSTATE_WAITING, KWAIT_WR_KERNEL};
        if (has_letter(fmt, bits, 'S'))
                return (struct perf_thread_state){KSTATE_WAITING, KWAIT_USER_REQUEST};
        return (struct perf_thread_state){KSTATE_WAITING, KWAIT_EXECUTIVE};
}

int perf_wait_reason_of_function(const char *name)
{
        static const struct {
                const char *name;
                bool is_prefix;
                uint8_t reason;
        } sites[] = {
                {"do_nanosleep", false, KWAIT_DELAY_EXECUTION},
                {"hrtimer_nanosleep", false, KWAIT_DELAY_EXECUTION},
                {"common_nsleep", false, KWAIT_DELAY_EXECUTION},
                {"futex_wait", true, KWAIT_WR_ALERT_BY_THREAD_ID}, /* futex_wait_queue, ... */
                {"__futex_wait", false, KWAIT_WR_ALERT_BY_THREAD_ID},
                {"io_schedule", true, KWAIT_WR_PAGE_IN}, /* io_schedule, io_schedule_timeout */
                {"folio_wait_bit", true, KWAIT_WR_PAGE_IN},
                {"wait_on_page_bit", true, KWAIT_WR_PAGE_IN},
                {"__folio_lock", true, KWAIT_WR_PAGE_IN},
                {"__mutex_lock", true, KWAIT_WR_MUTEX},
                {"mutex_lock", true, KWAIT_WR_MUTEX},
                {"rwsem_down_", true, KWAIT_WR_RESOURCE},
                /* sched_yield(2): do_sched_yield, inlined into the syscall's entry where the
                   compiler likes (6.18 x86_64: __x64_sys_sched_yield calls schedule()) */
                {"do_sched_yield", false, KWAIT_WR_YIELD_EXECUTION},
                {"__x64_sys_sched_yield", false, KWAIT_WR_YIELD_EXECUTION},
                {"__ia32_sys_sched_yield", false, KWAIT_WR_YIELD_EXECUTION},
                {"__arm64_sys_sched_yield", false, KWAIT_WR_YIELD_EXECUTION},
                {"__do_sys_sched_yield", false, KWAIT_WR_YIELD_EXECUTION},
                {"sys_sched_yield", false, KWAIT_WR_YIELD_EXECUTION},
                {"yield_to", false, KWAIT_WR_YIELD_EXECUTION},
        };
        if (!name)
                return -1;
        for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
                size_t n = strlen(sites[i].name);
                if (sites[i].is_prefix ? strncmp(name, sites[i].name, n) == 0
                                       : strcmp(name, sites[i].name) == 0)
                        return sites[i].reason;
        }
        return -1;
}

/* Synthetic Windows-like priority (LINUX-MAPPING.md 3.3): RT 0..99 -> 31..16, CFS 100..139
   (nice -20..19) -> 16..1 with nice 0 = 8. */
int8_t perf_prio_to_etw(int64_t prio)
{
        if (prio < 0)
                return 0;
        if (prio < 100)
                return (int8_t)(16 + (99 - prio) * 15 / 99);
        int64_t v = 8 + (120 - prio) * 2 / 5;
        if (v < 1)
                v = 1;
        if (v > 15)
                v = 15;
        return (int8_t)v;
}

/* ---- LBR ---- */

int perf_lbr_filter_from_etw(uint32_t flags, struct perf_lbr_filter *out)
{
        uint64_t bst = 0;
        uint32_t keep = LBR_TYPES & ~flags;

        memset(out, 0, sizeof(*out));
        if (flags & ~(uint32_t)EVNTRACE_LBR_VALID_FLAGS)
                return -EINVAL;
        if (!(flags & EVNTRACE_LBR_FILTER_KERNEL))
                bst |= PERF_SAMPLE_BRANCH_KERNEL;
        if (!(flags & EVNTRACE_LBR_FILTER_USER))
                bst |= PERF_SAMPLE_BRANCH_USER;
        if (!bst)
                return -EINVAL; /* kernel and user both suppressed */
        if (flags & EVNTRACE_LBR_CALLSTACK_ENABLE) {
                out->branch_sample_type = bst | PERF_SAMPLE_BRANCH_CALL_STACK;
                return 0;
        }
        if (!keep)
                return -EINVAL;
        if (keep == LBR_TYPES) {
                bst |= PERF_SAMPLE_BRANCH_ANY;
        } else if (keep & (LBR_RJMP | LBR_FAR)) {
                /* no perf bit selects near relative jumps or far branches alone: take every
                   branch with its type and drop the rest here */
                bst |= PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_TYPE_SAVE;
                out->is_post_filtered = true;
        } else {
                if (keep & LBR_JCC)
                        bst |= PERF_SAMPLE_BRANCH_COND;
                if (keep & LBR_RCALL)
                        bst |= PERF_SAMPLE_BRANCH_CALL;
                if (keep & LBR_ICALL)
                        bst |= PERF_SAMPLE_BRANCH_IND_CALL;
                if (keep & LBR_IJMP)
                        bst |= PERF_SAMPLE_BRANCH_IND_JUMP;
                if (keep & LBR_RET) {
                        /* ANY_RETURN also captures far returns, which are filtered out */
                        bst |= PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_TYPE_SAVE;
                        out->is_post_filtered = true;
                }
        }
        out->branch_sample_type = bst;
        out->drop = out->is_post_filtered ? LBR_TYPES & ~keep : 0;
        return 0;
}

uint32_t perf_lbr_class_of(uint64_t entry_flags)
{
        switch ((entry_flags >> 20) & 0xF) {
        case PERF_BR_COND: return LBR_JCC;
        case PERF_BR_UNCOND: return LBR_RJMP;
        case PERF_BR_IND: return LBR_IJMP;
        case PERF_BR_CALL:
        case PERF_BR_COND_CALL: return LBR_RCALL;
        case PERF_BR_IND_CALL: return LBR_ICALL;
        case PERF_BR_RET:
        case PERF_BR_COND_RET: return LBR_RET;
        default: return LBR_FAR; /* syscall, sysret, eret, irq, unknown */
        }
}

/* ---- perf record parsing ---- */

struct cursor {
        const uint8_t *p;
        uint32_t left;
        bool is_bad;
};

static uint64_t cur_u64(struct cursor *c)
{
        if (c->left < 8) {
                c->is_bad = true;
                c->left = 0;
                return 0;
        }
        uint64_t v = le_get64(c->p);
        c->p += 8;
        c->left -= 8;
        return v;
}

static const uint8_t *cur_take(struct cursor *c, uint64_t n)
{
        if (n > c->left) {
                c->is_bad = true;
                c->left = 0;
                return NULL;
        }
        const uint8_t *p = c->p;
        c->p += n;
        c->left -= (uint32_t)n;
        return p;
}

static void parse_read(struct cursor *c, uint64_t read_format, struct perf_sample *s)
{
        uint64_t nr = 1;

        if (read_format & PERF_FORMAT_GROUP)
                nr = cur_u64(c);
        if (!(read_format & PERF_FORMAT_GROUP)) {
                s->values[0] = cur_u64(c);
                s->nr_values = 1;
        }
        if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
                cur_u64(c);
        if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
                cur_u64(c);
        if (!(read_format & PERF_FORMAT_GROUP)) {
                if (read_format & PERF_FORMAT_ID)
                        cur_u64(c);
                if (read_format & PERF_FORMAT_LOST)
                        cur_u64(c);
                return;
        }
        if (nr > 64) {
                c->is_bad = true;
                return;
        }
        for (uint64_t i = 0; i < nr && !c->is_bad; i++) {
                uint64_t v = cur_u64(c);
                if (i < 8)
                        s->values[i] = v;
                if (read_format & PERF_FORMAT_ID)
                        cur_u64(c);
                if (read_format & PERF_FORMAT_LOST)
                        cur_u64(c);
        }
        s->nr_values = nr < 8 ? (uint32_t)nr : 8;
}

int perf_sample_parse(const uint8_t *rec, uint32_t size, uint64_t sample_type, uint64_t read_format,
                      uint64_t branch_sample_type, uint64_t regs_user_mask, struct perf_sample *s)
{
        /* not a memset: values past nr_values stay as they were (this runs for every sample) */
        s->id = s->ip = s->time = s->period = s->nr_callchain = s->nr_branches = 0;
        s->regs_abi = s->stack_size = 0;
        s->pid = s->tid = s->cpu = s->nr_values = s->raw_size = s->nr_regs = 0;
        s->callchain = s->raw = s->branches = s->regs = s->stack = NULL;
        if (size < sizeof(struct perf_event_header))
                return -EBADMSG;

        struct cursor c = {rec + 8, size - 8, false};
        uint64_t v;

        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                s->id = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_IP)
                s->ip = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_TID) {
                v = cur_u64(&c);
                s->pid = (uint32_t)v;
                s->tid = (uint32_t)(v >> 32);
        }
        if (sample_type & PERF_SAMPLE_TIME)
                s->time = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_ADDR)
                cur_u64(&c);
        if (sample_type & PERF_SAMPLE_ID) {
                v = cur_u64(&c);
                if (!(sample_type & PERF_SAMPLE_IDENTIFIER))
                        s->id = v;
        }
        if (sample_type & PERF_SAMPLE_STREAM_ID)
                cur_u64(&c);
        if (sample_type & PERF_SAMPLE_CPU)
                s->cpu = (uint32_t)cur_u64(&c);
        if (sample_type & PERF_SAMPLE_PERIOD)
                s->period = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_READ)
                parse_read(&c, read_format, s);
        if (sample_type & PERF_SAMPLE_CALLCHAIN) {
                s->nr_callchain = cur_u64(&c);
                if (s->nr_callchain > c.left / 8)
                        return -EBADMSG;
                s->callchain = cur_take(&c, s->nr_callchain * 8);
        }
        if (sample_type & PERF_SAMPLE_RAW) {
                if (c.left < 4)
                        return -EBADMSG;
                s->raw_size = le_get32(c.p);
                c.p += 4;
                c.left -= 4;
                s->raw = cur_take(&c, s->raw_size);
                /* the u32 size plus data are padded to 8 bytes */
                uint32_t pad = (8 - ((4 + s->raw_size) & 7)) & 7;
                if (!c.is_bad && pad <= c.left) {
                        c.p += pad;
                        c.left -= pad;
                }
        }
        if (sample_type & PERF_SAMPLE_BRANCH_STACK) {
                s->nr_branches = cur_u64(&c);
                if (branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
                        cur_u64(&c);
                if (s->nr_branches > c.left / 24)
                        return -EBADMSG;
                s->branches = cur_take(&c, s->nr_branches * 24);
                if (branch_sample_type & PERF_CONV_BRANCH_COUNTERS)
                        cur_take(&c, s->nr_branches * 8);
        }
        if (sample_type & PERF_SAMPLE_REGS_USER) {
                s->regs_abi = cur_u64(&c);
                if (s->regs_abi) {
                        s->nr_regs = (uint32_t)__builtin_popcountll(regs_user_mask);
                        s->regs = cur_take(&c, (uint64_t)s->nr_regs * 8);
                }
        }
        if (sample_type & PERF_SAMPLE_STACK_USER) {
                uint64_t copied = cur_u64(&c);
                if (copied) {
                        s->stack = cur_take(&c, copied);
                        uint64_t dyn = cur_u64(&c); /* the bytes that hold data */
                        s->stack_size = dyn < copied ? dyn : copied;
                }
        }
        /* later fields (weight, data source ...) are not needed */
        return c.is_bad ? -EBADMSG : 0;
}

int perf_sample_id_parse(const uint8_t *rec, uint32_t size, uint64_t sample_type,
                         struct perf_sample_id *sid)
{
        /* the trailer's fields, one u64 each (no popcount: without -mpopcnt it is a call) */
        uint32_t n =
                8 * (!!(sample_type & PERF_SAMPLE_TID) + !!(sample_type & PERF_SAMPLE_TIME) +
                     !!(sample_type & PERF_SAMPLE_ID) + !!(sample_type & PERF_SAMPLE_STREAM_ID) +
                     !!(sample_type & PERF_SAMPLE_CPU) + !!(sample_type & PERF_SAMPLE_IDENTIFIER));

        memset(sid, 0, sizeof(*sid));
        sid->pid = sid->tid = CONV_NONE;
        if (size < 8 + n)
                return -EBADMSG;

        const uint8_t *p = rec + size - n;
        uint64_t v;

        if (sample_type & PERF_SAMPLE_TID) {
                v = le_get64(p);
                sid->pid = (uint32_t)v;
                sid->tid = (uint32_t)(v >> 32);
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_TIME) {
                sid->time = le_get64(p);
                sid->has_time = true;
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_ID) {
                sid->id = le_get64(p);
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_STREAM_ID)
                p += 8;
        if (sample_type & PERF_SAMPLE_CPU) {
                sid->cpu = le_get32(p);
                sid->has_cpu = true;
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                sid->id = le_get64(p);
        return 0;
}

int perf_read_lost(const uint8_t *buf, size_t size, uint64_t read_format, uint64_t *lost)
{
        struct cursor c = {buf, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size, false};
        uint64_t nr = 1, sum = 0;

        *lost = 0;
        if (read_format & PERF_FORMAT_GROUP)
                nr = cur_u64(&c);
        else
                cur_u64(&c); /* value */
        if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
                cur_u64(&c);
        if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
                cur_u64(&c);
        if (nr > 1024)
                return -EBADMSG;
        for (uint64_t i = 0; i < nr && !c.is_bad; i++) {
                if (read_format & PERF_FORMAT_GROUP)
                        cur_u64(&c); /* value */
                if (read_format & PERF_FORMAT_ID)
                        cur_u64(&c);
                if (read_format & PERF_FORMAT_LOST)
                        sum += cur_u64(&c);
        }
        if (c.is_bad)
                return -EBADMSG;
        *lost = sum;
        return 0;
}

/* ---- the converter's tables ---- */

/* An open-addressing map from a u32 key (the first member of each entry) to fixed-size
   entries, linear probing, backward-shift deletion. CONV_NONE marks a free slot. */
struct umap {
        uint8_t *slots; /* owned */
        uint32_t esize;
        uint32_t mask;
        uint32_t nr;
};

static inline uint32_t *umap_key(const struct umap *m, uint32_t i)
{
        return (uint32_t *)(void *)(m->slots + (size_t)i * m->esize);
}

static void umap_init(struct umap *m, uint32_t esize, uint32_t cap)
{
        m->esize = esize;
        m->mask = cap - 1;
        m->nr = 0;
        m->slots = xcalloc(cap, esize);
        for (uint32_t i = 0; i < cap; i++)
                *umap_key(m, i) = CONV_NONE;
}

static void *umap_find(const struct umap *m, uint32_t key)
{
        if (key == CONV_NONE)
                return NULL;
        for (uint32_t i = (uint32_t)hash64(key) & m->mask;; i = (i + 1) & m->mask) {
                uint32_t *k = umap_key(m, i);
                if (*k == key)
                        return k;
                if (*k == CONV_NONE)
                        return NULL;
        }
}

static void umap_grow(struct umap *m)
{
        struct umap n;
        umap_init(&n, m->esize, (m->mask + 1) * 2);
        for (uint32_t i = 0; i <= m->mask; i++) {
                uint32_t *k = umap_key(m, i);
                if (*k == CONV_NONE)
                        continue;
                uint32_t j = (uint32_t)hash64(*k) & n.mask;
                while (*umap_key(&n, j) != CONV_NONE)
                        j = (j + 1) & n.mask;
                memcpy(umap_key(&n, j), k, m->esize);
                n.nr++;
        }
        free(m->slots);
        *m = n;
}

/* The entry of key, added zeroed (with its key) when absent. *is_new says which. */
static void *umap_get(struct umap *m, uint32_t key, bool *is_new)
{
        void *e = umap_find(m, key);
        *is_new = false;
        if (e || key == CONV_NONE)
                return e;
        if ((m->nr + 1) * 2 > m->mask + 1)
                umap_grow(m);
        uint32_t i = (uint32_t)hash64(key) & m->mask;
        while (*umap_key(m, i) != CONV_NONE)
                i = (i + 1) & m->mask;
        uint32_t *k = umap_key(m, i);
        memset(k, 0, m->esize);
        *k = key;
        m->nr++;
        *is_new = true;
        return k;
}

static void umap_remove(struct umap *m, void *entry)
{
        uint32_t i = (uint32_t)(((uint8_t *)entry - m->slots) / m->esize), j = i;

        for (;;) {
                j = (j + 1) & m->mask;
                uint32_t *kj = umap_key(m, j);
                if (*kj == CONV_NONE)
                        break;
                uint32_t h = (uint32_t)hash64(*kj) & m->mask;
                bool is_between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
                if (!is_between) {
                        memcpy(umap_key(m, i), kj, m->esize);
                        i = j;
                }
        }
        *umap_key(m, i) = CONV_NONE;
        m->nr--;
}

struct conv_task {
        uint32_t tid; /* key */
        uint32_t pid;
        int32_t prio;
        char comm[16];
};

struct conv_image {
        uint64_t base, size, pgoff;
        char *path; /* owned */
        uint8_t build_id[BUILD_ID_MAX];
        uint8_t build_id_size;
        uint8_t flags;
        uint8_t uw_state;         /* UW_UNTRIED, UW_READY, UW_NONE: its unwind module */
        struct unwind_module *uw; /* borrowed from the converter's unwind cache */
        uint64_t uw_bias;         /* runtime address - file vaddr */
};
enum { UW_UNTRIED = 0, UW_READY, UW_NONE };

/* Threads with a tid below this have their wait times in a direct-mapped array (pid_max is
   32768 by default below 32 CPUs). */
#define CONV_WAIT_DIRECT 65536u

/* A thread off the CPU: since when it has waited (NewThreadWaitTime). */
struct conv_wait {
        uint32_t tid; /* key */
        uint32_t reserved;
        uint64_t since_ns; /* switched out, or readied later */
};

struct conv_proc {
        uint32_t pid; /* key */
        uint32_t ppid;
        uint32_t session_id;
        uint32_t uid; /* PERF_CONV_NO_UID: unknown */
        uint32_t nr_images, cap_images;
        char comm[16];
        char *cmdline;             /* owned, may be NULL */
        struct conv_image *images; /* owned */
};

/* A thread's callchain at its last switch-out: the stack of the CSwitch that switches it in
   again (LINUX-MAPPING.md 3.3, "Stack semantics"). */
struct conv_stack {
        uint32_t tid; /* key */
        uint32_t pid;
        uint32_t nr;
        uint64_t *frames; /* owned, nr */
};

/* -p, context-switch records of the whole CPU: the last switch-out seen on a CPU. */
struct conv_out {
        uint32_t tid, next_tid;
        bool is_preempted; /* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT: still runnable */
        bool has;
};

struct state_memo {
        const struct perf_tp_format *tp; /* NULL: empty */
        uint64_t prev_state;
        struct perf_thread_state st;
};

struct tp_cache {
        const struct perf_tp_format *tp;  /* borrowed; NULL: empty */
        const struct perf_tp_field *f[8]; /* tp_fields' answers, in tp */
};

struct perf_conv {
        struct perf_conv_ops ops;
        void *ctx;       /* borrowed: the hooks' argument */
        bool is_offline; /* records of a file: no /proc of this machine for its images */
        uint32_t nr_cpus;
        uint64_t *last_ts; /* owned, per writer CPU */
        uint32_t *cpu_tid; /* owned, per writer CPU: the thread the last CSwitch switched in */
        uint8_t *cstate;   /* owned, per writer CPU: the C-state power:cpu_idle last entered */
        uint64_t tick_ns;  /* NewThreadWaitTime unit: the trace's TimerResolution */
        bool has_process, has_thread, has_image;
        struct umap tasks; /* struct conv_task */
        struct umap procs; /* struct conv_proc */
        /* the waiting threads: tids below CONV_WAIT_DIRECT in a direct-mapped array (a switch
           in and out is an index), the others in waits */
        uint64_t *wait_since;  /* owned, CONV_WAIT_DIRECT: since when tid has waited */
        uint64_t *wait_is_set; /* owned bitmap, CONV_WAIT_DIRECT bits: wait_since[tid] holds */
        struct umap waits;     /* struct conv_wait, tids from CONV_WAIT_DIRECT up */
        uint64_t *kaddrs;      /* owned set of kernel addresses hit; 0 = free */
        uint32_t kaddrs_mask, nr_kaddrs;
        uint64_t kframe_lo, kframe_hi; /* kernel addresses hit in kernel context; lo > hi: none */
        struct perf_conv_stats st;
        uint8_t *rec;         /* owned scratch: the ETW record */
        uint8_t *payload;     /* owned scratch: its payload */
        uint8_t *stack_rec;   /* owned scratch: a StackWalk record, frames gathered in place */
        uint64_t *frames;     /* in stack_rec, after the record and payload headers */
        uint64_t kseen[1024]; /* direct-mapped: kernel addresses surely in kaddrs */
        struct state_memo ps_memo[8]; /* perf_prev_state_to_etw's answers: few values repeat */
        /* the blocking functions' places (ops.wait_sites), asked for once */
        const struct perf_wait_site *wait_sites;
        uint32_t nr_wait_sites;
        bool has_asked_wait_sites;
        struct {
                uint64_t addr;
                int16_t reason;      /* -1: none */
        } wait_memo[256];            /* a kernel return address's answer: the same few come back */
        struct tp_cache tp_cache[3]; /* the fields of the last three tracepoint formats */
        char *text;                  /* owned scratch: command lines */
        struct umap stacks;          /* struct conv_stack: switch-out stacks not written yet */
        bool has_switch_stacks;      /* the last sched_switch sample had CSwitch stacks on */
        bool has_switch_plan;        /* perf_conv_set_switch_stacks: from switch_plan_from on, */
        bool is_switch_plan_on;      /* CSwitch stacks are is_switch_plan_on */
        uint64_t switch_plan_from;
        uint32_t traced_pid;       /* -p: the process traced; 0: every process */
        struct conv_out *last_out; /* owned, per writer CPU, with -p */
        /* DWARF stack walks (--stackwalk-mode): the modules' compiled rules, made on the first
           walk; the vdso's, from this process's own copy (the same kernel's) */
        struct unwind_cache *uw_cache;
        struct unwind_module *uw_vdso; /* owned; NULL: not made (yet) */
        bool has_tried_vdso;
        struct perf_conv_unwind_stats uw_st;
        uint64_t uw_stats_ts;      /* when the last UnwindStats event was written */
        uint64_t uw_walks_written; /* nr_walks + nr_fp_chains it said */
};

int perf_conv_new(struct perf_conv **out, const struct perf_conv_ops *ops, void *ctx,
                  uint32_t nr_cpus)
{
        *out = NULL;
        if (!ops || !ops->emit || !ops->event_of || !ops->cmdline_of || !ops->build_id_of ||
            !ops->uid_of || nr_cpus == 0)
                return -EINVAL;

        struct perf_conv *c = xcalloc(1, sizeof(*c));
        c->ops = *ops;
        c->ctx = ctx;
        c->nr_cpus = nr_cpus;
        c->last_ts = xcalloc(nr_cpus, sizeof(*c->last_ts));
        c->cpu_tid = xcalloc(nr_cpus, sizeof(*c->cpu_tid));
        c->cstate = xcalloc(nr_cpus, sizeof(*c->cstate));
        for (uint32_t i = 0; i < nr_cpus; i++)
                c->cpu_tid[i] = CONV_NONE;
        c->tick_ns = DEFAULT_TICK_NS;
        c->has_process = c->has_thread = c->has_image = true;
        umap_init(&c->tasks, sizeof(struct conv_task), 1024);
        umap_init(&c->procs, sizeof(struct conv_proc), 256);
        umap_init(&c->waits, sizeof(struct conv_wait), 64);
        umap_init(&c->stacks, sizeof(struct conv_stack), 256);
        c->wait_since = xcalloc(CONV_WAIT_DIRECT, sizeof(*c->wait_since));
        c->wait_is_set = xcalloc(CONV_WAIT_DIRECT / 64, sizeof(*c->wait_is_set));
        c->kaddrs_mask = 4096 - 1;
        c->kaddrs = xcalloc(c->kaddrs_mask + 1, sizeof(*c->kaddrs));
        c->kframe_lo = UINT64_MAX;
        c->rec = xcalloc(1, PERF_CONV_MAX_RECORD + 256);
        c->payload = xcalloc(1, PERF_CONV_MAX_RECORD + 256);
        c->stack_rec = xcalloc(1, STACK_REC_HEAD + 8 * (CONV_MAX_FRAMES + 1));
        c->frames = (uint64_t *)(void *)(c->stack_rec + STACK_REC_HEAD);
        c->text = xcalloc(1, CONV_MAX_CMDLINE + 1);
        *out = c;
        return 0;
}

static void proc_free_images(struct conv_proc *p)
{
        for (uint32_t i = 0; i < p->nr_images; i++)
                free(p->images[i].path);
        free(p->images);
        p->images = NULL;
        p->nr_images = p->cap_images = 0;
}

static void proc_release(struct conv_proc *p)
{
        proc_free_images(p);
        free(p->cmdline);
        p->cmdline = NULL;
}

void perf_conv_free(struct perf_conv *c)
{
        if (!c)
                return;
        for (uint32_t i = 0; c->procs.slots && i <= c->procs.mask; i++) {
                struct conv_proc *p = (struct conv_proc *)(void *)umap_key(&c->procs, i);
                if (p->pid != CONV_NONE)
                        proc_release(p);
        }
        for (uint32_t i = 0; c->stacks.slots && i <= c->stacks.mask; i++) {
                struct conv_stack *k = (struct conv_stack *)(void *)umap_key(&c->stacks, i);
                if (k->tid != CONV_NONE)
                        free(k->frames);
        }
        free(c->stacks.slots);
        unwind_module_close(c->uw_vdso);
        unwind_cache_free(c->uw_cache);
        free(c->last_out);
        free(c->procs.slots);
        free(c->tasks.slots);
        free(c->waits.slots);
        free(c->wait_since);
        free(c->wait_is_set);
        free(c->kaddrs);
        free(c->last_ts);
        free(c->cpu_tid);
        free(c->cstate);
        free(c->rec);
        free(c->payload);
        free(c->stack_rec);
        free(c->text);
        free(c);
}

void perf_conv_set_masks(struct perf_conv *c, const PERFINFO_GROUPMASK *masks)
{
        c->has_process = masks->Masks[0] & EVENT_TRACE_FLAG_PROCESS;
        c->has_thread = masks->Masks[0] & EVENT_TRACE_FLAG_THREAD;
        c->has_image = masks->Masks[0] & EVENT_TRACE_FLAG_IMAGE_LOAD;
}

void perf_conv_set_timer_resolution(struct perf_conv *c, uint32_t resolution_100ns)
{
        c->tick_ns = resolution_100ns ? (uint64_t)resolution_100ns * 100 : DEFAULT_TICK_NS;
}

void perf_conv_get_stats(const struct perf_conv *c, struct perf_conv_stats *st)
{
        *st = c->st;
}

uint64_t perf_conv_stamp(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        if (cpu >= c->nr_cpus)
                return ts;
        if (ts < c->last_ts[cpu]) {
                c->st.nr_clamped++;
                return c->last_ts[cpu];
        }
        c->last_ts[cpu] = ts;
        return ts;
}

static void note_kaddr_slow(struct perf_conv *c, uint64_t a);

static inline void note_kaddr(struct perf_conv *c, uint64_t a)
{
        /* kernel stacks repeat: most addresses are found here, without probing kaddrs */
        if (!is_kernel_addr(a))
                return;
        uint64_t *seen = &c->kseen[(a ^ (a >> 10)) & 1023];
        if (*seen == a)
                return;
        *seen = a;
        note_kaddr_slow(c, a);
}

static void note_kaddr_slow(struct perf_conv *c, uint64_t a)
{
        if ((c->nr_kaddrs + 1) * 2 > c->kaddrs_mask + 1) {
                if (c->nr_kaddrs >= CONV_KADDR_MAX)
                        return;
                uint32_t cap = (c->kaddrs_mask + 1) * 2;
                uint64_t *n = xcalloc(cap, sizeof(*n));
                for (uint32_t i = 0; i <= c->kaddrs_mask; i++) {
                        if (!c->kaddrs[i])
                                continue;
                        uint32_t j = (uint32_t)hash64(c->kaddrs[i]) & (cap - 1);
                        while (n[j])
                                j = (j + 1) & (cap - 1);
                        n[j] = c->kaddrs[i];
                }
                free(c->kaddrs);
                c->kaddrs = n;
                c->kaddrs_mask = cap - 1;
        }
        for (uint32_t i = (uint32_t)hash64(a) & c->kaddrs_mask;; i = (i + 1) & c->kaddrs_mask) {
                if (c->kaddrs[i] == a)
                        return;
                if (!c->kaddrs[i]) {
                        c->kaddrs[i] = a;
                        c->nr_kaddrs++;
                        return;
                }
        }
}

static int emit(struct perf_conv *c, uint32_t cpu, uint32_t size)
{
        c->st.nr_events++;
        return c->ops.emit(c->ctx, cpu, c->rec, size);
}

static const struct perf_conv_event *event_of_id(struct perf_conv *c, uint64_t id)
{
        return c->ops.event_of(c->ctx, id);
}

static uint32_t writer_cpu(const struct perf_conv *c, bool has_cpu, uint32_t cpu, uint32_t ring_cpu)
{
        return has_cpu && cpu < c->nr_cpus ? cpu : ring_cpu;
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
        uint8_t p[12 + 2 * 64];
        char name[63];
        st32(p, source);
        st32(p + 4, new_interval);
        st32(p + 8, old_interval);
        uint32_t n = 12 + perf_put_utf16(p + 12, clip(name, source_name, sizeof(name) - 1));
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
                n += perf_put_utf16(p + n, clip(name, names[i], sizeof(name) - 1));
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
static uint32_t record_system64_pmc(uint8_t *dst, uint16_t hook, uint8_t version, uint32_t tid,
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
        n += put_cstr(p + n, name, 255);
        n += perf_put_utf16(p + n, clip(clipped, cmdline, CONV_MAX_CMDLINE));
        n += perf_put_utf16(p + n, ""); /* PackageFullName */
        n += perf_put_utf16(p + n, ""); /* ApplicationId */
        return n;
}

static int emit_process(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
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
        return emit(c, cpu, size);
}

/* Thread v4 payload (ETL-FORMAT.md 3.7). */
static int emit_thread(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
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
        uint32_t n = 72 + perf_put_utf16(p + 72, clip(clipped, name, 63));
        uint32_t size = etl_record_system64(c->rec, hook, 4, hdr_tid, hdr_pid, ts, p, n);
        return emit(c, cpu, size);
}

static int emit_thread_name(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid,
                            uint32_t tid, const char *name)
{
        uint8_t *p = c->payload;
        char clipped[64];
        st32(p, pid);
        st32(p + 4, tid);
        uint32_t n = 8 + perf_put_utf16(p + 8, clip(clipped, name, 63));
        uint32_t size =
                etl_record_system64(c->rec, WMI_LOG_TYPE_THREAD_SET_NAME, 2, tid, pid, ts, p, n);
        return emit(c, cpu, size);
}

/* etwtop ImageIdentity v1 (doc/etwtop-provider.md), then the Image event v3 (3.9). */
static int emit_image(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                      uint32_t hdr_tid, const struct perf_conv_image *im)
{
        uint8_t *p = c->payload;
        char path[CONV_MAX_PATH + 1];
        uint32_t bid = im->build_id && im->build_id_size <= BUILD_ID_MAX ? im->build_id_size : 0;
        int rc;

        clip(path, im->path, CONV_MAX_PATH);
        memset(p, 0, 52);
        st64(p, im->base);
        st64(p + 8, im->size);
        st64(p + 16, im->pgoff);
        st32(p + 24, im->pid);
        p[28] = (uint8_t)bid;
        st16(p + 30, (uint16_t)im->flags);
        if (bid)
                memcpy(p + 32, im->build_id, bid);
        uint32_t n = 52 + put_cstr(p + 52, path, CONV_MAX_PATH);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_IMAGE_IDENTITY, 1, 0, 4, 0, 0, 0};
        uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, hdr_tid, im->pid,
                                           ts, NULL, 0, p, n);
        rc = emit(c, cpu, size);
        if (rc < 0)
                return rc;

        memset(p, 0, 56);
        st64(p, im->base);
        st64(p + 8, im->size);
        st32(p + 16, im->pid);
        n = 56 + perf_put_utf16(p + 56, path);
        if (hook == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE)
                size = etl_record_system64(c->rec, hook, 3, hdr_tid, im->pid, ts, p, n);
        else
                size = etl_record_perfinfo64(c->rec, hook, 3, ts, NULL, 0, p, n);
        return emit(c, cpu, size);
}

/* ---- table updates ---- */

static struct conv_proc *proc_get(struct perf_conv *c, uint32_t pid)
{
        bool is_new;
        struct conv_proc *p = umap_get(&c->procs, pid, &is_new);
        if (p && is_new)
                p->ppid = p->uid = CONV_NONE;
        return p;
}

static void proc_set_cmdline(struct conv_proc *p, const char *cmdline)
{
        free(p->cmdline);
        p->cmdline = NULL;
        if (cmdline && cmdline[0]) {
                size_t n = strnlen(cmdline, CONV_MAX_CMDLINE);
                p->cmdline = xcalloc(1, n + 1);
                memcpy(p->cmdline, cmdline, n);
        }
}

/* Adds an image to the process, replacing the images it overlaps (a mapping replaces what was
   there, as perf does: there is no unmap record). */
static void proc_add_image(struct conv_proc *p, const struct perf_conv_image *im)
{
        uint32_t o = 0;
        for (uint32_t i = 0; i < p->nr_images; i++) {
                struct conv_image *e = &p->images[i];
                if (e->base < im->base + im->size && im->base < e->base + e->size) {
                        free(e->path);
                        continue;
                }
                p->images[o++] = *e;
        }
        p->nr_images = o;
        if (p->nr_images >= CONV_MAX_IMAGES)
                return;
        if (p->nr_images == p->cap_images) {
                uint32_t cap = p->cap_images ? p->cap_images * 2 : 16;
                p->images = xrealloc(p->images, cap * sizeof(*p->images));
                p->cap_images = cap;
        }
        struct conv_image *e = &p->images[p->nr_images++];
        memset(e, 0, sizeof(*e));
        e->base = im->base;
        e->size = im->size;
        e->pgoff = im->pgoff;
        size_t len = strnlen(im->path, CONV_MAX_PATH);
        e->path = xcalloc(1, len + 1);
        memcpy(e->path, im->path, len);
        if (im->build_id && im->build_id_size <= BUILD_ID_MAX) {
                memcpy(e->build_id, im->build_id, im->build_id_size);
                e->build_id_size = (uint8_t)im->build_id_size;
        }
        e->flags = (uint8_t)(im->flags & (ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_RECORD |
                                          ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE));
}

static void task_set(struct perf_conv *c, uint32_t tid, uint32_t pid, const char *comm,
                     int64_t prio)
{
        bool is_new;
        struct conv_task *t = umap_get(&c->tasks, tid, &is_new);
        if (!t)
                return;
        t->pid = pid;
        if (is_new)
                t->prio = -1;
        if (prio >= 0)
                t->prio = (int32_t)prio;
        if (comm)
                clip(t->comm, comm, sizeof(t->comm) - 1);
}

static const char *comm_of(struct perf_conv *c, uint32_t tid, uint32_t pid)
{
        const struct conv_task *t = umap_find(&c->tasks, tid);
        if (t && t->comm[0])
                return t->comm;
        const struct conv_proc *p = umap_find(&c->procs, pid);
        return p ? p->comm : "";
}

/* Forgets every thread of pid. */
static void tasks_drop_process(struct perf_conv *c, uint32_t pid)
{
        for (uint32_t i = 0; i <= c->tasks.mask;) {
                struct conv_task *t = (struct conv_task *)(void *)umap_key(&c->tasks, i);
                if (t->tid != CONV_NONE && t->pid == pid)
                        umap_remove(&c->tasks, t); /* slot i may now hold another entry */
                else
                        i++;
        }
}

/* Whether tid is one of the traced process's threads (every thread without -p). */
static bool is_traced(const struct perf_conv *c, uint32_t tid)
{
        if (!c->traced_pid || tid == c->traced_pid)
                return true;
        const struct conv_task *t = umap_find(&c->tasks, tid);
        return t && t->pid == c->traced_pid;
}

/* Whether a record of process pid is written: with -p, only the traced process's. */
static bool is_own(struct perf_conv *c, uint32_t pid)
{
        if (!c->traced_pid || pid == c->traced_pid)
                return true;
        c->st.nr_foreign++;
        return false;
}

void perf_conv_set_process(struct perf_conv *c, uint32_t pid, const int32_t *tids, uint32_t nr)
{
        c->traced_pid = pid;
        if (pid && !c->last_out)
                c->last_out = xcalloc(c->nr_cpus, sizeof(*c->last_out));
        for (uint32_t i = 0; pid && i < nr; i++)
                if (tids[i] > 0 && !umap_find(&c->tasks, (uint32_t)tids[i]))
                        task_set(c, (uint32_t)tids[i], pid, NULL, -1);
}

/* ---- switch-out stacks ---- */

/* tid has left the CPU with the nr frames in c->frames (its pid's): kept for its next switch-in,
   replacing what was kept (nr 0: nothing is kept). */
static void stack_keep(struct perf_conv *c, uint32_t tid, uint32_t pid, uint32_t nr)
{
        struct conv_stack *k = umap_find(&c->stacks, tid);
        if (!nr || tid == 0) {
                if (k) {
                        free(k->frames);
                        umap_remove(&c->stacks, k);
                }
                return;
        }
        if (!k) {
                bool is_new;
                if (c->stacks.nr >= CONV_MAX_SAVED_STACKS)
                        return;
                k = umap_get(&c->stacks, tid, &is_new);
        }
        if (k->nr < nr || !k->frames) {
                free(k->frames);
                k->frames = xcalloc(nr, sizeof(*k->frames));
        }
        memcpy(k->frames, c->frames, nr * sizeof(*k->frames));
        k->nr = nr;
        k->pid = pid;
}

static int emit_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid,
                      uint32_t nr);

/* CSwitch stacks are on (is_on) or off from now: off, the stacks kept are forgotten. */
static void stacks_set(struct perf_conv *c, bool is_on)
{
        if (c->has_switch_stacks == is_on)
                return;
        c->has_switch_stacks = is_on;
        if (is_on)
                return;
        for (uint32_t i = 0; i <= c->stacks.mask; i++) {
                struct conv_stack *k = (struct conv_stack *)(void *)umap_key(&c->stacks, i);
                if (k->tid != CONV_NONE) {
                        free(k->frames);
                        k->tid = CONV_NONE;
                }
        }
        c->stacks.nr = 0;
}

/* The stack of the CSwitch at ts that switched tid in, as Windows writes it: tid's own, where it
   left the CPU last (its switch-out's callchain), StackThread = tid. Nothing when none was kept. */
static int emit_switch_in_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t tid)
{
        struct conv_stack *k = tid ? umap_find(&c->stacks, tid) : NULL;
        if (!k)
                return 0;
        uint32_t nr = k->nr, pid = k->pid;
        memcpy(c->frames, k->frames, nr * sizeof(*k->frames));
        free(k->frames);
        umap_remove(&c->stacks, k);
        c->st.nr_cswitch_stacks++;
        return emit_stack(c, cpu, ts, pid, tid, nr);
}

/* ---- rundown entry points ---- */

int perf_conv_process(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                      const struct perf_conv_process *p)
{
        if (hook == WMI_LOG_TYPE_PROCESS_DC_START || hook == WMI_LOG_TYPE_PROCESS_CREATE) {
                struct conv_proc *e = proc_get(c, p->pid);
                if (e) {
                        e->ppid = p->ppid;
                        e->session_id = p->session_id;
                        e->uid = p->uid;
                        clip(e->comm, p->name, sizeof(e->comm) - 1);
                        proc_set_cmdline(e, p->cmdline);
                }
        }
        return emit_process(c, hook, cpu, ts, 0, p->pid, p->pid, p->ppid, p->session_id,
                            hook == WMI_LOG_TYPE_PROCESS_DC_END ? 0 : 259, p->uid, p->name,
                            p->cmdline ? p->cmdline : "");
}

int perf_conv_thread(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                     const struct perf_conv_thread *t)
{
        if (hook == WMI_LOG_TYPE_THREAD_DC_START || hook == WMI_LOG_TYPE_THREAD_CREATE)
                task_set(c, t->tid, t->pid, t->name, t->prio);
        return emit_thread(c, hook, cpu, ts, t->tid, t->pid, t->pid, t->tid, t->prio, t->name);
}

int perf_conv_image(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                    const struct perf_conv_image *im)
{
        if (hook != WMI_LOG_TYPE_IMAGE_DC_END && hook != WMI_LOG_TYPE_IMAGE_UNLOAD) {
                struct conv_proc *p = proc_get(c, im->pid);
                if (p)
                        proc_add_image(p, im);
        }
        return emit_image(c, hook, cpu, ts, 0, im);
}

int perf_conv_rundown_end(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        int rc = 0;

        for (uint32_t i = 0; c->has_process && i <= c->procs.mask && rc == 0; i++) {
                const struct conv_proc *p = (const void *)umap_key(&c->procs, i);
                if (p->pid == CONV_NONE || !p->comm[0])
                        continue;
                rc = emit_process(c, WMI_LOG_TYPE_PROCESS_DC_END, cpu, ts, 0, p->pid, p->pid,
                                  p->ppid == CONV_NONE ? 0 : p->ppid, p->session_id, 0, p->uid,
                                  p->comm, p->cmdline ? p->cmdline : "");
        }
        for (uint32_t i = 0; c->has_thread && i <= c->tasks.mask && rc == 0; i++) {
                const struct conv_task *t = (const void *)umap_key(&c->tasks, i);
                if (t->tid == CONV_NONE)
                        continue;
                rc = emit_thread(c, WMI_LOG_TYPE_THREAD_DC_END, cpu, ts, t->tid, t->pid, t->pid,
                                 t->tid, t->prio, t->comm);
        }
        for (uint32_t i = 0; c->has_image && i <= c->procs.mask && rc == 0; i++) {
                const struct conv_proc *p = (const void *)umap_key(&c->procs, i);
                if (p->pid == CONV_NONE)
                        continue;
                for (uint32_t j = 0; j < p->nr_images && rc == 0; j++) {
                        const struct conv_image *e = &p->images[j];
                        struct perf_conv_image im = {p->pid,           e->base, e->size,
                                                     e->pgoff,         e->path, e->build_id,
                                                     e->build_id_size, e->flags};
                        rc = emit_image(c, WMI_LOG_TYPE_IMAGE_DC_END, cpu, ts, 0, &im);
                }
        }
        if (rc == 0 && (c->uw_st.walk != PERF_CONV_WALK_FP || c->uw_st.nr_walks))
                rc = perf_conv_unwind_stats(c, cpu, ts);
        return rc;
}

/* ---- side-band records ---- */

/* The event of a record: by the identifier after the header of a sample, by the last u64 of the
   sample_id trailer of any other record; NULL when unknown or the record is too short. */
static const struct perf_conv_event *record_event(struct perf_conv *c, const uint8_t *rec,
                                                  uint32_t size)
{
        if (size < 16)
                return NULL;
        const struct perf_event_header *h = (const void *)rec;
        return event_of_id(c, le_get64(h->type == PERF_RECORD_SAMPLE ? rec + 8 : rec + size - 8));
}

/* The trailer of a non-sample record whose event (record_event) is ev. */
static int conv_sample_id(const struct perf_conv_event *ev, const uint8_t *rec, uint32_t size,
                          struct perf_sample_id *sid)
{
        return perf_sample_id_parse(rec, size, ev ? ev->sample_type : PERF_CONV_SAMPLE_ID_BITS,
                                    sid);
}

/* The event of the trailer's id: ev itself when the id is the trailer's last u64. */
static const struct perf_conv_event *
sid_event(struct perf_conv *c, const struct perf_conv_event *ev, const struct perf_sample_id *sid)
{
        if (ev && !(ev->sample_type & PERF_SAMPLE_IDENTIFIER))
                return event_of_id(c, sid->id);
        return ev;
}

static int conv_comm(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                     const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;
        const struct perf_event_header *h = (const void *)rec;
        char comm[17];

        if (size < 16 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint32_t pid = le_get32(rec + 8), tid = le_get32(rec + 12);
        if (!is_own(c, pid))
                return 0;
        size_t max = size - 16 < 16 ? size - 16 : 16;
        clip(comm, (const char *)rec + 16, max);
        uint32_t cpu = writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = perf_conv_stamp(c, cpu, sid.time);
        int rc = 0;

        task_set(c, tid, pid, comm, -1);
        if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
                /* exec: Windows has none. The process gets a new Process/Start with the new
                   image name and command line; its images start over. */
                struct conv_proc *p = proc_get(c, pid);
                if (p) {
                        clip(p->comm, comm, sizeof(p->comm) - 1);
                        proc_free_images(p);
                        c->text[0] = 0;
                        c->ops.cmdline_of(c->ctx, pid, c->text, CONV_MAX_CMDLINE + 1);
                        proc_set_cmdline(p, c->text);
                        /* a set-user-ID program runs as its file's owner from here */
                        uint32_t uid = c->ops.uid_of(c->ctx, pid);
                        if (uid != PERF_CONV_NO_UID)
                                p->uid = uid;
                        if (c->has_process)
                                rc = emit_process(c, WMI_LOG_TYPE_PROCESS_CREATE, cpu, ts, tid, pid,
                                                  pid, p->ppid == CONV_NONE ? 0 : p->ppid,
                                                  p->session_id, 259, p->uid, comm, c->text);
                }
        }
        if (rc == 0 && c->has_thread)
                rc = emit_thread_name(c, cpu, ts, pid, tid, comm);
        return rc;
}

static int conv_fork(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t ppid,
                     uint32_t tid, uint32_t ptid)
{
        char comm[16];
        int rc = 0;

        clip(comm, comm_of(c, ptid, ppid), sizeof(comm) - 1);
        const struct conv_task *parent_task = umap_find(&c->tasks, ptid);
        int64_t prio = parent_task ? parent_task->prio : -1;

        if (pid == tid) {
                /* a new process: a copy of its parent, images included */
                struct conv_proc *p = proc_get(c, pid);
                if (!p)
                        return 0;
                /* looked up after proc_get, which may move the table */
                const struct conv_proc *parent = umap_find(&c->procs, ppid);
                proc_release(p);
                p->ppid = ppid;
                p->session_id = parent ? parent->session_id : 0;
                /* a child runs as its parent's user (fork copies the credentials); /proc
                   may say what an exec made of it since */
                p->uid = parent && parent->uid != PERF_CONV_NO_UID ? parent->uid
                                                                   : c->ops.uid_of(c->ctx, pid);
                clip(p->comm, comm, sizeof(p->comm) - 1);
                c->text[0] = 0;
                c->ops.cmdline_of(c->ctx, pid, c->text, CONV_MAX_CMDLINE + 1);
                if (!c->text[0] && parent && parent->cmdline)
                        clip(c->text, parent->cmdline, CONV_MAX_CMDLINE);
                proc_set_cmdline(p, c->text);
                if (c->has_process)
                        rc = emit_process(c, WMI_LOG_TYPE_PROCESS_CREATE, cpu, ts, ptid, ppid, pid,
                                          ppid, p->session_id, 259, p->uid, comm, c->text);
                task_set(c, tid, pid, comm, prio);
                if (rc == 0 && c->has_thread)
                        rc = emit_thread(c, WMI_LOG_TYPE_THREAD_CREATE, cpu, ts, ptid, ppid, pid,
                                         tid, prio, comm);
                if (parent && parent->nr_images) {
                        uint32_t n = parent->nr_images;
                        for (uint32_t i = 0; i < n && rc == 0; i++) {
                                parent = umap_find(&c->procs, ppid);
                                p = umap_find(&c->procs, pid);
                                if (!parent || !p || i >= parent->nr_images)
                                        break;
                                const struct conv_image *e = &parent->images[i];
                                struct perf_conv_image im = {
                                        pid,
                                        e->base,
                                        e->size,
                                        e->pgoff,
                                        e->path,
                                        e->build_id,
                                        e->build_id_size,
                                        (uint32_t)e->flags | ETWTOP_IMAGE_FLAG_INHERITED};
                                proc_add_image(p, &im);
                                if (c->has_image)
                                        rc = emit_image(c, WMI_LOG_TYPE_PROCESS_LOAD_IMAGE, cpu, ts,
                                                        tid, &im);
                        }
                }
                return rc;
        }
        task_set(c, tid, pid, comm, prio);
        if (c->has_thread)
                rc = emit_thread(c, WMI_LOG_TYPE_THREAD_CREATE, cpu, ts, ptid, ppid, pid, tid, prio,
                                 comm);
        return rc;
}

/* tid has ended: it waits no more. */
static void wait_forget(struct perf_conv *c, uint32_t tid)
{
        if (tid < CONV_WAIT_DIRECT) {
                c->wait_is_set[tid / 64] &= ~(1ull << (tid % 64));
                return;
        }
        struct conv_wait *w = umap_find(&c->waits, tid);
        if (w)
                umap_remove(&c->waits, w);
}

static int conv_exit(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid)
{
        char comm[16];
        int rc = 0;
        const struct conv_task *t = umap_find(&c->tasks, tid);
        int64_t prio = t ? t->prio : -1;

        clip(comm, comm_of(c, tid, pid), sizeof(comm) - 1);
        if (c->has_thread)
                rc = emit_thread(c, WMI_LOG_TYPE_THREAD_DELETE, cpu, ts, tid, pid, pid, tid, prio,
                                 comm);
        if (t)
                umap_remove(&c->tasks, (void *)t);
        wait_forget(c, tid);
        stack_keep(c, tid, pid, 0);
        if (pid != tid)
                return rc;

        struct conv_proc *p = umap_find(&c->procs, pid);
        if (rc == 0 && c->has_process)
                rc = emit_process(c, WMI_LOG_TYPE_PROCESS_DELETE, cpu, ts, tid, pid, pid,
                                  p && p->ppid != CONV_NONE ? p->ppid : 0, p ? p->session_id : 0, 0,
                                  p ? p->uid : PERF_CONV_NO_UID, p ? p->comm : comm,
                                  p && p->cmdline ? p->cmdline : "");
        if (p) {
                proc_release(p);
                umap_remove(&c->procs, p);
        }
        tasks_drop_process(c, pid);
        return rc;
}

static int conv_task(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                     const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;
        const struct perf_event_header *h = (const void *)rec;

        if (size < 32 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        ev = sid_event(c, ev, &sid);
        if (ev && ev->skips_task_records)
                return 0;
        uint32_t pid = le_get32(rec + 8), ppid = le_get32(rec + 12);
        uint32_t tid = le_get32(rec + 16), ptid = le_get32(rec + 20);
        if (!is_own(c, pid))
                return 0; /* with -p, a child process (its FORK comes to its parent's events) */
        uint64_t time = sid.has_time ? sid.time : le_get64(rec + 24);
        uint32_t cpu = writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = perf_conv_stamp(c, cpu, time);

        if (h->type == PERF_RECORD_FORK)
                return conv_fork(c, cpu, ts, pid, ppid, tid, ptid);
        return conv_exit(c, cpu, ts, pid, tid);
}

/* MMAP2 (LINUX-MAPPING.md 3.2): addr, len, pgoff, then maj/min/ino or the build-id. */
static int conv_mmap2(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                      const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;
        const struct perf_event_header *h = (const void *)rec;
        uint8_t bid[BUILD_ID_MAX];
        uint32_t bid_size = 0, flags = 0;

        if (size < 73 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint32_t pid = le_get32(rec + 8), tid = le_get32(rec + 12);
        uint32_t prot = le_get32(rec + 64);
        if (!(prot & PROT_EXEC) || !is_own(c, pid))
                return 0;
        char path[CONV_MAX_PATH + 1];
        clip(path, (const char *)rec + 72, size - 72 < CONV_MAX_PATH ? size - 72 : CONV_MAX_PATH);
        if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                bid_size = rec[40] <= BUILD_ID_MAX ? rec[40] : BUILD_ID_MAX;
                memcpy(bid, rec + 44, bid_size);
                flags = ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_RECORD;
        } else if (path[0] == '/') {
                bid_size = c->ops.build_id_of(c->ctx, path, bid, BUILD_ID_MAX);
                if (bid_size > BUILD_ID_MAX)
                        bid_size = 0;
                flags = bid_size ? ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE : 0;
        }
        uint32_t cpu = writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = perf_conv_stamp(c, cpu, sid.time);
        struct perf_conv_image im = {pid,
                                     le_get64(rec + 16),
                                     le_get64(rec + 24),
                                     le_get64(rec + 32),
                                     path,
                                     bid,
                                     bid_size,
                                     flags};
        struct conv_proc *p = proc_get(c, pid);
        if (p)
                proc_add_image(p, &im);
        if (!c->has_image)
                return 0;
        return emit_image(c, WMI_LOG_TYPE_PROCESS_LOAD_IMAGE, cpu, ts, tid, &im);
}

static int conv_lost(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                     const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;

        if (size < 24 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint64_t lost = le_get64(rec + 16);
        c->st.nr_lost_records++;
        c->st.nr_lost += lost;
        uint32_t cpu = writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = perf_conv_stamp(c, cpu, sid.time);
        return perf_conv_events_lost(c, cpu, ts, ETWTOP_LOST_REASON_RECORD_LOST, lost);
}

int perf_conv_events_lost(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t reason,
                          uint64_t nr_lost)
{
        uint8_t p[16];
        st32(p, cpu);
        st32(p + 4, reason);
        st64(p + 8, nr_lost);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_EVENTS_LOST, 1, 0, 4, 0, 0, 0};
        uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0,
                                           p, sizeof(p));
        return emit(c, cpu, size);
}

void perf_conv_set_switch_stacks(struct perf_conv *c, bool is_on, uint64_t from)
{
        c->has_switch_plan = true;
        c->is_switch_plan_on = is_on;
        c->switch_plan_from = from;
}

void perf_conv_set_offline(struct perf_conv *c, bool is_offline)
{
        c->is_offline = is_offline;
}

void perf_conv_set_walk(struct perf_conv *c, enum perf_conv_walk walk, uint32_t stack_copy_bytes)
{
        c->uw_st.walk = walk;
        c->uw_st.stack_copy_bytes = walk == PERF_CONV_WALK_FP ? 0 : stack_copy_bytes;
}

void perf_conv_get_unwind_stats(const struct perf_conv *c, struct perf_conv_unwind_stats *st)
{
        *st = c->uw_st;
}

/* UnwindStats (doc/etwtop-provider.md): Mode, StackCopyBytes, then u64 Walks, Stops[6],
   FpChains, Frames, FpFrames. */
int perf_conv_unwind_stats(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        const struct perf_conv_unwind_stats *u = &c->uw_st;
        uint8_t p[8 + 8 * (5 + PERF_CONV_NR_UNWIND_STOPS)];
        st32(p, u->walk);
        st32(p + 4, u->stack_copy_bytes);
        st64(p + 8, u->nr_walks);
        for (uint32_t i = 0; i < PERF_CONV_NR_UNWIND_STOPS; i++)
                st64(p + 16 + 8 * i, u->nr_by_stop[i]);
        uint8_t *q = p + 16 + 8 * PERF_CONV_NR_UNWIND_STOPS;
        st64(q, u->nr_fp_chains);
        st64(q + 8, u->nr_frames);
        st64(q + 16, u->nr_fp_frames);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_UNWIND_STATS, 1, 0, 4, 0, 0, 0};
        uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0,
                                           p, sizeof(p));
        c->uw_stats_ts = ts;
        c->uw_walks_written = u->nr_walks + u->nr_fp_chains;
        return emit(c, cpu, size);
}

/* ---- samples ---- */

/* Widens the range of kernel addresses hit in kernel context (perf_conv_kernel_range). */
static inline void note_kernel_frame(struct perf_conv *c, uint64_t a)
{
        if (a < c->kframe_lo)
                c->kframe_lo = a;
        if (a > c->kframe_hi)
                c->kframe_hi = a;
}

/* ---- DWARF stack walks (doc/unwind.md) ---- */

/* The vdso is the same kernel's in every process: its rules come from this process's copy. */
static struct unwind_module *vdso_module(struct perf_conv *c)
{
        if (c->has_tried_vdso)
                return c->uw_vdso;
        c->has_tried_vdso = true;
        const uint8_t *img = (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
        if (!img || memcmp(img, "\177ELF", 4) != 0 || img[4] != 2)
                return NULL;
        /* its size: the section headers come last */
        uint64_t shoff = le_get64(img + 0x28);
        uint16_t shentsize = le_get16(img + 0x3a), shnum = le_get16(img + 0x3c);
        uint64_t size = shoff + (uint64_t)shentsize * shnum;
        if (!shoff || size > (1u << 20))
                return NULL;
        struct unwind_error err;
        if (unwind_module_open_mem(&c->uw_vdso, img, (size_t)size, &err) < 0)
                c->uw_vdso = NULL;
        return c->uw_vdso;
}

/* The file an image's rules are read from: its path; or, where that file is gone (" (deleted)":
   replaced by a package upgrade since it was mapped, a memfd) or cannot be read from here
   (another mount namespace), the mapping itself while the process lives: /proc/PID/map_files
   (CAP_SYS_ADMIN), or /proc/PID/exe for the program's own file (its owner may read it). */
static const char *image_file(const struct perf_conv *c, const struct conv_image *e, uint32_t pid,
                              char *buf, size_t size)
{
        static const char deleted[] = " (deleted)";
        if (c->is_offline)
                return e->path; /* this machine's processes are not the recording's */
        size_t n = strlen(e->path), k = sizeof(deleted) - 1;
        if ((n <= k || strcmp(e->path + n - k, deleted) != 0) && access(e->path, R_OK) == 0)
                return e->path;
        snprintf(buf, size, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)e->base,
                 (unsigned long long)(e->base + e->size));
        if (access(buf, R_OK) == 0)
                return buf;
        char exe[64], target[4096];
        snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
        ssize_t len = readlink(exe, target, sizeof(target) - 1);
        if (len > 0) {
                target[len] = '\0';
                if (strcmp(target, e->path) == 0) {
                        snprintf(buf, size, "%s", exe);
                        return buf;
                }
        }
        return e->path;
}

/* The unwind module of an image of process pid and its bias, found once. */
static bool image_module(struct perf_conv *c, struct conv_image *e, uint32_t pid)
{
        if (e->uw_state == UW_UNTRIED) {
                struct unwind_module *m = NULL;
                char buf[96];
                e->uw_state = UW_NONE;
                if (strcmp(e->path, "[vdso]") == 0)
                        m = vdso_module(c);
                else if (e->path[0] == '/' &&
                         unwind_cache_get(c->uw_cache, image_file(c, e, pid, buf, sizeof(buf)),
                                          e->build_id_size ? e->build_id : NULL, e->build_id_size,
                                          &m) < 0)
                        m = NULL;
                if (m && unwind_module_bias(m, e->base, e->pgoff, &e->uw_bias) == 0) {
                        e->uw = m;
                        e->uw_state = UW_READY;
                }
        }
        return e->uw_state == UW_READY;
}

/* The image of proc that maps addr, or NULL; the last one found is tried first. */
static struct conv_image *image_at(struct conv_proc *p, uint64_t addr, uint32_t *memo)
{
        if (*memo < p->nr_images) {
                struct conv_image *e = &p->images[*memo];
                if (addr - e->base < e->size)
                        return e;
        }
        for (uint32_t i = 0; i < p->nr_images; i++) {
                struct conv_image *e = &p->images[i];
                if (addr - e->base < e->size) {
                        *memo = i;
                        return e;
                }
        }
        return NULL;
}

struct walk_ctx {
        struct perf_conv *c;
        struct conv_proc *proc; /* NULL: the process is not known */
        uint32_t memo;
};

static int walk_find_map(void *ctx, uint64_t addr, struct unwind_map *map)
{
        struct walk_ctx *w = ctx;
        struct conv_image *e = w->proc ? image_at(w->proc, addr, &w->memo) : NULL;
        if (!e || !image_module(w->c, e, w->proc->pid))
                return -ENOENT;
        map->module = e->uw;
        map->bias = e->uw_bias;
        return 0;
}

/* The user registers of a sample, by DWARF number; false when it has none (a kernel thread)
   or they are not x86-64's (a 32-bit process: PERF_SAMPLE_REGS_ABI_32). */
static bool sample_regs(const struct perf_conv_event *ev, const struct perf_sample *s,
                        struct unwind_regs *regs)
{
        if (s->regs_abi != PERF_SAMPLE_REGS_ABI_64 || !s->regs || !s->stack || !s->stack_size)
                return false;
        uint64_t values[64];
        for (uint32_t i = 0; i < s->nr_regs && i < 64; i++)
                values[i] = le_get64(s->regs + 8 * i);
        unwind_regs_from_perf(regs, values, ev->regs_user_mask);
        return (regs->valid & (1u << UNWIND_REG_RSP | 1u << UNWIND_REG_RIP)) ==
               (1u << UNWIND_REG_RSP | 1u << UNWIND_REG_RIP);
}

/* Whether the code at addr of w's process keeps frame pointers (its module's FDEs say so). */
static bool is_fp_code(struct perf_conv *c, struct walk_ctx *w, uint64_t addr)
{
        struct conv_image *e = w->proc ? image_at(w->proc, addr, &w->memo) : NULL;
        return e && image_module(c, e, w->proc->pid) && unwind_module_has_frame_pointers(e->uw);
}

/* Whether a sample's user part is walked with DWARF CFI, else the kernel's frame-pointer chain
   serves: always in DWARF mode; in AUTO mode unless the sampled ip and every return address of
   the kernel's user chain lie in modules that keep frame pointers (the chain is then whole; a
   frame in code without them, Debian's libc, breaks it). */
static bool walks_dwarf(struct perf_conv *c, const struct perf_conv_event *ev,
                        const struct perf_sample *s, struct walk_ctx *w, uint64_t user_ip)
{
        if (ev->walk == PERF_CONV_WALK_DWARF)
                return true;
        if (!is_fp_code(c, w, user_ip))
                return true;
        bool is_user = false;
        for (uint64_t i = 0; i < s->nr_callchain; i++) {
                uint64_t a = le_get64(s->callchain + 8 * i);
                if (a >= (uint64_t)PERF_CONTEXT_MAX)
                        is_user = a == (uint64_t)PERF_CONTEXT_USER;
                else if (is_user && a != user_ip && !is_fp_code(c, w, a - 1))
                        return true;
        }
        return false;
}

/* Appends the user frames of the sample's register and stack copies to c->frames[n..]. */
static uint32_t unwind_user(struct perf_conv *c, const struct perf_sample *s,
                            const struct unwind_regs *regs, struct walk_ctx *w, uint32_t n)
{
        struct unwind_stack stack = {regs->r[UNWIND_REG_RSP], s->stack, (size_t)s->stack_size};
        /* the copy is fresh from the kernel, not in this CPU's cache: its first lines (where
           most frames lie) requested at once rather than one miss a frame */
        for (size_t off = 0; off < stack.size && off < 1024; off += 64)
                __builtin_prefetch(stack.data + off);
        struct unwind_walk_options opts = {.use_fp_fallback = true};
        struct unwind_result res;
        /* a sample taken in user mode has its ip first already: the walk, whose first frame is
           that ip, writes over it */
        uint32_t at = n == 1 && c->frames[0] == regs->r[UNWIND_REG_RIP] ? 0 : n;
        uint32_t nr = unwind_walk(regs, &stack, walk_find_map, w, &opts, c->frames + at,
                                  CONV_MAX_FRAMES - at, &res);
        c->uw_st.nr_frames += nr;
        n = at + nr > n ? at + nr : n;
        c->uw_st.nr_walks++;
        if ((uint32_t)res.stop < PERF_CONV_NR_UNWIND_STOPS)
                c->uw_st.nr_by_stop[res.stop]++;
        c->uw_st.nr_fp_frames += res.nr_fp_frames;
        return n;
}

/* The callchain without PERF_CONTEXT_* markers (kernel part then user part, as perf gives it),
   with ip first when it is not already. The user part is the DWARF walk of the sample's
   register and stack copies where ev's walk asks for it. */
static uint32_t collect_frames(struct perf_conv *c, const struct perf_conv_event *ev,
                               const struct perf_sample *s, bool is_ip_first)
{
        uint32_t n = 0;
        bool is_user = false; /* after PERF_CONTEXT_USER: kernel-looking values are garbage */
        struct unwind_regs regs;
        struct walk_ctx w = {c, NULL, UINT32_MAX};
        bool is_dwarf = false;
        if (ev->walk != PERF_CONV_WALK_FP && sample_regs(ev, s, &regs)) {
                if (!c->uw_cache)
                        unwind_cache_new(&c->uw_cache, NULL);
                w.proc = umap_find(&c->procs, s->pid);
                is_dwarf = c->uw_cache && walks_dwarf(c, ev, s, &w, regs.r[UNWIND_REG_RIP]);
                if (!is_dwarf)
                        c->uw_st.nr_fp_chains++;
        }
        if (is_ip_first) {
                c->frames[n++] = s->ip;
                if (is_kernel_addr(s->ip)) {
                        note_kaddr(c, s->ip);
                        note_kernel_frame(c, s->ip);
                }
        }
        for (uint64_t i = 0; i < s->nr_callchain && n < CONV_MAX_FRAMES; i++) {
                uint64_t a = le_get64(s->callchain + 8 * i);
                if (a >= (uint64_t)PERF_CONTEXT_MAX) {
                        is_user = a == (uint64_t)PERF_CONTEXT_USER;
                        if (is_user && is_dwarf)
                                break; /* the walk gives the user part */
                        continue;      /* a context marker */
                }
                if (n == 1 && is_ip_first && a == s->ip)
                        continue;
                c->frames[n++] = a;
                if (is_kernel_addr(a)) {
                        note_kaddr(c, a);
                        if (!is_user)
                                note_kernel_frame(c, a);
                }
        }
        if (is_dwarf && n < CONV_MAX_FRAMES)
                n = unwind_user(c, s, &regs, &w, n);
        return n;
}

static int emit_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid,
                      uint32_t nr)
{
        /* the frames are in place already: the payload head goes before them */
        uint8_t *p = c->stack_rec + STACK_REC_HEAD - 16;
        st64(p, ts);
        st32(p + 8, pid);
        st32(p + 12, tid);
        uint32_t size = etl_record_perfinfo64(c->stack_rec, WMI_LOG_TYPE_STACKWALK, 2, ts, NULL, 0,
                                              p, 16 + 8 * nr);
        c->st.nr_events++;
        return c->ops.emit(c->ctx, cpu, c->stack_rec, size);
}

/* _LBR_TRACE_EVENT_DATA (ETL-FORMAT.md 3.11), entries filtered as the ETW flags ask. */
static int emit_lbr(struct perf_conv *c, const struct perf_conv_event *ev,
                    const struct perf_sample *s, uint32_t cpu, uint64_t ts)
{
        uint8_t *p = c->payload;
        uint32_t n = 0;

        memset(p, 0, 24);
        st64(p, ts);
        st32(p + 8, s->pid);
        st32(p + 12, s->tid);
        st32(p + 16, ev->lbr_options);
        for (uint64_t i = 0; i < s->nr_branches && n < 2048; i++) {
                const uint8_t *e = s->branches + 24 * i;
                if (ev->lbr.is_post_filtered &&
                    (perf_lbr_class_of(le_get64(e + 16)) & ev->lbr.drop)) {
                        c->st.nr_lbr_dropped++;
                        continue;
                }
                uint8_t *o = p + 24 + 24 * n;
                st64(o, le_get64(e));
                st64(o + 8, le_get64(e + 8));
                /* Reserved: perf's branch flags as the CPU recorded them (mispredicted,
                   predicted, cycles; doc/perf-data.md), which the branch views count */
                st64(o + 16, le_get64(e + 16));
                n++;
        }
        uint32_t size =
                etl_record_perfinfo64(c->rec, WMI_LOG_TYPE_LBR, 2, ts, NULL, 0, p, 24 + 24 * n);
        return emit(c, cpu, size);
}

static bool is_kernel_thread(struct perf_conv *c, uint32_t tid)
{
        if (tid == 0 || tid == 2)
                return true;
        const struct conv_task *t = umap_find(&c->tasks, tid);
        uint32_t pid = t ? t->pid : tid;
        if (pid == 2)
                return true;
        const struct conv_proc *p = umap_find(&c->procs, pid);
        return p && p->ppid == 2;
}

/* The fields of a tracepoint format the converter reads, looked up once per format. */
enum tp_field_id {
        TPF_PREV_PID,
        TPF_NEXT_PID,
        TPF_PREV_PRIO,
        TPF_NEXT_PRIO,
        TPF_PREV_STATE,
        TPF_PID,
        TPF_COMMON_FLAGS,
        TPF_STATE,
        NR_TPF
};

static const struct perf_tp_field *const *tp_fields(struct perf_conv *c,
                                                    const struct perf_tp_format *tp)
{
        static const char *const names[NR_TPF] = {"prev_pid",     "next_pid",   "prev_prio",
                                                  "next_prio",    "prev_state", "pid",
                                                  "common_flags", "state"};
        _Static_assert(NR_TPF == sizeof(c->tp_cache[0].f) / sizeof(c->tp_cache[0].f[0]),
                       "tp_cache holds every field");
        static const struct perf_tp_field *const none[NR_TPF];
        if (!tp)
                return none;
        struct tp_cache *t = &c->tp_cache[0];
        /* an empty memo: the format was parsed again since (perf_tp_field_find fills it) */
        if (t->tp == tp && tp->nr_memo)
                return t->f;
        for (int i = 1; i < 3; i++)
                if (c->tp_cache[i].tp == tp && tp->nr_memo)
                        return c->tp_cache[i].f;
        /* sched_switch, sched_waking and cpu_idle alternate: three entries, the oldest one
           replaced */
        c->tp_cache[2] = c->tp_cache[1];
        c->tp_cache[1] = c->tp_cache[0];
        t->tp = tp;
        for (int i = 0; i < NR_TPF; i++)
                t->f[i] = perf_tp_field_find(tp, names[i]);
        return t->f;
}

static inline int64_t tp_get(const struct perf_tp_field *f, const struct perf_sample *s,
                             int64_t fallback)
{
        int64_t v;
        if (f && f->size == 4 && (uint32_t)f->offset + 4 <= s->raw_size) {
                uint32_t u = le_get32(s->raw + f->offset);
                return f->is_signed ? (int64_t)(int32_t)u : (int64_t)u;
        }
        if (perf_tp_field_get(f, s->raw, s->raw_size, &v))
                return v;
        return fallback;
}

/* Since when tid has waited: from now on (switched out, or readied). */
static void wait_begin(struct perf_conv *c, uint32_t tid, uint64_t ts)
{
        bool is_new;
        if (tid == 0)
                return; /* the idle thread never waits */
        if (tid < CONV_WAIT_DIRECT) {
                c->wait_since[tid] = ts;
                c->wait_is_set[tid / 64] |= 1ull << (tid % 64);
                return;
        }
        struct conv_wait *w = umap_get(&c->waits, tid, &is_new);
        if (w)
                w->since_ns = ts;
}

/* NewThreadWaitTime: how long tid waited before this switch-in, in clock ticks of the trace's
   TimerResolution, counted as Windows counts them (KeTickCount now less the tick count when the
   wait began): the ticks that began in between, on the session clock; 0 for the idle thread or
   a thread not seen leave. */
static uint32_t wait_end(struct perf_conv *c, uint32_t tid, uint64_t ts)
{
        uint64_t since;
        if (tid == 0)
                return 0;
        if (tid < CONV_WAIT_DIRECT) {
                uint64_t bit = 1ull << (tid % 64);
                if (!(c->wait_is_set[tid / 64] & bit))
                        return 0;
                c->wait_is_set[tid / 64] &= ~bit;
                since = c->wait_since[tid];
        } else {
                struct conv_wait *w = umap_find(&c->waits, tid);
                if (!w)
                        return 0;
                since = w->since_ns;
                umap_remove(&c->waits, w);
        }
        uint64_t ticks = ts > since ? ts / c->tick_ns - since / c->tick_ns : 0;
        return ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)ticks;
}

/* The switch at ts on cpu from old_tid to new_tid, as WMI_CONTEXTSWAP v4 (ETL-FORMAT.md 3.5),
   into c->payload; keeps the per-thread wait times and the CPU's current thread. */
static uint32_t build_cswitch(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t new_tid,
                              uint32_t old_tid, int64_t new_prio, int64_t old_prio,
                              struct perf_thread_state old_state)
{
        uint8_t *p = c->payload;

        memset(p, 0, 24);
        st32(p, new_tid);
        st32(p + 4, old_tid);
        p[8] = (uint8_t)(new_tid == 0 ? 0 : perf_prio_to_etw(new_prio));
        p[9] = (uint8_t)(old_tid == 0 ? 0 : perf_prio_to_etw(old_prio));
        /* PreviousCState: the idle thread switched out, the C-state its CPU slept in */
        if (old_tid == 0 && cpu < c->nr_cpus)
                p[10] = c->cstate[cpu];
        p[12] = old_state.wait_reason;
        p[13] = is_kernel_thread(c, old_tid) ? 0 : 1; /* OldThreadWaitMode */
        p[14] = old_state.state;
        /* OldThreadWaitIdealProcessor: Linux has no ideal processor; the wake-up path prefers
           the CPU a task last ran on (select_task_rq's prev_cpu), which is this one. */
        p[15] = (uint8_t)cpu;
        st32(p + 16, wait_end(c, new_tid, ts)); /* NewThreadWaitTime */
        if (old_state.state != KSTATE_TERMINATED)
                wait_begin(c, old_tid, ts);
        if (cpu < c->nr_cpus)
                c->cpu_tid[cpu] = new_tid;
        return 24;
}

/* The blocking function's reason of a kernel address, or -1 (c->wait_sites by start). */
static int wait_reason_at(struct perf_conv *c, uint64_t addr)
{
        uint32_t slot = (uint32_t)((addr >> 3) ^ (addr >> 13)) & 255;
        if (c->wait_memo[slot].addr == addr)
                return c->wait_memo[slot].reason;
        uint32_t lo = 0, hi = c->nr_wait_sites;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (c->wait_sites[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        int reason = lo && addr < c->wait_sites[lo - 1].end ? c->wait_sites[lo - 1].reason : -1;
        c->wait_memo[slot].addr = addr;
        c->wait_memo[slot].reason = (int16_t)reason;
        return reason;
}

/* A switch's reason from where the thread left the CPU: the innermost blocking function of the
   switch's kernel callchain (LINUX-MAPPING.md 3.3), else the state's. A runnable thread
   (is_runnable) takes only do_sched_yield's WrYieldExecution from it, a sleeping one anything
   else. */
static uint8_t wait_reason_of_stack(struct perf_conv *c, const struct perf_sample *s,
                                    uint8_t reason, bool is_runnable)
{
        if (!c->has_asked_wait_sites) {
                c->has_asked_wait_sites = true;
                if (c->ops.wait_sites)
                        c->nr_wait_sites = c->ops.wait_sites(c->ctx, &c->wait_sites);
                for (uint32_t i = 0; i < 256; i++)
                        c->wait_memo[i].addr = 0;
        }
        if (!c->nr_wait_sites)
                return reason;
        for (uint64_t i = 0; i < s->nr_callchain && i < 32; i++) {
                uint64_t a = le_get64(s->callchain + 8 * i);
                if (a >= (uint64_t)PERF_CONTEXT_MAX) {
                        if (a == (uint64_t)PERF_CONTEXT_USER)
                                break; /* the kernel part is over */
                        continue;
                }
                if (!is_kernel_addr(a))
                        continue;
                int r = wait_reason_at(c, a);
                if (r >= 0 && (r == KWAIT_WR_YIELD_EXECUTION) == is_runnable)
                        return (uint8_t)r;
        }
        return reason;
}

/* CSwitch from sched_switch's raw fields; the threads switched in *new_tid and out *old_tid,
   whether the old one ended *is_ended. */
static uint32_t build_cswitch_tp(struct perf_conv *c, const struct perf_conv_event *ev,
                                 const struct perf_sample *s, uint32_t cpu, uint64_t ts,
                                 uint32_t *new_tid, uint32_t *old_tid, bool *is_ended)
{
        const struct perf_tp_field *const *f = tp_fields(c, ev->tp);
        int64_t prev_pid = tp_get(f[TPF_PREV_PID], s, s->tid);
        int64_t next_pid = tp_get(f[TPF_NEXT_PID], s, 0);
        int64_t prev_prio = tp_get(f[TPF_PREV_PRIO], s, 120);
        int64_t next_prio = tp_get(f[TPF_NEXT_PRIO], s, 120);
        int64_t prev_state = tp_get(f[TPF_PREV_STATE], s, 0);
        uint64_t ps = (uint64_t)prev_state;
        struct state_memo *m = &c->ps_memo[(ps ^ (ps >> 8)) & 7];
        if (!m->tp || m->tp != ev->tp || m->prev_state != ps) {
                m->tp = ev->tp;
                m->prev_state = ps;
                m->st = perf_prev_state_to_etw(ev->tp, ps);
        }
        struct perf_thread_state st = m->st;
        if (st.state == KSTATE_WAITING && s->nr_callchain &&
            (st.wait_reason == KWAIT_USER_REQUEST || st.wait_reason == KWAIT_EXECUTIVE))
                st.wait_reason = wait_reason_of_stack(c, s, st.wait_reason, false);
        else if (st.state == KSTATE_READY && s->nr_callchain && prev_pid != 0)
                st.wait_reason = wait_reason_of_stack(c, s, st.wait_reason, true);
        *new_tid = (uint32_t)next_pid;
        *old_tid = (uint32_t)prev_pid;
        *is_ended = st.state == KSTATE_TERMINATED;
        return build_cswitch(c, cpu, ts, (uint32_t)next_pid, (uint32_t)prev_pid, next_prio,
                             prev_prio, st);
}

/* ETW_READY_THREAD_EVENT (ETL-FORMAT.md 3.6) from sched_waking's raw fields. */
static uint32_t build_ready_thread(struct perf_conv *c, const struct perf_conv_event *ev,
                                   const struct perf_sample *s)
{
        uint8_t *p = c->payload;
        const struct perf_tp_field *const *f = tp_fields(c, ev->tp);
        int64_t pid = tp_get(f[TPF_PID], s, 0);
        int64_t flags = tp_get(f[TPF_COMMON_FLAGS], s, 0);

        memset(p, 0, 8);
        st32(p, (uint32_t)pid);
        if (flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ))
                p[6] = 0x1; /* ExecutingDpc: woken from interrupt context */
        /* Ready from now on: NewThreadWaitTime counts from here */
        wait_begin(c, (uint32_t)pid, s->time);
        return 8;
}

/* -p: whether a sample is the traced process's: its own (a sample or a switch out of one of its
   threads: sched_switch is recorded in the old thread's context), or a wake-up of one of its
   threads by another process's (the kernel gives the woken thread's events its wake-ups too).
   A thread of the process first seen here is learnt. */
static bool is_own_sample(struct perf_conv *c, const struct perf_conv_event *ev,
                          const struct perf_sample *s)
{
        bool is_own = s->pid == c->traced_pid;
        if (is_own && s->tid != s->pid && !umap_find(&c->tasks, s->tid))
                task_set(c, s->tid, s->pid, NULL, -1);
        if (!is_own && ev->kind == PERF_CONV_READY_THREAD && s->raw) {
                int64_t tid = tp_get(tp_fields(c, ev->tp)[TPF_PID], s, 0);
                is_own = tid > 0 && is_traced(c, (uint32_t)tid);
        }
        if (!is_own)
                c->st.nr_foreign++;
        return is_own;
}

static int conv_sample(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                       const struct perf_conv_event *ev)
{
        struct perf_sample s;
        uint64_t pmc[8];
        uint32_t nr_pmc = 0;

        if (size < 16)
                return -EBADMSG;
        if (!ev) {
                c->st.nr_unknown_id++;
                return 0;
        }
        if (perf_sample_parse(rec, size, ev->sample_type, ev->read_format, ev->branch_sample_type,
                              ev->regs_user_mask, &s) < 0)
                return -EBADMSG;
        if (s.time < ev->valid_from || s.time > ev->valid_until) {
                c->st.nr_out_of_window++;
                return 0;
        }
        if (c->traced_pid && !is_own_sample(c, ev, &s))
                return 0;
        for (uint32_t i = 1; i < s.nr_values && nr_pmc < ev->nr_pmc; i++)
                pmc[nr_pmc++] = s.values[i];

        uint32_t cpu = writer_cpu(c, (ev->sample_type & PERF_SAMPLE_CPU) != 0, s.cpu, ring_cpu);
        uint64_t ts = perf_conv_stamp(c, cpu, s.time);
        uint8_t *p = c->payload;
        uint32_t rsize, nr_frames = 0;
        int rc;

        if (ev->has_stack)
                nr_frames = collect_frames(c, ev, &s,
                                           ev->kind == PERF_CONV_PROFILE ||
                                                   ev->kind == PERF_CONV_PMC_SAMPLE);
        switch (ev->kind) {
        case PERF_CONV_PROFILE:
                note_kaddr(c, s.ip);
                if (is_kernel_addr(s.ip))
                        note_kernel_frame(c, s.ip);
                memset(p, 0, 16);
                st64(p, s.ip);
                st32(p + 8, s.tid);
                st16(p + 12, 1); /* Count */
                rsize = etl_record_perfinfo64(c->rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE, 2, ts, pmc,
                                              nr_pmc, p, 16);
                break;
        case PERF_CONV_PMC_SAMPLE:
                note_kaddr(c, s.ip);
                if (is_kernel_addr(s.ip))
                        note_kernel_frame(c, s.ip);
                memset(p, 0, 16);
                st64(p, s.ip);
                st32(p + 8, s.tid);
                st16(p + 12, ev->profile_source);
                rsize = etl_record_perfinfo64(c->rec, PERFINFO_LOG_TYPE_PMC_INTERRUPT, 2, ts, pmc,
                                              nr_pmc, p, 16);
                break;
        case PERF_CONV_CSWITCH: {
                if (!s.raw)
                        return -EBADMSG;
                uint32_t new_tid, old_tid;
                bool is_ended;
                uint32_t n = build_cswitch_tp(c, ev, &s, cpu, ts, &new_tid, &old_tid, &is_ended);
                rsize = etl_record_perfinfo64(c->rec, WMI_LOG_TYPE_CONTEXT_SWAP, 4, ts, pmc, nr_pmc,
                                              p, n);
                rc = emit(c, cpu, rsize);
                /* the stack of a CSwitch is the new thread's (where it left the CPU last); the
                   callchain of this one, the old thread's, waits for its own switch-in */
                stacks_set(c, ev->has_stack);
                if (ev->has_stack)
                        stack_keep(c, old_tid, s.pid, is_ended ? 0 : nr_frames);
                if (rc == 0 && c->has_switch_stacks)
                        rc = emit_switch_in_stack(c, cpu, ts, new_tid);
                return rc;
        }
        case PERF_CONV_CPU_IDLE:
                if (!s.raw)
                        return -EBADMSG;
                {
                        /* state 4294967295 (PWR_EVENT_EXIT) leaves idle: the state entered
                           stays, for the switch that follows */
                        int64_t state = tp_get(tp_fields(c, ev->tp)[TPF_STATE], &s, -1);
                        if (state >= 0 && state != 0xffffffffll && cpu < c->nr_cpus)
                                c->cstate[cpu] = (uint8_t)(state > 255 ? 255 : state);
                }
                return 0;
        case PERF_CONV_READY_THREAD:
                if (!s.raw)
                        return -EBADMSG;
                rsize = record_system64_pmc(c->rec, WMI_LOG_TYPE_READY_THREAD, 2, s.tid, s.pid, ts,
                                            pmc, nr_pmc, p, build_ready_thread(c, ev, &s));
                break;
        default: return 0;
        }
        rc = emit(c, cpu, rsize);
        if (rc == 0 && ev->has_stack && nr_frames)
                rc = emit_stack(c, cpu, ts, s.pid, s.tid, nr_frames);
        /* the walks' counts, once a second while they change (the screen's header shows them) */
        if (rc == 0 && ev->walk != PERF_CONV_WALK_FP && ts - c->uw_stats_ts >= 1000000000ull &&
            c->uw_st.nr_walks + c->uw_st.nr_fp_chains != c->uw_walks_written)
                rc = perf_conv_unwind_stats(c, cpu, ts);
        if (rc == 0 && ev->has_lbr && (ev->sample_type & PERF_SAMPLE_BRANCH_STACK))
                rc = emit_lbr(c, ev, &s, cpu, ts);
        return rc;
}

/* PERF_RECORD_SWITCH / SWITCH_CPU_WIDE (context_switch=1, LINUX-MAPPING.md 3.3). An IN record
   is written in the incoming thread's context once the switch is done, after the sched_switch
   sample of the same switch (written in the outgoing thread's context). When no CSwitch switched
   that thread in on this CPU, the sample was not delivered: on Linux 6.18 nothing is recorded
   while a secondary CPU's idle task runs (no sched_switch of swapper/N switching out, no
   cpu-clock samples in it), so every switch-in from idle there would be missing. The IN record
   then makes the CSwitch, stamped at its own time (a few microseconds after the switch). */
/* The size of the sample_id trailer of ev's non-sample records. */
static uint32_t trailer_size(const struct perf_conv_event *ev)
{
        uint64_t st = ev ? ev->sample_type : PERF_CONV_SAMPLE_ID_BITS;
        return 8 * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
                    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
                    !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* sched_switch says more of a switch out, in the same context: a switch-out record is
   nothing to convert when it is whole (its fixed part and ev's trailer). With -p, a CPU-wide
   one may switch to a thread of the traced process (one that may be learnt from a record not
   converted yet) and says how that switch-in's other side left: it is converted. */
static bool is_whole_switch_out(const struct perf_conv *c, const struct perf_event_header *h,
                                uint32_t size, const struct perf_conv_event *ev)
{
        bool is_cpu_wide = h->type == PERF_RECORD_SWITCH_CPU_WIDE;
        if (!(is_cpu_wide || h->type == PERF_RECORD_SWITCH) ||
            !(h->misc & PERF_RECORD_MISC_SWITCH_OUT) ||
            size < (is_cpu_wide ? 16u : 8u) + trailer_size(ev))
                return false;
        return !(c->traced_pid && is_cpu_wide);
}

bool perf_conv_skips(struct perf_conv *c, const uint8_t *rec, uint32_t size)
{
        const struct perf_event_header *h = (const void *)rec;
        if (size < 16 || h->size != size || !(h->misc & PERF_RECORD_MISC_SWITCH_OUT) ||
            !is_whole_switch_out(c, h, size, record_event(c, rec, size)))
                return false;
        c->st.nr_records++;
        return true;
}

/* The thread a switch-in record says was switched out (*old_tid on cpu) and its state, the
   sched_switch sample of that switch not having come. The idle thread leaves the CPU runnable
   (sched_switch says R for swapper). With -p, another process's thread (the other side of one
   of its threads' switch-ins) is Ready/WrPreempted when its CPU-wide switch-out record says it
   was preempted, else it blocked: Waiting/UserRequest, as a sleep (S) with no callchain is.
   The kernel names a task that is gone -1: it ended (Terminated), and its switch-out record
   may still say which it was; if not, the switch is written as from the idle thread. Otherwise
   nothing is known: Waiting/Executive. */
static struct perf_thread_state switched_out_state(struct perf_conv *c, uint32_t cpu,
                                                   uint32_t *old_tid, uint32_t new_tid)
{
        struct conv_out *o =
                c->last_out && c->last_out[cpu].has && c->last_out[cpu].next_tid == new_tid
                        ? &c->last_out[cpu]
                        : NULL;
        if (o)
                o->has = false;
        if (*old_tid == CONV_NONE) {
                *old_tid = o && o->tid != CONV_NONE ? o->tid : 0;
                if (*old_tid)
                        return (struct perf_thread_state){KSTATE_TERMINATED, KWAIT_WR_TERMINATED};
        }
        if (*old_tid == 0)
                return perf_prev_state_to_etw(NULL, 0);
        if (o && o->tid == *old_tid)
                return o->is_preempted
                               ? (struct perf_thread_state){KSTATE_READY, KWAIT_WR_PREEMPTED}
                               : (struct perf_thread_state){KSTATE_WAITING, KWAIT_USER_REQUEST};
        return (struct perf_thread_state){KSTATE_WAITING, KWAIT_EXECUTIVE};
}

static int conv_switch(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                       const struct perf_conv_event *ev)
{
        const struct perf_event_header *h = (const void *)rec;
        struct perf_sample_id sid;
        bool is_cpu_wide = h->type == PERF_RECORD_SWITCH_CPU_WIDE;

        if (is_whole_switch_out(c, h, size, ev))
                return 0;
        if (size < (is_cpu_wide ? 16u : 8u) || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint32_t cpu = writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
                /* -p: another process's thread leaving for one of the traced process's */
                if (c->last_out && is_cpu_wide && cpu < c->nr_cpus)
                        c->last_out[cpu] = (struct conv_out){
                                sid.tid, le_get32(rec + 12),
                                (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0, true};
                return 0;
        }
        ev = sid_event(c, ev, &sid);
        if (ev && sid.has_time && (sid.time < ev->valid_from || sid.time > ev->valid_until)) {
                c->st.nr_out_of_window++;
                return 0;
        }
        uint32_t new_tid = sid.tid;
        if (new_tid == CONV_NONE || cpu >= c->nr_cpus || c->cpu_tid[cpu] == new_tid)
                return 0; /* seen: the CSwitch of this switch was written */
        if (!is_traced(c, new_tid))
                return 0; /* -p: another process's switch (CPU-wide records) */
        /* the thread switched out: the record says so CPU-wide; a per-task record does not,
           and the last thread this CPU was seen switching to is the best guess */
        uint32_t old_tid = is_cpu_wide ? le_get32(rec + 12)
                                       : (c->cpu_tid[cpu] == CONV_NONE ? 0 : c->cpu_tid[cpu]);
        struct perf_thread_state st = switched_out_state(c, cpu, &old_tid, new_tid);
        const struct conv_task *nt = umap_find(&c->tasks, new_tid);
        const struct conv_task *ot = umap_find(&c->tasks, old_tid);
        int64_t new_prio = nt && nt->prio >= 0 ? nt->prio : 120; /* unknown: nice 0 */
        int64_t old_prio = ot && ot->prio >= 0 ? ot->prio : 120;
        uint64_t ts = perf_conv_stamp(c, cpu, sid.time);
        uint32_t n = build_cswitch(c, cpu, ts, new_tid, old_tid, new_prio, old_prio, st);
        c->st.nr_cswitch_repaired++;
        if (c->has_switch_plan && sid.time >= c->switch_plan_from)
                stacks_set(c, c->is_switch_plan_on);
        int rc = emit(c, cpu,
                      etl_record_perfinfo64(c->rec, WMI_LOG_TYPE_CONTEXT_SWAP, 4, ts, NULL, 0,
                                            c->payload, n));
        if (rc == 0 && c->has_switch_stacks)
                rc = emit_switch_in_stack(c, cpu, ts, new_tid);
        return rc;
}

/* ---- records ---- */

uint64_t perf_conv_record_time(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                               uint32_t ring_cpu, uint32_t *cpu)
{
        const struct perf_conv_event *ev;
        return perf_conv_record_time_ev(c, rec, size, ring_cpu, cpu, &ev);
}

uint64_t perf_conv_record_time_ev(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                                  uint32_t ring_cpu, uint32_t *cpu,
                                  const struct perf_conv_event **evp)
{
        const struct perf_event_header *h = (const void *)rec;
        struct perf_conv *mc = (struct perf_conv *)c; /* the lookup hook takes no const */
        const struct perf_conv_event *ev = record_event(mc, rec, size);

        *evp = ev;
        *cpu = ring_cpu;
        if (size < 16)
                return 0;
        if (h->type == PERF_RECORD_SAMPLE) {
                /* the fields up to CPU have fixed places: no parse (this runs for every record) */
                if (!ev || !(ev->sample_type & PERF_SAMPLE_TIME))
                        return 0;
                uint64_t st = ev->sample_type;
                uint32_t at = 8 + ((st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0) +
                              ((st & PERF_SAMPLE_IP) ? 8 : 0) + ((st & PERF_SAMPLE_TID) ? 8 : 0);
                if (at + 8 > size)
                        return 0;
                uint64_t time = le_get64(rec + at);
                if (st & PERF_SAMPLE_CPU) {
                        uint32_t cpu_at = at + 8 + ((st & PERF_SAMPLE_ADDR) ? 8 : 0) +
                                          ((st & PERF_SAMPLE_ID) ? 8 : 0) +
                                          ((st & PERF_SAMPLE_STREAM_ID) ? 8 : 0);
                        if (cpu_at + 4 <= size)
                                *cpu = writer_cpu(c, true, le_get32(rec + cpu_at), ring_cpu);
                }
                return time;
        }
        /* every other record ends in the sample_id trailer (sample_id_all) */
        struct perf_sample_id sid;
        if (conv_sample_id(ev, rec, size, &sid) < 0)
                return 0;
        *cpu = writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        return sid.time;
}

int perf_conv_record(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size)
{
        return perf_conv_record_ev(c, ring_cpu, rec, size, record_event(c, rec, size));
}

int perf_conv_record_ev(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                        const struct perf_conv_event *ev)
{
        const struct perf_event_header *h = (const void *)rec;
        int rc;

        if (size < sizeof(*h) || h->size != size) {
                c->st.nr_bad++;
                return -EBADMSG;
        }
        c->st.nr_records++;
        switch (h->type) {
        case PERF_RECORD_SAMPLE: rc = conv_sample(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_MMAP2: rc = conv_mmap2(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_COMM: rc = conv_comm(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT: rc = conv_task(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_LOST: rc = conv_lost(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE: rc = conv_switch(c, ring_cpu, rec, size, ev); break;
        default: rc = 0; break; /* throttling and the like: nothing to write */
        }
        if (rc == -EBADMSG)
                c->st.nr_bad++;
        return rc;
}

/* ---- kernel symbols ---- */

bool perf_conv_kernel_range(const struct perf_conv *c, uint64_t *lo, uint64_t *hi)
{
        *lo = c->kframe_lo;
        *hi = c->kframe_hi;
        return c->kframe_lo <= c->kframe_hi;
}

int perf_conv_kernel_symbols(struct perf_conv *c, const struct perf_ksym *syms, size_t nr,
                             uint32_t cpu, uint64_t ts)
{
        if (!nr)
                return 0;
        uint8_t *used = xcalloc(nr, 1);
        for (uint32_t i = 0; i <= c->kaddrs_mask; i++) {
                uint64_t a = c->kaddrs[i];
                if (!a)
                        continue;
                size_t lo = 0, hi = nr; /* the last symbol at or below a */
                while (hi - lo > 1) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (syms[mid].addr <= a)
                                lo = mid;
                        else
                                hi = mid;
                }
                if (syms[lo].addr <= a && a - syms[lo].addr < syms[lo].size)
                        used[lo] = 1;
        }
        int rc = 0, nr_written = 0;
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_KERNEL_SYMBOL, 1, 0, 4, 0, 0, 0};
        for (size_t i = 0; i < nr && rc == 0; i++) {
                if (!used[i])
                        continue;
                uint8_t *p = c->payload;
                st64(p, syms[i].addr);
                st64(p + 8, syms[i].size);
                uint32_t n = 16 + put_cstr(p + 16, syms[i].name, 1024);
                n += put_cstr(p + n, syms[i].module ? syms[i].module : "", 256);
                uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts,
                                                   NULL, 0, p, n);
                rc = emit(c, cpu, size);
                nr_written++;
        }
        free(used);
        return rc < 0 ? rc : nr_written;
}

/* SPDX-License-Identifier: MIT */
/* perf_conv_tracepoint.c: tracepoint format files, and sched_switch's states, wait reasons and
 * priorities in ETW's terms. */
#include "perf_conv_int.h"

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

/* The blocking functions and their reasons (perf_wait_reason_of_function). */
static const struct {
        const char *name;
        bool is_prefix;
        uint8_t reason;
} wait_sites[] = {
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

int perf_wait_reason_of_function(const char *name)
{
        if (!name || !name[0])
                return -1;
        /* this runs for every kernel text symbol (100,000 and more): the first three
           characters rule out nearly all before a string is compared (two let every "__" name,
           a quarter of the kernel's, through to seven compares: 10 ms of a cold start's 400 on
           the 2-CPU VM of bench/README.md; every site is three characters or more, and a name's
           third is read only when its second is not its end) */
        for (size_t i = 0; i < sizeof(wait_sites) / sizeof(wait_sites[0]); i++) {
                const char *site = wait_sites[i].name;
                if (name[0] != site[0] || name[1] != site[1] || name[2] != site[2])
                        continue;
                if (wait_sites[i].is_prefix ? strncmp(name, site, strlen(site)) == 0
                                            : strcmp(name, site) == 0)
                        return wait_sites[i].reason;
        }
        return -1;
}

uint32_t perf_wait_reasons_hash(void)
{
        uint32_t h = 2166136261u; /* FNV-1a over the names, their kinds and reasons */
        for (size_t i = 0; i < sizeof(wait_sites) / sizeof(wait_sites[0]); i++) {
                for (const char *c = wait_sites[i].name; *c; c++)
                        h = (h ^ (uint8_t)*c) * 16777619u;
                h = (h ^ (uint32_t)(wait_sites[i].is_prefix ? 1 : 2)) * 16777619u;
                h = (h ^ wait_sites[i].reason) * 16777619u;
        }
        return h;
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

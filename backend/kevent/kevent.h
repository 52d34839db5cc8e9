/* SPDX-License-Identifier: MIT */
/* kevent.h: the one decoder from an ETW EVENT_RECORD to the small decoded kernel event the model
 * reads. */
#ifndef ETWTOP_KEVENT_H
#define ETWTOP_KEVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "etw/evntrace.h"

/* What a decoded event is. KEV_OTHER: a record this decoder has no payload layout for; only the
   common fields (and name/provider) are valid. */
enum kevent_type {
        KEV_OTHER = 0,
        KEV_TRACE_HEADER,      /* 0x0000: TRACE_LOGFILE_HEADER */
        KEV_GROUP_MASK,        /* 0x0005 new masks / 0x0020 previous masks */
        KEV_PROCESS,           /* 0x0301-0x0304, 0x0327 */
        KEV_THREAD,            /* 0x0501-0x0504 */
        KEV_THREAD_NAME,       /* 0x0548 */
        KEV_IMAGE,             /* 0x030A load, 0x1402 unload, 0x1403 DCStart, 0x1404 DCEnd */
        KEV_IMAGE_ID,          /* KernelTraceControl opcode 0 */
        KEV_DBG_ID,            /* KernelTraceControl opcodes 36, 37 (RSDS), 32/38/40 (others) */
        KEV_FILE_VERSION,      /* KernelTraceControl opcode 64 */
        KEV_SAMPLE,            /* 0x0F2E SampledProfile */
        KEV_PMC_SAMPLE,        /* 0x0F2F PMC interrupt */
        KEV_PMC_CONFIG,        /* 0x0F30 counter names */
        KEV_PROFILE_INTERVAL,  /* 0x0F48 set, 0x0F49 rundown start, 0x0F4A rundown end */
        KEV_STACK,             /* 0x1820, or a stack reassembled from cache keys (is_from_key) */
        KEV_STACK_KEY,         /* 0x1825 kernel / 0x1826 user reference */
        KEV_STACK_KEY_DEF,     /* 0x1822 create, 0x1823 delete, 0x1824 rundown */
        KEV_CSWITCH,           /* 0x0524 */
        KEV_READY_THREAD,      /* 0x0532 */
        KEV_LBR,               /* 0x0C20 */
        KEV_IMAGE_IDENTITY,    /* etwtop provider, Id 1 (doc/etwtop-provider.md) */
        KEV_KERNEL_SYMBOL,     /* etwtop provider, Id 2 */
        KEV_EVENTS_LOST,       /* etwtop provider, Id 3 */
        KEV_CLR_METHOD,        /* .NET runtime Id 143/144, rundown Id 143/144: verbose methods */
        KEV_CLR_MODULE,        /* .NET runtime Id 152/153, rundown Id 153/154: modules */
        KEV_SESSION_CPU,       /* etwtop provider, Id 4 */
        KEV_UNWIND_STATS,      /* etwtop provider, Id 5 */
        KEV_RECORDS_NOT_SHOWN, /* etwtop provider, Id 6 */
        KEV_FIELDS,            /* a kernel class decoded by its MOF layout: name=value fields */
        KEV_TYPE_MAX
};

/* Event start/end/rundown kinds, from the opcode. */
enum kevent_phase {
        KEV_PHASE_NONE = 0,
        KEV_PHASE_START,    /* Start / Load */
        KEV_PHASE_END,      /* End / Unload */
        KEV_PHASE_DC_START, /* rundown at start */
        KEV_PHASE_DC_END,   /* rundown at stop */
        KEV_PHASE_DEFUNCT,
};

#define KEV_MAX_PMC 8

/* Why a DWARF walk of a user stack ended (etwtop's UnwindStats, in this order). */
enum kevent_unwind_stop {
        KEV_UNWIND_THREAD_START = 0, /* whole: the thread's first frame */
        KEV_UNWIND_STACK_END,        /* the stack copy was too short */
        KEV_UNWIND_NO_MODULE,        /* code in no file (JIT, anonymous memory) */
        KEV_UNWIND_NO_CFI,           /* a module without rules for the address */
        KEV_UNWIND_BAD_FRAME,        /* a rule it cannot use, a frame that goes nowhere */
        KEV_UNWIND_MAX_DEPTH,        /* too many frames */
        KEV_NR_UNWIND_STOPS,
};

/* One decoded field of a KEV_FIELDS event. */
enum kevent_field_kind {
        KEV_FIELD_UINT = 0, /* u: decimal */
        KEV_FIELD_INT,      /* u: as int64_t */
        KEV_FIELD_HEX,      /* u: 0x... (flags, addresses) */
        KEV_FIELD_STR,      /* s: UTF-8 from the payload (sanitize before printing) */
};

struct kevent_field {
        const char *name; /* static: the MOF property name */
        enum kevent_field_kind kind;
        uint64_t u;
        const char *s; /* borrowed; "" unless kind is KEV_FIELD_STR */
};

#define KEV_MAX_FIELDS 32

struct kevent_lbr_entry {
        uint64_t from;
        uint64_t to;
};

/* What an LBR entry's info tells (perf_branch_entry: mispred bit 0, predicted bit 1,
   cycles bits 4-19). Prediction is known where either bit is set; cycles 0 is unknown. */
#define KEV_LBR_MISPREDICTED(info)     (((info)&1u) != 0)
#define KEV_LBR_PREDICTION_KNOWN(info) (((info)&3u) != 0)
#define KEV_LBR_CYCLES(info)           ((uint32_t)(((info) >> 4) & 0xffffu))

/* The farthest a session time (time_ns, event_time_ns) lies from the session's start: 2^61 ns,
   73 years. A damaged record's time is cut to it, so that the difference of two session times,
   and a duration added to it, never overflow. */
#define KEVENT_TIME_NS_MAX ((int64_t)1 << 61)

/* A decoded event. Pointers and strings are borrowed: valid until the sink returns. Strings are
   UTF-8, NUL-terminated, never NULL ("" when absent). */
struct kevent {
        enum kevent_type type;
        const char *name;     /* "Process/Start", "PerfInfo/SampledProfile", "Thread/CSwitch" ... */
        const GUID *provider; /* borrowed from the record */
        uint8_t opcode; /* etwtop's own events: their EVENT_DESCRIPTOR Id (their opcode is 0) */
        uint8_t version;
        uint8_t pointer_size; /* 4 or 8: of this record's payload */
        uint64_t timestamp;   /* as in the record: raw clock or FILETIME, as the consumer asked */
        int64_t time_ns;      /* since the session start (the header event), by the session clock,
                                 within +-KEVENT_TIME_NS_MAX */
        uint32_t cpu;
        uint32_t pid; /* the subject's, after the fix-ups (payload, thread table); -1 unknown */
        uint32_t tid;
        uint32_t nr_pmc; /* counters carried on the event (PMC_COUNTERS) */
        uint64_t pmc[KEV_MAX_PMC];
        union {
                struct {
                        const TRACE_LOGFILE_HEADER *header; /* x64 layout, converted */
                        const char *logger_name;
                        const char *log_file_name;
                } trace_header;
                struct {
                        uint32_t masks[8];
                        uint32_t kernel_version;
                        bool is_previous; /* 0x0020: masks that were in force before a change */
                } group_mask;
                struct {
                        enum kevent_phase phase;
                        uint64_t unique_key;
                        uint32_t pid;
                        uint32_t parent_pid;
                        uint32_t session_id;
                        int32_t exit_status;
                        uint64_t directory_table_base;
                        uint32_t flags;
                        const char *user_sid; /* "S-1-5-18" or "" */
                        const char *image_name;
                        const char *command_line;
                        const char *package_full_name;
                        const char *application_id;
                        uint64_t exit_time; /* Defunct only */
                } process;
                struct {
                        enum kevent_phase phase;
                        uint32_t pid;
                        uint32_t tid;
                        uint64_t stack_base, stack_limit, user_stack_base, user_stack_limit;
                        uint64_t affinity; /* StartAddr in v2 */
                        uint64_t win32_start_addr;
                        uint64_t teb_base;
                        uint32_t sub_process_tag;
                        int8_t base_priority;
                        uint8_t page_priority, io_priority, thread_flags;
                        const char *name;
                } thread;
                struct {
                        uint32_t pid;
                        uint32_t tid;
                        const char *name;
                } thread_name;
                struct {
                        enum kevent_phase phase;
                        uint64_t base;
                        uint64_t size;
                        uint32_t pid;
                        uint32_t checksum;
                        uint32_t time_date_stamp;
                        uint8_t signature_level, signature_type;
                        uint64_t default_base;
                        const char *file_name; /* as recorded (NT path on Windows) */
                } image;
                struct {
                        uint64_t base;
                        uint64_t size;
                        uint32_t pid;
                        uint32_t time_date_stamp;
                        const char *original_file_name;
                } image_id;
                struct {
                        uint64_t base;
                        uint32_t pid;
                        bool has_pdb;  /* RSDS, ILRSDS: guid_sig, age, pdb_file_name */
                        bool has_ppdb; /* DbgPPDB: time_date_stamp and the versions */
                        GUID guid_sig;
                        uint32_t age;
                        const char *pdb_file_name; /* "" without has_pdb */
                        uint32_t time_date_stamp;
                        uint16_t major_version, minor_version;
                } dbg_id;
                struct {
                        uint32_t image_size;
                        uint32_t time_date_stamp;
                        const char *orig_file_name, *file_description, *file_version, *product_name,
                                *company_name, *product_version;
                } file_version;
                struct {
                        uint64_t ip;
                        uint32_t tid;
                        uint16_t count;
                        uint8_t flags; /* bit0 ExecutingDpc, bit1 ExecutingIsr */
                        uint8_t priority;
                        uint8_t rank;
                } sample;
                struct {
                        uint64_t ip;
                        uint32_t tid;
                        uint16_t source; /* KPROFILE_SOURCE */
                } pmc_sample;
                struct {
                        uint32_t nr_counters;
                        const char *names[KEV_MAX_PMC]; /* the first nr_counters (capped) */
                } pmc_config;
                struct {
                        uint32_t source;
                        uint32_t new_interval_100ns;
                        uint32_t old_interval_100ns;
                        const char *source_name;
                } profile_interval;
                struct {
                        uint64_t event_timestamp; /* exact timestamp of the event it belongs to */
                        int64_t event_time_ns;
                        uint32_t pid;
                        uint32_t tid;
                        uint32_t nr_frames;
                        const uint64_t *frames; /* [0] innermost; widened to 64 bits */
                        bool is_from_key;       /* reassembled from a stack-cache definition */
                        bool is_kernel_part;    /* from a kernel key (0x1825) */
                        uint64_t key;
                } stack;
                struct {
                        uint64_t event_timestamp;
                        uint32_t pid;
                        uint32_t tid;
                        uint64_t key;
                        bool is_kernel;
                } stack_key;
                struct {
                        uint64_t key;
                        uint32_t nr_frames;
                        const uint64_t *frames;
                        uint32_t nr_resolved; /* pending references this definition resolved */
                } stack_key_def;
                struct {
                        uint32_t new_tid;
                        uint32_t old_tid;
                        uint32_t new_pid; /* from the thread table; -1 unknown */
                        uint32_t old_pid;
                        int8_t new_priority;
                        int8_t old_priority;
                        uint8_t previous_cstate;
                        uint8_t old_wait_reason; /* KWAIT_REASON */
                        uint8_t old_wait_mode;   /* bit 0 of byte 13 */
                        uint8_t old_state;       /* KTHREAD_STATE */
                        uint8_t old_ideal_processor;
                        uint32_t new_wait_time;
                        int32_t old_remaining_quantum;
                } cswitch;
                struct {
                        uint32_t tid; /* the thread made ready (the subject) */
                        uint32_t readying_tid;
                        uint32_t readying_pid;
                        uint8_t adjust_reason;
                        int8_t adjust_increment;
                        uint8_t flags;
                } ready_thread;
                struct {
                        uint64_t base;
                        uint64_t size;
                        uint64_t file_offset; /* of base: addr -> offset is addr - base + this */
                        uint32_t pid;
                        uint32_t build_id_size; /* 0..20 */
                        const uint8_t *build_id;
                        uint16_t flags; /* ETWTOP_IMAGE_FLAG_* of doc/etwtop-provider.md */
                        const char *path;
                } image_identity;
                struct {
                        uint64_t addr;
                        uint64_t size;
                        const char *name;
                        const char *module; /* "" for the kernel image */
                } kernel_symbol;
                struct {
                        uint32_t cpu;
                        uint32_t reason; /* 1 PERF_RECORD_LOST, 2 the exact total at stop */
                        uint64_t count;
                } events_lost;
                struct {
                        /* a perf.data's records of one type that no event stands for */
                        uint32_t type; /* perf's PERF_RECORD_* number, UINT32_MAX: past those */
                        uint64_t count;
                        const char *name; /* perf's name of the type ("AUX", "STAT") */
                } records_not_shown;
                struct {
                        uint32_t cpu;        /* the CPU whose buffer this is */
                        uint32_t nr_cpus;    /* the CPU buffers the session writes */
                        uint32_t nr_online;  /* the CPUs online at the start */
                        uint32_t traced_pid; /* the one process traced (-p); 0: the system */
                } session_cpu;
                struct {
                        /* how the session walked user stacks so far (doc/unwind.md) */
                        uint32_t mode;             /* 0 frame pointers, 1 DWARF, 2 auto */
                        uint32_t stack_copy_bytes; /* the user stack copied per sample */
                        uint64_t nr_walks;         /* user stacks unwound from a copy */
                        uint64_t nr_by_stop[KEV_NR_UNWIND_STOPS]; /* ... by why they ended */
                        uint64_t nr_fp_chains; /* auto: frame-pointer code's kernel chains kept */
                        uint64_t nr_frames;    /* frames the walks found */
                        uint64_t nr_fp_frames; /* of them, by following rbp (no CFI there) */
                } unwind_stats;
                struct {
                        /* Microsoft-Windows-DotNETRuntime MethodLoadVerbose (START),
                           MethodUnloadVerbose (END); -Rundown MethodDCStartVerbose (DC_START),
                           MethodDCEndVerbose (DC_END) */
                        enum kevent_phase phase;
                        uint32_t pid; /* the event header's process */
                        uint64_t method_id;
                        uint64_t module_id; /* 0: a JIT helper */
                        uint64_t start;
                        uint32_t size;
                        uint32_t token;
                        uint32_t flags; /* 1 dynamic, 2 generic, 4 JIT-compiled, 8 helper */
                        /* the names, read through kevent_clr_method_names(): while lazy is
                           set, the decoder has not made them (the three are NULL) */
                        const char *name_space; /* the type: System.String */
                        const char *name;       /* Concat */
                        const char *signature;  /* class System.String  (class System.String) */
                        struct kevent_lazy_names *lazy; /* borrowed; NULL: the three are set */
                } clr_method;
                struct {
                        /* ModuleLoad (START), ModuleUnload (END); ModuleDCStart (DC_START),
                           ModuleDCEnd (DC_END) */
                        enum kevent_phase phase;
                        uint32_t pid;
                        uint64_t module_id;
                        uint64_t assembly_id;
                        uint32_t flags;
                        const char *il_path;
                        const char *native_path;
                } clr_module;
                struct {
                        uint64_t event_timestamp;
                        uint32_t pid;
                        uint32_t tid;
                        uint32_t options; /* EVNTRACE_LBR_* in force */
                        uint32_t nr_entries;
                        const struct kevent_lbr_entry *entries; /* [0] most recent */
                        /* each entry's Reserved word (NULL: none): etwtop's converter writes
                           perf's branch flags there (the bits of struct perf_branch_entry
                           after from and to: KEV_LBR_*); 0 where unknown (Windows) */
                        const uint64_t *info;
                } lbr;
                struct {
                        /* read through kevent_fields(): while lazy is set, the decoder has
                           checked the payload's layout but not decoded it (nr 0, list NULL) */
                        uint32_t nr;
                        const struct kevent_field *list; /* borrowed, nr entries */
                        struct kevent_lazy *lazy;        /* borrowed; NULL: nr and list are set */
                } fields;
        };
};

/* A KEV_FIELDS event's fields decoded when first asked for: a consumer that reads none (counts
   events, reads the common fields) does not pay for their text. get fills *list and returns
   nr, the same on every call while the sink runs; afterwards it gives none. */
struct kevent_lazy {
        uint32_t (*get)(struct kevent_lazy *lazy, const struct kevent_field **list);
};

/* The fields of a KEV_FIELDS event (decoded now if they were left to be asked for): *list and
   the count. Valid until the sink returns, as the event itself. */
static inline uint32_t kevent_fields(const struct kevent *ev, const struct kevent_field **list)
{
        if (ev->fields.lazy)
                return ev->fields.lazy->get(ev->fields.lazy, list);
        *list = ev->fields.list;
        return ev->fields.nr;
}

/* A CLR method's names (KEV_CLR_METHOD), as kevent_clr_method_names() gives them. */
struct kevent_clr_names {
        const char *name_space;
        const char *name;
        const char *signature;
};

/* A KEV_CLR_METHOD event's names made when first asked for: a consumer that reads none does
   not pay for their UTF-16 (three strings an event, most of the methods' events' decoding). get
   fills *names, the same on every call while the sink runs; afterwards three empty strings. */
struct kevent_lazy_names {
        void (*get)(struct kevent_lazy_names *lazy, struct kevent_clr_names *names);
};

/* The names of a KEV_CLR_METHOD event (made now if they were left to be asked for), never
   NULL. Valid until the sink returns, as the event itself. */
static inline struct kevent_clr_names kevent_clr_method_names(const struct kevent *ev)
{
        struct kevent_clr_names n = {ev->clr_method.name_space, ev->clr_method.name,
                                     ev->clr_method.signature};
        if (ev->clr_method.lazy)
                ev->clr_method.lazy->get(ev->clr_method.lazy, &n);
        return n;
}

/* etwtop's own provider, {b26bff8a-8e89-4b0b-9c1a-396f57aa5f70} (doc/etwtop-provider.md). */
extern const GUID etwtop_provider_guid;

/* Names for dump and the screen. */
const char *kevent_thread_state_name(uint8_t state);     /* KTHREAD_STATE */
const char *kevent_wait_reason_name(uint8_t reason);     /* KWAIT_REASON */
const char *kevent_profile_source_name(uint32_t source); /* KPROFILE_SOURCE, NULL if unknown */
/* The same, and the sources Windows numbers from 25 on x64 (UnhaltedCoreCycles,
   InstructionRetired, ... TimerFixed: xperf -pmcsources); NULL if unknown. */
const char *kevent_pmc_source_name(uint32_t source);

#endif

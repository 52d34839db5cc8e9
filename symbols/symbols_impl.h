/* SPDX-License-Identifier: MIT */
/* symbols_impl.h (internal to symbols/): the symbol store's modules, address spaces, caches and
   store struct, shared by symbols.c (lifecycle), sym_strings.c, sym_loader.c, sym_spaces.c,
   sym_lookup.c, sym_clr.c and sym_lines.c. */
#ifndef ETWTOP_SYMBOLS_IMPL_H
#define ETWTOP_SYMBOLS_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"
#include "symbols/sym_table.h"
#include "sym_server.h"
#include "sym_sources.h"
#include "symbols/pdb.h"
#include "util/hash.h"

/* the kernel's half of a 64-bit address space, the top bit set: x86-64's 0xffff8000...
   (0xff00... with 5-level page tables), arm64's 0xffff0000... before Linux 5.4 (48-bit) and
   0xfff0... (52-bit), ppc64's 0xc000...; a user address never has it */
#define KERNEL_START      0x8000000000000000ull
#define CACHE_MAX_ENTRIES (1u << 20) /* 32 MB at most: when full, it starts over */
#define CACHE_MAX_ENTRIES (1u << 20) /* 32 MB at most: when full, it starts over */
/* a live store's: 8 MB. The distinct addresses a live screen resolves only accumulate (every
   return address of every stack sampled), so the cache grows to its cap over a long run, 32 MB
   at the trace's, while the screen's hot places keep their own answers and its call tree's nodes
   their names: what a start over costs is the hot addresses' lookups again (issue 25 item 7) */
#define CACHE_MAX_ENTRIES_LIVE (1u << 18)
#define MAX_SRC_FRAMES         32

/* MOD_CLR: one .NET module's JIT-compiled methods in one process, from a recording's CLR
   method events (their names and address ranges; no file behind them). MOD_BPF: one BPF
   program, its one symbol from a recording's kernel symbols (sym_bpf.c) */
enum module_kind { MOD_ELF, MOD_VDSO, MOD_PE, MOD_KERNEL, MOD_JIT, MOD_CLR, MOD_BPF };

/* A BPF program's text and its module (sym_bpf.c) */
struct bpf_prog {
        uint64_t start, size;
        uint32_t module;
};

struct clr_method {
        uint64_t start, size;
        uint32_t name; /* interned */
};
enum load_state { LS_NEW = 0, LS_QUEUED, LS_LOADED, LS_FAILED };

struct module {
        uint32_t id;
        enum module_kind kind;
        char *path; /* owned */
        char *name; /* owned: the short name */
        uint8_t build_id[20];
        uint32_t build_id_size;
        uint32_t time_date_stamp, image_size, checksum; /* PE */
        uint32_t jit_pid;                               /* MOD_JIT */
        /* live ELF modules: the first mapping of the file (a process and its range), through
           which /proc/PID/map_files reads it where the path does not (deleted or replaced since
           it was mapped, another mount namespace); set when the module is made */
        uint32_t live_pid;
        uint64_t live_start, live_end;
        struct clr_method *methods; /* owned: MOD_CLR */
        uint32_t nr_methods, cap_methods;
        bool is_methods_dirty; /* methods came since the table was built */
        bool has_pdb;
        uint8_t pdb_guid[16];
        uint32_t pdb_age;
        char *pdb_name; /* owned */
        /* written by the loader, then published by state (release) */
        _Atomic int state;
        struct elf_module *elf;  /* owned: ELF and vdso */
        struct sym_table *table; /* owned: PE exports (RVAs), JIT and kernel (addresses) */
        struct kallsyms *ks;     /* owned: the live kernel's symbols (MOD_KERNEL, live) */
        struct pdb_lines *lines; /* owned: a Windows module's PDB line tables, or NULL */
        char file_used[PATH_MAX];
        char note[512];
        bool is_logged; /* caller's thread: its note went to the log */
        /* caller's thread: sweeps in a row that found no live process mapping it */
        uint32_t nr_unmapped_sweeps;
        /* its symbols were given back once (sym_evict.c): until they load again, its info is
           what it was when loaded (nr_evicted_symbols) */
        bool is_evicted;
        uint32_t nr_evicted_symbols;
};

struct mapping {
        uint64_t start, end; /* [start, end) */
        uint64_t pgoff;
        uint32_t module;
        bool is_absolute; /* rel is the address itself (kernel) */
        uint64_t time;    /* of its image event; 0: none */
};

/* A JIT-compiled .NET method of a process: [start, end) in the MOD_CLR module of its .NET
   module. */
struct space_method {
        uint64_t start, end;
        uint32_t module;
};

/* A .NET module of a process (its ModuleID in the CLR events) and its MOD_CLR module. */
struct space_clr_module {
        uint64_t clr_id;
        uint32_t module;
};

struct space {
        uint32_t pid;
        struct mapping *maps; /* owned, sorted by start, not overlapping */
        uint32_t nr, cap;
        struct space_method *methods; /* owned: sorted by start when is_methods_sorted */
        uint32_t nr_methods, cap_methods;
        bool is_methods_sorted;
        struct space_clr_module *clr_modules; /* owned */
        uint32_t nr_clr_modules, cap_clr_modules;
        uint32_t jit_module;  /* MOD_JIT for /tmp/perf-PID.map, 0 until asked */
        uint32_t hint;        /* the mapping sym_locate found last: frames cluster */
        uint64_t jit_checked; /* nr_polls + 1 when the map file was last found missing */
        bool is_ended;
        uint64_t end_serial; /* which end of the pid's processes the ended ring holds */
        uint64_t start_time; /* of the latest process start seen (event times); 0: none */
        uint64_t end_time;   /* of the latest process end seen; 0: none */
        /* made by the JIT probe: its place in the probed ring; 0: not */
        uint64_t probe_serial;
};

/* The ended processes whose spaces are kept: late events of a process still find its images,
   and memory stays bounded however many processes come and go. */
#define MAX_ENDED_SPACES 4096
/* The spaces sym_locate's JIT probe made for pids no event described (a process come and gone
   whose space has been forgotten, its late samples or rows placed again): the last
   MAX_PROBED_SPACES are kept, so that the probe asks the file system once per refresh each, and
   the oldest goes unless an event has described its process since. */
#define MAX_PROBED_SPACES 4096
struct ended_space {
        uint32_t pid;
        uint64_t serial;
};

struct cache_entry {
        uint64_t rel;
        uint32_t module; /* 0: free */
        uint32_t function;
        uint64_t offset;
        uint8_t state;
};

/* The function name of an ELF image's symbol, by module and the symbol's start: the table
   is the same each time the image loads (the caches keep answers over an eviction), so a
   function's other addresses take its name from here rather than from interning and
   demangling its symbol's text again. */
#define FN_MEMO_SLOTS 4096u
struct fn_memo {
        uint64_t start;
        uint32_t module; /* 0: free */
        uint32_t function;
};

struct src_entry {
        uint64_t rel;
        uint32_t module; /* 0: free */
        uint32_t first;  /* in src_frames */
        uint32_t nr;
        uint32_t file, line; /* the innermost line (sym_srcline_line); line 0: none */
        bool is_full;        /* first and nr hold the frames (else only the line is known) */
};

struct kernel_sym {
        uint64_t addr, size;
        uint32_t name;   /* interned */
        uint32_t module; /* interned kernel module name, 0 for the kernel */
};

struct sym_store {
        struct sym_options opt;
        /* modules: index = id; 0 unused */
        struct module **modules; /* owned */
        uint32_t nr_modules, cap_modules;
        uint32_t *module_keys; /* hash: interned key -> module id; 0 free */
        uint32_t module_keys_mask;
        /* the modules of build-ids met last, by the build-id's first bytes (0: none): an image
           load of a known build-id (every process of a storm maps the same few) finds its
           module without its key's text */
        uint32_t build_id_modules[256];
        /* the same for images without a build-id, by their path's hash (a perf.data's image
           loads: keyed by path, each interned its key's text) */
        uint32_t path_modules[256];
        /* spaces by pid */
        struct space **spaces; /* owned hash by pid, NULL free */
        uint32_t spaces_mask, nr_spaces;
        /* interned strings */
        char **strings; /* owned */
        uint32_t nr_strings, cap_strings;
        uint32_t *demangled;   /* owned, cap_strings: id -> id of its demangled form, 0 unknown */
        uint32_t *string_hash; /* id; 0 free */
        uint32_t string_hash_mask;
        size_t string_bytes;
        /* address cache */
        struct cache_entry *cache; /* owned */
        uint32_t cache_mask, nr_cache;
        struct fn_memo *fn_memo; /* owned: FN_MEMO_SLOTS, at the first ELF symbol named */
        /* source lines */
        struct src_entry *src; /* owned */
        uint32_t src_mask, nr_src;
        struct sym_srcframe *src_frames; /* owned */
        uint32_t nr_src_frames, cap_src_frames;
        /* the kernel */
        uint32_t kernel_module;
        bool has_linux_kernel;  /* a [kernel.kallsyms] image was described */
        bool has_kernel_images; /* and kernel images besides it: its modules (a perf.data's) */
        /* the kernel's images (pid 0) at addresses of 32 bits (an i686 or armv7 perf.data, a
           32-bit Windows'): its addresses are not KERNEL_START's, and an address no process's
           image holds is looked for in the kernel's (sym_locate_ex) */
        bool has_kernel32;
        struct kernel_sym *ksyms;   /* owned: recorded kernel symbols */
        struct sym_table *ksym_set; /* owned: sym_kernel_symbols_take's (the kernel's table
                                       itself while no ksyms come: not the module's to free) */
        uint32_t nr_ksyms, cap_ksyms;
        struct bpf_prog *bpf_progs; /* owned: by start, none overlapping at a start */
        uint32_t nr_bpf_progs, cap_bpf_progs;
        uint32_t nr_bpf_ksyms; /* of nr_ksyms, the "bpf" module's: no symbol of the kernel's */
        bool is_ksyms_dirty;
        uint32_t nr_ksym_tables; /* the recording's kernel tables built: sym_answers_epoch */
        /* loader */
        pthread_t loader;
        bool has_loader;
        pthread_mutex_t lock;
        pthread_cond_t cond, idle;
        struct module **queue; /* owned ring */
        uint32_t queue_head, queue_len, queue_cap;
        bool is_busy, is_stopping;
        _Atomic uint32_t nr_done;
        uint32_t nr_done_seen;
        uint64_t nr_changes;         /* calls that changed what sym_locate or sym_resolve answer */
        struct space *last_space[2]; /* sym_locate's last user [0] and kernel [1] spaces */
        uint64_t nr_polls;           /* sym_store_poll calls: the screen's refreshes */
        struct ended_space *ended;   /* owned ring: MAX_ENDED_SPACES, oldest at ended_head */
        uint32_t ended_head, nr_ended;
        uint64_t nr_ends;
        struct ended_space *probed; /* owned ring: MAX_PROBED_SPACES, oldest at probed_head */
        uint32_t probed_head, nr_probed;
        uint64_t nr_probes;
        struct sym_path *path; /* owned: the symbol path, parsed (sym_server.h) */
        struct sym_stats st;
};

/* ---- shared by the files of the module ---- */

/* symbols.c */
uint64_t symbols_hash_bytes(const void *p, size_t n);
void symbols_logf_(struct sym_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* sym_strings.c */
/* The interned name of a function whose symbol is raw: demangled (C++, Rust) unless the options
   say not. Each raw name is demangled once: the answer is kept by its id. */
uint32_t symbols_function_name(struct sym_store *s, const char *raw);

/* sym_loader.c */
/* Mappings with no file behind them: addresses there are JIT code or data. */
bool symbols_is_anonymous(const char *path);
/* Whether an anonymous path names its memory: a memfd's ("/memfd:NAME"), or a name given to
   anonymous memory ("[anon:NAME]", prctl PR_SET_VMA_ANON_NAME): no file to read. */
bool symbols_is_named_anonymous(const char *path);
/* A map perf takes for a JIT's code when executable (anonymous memory, a stack, a heap, SysV
   shared memory), and the MOD_JIT module of sp's /tmp/perf-PID.map, "[JIT] tid PID" (made once
   a program; failed, quietly, where no map file is). */
bool symbols_is_jit_memory(const char *path);
uint32_t symbols_jit_module(struct sym_store *s, struct space *sp);
/* Rebuilds the kernel module's table from the recorded symbols, after new ones came. */
void symbols_kernel_table_refresh(struct sym_store *s);
void *symbols_loader_main(void *arg);
/* The module of an image: one per build-id (or path, or PE name + timestamp + size). */
uint32_t symbols_module_get(struct sym_store *s, const struct sym_image *im);
uint32_t symbols_module_new(struct sym_store *s, enum module_kind kind, const char *path,
                            const char *name);
struct module *symbols_module_of(const struct sym_store *s, uint32_t id);
/* The module's state, asking for it to be loaded the first time. */
int symbols_module_want(struct sym_store *s, struct module *m);

/* sym_spaces.c */
struct space *symbols_space_find(const struct sym_store *s, uint32_t pid);
struct space *symbols_space_get(struct sym_store *s, uint32_t pid);
struct mapping *symbols_space_lookup(const struct space *sp, uint64_t addr);
/* A space for the JIT probe of a pid that has none; the oldest probed space goes when the
   ring is full and nothing described its process since. */
struct space *symbols_space_probe(struct sym_store *s, uint32_t pid);

/* sym_clr.c */
/* Rebuilds a MOD_CLR module's table after methods came. */
void symbols_clr_table_refresh(struct sym_store *s, struct module *m);
/* sym_bpf.c: a BPF program at addr (a KernelSymbol of the "bpf" module), a module of its own;
   the module of the program holding addr (0: none) and addr's offset in it. */
void symbols_bpf_program(struct sym_store *s, uint64_t addr, uint64_t size, const char *name);
uint32_t symbols_bpf_module_at(const struct sym_store *s, uint64_t addr, uint64_t *rel);
/* The method of sp at addr, or NULL. Of methods that overlap (code reused after an unload), the
   one that starts last before addr. */
const struct space_method *symbols_space_method_at(struct space *sp, uint64_t addr);

#endif

/* SPDX-License-Identifier: MIT */
/* symbols.h: the symbol store. Address spaces built from image events (live or replayed, the
   same calls), modules shared by every process that maps them (keyed by build-id, else by path),
   function tables loaded off the caller's thread, interned names, inline frames and source
   lines on demand. Debug files are also fetched from debuginfod by build-id when the user opts
   in by setting DEBUGINFOD_URLS (libdw does it, on the loader thread, never on the caller's).
   Windows images are named from their PDB, chosen by the trace's DbgID_RSDS record (GUID and
   age must match), fetched from symbol servers on the symbol path, else from their exports. */
#ifndef ETWTOP_SYMBOLS_SYMBOLS_H
#define ETWTOP_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/sym_types.h"

struct sym_store;

struct sym_options {
        /* Where image, debug and PDB files are looked for, in order; each entry a list in
           _NT_SYMBOL_PATH's syntax (DIR;cache*DIR;srv*STORE*URL, doc/symbols.md) or DIR:DIR.
           Directories: DIR/.build-id/xx/rest[.debug], DIR/<file name>, DIR/<full path>, and
           for Windows files also the symbol-store layout DIR/<name>/<key>/<name>. Then the
           entries of _NT_SYMBOL_PATH, read from the environment when the store is made (as
           DbgHelp does); servers are asked on the loader thread. Borrowed for the store's
           life. */
        const char *const *symbol_path;
        uint32_t nr_symbol_path;
        /* Read the running system: /proc/kallsyms and /proc/modules for kernel frames,
           /tmp/perf-PID.map for JIT code, this process's vdso for [vdso]. */
        bool is_live;
        /* Load modules on the caller's thread at their first lookup (tests, batch output);
           otherwise a loader thread does it and lookups answer SYM_PENDING meanwhile. */
        bool is_synchronous;
        /* Function names as the symbol tables spell them (--no-demangle). By default C++ and
           Rust names are demangled, as perf shows them (`bitmap_set_bit(bitmap_head*, int)`,
           `<rs::Point>::norm`): every name the store hands out (sym_resolve, sym_srcline) is
           the demangled one; MSVC names from PDBs are undecorated as WPA shows them. */
        bool is_no_demangle;
        /* Messages (a module that cannot be read, a build-id mismatch, restricted kernel
           symbols). Called on the caller's thread, from sym_store_poll and the lookups. */
        void (*log)(void *ctx, const char *message);
        void *log_ctx;
};

int sym_store_new(struct sym_store **out, const struct sym_options *options);
void sym_store_free(struct sym_store *s); /* joins the loader thread; NULL is fine */

/* ---- address spaces, from image and process events, in time order ---- */

struct sym_image {
        uint32_t pid; /* 0: kernel images (Linux [kernel.kallsyms], Windows drivers) */
        uint64_t base;
        uint64_t size;
        uint64_t file_offset; /* of base (ELF mappings); 0 for PE images */
        const char *path;     /* as recorded: a Linux path, [vdso], or an NT path */
        const uint8_t *build_id;
        uint32_t build_id_size;   /* 0: unknown */
        uint32_t time_date_stamp; /* PE images: the header's, with size, identifies the file */
        uint32_t checksum;
};

/* Event times. A live session's events come one CPU's buffer after another (real-time delivery,
   as on Windows), not in time order across CPUs: a process's exec on one CPU may come after the
   mappings its loader made on another. Given the events' times (any clock that grows, the
   records' timestamps), the address spaces are what the events say in time order, whatever the
   order they come in: a start drops only what was mapped before it, a mapping older than its
   process's last start is stale, of overlapping mappings the newer one wins, an unload or end
   older than what it would remove changes nothing. Time 0: no time, applied as it comes. */

/* A process starts (or execs): its earlier address space is dropped. */
void sym_process_start(struct sym_store *s, uint32_t pid);
void sym_process_start_at(struct sym_store *s, uint32_t pid, uint64_t time);
/* The process ended: its images stay known for its late events, among the last 4096 processes
   that ended; older ones are forgotten, so memory does not grow with every process run. */
void sym_process_end(struct sym_store *s, uint32_t pid);
void sym_process_end_at(struct sym_store *s, uint32_t pid, uint64_t time);
/* An image is mapped: replaces whatever (older) overlapped it in that process. */
void sym_image_load(struct sym_store *s, const struct sym_image *im);
void sym_image_load_at(struct sym_store *s, const struct sym_image *im, uint64_t time);
void sym_image_unload(struct sym_store *s, uint32_t pid, uint64_t base);
void sym_image_unload_at(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t time);
/* An image's build-id, arriving separately (etwtop's ImageIdentity before its Image event, or
   after it), from an event at time: attaches to the mapping at (pid, base); a mapping newer
   than time is not its image. */
void sym_image_identity_at(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t file_offset,
                           const uint8_t *build_id, uint32_t build_id_size, uint64_t time);
/* Windows: the PDB of the image at (pid, base), from KernelTraceControl's DbgID event. */
void sym_image_pdb(struct sym_store *s, uint32_t pid, uint64_t base, const uint8_t guid[16],
                   uint32_t age, const char *pdb_name);
/* A kernel symbol recorded in the trace (etwtop's KernelSymbol event). module "" = the kernel. */
void sym_kernel_symbol(struct sym_store *s, uint64_t addr, uint64_t size, const char *name,
                       const char *module);
/* The recording's kernel symbols all at once (a kallsyms of the kernel it was made on): t, a
   finished table whose names are as the kernel's table names them ("name [module]"), taken over
   by the store. The same answers as a sym_kernel_symbol for each, without a string of the store
   for each name; with sym_kernel_symbol's symbols too where both come. */
struct sym_table;
void sym_kernel_symbols_take(struct sym_store *s, struct sym_table *t);

/* .NET code in a recording: the CLR's module and method events (MethodLoadVerbose, the
   rundown's MethodDCStart/DCEndVerbose, ModuleLoad, ModuleDCStart/DCEnd) name the JIT-compiled
   methods of process pid. Their addresses, outside every image, locate in one module per .NET
   module of the process (named by the file name of its IL path, "[managed]" until a module
   event names it), and resolve to the method names given. */
void sym_clr_module(struct sym_store *s, uint32_t pid, uint64_t clr_module_id, const char *il_path);
void sym_clr_method(struct sym_store *s, uint32_t pid, uint64_t clr_module_id, uint64_t start,
                    uint64_t size, const char *name);

/* ---- lookups ---- */

/* struct sym_loc and enum sym_state: symbols/sym_types.h */

struct sym_frame {
        enum sym_state state;
        uint32_t module;   /* as in sym_loc */
        uint32_t function; /* interned name id (sym_name), 0 unless SYM_RESOLVED */
        uint64_t offset;   /* from the function's start, else loc.rel (or the raw address) */
};

struct sym_loc sym_locate(struct sym_store *s, uint32_t pid, uint64_t addr);
/* sym_locate, and in *is_everyones whether its answer is every process's: a kernel address
   that the kernel's own images (pid 0) place, the same while they and the recording's kernel
   symbols stay. */
struct sym_loc sym_locate_ex(struct sym_store *s, uint32_t pid, uint64_t addr, bool *is_everyones);
/* Whether addr lies in the kernel's half of a 64-bit address space (its top bit set: x86-64's
   0xffff8000..., arm64's 0xffff0000... of Linux before 5.4, ppc64's 0xc000...): the only
   addresses sym_locate_ex may call every process's. */
static inline bool sym_is_kernel_address(uint64_t addr)
{
        return addr >> 63;
}
void sym_resolve(struct sym_store *s, struct sym_loc loc, struct sym_frame *out);
/* "libc.so.6!memcpy+0x10", "libc.so.6+0x1a2b", "ntdll.dll+0x1a2b", "0x7f0012345678". */
size_t sym_format(struct sym_store *s, struct sym_loc loc, char *buf, size_t size);

/* The function that holds loc, as sym_resolve names it: its first byte (as a rel of loc's
   module) and its size in bytes (a symbol's size, or the distance to the next one when the
   table gave none). false when no loaded symbol holds loc (loading, no symbol there, or a module
   without a table). Used to read a function's code (annotate). */
bool sym_function_range(struct sym_store *s, struct sym_loc loc, uint64_t *start_rel,
                        uint64_t *size);
/* sym_function_range where loc's module is loaded now, else false: no load is asked for (a
   module given back stays so), for a caller that only tidies what it holds. */
bool sym_function_range_loaded(struct sym_store *s, struct sym_loc loc, uint64_t *start_rel,
                               uint64_t *size);

/* Interned strings: 0 is "". Ids are stable for the store's life. */
const char *sym_name(const struct sym_store *s, uint32_t id);
uint32_t sym_intern(struct sym_store *s, const char *str);

struct sym_module_info {
        const char *name;      /* short: libc.so.6, ntdll.dll, [kernel.kallsyms] */
        const char *path;      /* as recorded */
        const char *file_used; /* the file symbols came from, "" until loaded */
        const char *note;      /* why SYM_UNUSABLE, or what was degraded; "" when fine */
        uint8_t build_id[20];
        uint32_t build_id_size;
        uint32_t nr_symbols;
        bool is_loaded;
        bool has_pdb;
        char pdb_signature[48]; /* {GUID}-age, Windows images */
        const char *pdb_name;
};
/* false for an unknown id. The strings stay valid until the next call on the store. */
bool sym_module_info(struct sym_store *s, uint32_t module, struct sym_module_info *info);

/* Inline frames and source lines of loc, innermost first: [0] is the code at the address (an
   inlined function or the real one), each next one the caller it was inlined into, the last
   the real function. Computed on the first call for loc (libdw; needs debug info) and cached.
   A Windows module's line is its PDB's (one frame: no inline sites).
   Returns the number of frames written (0: no line information). */
struct sym_srcframe {
        uint32_t function; /* interned */
        uint32_t file;     /* interned path */
        uint32_t line;
        uint32_t column;
};
uint32_t sym_srcline(struct sym_store *s, struct sym_loc loc, struct sym_srcframe *out,
                     uint32_t max);
/* The innermost source line at loc, as sym_srcline's first frame has it (file interned), from
   the line table alone: no inline scopes, no function name. False where there is none (line
   0) or the module is not loaded yet. Cached with sym_srcline's answers. */
bool sym_srcline_line(struct sym_store *s, struct sym_loc loc, uint32_t *file, uint32_t *line);

/* ---- background loading ---- */

/* Logs what the loader found and returns how many modules finished loading since the last
   call (the screen redraws when it is not 0). Never blocks. A live store looks for JIT maps
   that were missing again after each call. */
uint32_t sym_store_poll(struct sym_store *s);

/* A live store: the symbols of modules that no running process has mapped at
   EVICT_AFTER_SWEEPS calls in a row are freed (their answers already given stay cached; a
   lookup that needs the table again loads it again, as at first use). sym_store_poll calls it
   every SYM_EVICT_POLLS polls. Returns how many modules it freed; 0 for a recording. */
#define SYM_EVICT_POLLS 32
uint32_t sym_store_evict_unmapped(struct sym_store *s);
/* Whether sym_resolve's answers for module's addresses are settled: its symbols are loaded and
   no later event adds any (a recording's kernel symbols come with its events). */
bool sym_answers_are_final(const struct sym_store *s, uint32_t module);
/* For a module whose answers are not final yet but stay the same while nothing new comes (a
   recording's kernel, whose symbols come with its events): a number, never 0, that stays the
   same exactly as long as sym_resolve's answers for the module's addresses do, so that a
   caller may keep an answer given under it; 0 when there is none (another kind of module, a
   live store, or symbols came since the last lookup). Its answers' final ones:
   sym_answers_are_final. */
uint32_t sym_answers_epoch(const struct sym_store *s, uint32_t module);
/* Starts loading module's symbols on the loader thread, when nobody asked for them yet: the
   loading runs while the caller goes on (a replay reads on while its modules load). Nothing
   in synchronous mode. */
void sym_prefetch(struct sym_store *s, uint32_t module);
/* Grows whenever an answer of sym_locate or sym_resolve may have changed (an image mapped or
   unmapped, a module loaded, a kernel symbol added): what a caller derived from answers under
   one generation holds while the generation stays. Read on the thread that feeds the store. */
uint64_t sym_store_generation(const struct sym_store *s);
/* Blocks until every module asked for so far is loaded (or failed). */
void sym_store_wait(struct sym_store *s);
/* Whether every module asked for so far is loaded (or failed) and sym_store_poll has said so
   since: lookups made after that poll gave the final answers for those modules. Never waits
   for a load (the loader's lock only); true for a synchronous store. */
bool sym_store_is_settled(struct sym_store *s);
/* Whether the store reads the running system (sym_options.is_live): else a recording's, whose
   readers may wait for its modules. */
bool sym_store_is_live(const struct sym_store *s);

struct sym_stats {
        uint64_t nr_lookups;    /* sym_resolve calls */
        uint64_t nr_cache_hits; /* answered from the address cache */
        uint64_t nr_names;      /* symbols' names interned for answers (sym_resolve) */
        uint64_t nr_keyed;      /* image loads whose module was looked up by its key's text */
        uint32_t nr_modules;    /* known */
        uint32_t nr_loaded;     /* with symbols */
        uint32_t nr_spaces;     /* process address spaces kept */
        uint64_t nr_evicted;    /* modules whose symbols went back (sym_store_evict_unmapped) */
        uint32_t nr_src_kept;   /* addresses whose source lines are kept (sym_srcline, _line) */
        size_t memory_bytes;    /* tables, caches, names */
};
void sym_store_get_stats(const struct sym_store *s, struct sym_stats *st);

#endif

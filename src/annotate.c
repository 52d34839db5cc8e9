/* SPDX-License-Identifier: MIT */
/* annotate.c: owns `--annotate FUNCTION`: finding the sampled functions of that name, reading
   each one's code from the ELF file its symbols came from, disassembling it (capstone) and
   printing it with the samples, source line and branch target of each instruction. */
#include "annotate.h"
#include "capstone_lazy.h"

#include "model/profile.h"
#include "symbols/symbols.h"
#include "outbuf.h"
#include "util/elf_build_id.h"
#include "util/in_file.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CODE_MAX_BYTES    (4u << 20) /* of one function: past it, the rest is left out */
#define CODE_MAX_LOADS    32         /* PT_LOAD headers read */
#define MAX_FRAMES        8          /* inline frames shown per source line */
#define SOURCE_FILES      8          /* source files kept read while one function prints */
#define SOURCE_MAX_BYTES  (16u << 20)
#define DEFAULT_TOP_LINES 10

/* A sampled function of the name asked for: one per module and profile source. */
struct match {
        uint16_t source;
        uint32_t source_pos; /* in hot_sources' order */
        uint32_t module;
        uint32_t function;
        uint64_t self, total;
};

/* A data object of the ELF file, for naming the addresses instructions load from. */
struct data_symbol {
        uint64_t start, size;
        const char *name; /* borrowed from the Elf */
};

/* The ELF file a function's code is read from. */
struct code_file {
        int fd;
        Elf *elf; /* owned */
        GElf_Phdr loads[CODE_MAX_LOADS];
        uint32_t nr_loads;
        struct data_symbol *objects; /* owned, by start; read at the first lookup */
        uint32_t nr_objects;
        bool has_objects;
};

/* One instruction of the function, disassembled, and its samples. */
struct insn_row {
        uint64_t vaddr;
        uint64_t rel; /* in the module (the file offset) */
        uint32_t size;
        uint64_t self;
        uint32_t file, line; /* its source line (the innermost frame's), 0: none */
        char text[400];      /* mnemonic, operands, the target named */
};

/* A source line of the function and the samples of its instructions. */
struct line_row {
        uint32_t file, line;
        uint32_t function; /* the (inlined) function the line is in */
        uint64_t self;
};

/* A source file's text, split into lines, for the listing. */
struct source_text {
        uint32_t path;    /* interned; 0: slot free */
        char *data;       /* owned; NULL: unreadable */
        uint32_t *starts; /* owned: offset of each line (1-based line i at starts[i - 1]) */
        uint32_t nr_lines;
};

/* What one annotation reads and prints. */
struct annotation {
        struct profile *p;        /* borrowed */
        const struct match *m;    /* borrowed */
        struct outbuf *o;         /* borrowed */
        struct code_file cf;      /* owned: its fd and Elf */
        uint64_t start_rel, size; /* the function in its module */
        uint64_t start_vaddr;     /* in the file */
        struct insn_row *rows;    /* owned */
        uint32_t nr_rows, cap_rows;
        struct line_row *lines; /* owned */
        uint32_t nr_lines, cap_lines;
        struct source_text sources[SOURCE_FILES]; /* owned, round robin */
        uint32_t next_source;
        struct branches_row *edges; /* owned: the LBR edges that leave or enter the function */
        uint32_t nr_edges;
};

/* ---- text ---- */

/* s with control characters as '?' (names and paths come from the traced system, the source
   text from its files); tabs as spaces. */
static void put_clean(struct outbuf *o, const char *s, size_t n)
{
        for (size_t i = 0; i < n && s[i]; i++) {
                unsigned char c = (unsigned char)s[i];
                outbuf_putc(o, c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : (char)c);
        }
}

static void puts_clean(struct outbuf *o, const char *s)
{
        put_clean(o, s, strlen(s));
}

static const char *base_name(const char *path)
{
        const char *b = strrchr(path, '/');
        return b ? b + 1 : path;
}

static void source_text_free(struct source_text *t)
{
        free(t->data);
        free(t->starts);
        *t = (struct source_text){0};
}

/* The text of line (1-based) of the file at path (interned), "" when it cannot be read or the
   path is relative (to a build directory the debug information names, not to ours). */
static void source_line(struct annotation *a, uint32_t path, uint32_t line, const char **text,
                        size_t *len)
{
        *text = "";
        *len = 0;
        if (!path || !line)
                return;
        struct source_text *t = NULL;
        for (uint32_t i = 0; i < SOURCE_FILES && !t; i++)
                if (a->sources[i].path == path)
                        t = &a->sources[i];
        if (!t) {
                t = &a->sources[a->next_source++ % SOURCE_FILES];
                source_text_free(t);
                t->path = path;
                const char *name = sym_name(profile_store(a->p), path);
                /* a name from the file's DWARF: only a regular file is read (a FIFO named
                   there would block the open, a device would be read) */
                struct stat st;
                int fd = name[0] == '/' ? in_file_open(name, 0, &st) : -ENOENT;
                FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
                if (fd >= 0 && !f)
                        close(fd);
                if (f && st.st_size < SOURCE_MAX_BYTES) {
                        size_t size = (size_t)st.st_size;
                        t->data = xmalloc(size + 1);
                        size = fread(t->data, 1, size, f);
                        t->data[size] = 0;
                        uint32_t cap = 64;
                        t->starts = xmalloc(cap * sizeof(*t->starts));
                        t->starts[t->nr_lines++] = 0;
                        for (size_t i = 0; i < size; i++) {
                                if (t->data[i] != '\n' || i + 1 == size)
                                        continue;
                                if (t->nr_lines == cap) {
                                        cap *= 2;
                                        t->starts = xrealloc(t->starts, cap * sizeof(*t->starts));
                                }
                                t->starts[t->nr_lines++] = (uint32_t)(i + 1);
                        }
                }
                if (f)
                        fclose(f);
        }
        if (!t->data || line > t->nr_lines)
                return;
        const char *s = t->data + t->starts[line - 1];
        while (*s == ' ' || *s == '\t')
                s++;
        const char *e = strchr(s, '\n');
        *text = s;
        *len = e ? (size_t)(e - s) : strlen(s);
        while (*len && (s[*len - 1] == ' ' || s[*len - 1] == '\t' || s[*len - 1] == '\r'))
                (*len)--;
}

/* ---- the code ---- */

static void code_file_close(struct code_file *cf)
{
        free(cf->objects);
        cf->objects = NULL;
        if (cf->elf)
                elf_end(cf->elf);
        if (cf->fd >= 0)
                close(cf->fd);
        cf->elf = NULL;
        cf->fd = -1;
}

static void hex_string(char *dst, const uint8_t *id, size_t n)
{
        for (size_t i = 0; i < n; i++)
                sprintf(dst + 2 * i, "%02x", id[i]);
        dst[2 * n] = 0;
}

/* Opens the file the module's symbols came from and checks it is the recorded one. Returns 0,
   or -errno with why not in why. */
static int code_file_open(struct code_file *cf, const struct sym_module_info *info, char *why,
                          size_t why_size)
{
        cf->fd = -1;
        cf->elf = NULL;
        cf->nr_loads = 0;
        if (!info->is_loaded || !info->file_used[0]) {
                snprintf(why, why_size, "no file of %s was read%s%s", info->name,
                         info->note[0] ? ": " : "", info->note);
                return -ENOENT;
        }
        const char *path = info->file_used;
        if (path[0] != '/') {
                /* the recording's kernel symbols or .NET methods: names without code */
                snprintf(why, why_size, "its names come from %s, no file holds its code", path);
                return -ENOENT;
        }
        cf->fd = in_file_open(path, 0, NULL);
        if (cf->fd < 0) {
                int e = -cf->fd;
                cf->fd = -1;
                snprintf(why, why_size, "%s: %s", path,
                         e == EINVAL ? "not a regular file" : strerror(e));
                return -e;
        }
        elf_version(EV_CURRENT);
        cf->elf = elf_begin(cf->fd, ELF_C_READ_MMAP, NULL);
        if (!cf->elf || elf_kind(cf->elf) != ELF_K_ELF) {
                snprintf(why, why_size, "%s is not an ELF image: its code is not read", path);
                return -EBADMSG;
        }
        /* the file may have changed since its symbols were read: the build-id says */
        if (info->build_id_size) {
                uint8_t id[256];
                uint32_t n = elf_build_id_read_fd(cf->fd, id, sizeof(id));
                if (n != info->build_id_size ||
                    memcmp(id, info->build_id, info->build_id_size) != 0) {
                        char want[41], got[41] = "missing";
                        hex_string(want, info->build_id, info->build_id_size);
                        if (n > 0 && n <= 20)
                                hex_string(got, id, n);
                        snprintf(why, why_size,
                                 "%s is not the recorded file: its build-id is %s, the "
                                 "recording's %s",
                                 path, got, want);
                        return -ESTALE;
                }
        }
        size_t nr = 0;
        if (elf_getphdrnum(cf->elf, &nr) != 0) {
                snprintf(why, why_size, "%s: no program headers (%s)", path, elf_errmsg(-1));
                return -EBADMSG;
        }
        for (size_t i = 0; i < nr && cf->nr_loads < CODE_MAX_LOADS; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(cf->elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
                        cf->loads[cf->nr_loads++] = ph;
        }
        return 0;
}

/* A file offset's address, and how many of the file's bytes follow it in its segment. */
static bool code_vaddr(const struct code_file *cf, uint64_t off, uint64_t *vaddr, uint64_t *left)
{
        for (uint32_t i = 0; i < cf->nr_loads; i++) {
                const GElf_Phdr *ph = &cf->loads[i];
                if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
                        *vaddr = off - ph->p_offset + ph->p_vaddr;
                        *left = ph->p_filesz - (off - ph->p_offset);
                        return true;
                }
        }
        return false;
}

/* An address's file offset (the module's rel), when the file holds its bytes. */
static bool code_rel(const struct code_file *cf, uint64_t vaddr, uint64_t *off)
{
        for (uint32_t i = 0; i < cf->nr_loads; i++) {
                const GElf_Phdr *ph = &cf->loads[i];
                if (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz) {
                        *off = vaddr - ph->p_vaddr + ph->p_offset;
                        return true;
                }
        }
        return false;
}

static int object_cmp(const void *x, const void *y)
{
        const struct data_symbol *a = x, *b = y;
        return a->start < b->start ? -1 : a->start > b->start;
}

/* The data object (.symtab, else .dynsym) that holds vaddr, or NULL. */
static const struct data_symbol *code_object(struct code_file *cf, uint64_t vaddr)
{
        if (!cf->has_objects) {
                cf->has_objects = true;
                uint32_t cap = 0;
                for (int pass = 0; pass < 2 && !cf->nr_objects; pass++) {
                        Elf_Scn *scn = NULL;
                        GElf_Shdr sh;
                        while ((scn = elf_nextscn(cf->elf, scn))) {
                                if (!gelf_getshdr(scn, &sh) ||
                                    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
                                    !sh.sh_entsize)
                                        continue;
                                Elf_Data *d = elf_getdata(scn, NULL);
                                for (uint64_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
                                        GElf_Sym sym;
                                        if (!gelf_getsym(d, (int)i, &sym) ||
                                            GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
                                            !sym.st_size || sym.st_shndx == SHN_UNDEF)
                                                continue;
                                        const char *name =
                                                elf_strptr(cf->elf, sh.sh_link, sym.st_name);
                                        if (!name || !*name)
                                                continue;
                                        if (cf->nr_objects == cap) {
                                                cap = cap ? cap * 2 : 256;
                                                cf->objects = xrealloc(cf->objects,
                                                                       cap * sizeof(*cf->objects));
                                        }
                                        cf->objects[cf->nr_objects++] = (struct data_symbol){
                                                sym.st_value, sym.st_size, name};
                                }
                        }
                }
                if (cf->nr_objects > 1)
                        qsort(cf->objects, cf->nr_objects, sizeof(*cf->objects), object_cmp);
        }
        uint32_t lo = 0, hi = cf->nr_objects; /* the first start past vaddr */
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (cf->objects[mid].start <= vaddr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        const struct data_symbol *o = lo ? &cf->objects[lo - 1] : NULL;
        return o && vaddr - o->start < o->size ? o : NULL;
}

/* " <function+0x10>" for an address of the module, "" when no symbol holds it. */
static void target_name(struct annotation *a, uint64_t vaddr, char *buf, size_t size)
{
        buf[0] = 0;
        struct sym_store *st = profile_store(a->p);
        uint64_t off;
        if (vaddr >= a->start_vaddr && vaddr - a->start_vaddr < a->size) {
                off = vaddr - a->start_vaddr;
                if (off)
                        snprintf(buf, size, " <%s+0x%" PRIx64 ">", sym_name(st, a->m->function),
                                 off);
                else
                        snprintf(buf, size, " <%s>", sym_name(st, a->m->function));
                return;
        }
        struct sym_frame f;
        if (!code_rel(&a->cf, vaddr, &off))
                f.state = SYM_NO_SYMBOL; /* .bss: no bytes in the file */
        else
                sym_resolve(st, (struct sym_loc){a->m->module, off}, &f);
        if (f.state != SYM_RESOLVED) {
                const struct data_symbol *o = code_object(&a->cf, vaddr);
                if (o && vaddr > o->start)
                        snprintf(buf, size, " <%s+0x%" PRIx64 ">", o->name, vaddr - o->start);
                else if (o)
                        snprintf(buf, size, " <%s>", o->name);
                return;
        }
        if (f.offset)
                snprintf(buf, size, " <%s+0x%" PRIx64 ">", sym_name(st, f.function), f.offset);
        else
                snprintf(buf, size, " <%s>", sym_name(st, f.function));
}

static struct insn_row *row_add(struct annotation *a)
{
        if (a->nr_rows == a->cap_rows) {
                a->cap_rows = a->cap_rows ? a->cap_rows * 2 : 256;
                a->rows = xrealloc(a->rows, a->cap_rows * sizeof(*a->rows));
        }
        struct insn_row *r = &a->rows[a->nr_rows++];
        memset(r, 0, sizeof(*r));
        return r;
}

/* The instruction's text as objdump writes it in AT&T syntax, with the target of a direct
   branch or call, or of a RIP-relative operand, named. */
static void insn_text(struct annotation *a, const struct capstone_lazy *cl, csh cs,
                      const cs_insn *in, struct insn_row *r)
{
        char name[200] = "";
        bool is_branch = cl->insn_group(cs, in, CS_GRP_JUMP) || cl->insn_group(cs, in, CS_GRP_CALL);
        const cs_x86 *x = in->detail ? &in->detail->x86 : NULL;
        for (uint8_t i = 0; x && i < x->op_count && !name[0]; i++) {
                const cs_x86_op *op = &x->operands[i];
                if (is_branch && op->type == X86_OP_IMM) {
                        target_name(a, (uint64_t)op->imm, name, sizeof(name));
                } else if (op->type == X86_OP_MEM && op->mem.index == X86_REG_INVALID &&
                           op->mem.segment == X86_REG_INVALID &&
                           (op->mem.base == X86_REG_RIP ||
                            (op->mem.base == X86_REG_INVALID && op->mem.disp > 0))) {
                        /* RIP-relative, or an absolute address (non-PIE code, x86) */
                        uint64_t t = (uint64_t)op->mem.disp;
                        if (op->mem.base == X86_REG_RIP)
                                t += in->address + in->size;
                        char sym[176];
                        target_name(a, t, sym, sizeof(sym));
                        if (op->mem.base == X86_REG_RIP)
                                snprintf(name, sizeof(name), "  # 0x%" PRIx64 "%s", t, sym);
                        else if (sym[0]) /* the address is in the operand already */
                                snprintf(name, sizeof(name), "  #%s", sym);
                }
        }
        if (in->op_str[0])
                snprintf(r->text, sizeof(r->text), "%-6s %s%s", in->mnemonic, in->op_str, name);
        else
                snprintf(r->text, sizeof(r->text), "%s%s", in->mnemonic, name);
}

/* Disassembles n bytes of code at vaddr into a->rows; bytes that decode to nothing are shown
   one by one, as objdump shows them. Returns 0 or -errno with why. */
static int disassemble(struct annotation *a, int machine, const uint8_t *code, size_t n, char *why,
                       size_t why_size)
{
        cs_mode mode;
        if (machine == EM_X86_64)
                mode = CS_MODE_64;
        else if (machine == EM_386)
                mode = CS_MODE_32;
        else {
                snprintf(why, why_size, "no disassembler here for ELF machine %d (x86-64, x86)",
                         machine);
                return -ENOTSUP;
        }
        const struct capstone_lazy *cl = capstone_lazy(why, why_size);
        if (!cl)
                return -ENOTSUP;
        csh cs;
        cs_err ce = cl->open(CS_ARCH_X86, mode, &cs);
        if (ce != CS_ERR_OK) {
                snprintf(why, why_size, "capstone: %s", cl->strerror(ce));
                return -ENOTSUP;
        }
        cl->option(cs, CS_OPT_DETAIL, CS_OPT_ON);
        cl->option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
        cs_insn *in = cl->malloc(cs);
        const uint8_t *at = code;
        size_t left = n;
        uint64_t vaddr = a->start_vaddr;
        while (left) {
                uint64_t here = vaddr;
                const uint8_t *from = at;
                if (cl->disasm_iter(cs, &at, &left, &vaddr, in)) {
                        struct insn_row *r = row_add(a);
                        r->vaddr = here;
                        r->size = in->size;
                        insn_text(a, cl, cs, in, r);
                } else {
                        struct insn_row *r = row_add(a);
                        r->vaddr = here;
                        r->size = 1;
                        snprintf(r->text, sizeof(r->text), "(bad)  .byte 0x%02x", *from);
                        at++;
                        left--;
                        vaddr++;
                }
                a->rows[a->nr_rows - 1].rel = a->start_rel + (here - a->start_vaddr);
        }
        cl->free(in, 1);
        cl->close(&cs);
        return 0;
}

/* Reads and disassembles the function. Returns 0, or -errno with why (one line). */
static int load_code(struct annotation *a, char *why, size_t why_size)
{
        struct sym_module_info info;
        if (!sym_module_info(profile_store(a->p), a->m->module, &info)) {
                snprintf(why, why_size, "no module");
                return -ENOENT;
        }
        int rc = code_file_open(&a->cf, &info, why, why_size);
        if (rc < 0)
                return rc;
        uint64_t left;
        if (!code_vaddr(&a->cf, a->start_rel, &a->start_vaddr, &left)) {
                snprintf(why, why_size,
                         "%s holds no code at file offset 0x%" PRIx64
                         " (a debug file without the image's bytes?)",
                         info.file_used, a->start_rel);
                return -ENODATA;
        }
        size_t n = a->size < left ? (size_t)a->size : (size_t)left;
        if (n > CODE_MAX_BYTES)
                n = CODE_MAX_BYTES;
        uint8_t *code = xmalloc(n ? n : 1);
        ssize_t got = pread(a->cf.fd, code, n, (off_t)a->start_rel);
        if (got < 0) {
                int e = errno;
                snprintf(why, why_size, "%s: %s", info.file_used, strerror(e));
                free(code);
                return -e;
        }
        GElf_Ehdr eh;
        if (!gelf_getehdr(a->cf.elf, &eh)) {
                snprintf(why, why_size, "%s: no ELF header", info.file_used);
                free(code);
                return -EBADMSG;
        }
        rc = disassemble(a, eh.e_machine, code, (size_t)got, why, why_size);
        free(code);
        return rc;
}

/* ---- samples and lines ---- */

static struct line_row *line_of(struct annotation *a, uint32_t file, uint32_t line)
{
        for (uint32_t i = a->nr_lines; i-- > 0;)
                if (a->lines[i].file == file && a->lines[i].line == line)
                        return &a->lines[i];
        if (a->nr_lines == a->cap_lines) {
                a->cap_lines = a->cap_lines ? a->cap_lines * 2 : 64;
                a->lines = xrealloc(a->lines, a->cap_lines * sizeof(*a->lines));
        }
        struct line_row *l = &a->lines[a->nr_lines++];
        *l = (struct line_row){file, line, 0, 0};
        return l;
}

static int line_by_self(const void *x, const void *y)
{
        const struct line_row *a = x, *b = y;
        if (a->self != b->self)
                return a->self > b->self ? -1 : 1;
        if (a->file != b->file)
                return a->file < b->file ? -1 : 1;
        return a->line < b->line ? -1 : a->line > b->line;
}

/* Gives each instruction the samples of its addresses (a place inside an instruction counts
   for it) and its source line; sums them by line. Returns the samples of places outside
   every instruction. */
static uint64_t count_samples(struct annotation *a, const struct hot_place *pl, uint32_t nr)
{
        uint64_t outside = 0;
        uint32_t j = 0;
        for (uint32_t i = 0; i < nr; i++) {
                while (j < a->nr_rows && a->rows[j].rel + a->rows[j].size <= pl[i].rel)
                        j++;
                if (j < a->nr_rows && pl[i].rel >= a->rows[j].rel)
                        a->rows[j].self += pl[i].self;
                else
                        outside += pl[i].self;
        }
        for (uint32_t i = 0; i < a->nr_rows; i++) {
                struct insn_row *r = &a->rows[i];
                struct sym_srcframe fr[MAX_FRAMES];
                uint32_t n = sym_srcline(profile_store(a->p),
                                         (struct sym_loc){a->m->module, r->rel}, fr, MAX_FRAMES);
                if (!n || !fr[0].line)
                        continue;
                r->file = fr[0].file;
                r->line = fr[0].line;
                struct line_row *l = line_of(a, r->file, r->line);
                l->self += r->self;
                if (!l->function)
                        l->function = fr[0].function;
        }
        return outside;
}

/* ---- printing ---- */

static double pct(uint64_t part, uint64_t whole)
{
        return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The columns of the listing and the lines: percent and samples (18), address (12). */
#define COLUMNS_HEADER "  Percent  Samples"
#define TEXT_INDENT    33 /* the instructions' column */

/* The source line above the instructions that come from it: file:line, the inline frames
   (the function inlined, and where, into what), the line's text. */
static void print_source_header(struct annotation *a, const struct sym_srcframe *fr, uint32_t n,
                                bool is_hottest)
{
        struct sym_store *st = profile_store(a->p);
        struct outbuf *o = a->o;
        outbuf_printf(o, "%*s", TEXT_INDENT, "");
        puts_clean(o, base_name(sym_name(st, fr[0].file)));
        outbuf_printf(o, ":%u", fr[0].line);
        if (n > 1) {
                outbuf_puts(o, " (in ");
                puts_clean(o, sym_name(st, fr[0].function));
                for (uint32_t i = 1; i < n; i++) {
                        outbuf_puts(o, i == 1 ? ", inlined from " : ", from ");
                        puts_clean(o, sym_name(st, fr[i].function));
                        outbuf_puts(o, " at ");
                        puts_clean(o, base_name(sym_name(st, fr[i].file)));
                        outbuf_printf(o, ":%u", fr[i].line);
                }
                outbuf_putc(o, ')');
        }
        const char *text;
        size_t len;
        source_line(a, fr[0].file, fr[0].line, &text, &len);
        if (len) {
                outbuf_puts(o, "  ");
                put_clean(o, text, len < 160 ? len : 160);
        }
        if (is_hottest)
                outbuf_puts(o, "  <-- hottest line");
        outbuf_putc(o, '\n');
}

static bool frames_equal(const struct sym_srcframe *x, uint32_t nx, const struct sym_srcframe *y,
                         uint32_t ny)
{
        if (nx != ny)
                return false;
        for (uint32_t i = 0; i < nx; i++)
                if (x[i].file != y[i].file || x[i].line != y[i].line ||
                    x[i].function != y[i].function)
                        return false;
        return true;
}

/* The LBR edges of this function (its module, its bytes), most taken first. */
static void find_edges(struct annotation *a)
{
        const struct branches_row *rows;
        uint32_t n = branches_rows(profile_branches(a->p), BRANCHES_BY_EDGE, AGG_ALL, &rows);
        for (uint32_t i = 0; i < n; i++) {
                const struct branches_row *e = &rows[i];
                bool is_from = e->from.loc.module == a->m->module &&
                               e->from.loc.rel - a->start_rel < a->size;
                bool is_to =
                        e->to.loc.module == a->m->module && e->to.loc.rel - a->start_rel < a->size;
                if (e->is_other || !(is_from || is_to))
                        continue;
                if (!(a->nr_edges & (a->nr_edges + 1)))
                        a->edges = xrealloc(a->edges, (a->nr_edges * 2 + 2) * sizeof(*a->edges));
                a->edges[a->nr_edges++] = *e;
        }
}

/* Under an instruction: the branches LBR saw it take, and those that came to it. */
static void print_edges(struct annotation *a, const struct insn_row *r)
{
        char where[256];
        for (uint32_t i = 0; i < a->nr_edges; i++) {
                const struct branches_row *e = &a->edges[i];
                if (e->from.loc.module == a->m->module && e->from.loc.rel >= r->rel &&
                    e->from.loc.rel < r->rel + r->size) {
                        sym_format(profile_store(a->p), e->to.loc, where, sizeof(where));
                        outbuf_printf(a->o, "%32s LBR: taken %" PRIu64 " times to ", "", e->count);
                        puts_clean(a->o, where);
                        outbuf_putc(a->o, '\n');
                }
                if (e->to.loc.module == a->m->module && e->to.loc.rel == r->rel) {
                        sym_format(profile_store(a->p), e->from.loc, where, sizeof(where));
                        outbuf_printf(a->o, "%32s LBR: reached %" PRIu64 " times from ", "",
                                      e->count);
                        puts_clean(a->o, where);
                        outbuf_putc(a->o, '\n');
                }
        }
}

static void print_listing(struct annotation *a, uint64_t self, const struct line_row *hottest)
{
        struct outbuf *o = a->o;
        uint64_t max = 0;
        for (uint32_t i = 0; i < a->nr_rows; i++)
                if (a->rows[i].self > max)
                        max = a->rows[i].self;
        outbuf_puts(o, COLUMNS_HEADER "     Address   Instruction\n");
        struct sym_srcframe prev[MAX_FRAMES];
        uint32_t nr_prev = 0;
        bool is_hottest_marked = false;
        for (uint32_t i = 0; i < a->nr_rows; i++) {
                const struct insn_row *r = &a->rows[i];
                struct sym_srcframe fr[MAX_FRAMES];
                uint32_t n = sym_srcline(profile_store(a->p),
                                         (struct sym_loc){a->m->module, r->rel}, fr, MAX_FRAMES);
                if (n && fr[0].line && !frames_equal(fr, n, prev, nr_prev)) {
                        print_source_header(a, fr, n,
                                            hottest && hottest->self && r->file == hottest->file &&
                                                    r->line == hottest->line);
                        memcpy(prev, fr, n * sizeof(*fr));
                        nr_prev = n;
                }
                if (r->self)
                        outbuf_printf(o, "%9.2f %8" PRIu64, pct(r->self, self), r->self);
                else
                        outbuf_printf(o, "%18s", "");
                outbuf_printf(o, "  %10" PRIx64 ":  ", r->vaddr);
                puts_clean(o, r->text);
                if (max && r->self == max && !is_hottest_marked) {
                        outbuf_puts(o, "  <-- hottest");
                        is_hottest_marked = true;
                }
                outbuf_putc(o, '\n');
                print_edges(a, r);
        }
}

static void print_lines(struct annotation *a, uint64_t self, uint32_t nr_top)
{
        struct sym_store *st = profile_store(a->p);
        struct outbuf *o = a->o;
        uint32_t n = 0;
        for (uint32_t i = 0; i < a->nr_lines; i++)
                n += a->lines[i].self != 0;
        if (!n)
                return;
        outbuf_puts(o, "\n  Hottest lines of ");
        puts_clean(o, sym_name(st, a->m->function));
        outbuf_puts(o, "\n" COLUMNS_HEADER "  Line\n");
        for (uint32_t i = 0; i < n && i < nr_top; i++) {
                const struct line_row *l = &a->lines[i];
                outbuf_printf(o, "%9.2f %8" PRIu64 "  ", pct(l->self, self), l->self);
                puts_clean(o, sym_name(st, l->file));
                outbuf_printf(o, ":%u", l->line);
                if (l->function && l->function != a->m->function) {
                        outbuf_puts(o, " (in ");
                        puts_clean(o, sym_name(st, l->function));
                        outbuf_putc(o, ')');
                }
                const char *text;
                size_t len;
                source_line(a, l->file, l->line, &text, &len);
                if (len) {
                        outbuf_puts(o, "  ");
                        put_clean(o, text, len < 160 ? len : 160);
                }
                outbuf_putc(o, '\n');
        }
}

static void annotation_free(struct annotation *a)
{
        code_file_close(&a->cf);
        free(a->rows);
        free(a->lines);
        for (uint32_t i = 0; i < SOURCE_FILES; i++)
                source_text_free(&a->sources[i]);
}

static void annotate_one(struct profile *p, const struct match *m, uint32_t nr_top,
                         struct outbuf *o)
{
        struct sym_store *st = profile_store(p);
        struct annotation a = {.p = p, .m = m, .o = o, .cf = {.fd = -1}};
        struct sym_module_info info;
        sym_module_info(st, m->module, &info);
        uint64_t nr = hot_nr_samples(profile_hot(p), m->source);
        char name_buf[32];
        outbuf_puts(o, "\nAnnotate ");
        puts_clean(o, sym_name(st, m->function));
        outbuf_puts(o, " in ");
        puts_clean(o, info.name ? info.name : "?");
        outbuf_printf(o, " (%s: %" PRIu64 " samples, %.2f%% of all %" PRIu64 ")\n",
                      profile_source_name(p, m->source, name_buf, sizeof(name_buf)), m->self,
                      pct(m->self, nr), nr);

        uint32_t nr_places =
                hot_function_places(profile_hot(p), m->source, m->module, m->function, NULL, 0);
        struct hot_place *pl = xcalloc(nr_places ? nr_places : 1, sizeof(*pl));
        nr_places = hot_function_places(profile_hot(p), m->source, m->module, m->function, pl,
                                        nr_places);
        char why[1024] = "";
        int rc = -ENOENT;
        if (!nr_places ||
            !sym_function_range(st, (struct sym_loc){m->module, pl[0].rel}, &a.start_rel, &a.size))
                snprintf(why, sizeof(why), "the symbol table gives no range for it");
        else
                rc = load_code(&a, why, sizeof(why));
        if (rc < 0) {
                outbuf_puts(o, "  No instructions: ");
                puts_clean(o, why);
                outbuf_putc(o, '\n');
                goto out;
        }
        uint64_t self = 0;
        for (uint32_t i = 0; i < nr_places; i++)
                self += pl[i].self;
        uint64_t outside = count_samples(&a, pl, nr_places);
        outbuf_puts(o, "  ");
        puts_clean(o, info.file_used);
        outbuf_printf(o, ", 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes%s), build-id ",
                      a.start_vaddr, a.start_vaddr + a.size, a.size,
                      a.nr_rows && a.rows[a.nr_rows - 1].vaddr + a.rows[a.nr_rows - 1].size <
                                              a.start_vaddr + a.size
                              ? ", the rest not in the file"
                              : "");
        if (info.build_id_size) {
                char id[41];
                hex_string(id, info.build_id, info.build_id_size);
                outbuf_printf(o, "%s as recorded\n", id);
        } else {
                outbuf_puts(o, "not recorded (the file is not checked)\n");
        }
        if (outside)
                outbuf_printf(o, "  %" PRIu64 " samples fell outside the bytes shown\n", outside);
        if (a.nr_lines > 1)
                qsort(a.lines, a.nr_lines, sizeof(*a.lines), line_by_self);
        find_edges(&a);
        print_listing(&a, self, a.nr_lines ? &a.lines[0] : NULL);
        print_lines(&a, self, nr_top ? nr_top : DEFAULT_TOP_LINES);
out:
        free(pl);
        free(a.edges);
        annotation_free(&a);
}

/* ---- finding the function ---- */

static int match_cmp(const void *x, const void *y)
{
        const struct match *a = x, *b = y;
        if (a->source_pos != b->source_pos)
                return a->source_pos < b->source_pos ? -1 : 1;
        if (a->self != b->self)
                return a->self > b->self ? -1 : 1;
        if (a->total != b->total)
                return a->total > b->total ? -1 : 1;
        return a->module < b->module ? -1 : a->module > b->module;
}

/* Whether a row's function is the one asked for: its name, or module!name. */
static bool is_named(struct sym_store *st, const struct hot_row *r, const char *want)
{
        const char *name = sym_name(st, r->function);
        if (strcmp(name, want) == 0)
                return true;
        const char *bang = strchr(want, '!');
        struct sym_module_info info;
        return bang && strcmp(name, bang + 1) == 0 && sym_module_info(st, r->module, &info) &&
               strlen(info.name) == (size_t)(bang - want) &&
               memcmp(info.name, want, (size_t)(bang - want)) == 0;
}

/* Appends to err, which holds len bytes, as far as it has room. */
static void append(char *err, size_t err_size, size_t *len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void append(char *err, size_t err_size, size_t *len, const char *fmt, ...)
{
        if (*len + 1 >= err_size)
                return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err + *len, err_size - *len, fmt, ap);
        va_end(ap);
        if (n > 0)
                *len = *len + (size_t)n < err_size ? *len + (size_t)n : err_size - 1;
}

/* Appends to err (one line) what may explain a name that matched nothing: sampled functions
   whose names hold it, and modules whose symbols could not be read. */
static void explain_no_match(struct profile *p, const char *want, char *err, size_t err_size)
{
        struct sym_store *st = profile_store(p);
        uint16_t sources[AGG_MAX_SOURCES];
        uint32_t nr_sources = hot_sources(profile_hot(p), sources, AGG_MAX_SOURCES);
        uint32_t nr_similar = 0, similar[3], nr_notes = 0, notes[2] = {0};
        size_t len = strlen(err);
        const char *bang = strchr(want, '!');
        const char *bare = bang ? bang + 1 : want;
        for (uint32_t s = 0; s < nr_sources; s++) {
                const struct hot_row *rows;
                uint32_t n = hot_functions(profile_hot(p), sources[s], false, &rows);
                for (uint32_t i = 0; i < n; i++) {
                        const char *name = sym_name(st, rows[i].function);
                        bool is_new = rows[i].function && nr_similar < 3;
                        for (uint32_t k = 0; k < nr_similar; k++)
                                is_new = is_new && similar[k] != rows[i].function;
                        if (is_new && *bare && strstr(name, bare)) {
                                append(err, err_size, &len, "%s%s",
                                       nr_similar ? ", " : "; similar: ", name);
                                similar[nr_similar++] = rows[i].function;
                        }
                        /* the heaviest two (or the module named), not [vdso] nor
                           [kernel.kallsyms]: a recording has no file of them */
                        struct sym_module_info info;
                        if (rows[i].state == SYM_UNUSABLE && rows[i].module && nr_notes < 2 &&
                            rows[i].module != notes[0] &&
                            sym_module_info(st, rows[i].module, &info) && info.name[0] != '[' &&
                            (!bang || (strlen(info.name) == (size_t)(bang - want) &&
                                       memcmp(info.name, want, (size_t)(bang - want)) == 0)))
                                notes[nr_notes++] = rows[i].module;
                }
        }
        for (uint32_t i = 0; i < nr_notes; i++) {
                struct sym_module_info info;
                if (sym_module_info(st, notes[i], &info) && info.note[0])
                        append(err, err_size, &len, "; no names from %s: %s", info.name, info.note);
        }
        /* names and notes come from the traced system: one line, no control characters */
        for (char *c = err; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        *c = '?';
}

int annotate_print(struct profile *p, const char *function, uint32_t nr_top, struct outbuf *o,
                   char *err, size_t err_size)
{
        struct sym_store *st = profile_store(p);
        uint16_t sources[AGG_MAX_SOURCES];
        uint32_t nr_sources = hot_sources(profile_hot(p), sources, AGG_MAX_SOURCES);
        struct match *m = NULL;
        uint32_t nr = 0, cap = 0;
        for (uint32_t s = 0; s < nr_sources; s++) {
                const struct hot_row *rows;
                uint32_t n = hot_functions(profile_hot(p), sources[s], false, &rows);
                for (uint32_t i = 0; i < n; i++) {
                        if (!rows[i].function || !rows[i].module ||
                            !is_named(st, &rows[i], function))
                                continue;
                        if (nr == cap) {
                                cap = cap ? cap * 2 : 8;
                                m = xrealloc(m, cap * sizeof(*m));
                        }
                        m[nr++] = (struct match){sources[s],     s,
                                                 rows[i].module, rows[i].function,
                                                 rows[i].self,   rows[i].total};
                }
        }
        if (!nr) {
                snprintf(err, err_size, "--annotate %s: no sampled function has that name",
                         function);
                explain_no_match(p, function, err, err_size);
                return -ENOENT;
        }
        if (nr > 1)
                qsort(m, nr, sizeof(*m), match_cmp);
        for (uint32_t i = 0; i < nr; i++)
                annotate_one(p, &m[i], nr_top, o);
        free(m);
        return 0;
}

/* SPDX-License-Identifier: MIT */
/* sym_sources.c: owns the symbol sources that are not ELF files on disk: the vdso of this
   process, Windows images' PDBs and export tables, JIT maps and the running kernel's symbols. */
#include "sym_sources.h"

#include "sym_server.h"

#include "symbols/kallsyms.h"
#include "symbols/module_name.h"
#include "symbols/pdb.h"
#include "symbols/pe_image.h"
#include "symbols/perf_map.h"
#include "symbols/sym_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void note_set(char *note, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void note_set(char *note, size_t size, const char *fmt, ...)
{
        va_list ap;
        if (!note || !size)
                return;
        va_start(ap, fmt);
        vsnprintf(note, size, fmt, ap);
        va_end(ap);
}

int sym_vdso_memfd(void)
{
        FILE *f = fopen("/proc/self/maps", "re");
        if (!f)
                return -1;
        char line[512];
        uint64_t start = 0, end = 0;
        while (fgets(line, sizeof(line), f)) {
                if (!strstr(line, "[vdso]"))
                        continue;
                if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2)
                        start = end = 0;
                break;
        }
        fclose(f);
        if (!start || end <= start || end - start > (64u << 20))
                return -1;
        int fd = memfd_create("vdso", MFD_CLOEXEC);
        if (fd < 0)
                return -1;
        const uint8_t *p = (const uint8_t *)(uintptr_t)start;
        size_t left = (size_t)(end - start);
        while (left) {
                ssize_t n = write(fd, p, left);
                if (n <= 0) {
                        close(fd);
                        return -1;
                }
                p += n;
                left -= (size_t)n;
        }
        return fd;
}

/* ---- Windows images: PDBs and export tables ---- */

/* The file part of a recorded name ("C:\build\x\foo.pdb": "foo.pdb"). */
static const char *file_part(const char *path)
{
        const char *p = path;
        for (const char *c = path; *c; c++)
                if (*c == '/' || *c == '\\')
                        p = c + 1;
        return p;
}

/* An error message without the path pdb_open_file and pe_image_read_file put first. */
static const char *after_path(const char *message, const char *path)
{
        size_t n = strlen(path);
        return strncmp(message, path, n) == 0 && message[n] == ':' ? message + n + 2 : message;
}

struct pdb_look {
        const uint8_t *guid;
        uint32_t age;
        struct pdb *pdb; /* owned: the one taken */
};

static int pdb_check(void *ctx, const char *file, char *why, size_t why_size)
{
        struct pdb_look *pl = ctx;
        struct pdb *p;
        struct err_msg err = {0};
        int rc = pdb_open_file(file, &p, &err);
        if (rc < 0) {
                snprintf(why, why_size, "%s (at byte %" PRIu64 ")", after_path(err.msg, file),
                         err.offset);
                return rc;
        }
        if (!pdb_matches(p, pl->guid, pl->age)) {
                char has[PE_GUID_STRING_SIZE], want[PE_GUID_STRING_SIZE];
                pe_guid_format(pdb_get_info(p)->guid, has);
                pe_guid_format(pl->guid, want);
                if (strcmp(has, want) == 0)
                        snprintf(why, why_size, "another build: age %u, the trace's %u",
                                 pdb_get_info(p)->age, pl->age);
                else
                        snprintf(why, why_size, "another build: %s age %u, the trace's %s age %u",
                                 has, pdb_get_info(p)->age, want, pl->age);
                pdb_close(p);
                return -ESTALE;
        }
        pdb_close(pl->pdb);
        pl->pdb = p;
        return 0;
}

struct pdb_fill {
        struct sym_table *t;
        bool is_x86, is_no_demangle;
        uint32_t nr_decorated; /* MSVC names left decorated: no demangler */
};

static int add_procedure(void *ctx, const struct pdb_symbol *sym)
{
        struct pdb_fill *f = ctx;
        bool is_local = sym->kind != PDB_S_GPROC32 && sym->kind != PDB_S_GPROC32_ID;
        if (sym->rva)
                sym_table_add(f->t, sym->rva, sym->size, sym->name, strlen(sym->name),
                              is_local ? SYM_FLAG_LOCAL : 0);
        return 0;
}

static int add_public(void *ctx, const struct pdb_symbol *sym)
{
        struct pdb_fill *f = ctx;
        if (!sym->rva)
                return 0;
        uint32_t flags = sym->flags & (PDB_PUB_CODE | PDB_PUB_FUNCTION) ? 0 : SYM_FLAG_DATA;
        if (f->is_no_demangle) {
                sym_table_add(f->t, sym->rva, 0, sym->name, strlen(sym->name), flags);
                return 0;
        }
        char name[1024];
        size_t n = pdb_name_undecorate(sym->name, f->is_x86, name, sizeof(name));
        if (name[0] == '?')
                f->nr_decorated++;
        sym_table_add(f->t, sym->rva, 0, name, n < sizeof(name) ? n : sizeof(name) - 1, flags);
        return 0;
}

/* The PDB's functions (and lines) once it is found: 0, or -EBADMSG with why. */
static int pdb_fill_table(struct pdb *p, bool is_no_demangle, struct sym_table **table,
                          struct pdb_lines **lines, char *why, size_t why_size)
{
        struct pdb_fill f = {sym_table_new(), pdb_get_info(p)->machine == PE_MACHINE_I386,
                             is_no_demangle, 0};
        struct err_msg err = {0};
        int rc = pdb_procedures(p, add_procedure, &f, &err);
        if (rc == 0)
                rc = pdb_publics(p, add_public, &f, &err);
        if (rc < 0) {
                snprintf(why, why_size, "%s (at byte %" PRIu64 ")", err.msg, err.offset);
                sym_table_free(f.t);
                return rc;
        }
        sym_table_finish(f.t, PE_EXPORT_MAX_INFERRED_SIZE);
        *table = f.t;
        if (pdb_lines_read(p, lines, &err) < 0)
                snprintf(why, why_size, "no source lines: %s (at byte %" PRIu64 ")", err.msg,
                         err.offset);
        else if (f.nr_decorated && *pdb_demangler_status())
                snprintf(why, why_size, "%u names: %s", f.nr_decorated, pdb_demangler_status());
        return 0;
}

struct pe_look {
        uint32_t time_date_stamp, image_size;
        struct sym_table *table; /* owned: the one taken */
};

static int pe_check(void *ctx, const char *file, char *why, size_t why_size)
{
        struct pe_look *pl = ctx;
        struct pe_identity id;
        struct err_msg err = {0};
        struct sym_table *t = sym_table_new();
        int rc = pe_image_read_file(file, &id, t, &err);
        if (rc < 0) {
                snprintf(why, why_size, "%s", after_path(err.msg, file));
                sym_table_free(t);
                return rc;
        }
        if (pl->time_date_stamp &&
            !pe_identity_matches_image(&id, pl->time_date_stamp, pl->image_size)) {
                snprintf(why, why_size,
                         "another build (TimeDateStamp %08x, SizeOfImage %x; the trace's %08x, "
                         "%x)",
                         id.time_date_stamp, id.size_of_image, pl->time_date_stamp, pl->image_size);
                sym_table_free(t);
                return -ESTALE;
        }
        sym_table_free(pl->table);
        pl->table = t;
        return 0;
}

int sym_pe_symbols_load(const struct sym_pe_request *rq, struct sym_table **table,
                        struct pdb_lines **lines, char *file_used, size_t file_size, char *note,
                        size_t note_size)
{
        const char *name = module_name_of_path(rq->path);
        char where[1024] = "", pdb_note[1024] = "";
        *table = NULL;
        *lines = NULL;
        note[0] = 0;
        if (rq->has_pdb) {
                const char *pdb_name = file_part(rq->pdb_name ? rq->pdb_name : "");
                char key[PE_PDB_KEY_SIZE], guid[PE_GUID_STRING_SIZE];
                pe_pdb_key_format(rq->pdb_guid, rq->pdb_age, key);
                pe_guid_format(rq->pdb_guid, guid);
                struct pdb_look pl = {rq->pdb_guid, rq->pdb_age, NULL};
                int rc = sym_path_find(rq->sym_path, pdb_name, key, pdb_check, &pl, file_used,
                                       file_size, where, sizeof(where));
                if (rc == 0) {
                        char why[512] = "";
                        rc = pdb_fill_table(pl.pdb, rq->is_no_demangle, table, lines, why,
                                            sizeof(why));
                        pdb_close(pl.pdb);
                        if (rc == 0) {
                                if (why[0])
                                        note_set(note, note_size, "%s: %s", file_used, why);
                                return 0;
                        }
                        snprintf(where, sizeof(where), "%s: %s", file_used, why);
                }
                note_set(pdb_note, sizeof(pdb_note), "%s %s age %u: %s%s", pdb_name, guid,
                         rq->pdb_age, sym_path_is_empty(rq->sym_path) ? "no symbol path" : "",
                         where);
        }
        char key[PE_IMAGE_KEY_SIZE];
        pe_image_key_format(rq->time_date_stamp, rq->image_size, key);
        struct pe_look pl = {rq->time_date_stamp, rq->image_size, NULL};
        int rc = sym_path_find(rq->sym_path, name, rq->time_date_stamp ? key : NULL, pe_check, &pl,
                               file_used, file_size, where, sizeof(where));
        if (rc == 0) {
                *table = pl.table;
                if (pdb_note[0])
                        note_set(note, note_size, "%s; names from the exports of %s", pdb_note,
                                 file_used);
                return 0;
        }
        file_used[0] = 0;
        if (sym_path_is_empty(rq->sym_path))
                note_set(note, note_size,
                         "%s%s%s: no symbol path (--symbol-path or _NT_SYMBOL_PATH); frames show "
                         "%s+offset",
                         pdb_note, pdb_note[0] ? "; " : "", name, name);
        else
                note_set(note, note_size, "%s%s%s: %s; frames show %s+offset", pdb_note,
                         pdb_note[0] ? "; " : "", name, where, name);
        return rc;
}

int sym_jit_load(uint32_t pid, struct sym_table **out, char *file_used, size_t file_size,
                 char *note, size_t note_size)
{
        struct perf_map_error err = {0};
        int rc = perf_map_read((pid_t)pid, out, &err);
        snprintf(file_used, file_size, "/tmp/perf-%u.map", pid);
        if (rc < 0)
                note_set(note, note_size, "/tmp/perf-%u.map: %s", pid, err.msg);
        else if (err.nr_bad_lines)
                note_set(note, note_size,
                         "/tmp/perf-%u.map: %u bad lines skipped, the first at "
                         "byte %" PRIu64 ": %s",
                         pid, err.nr_bad_lines, err.offset, err.msg);
        return rc;
}

int sym_kallsyms_load(struct kallsyms **out, char *file_used, size_t file_size, char *note,
                      size_t note_size)
{
        struct kallsyms_error err = {0};
        int rc = kallsyms_read(NULL, out, &err);
        snprintf(file_used, file_size, "/proc/kallsyms");
        if (rc < 0)
                note_set(note, note_size, "kernel symbols: %s", err.msg);
        return rc;
}

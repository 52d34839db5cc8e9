/* SPDX-License-Identifier: MIT */
/* fuzz_pdb.c: libFuzzer target for the PDB reader (MSF container, info and DBI streams,
   publics, module symbols, C13 lines). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/pdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
        size_t size;
        uint32_t nr;
};

static int touch(void *ctx, const struct pdb_symbol *sym)
{
        struct walk *w = ctx;
        /* names are NUL-terminated inside the data (or a copy of a stream of it) */
        if (strlen(sym->name) >= w->size)
                abort();
        w->nr++;
        return 0;
}

/* the documented contract: one error code, a message, an offset in the data */
static void check_error(int rc, const struct err_msg *err, size_t size)
{
        if (rc != -EBADMSG || !err->msg[0] || err->offset > size ||
            memchr(err->msg, 0, sizeof(err->msg)) == NULL)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct pdb *p;
        struct err_msg err = {0};
        int rc = pdb_open_mem(data, size, &p, &err);
        if (rc < 0) {
                check_error(rc, &err, size);
                if (p)
                        abort();
                return 0;
        }
        const struct pdb_info *in = pdb_get_info(p);
        if (!pdb_matches(p, in->guid, in->age))
                abort();
        struct walk w = {size, 0};
        rc = pdb_publics(p, touch, &w, &err);
        if (rc < 0)
                check_error(rc, &err, size);
        rc = pdb_procedures(p, touch, &w, &err);
        if (rc < 0)
                check_error(rc, &err, size);
        struct pdb_lines *l;
        rc = pdb_lines_read(p, &l, &err);
        if (rc < 0) {
                check_error(rc, &err, size);
        } else {
                struct pdb_line line;
                for (uint32_t rva = 0; rva < 0x4000; rva += 0x10)
                        if (pdb_lines_find(l, rva, &line) && (!line.line || line.rva > rva))
                                abort();
                pdb_lines_free(l);
        }
        pdb_close(p);
        return 0;
}

/* SPDX-License-Identifier: MIT */
/* fuzz_pe.c: libFuzzer target for the PE image reader (headers, CodeView record, exports). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/pe_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct sym_table *t = sym_table_new();
        struct pe_identity id;
        struct err_msg err;
        int rc = pe_image_read_mem(data, size, &id, t, &err);
        if (rc < 0) {
                /* the documented contract: one error code, a message, an offset in the data */
                if (rc != -EBADMSG || !err.msg[0] || err.offset > size ||
                    memchr(err.msg, 0, sizeof(err.msg)) == NULL)
                        abort();
                if (sym_table_count(t) != 0)
                        abort();
        } else {
                size_t total = 0;
                for (uint32_t i = 0; i < sym_table_count(t); i++) {
                        const struct sym_entry *e = sym_table_at(t, i);
                        total += strlen(sym_table_name(t, e));
                        if (sym_table_find(t, e->start) == NULL)
                                abort();
                }
                if (total > 4096 * (size_t)sym_table_count(t) || id.nr_exports < sym_table_count(t))
                        abort();
                if (memchr(id.pdb_name, 0, sizeof(id.pdb_name)) == NULL)
                        abort();
                char guid[PE_GUID_STRING_SIZE], key[PE_PDB_KEY_SIZE];
                pe_guid_format(id.pdb_guid, guid);
                pe_pdb_key_format(id.pdb_guid, id.pdb_age, key);
                if (strlen(guid) != PE_GUID_STRING_SIZE - 1 || strlen(key) < 33)
                        abort();
        }
        sym_table_free(t);
        return 0;
}

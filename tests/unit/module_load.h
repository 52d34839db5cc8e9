/* SPDX-License-Identifier: MIT */
/* module_load.h: an ELF file's module loaded for the symbol tests, the load checked (include
   after cmocka.h). */
#ifndef ETWTOP_TEST_MODULE_LOAD_H
#define ETWTOP_TEST_MODULE_LOAD_H

#include "elf_module.h"

/* The module of the file at path (no debug directories, no descriptor); fails the test when it
   does not load. */
static inline struct elf_module *load_module(const char *path)
{
        struct elf_load_request rq = {.path = path, .fd = -1};
        struct elf_module *m = NULL;
        char note[512];
        assert_int_equal(elf_module_load(&rq, &m, note, sizeof(note)), 0);
        return m;
}

#endif

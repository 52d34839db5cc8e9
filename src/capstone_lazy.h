/* SPDX-License-Identifier: MIT */
/* capstone_lazy.h: capstone's functions annotate uses, loaded at their first use. */
#ifndef ETWTOP_CAPSTONE_LAZY_H
#define ETWTOP_CAPSTONE_LAZY_H

#include <capstone.h>
#include <stddef.h>

struct capstone_lazy {
        cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
        cs_err (*close)(csh *handle);
        cs_err (*option)(csh handle, cs_opt_type type, size_t value);
        const char *(*strerror)(cs_err code);
        cs_insn *(*malloc)(csh handle);
        void (*free)(cs_insn *insn, size_t count);
        bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
                            cs_insn *insn);
        bool (*insn_group)(csh handle, const cs_insn *insn, unsigned int group_id);
};

/* capstone (CAPSTONE_LAZY_SONAME), loaded once by the first caller of any thread; NULL, with
   why (when given) saying what is missing, where it cannot be loaded. */
const struct capstone_lazy *capstone_lazy(char *why, size_t why_size);

#endif

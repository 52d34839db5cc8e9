/* SPDX-License-Identifier: MIT */
/* demangle.c: owns the call into libiberty's demangler and what is kept around it. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* C++ (Itanium ABI: _Z) and Rust (legacy: _ZN...17h<hash>E, v0: _R): other names are never
   handed to the demangler (it would be asked about every C function). */
static bool is_mangled(const char *name)
{
        return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* What cplus_demangle does with DMGL_AUTO, without its wrapper (which would bring libiberty's
   own xmalloc into the link beside ours): Rust first (its legacy names are C++ names too),
   then C++; DMGL_PARAMS and DMGL_ANSI as perf asks (parameters, const). */
/* Whether name may be a Rust name, as libiberty's rust_demangle first checks (before a pass
   over every byte of the name, a sixth of demangling libLLVM's C++ names): v0 (_R), or legacy
   (_ZN...E whose last segment is the hash, 17h and 16 hex digits). */
static bool is_rust_shaped(const char *name)
{
        if (name[1] == 'R')
                return true;
        size_t n = strlen(name);
        return name[2] == 'N' && n > 23 && name[n - 1] == 'E' &&
               memcmp(name + n - 20, "17h", 3) == 0;
}

static char *demangle_whole(const char *name)
{
        if (!is_mangled(name))
                return NULL;
        char *d = is_rust_shaped(name) ? rust_demangle(name, DMGL_PARAMS | DMGL_ANSI) : NULL;
        return d ? d : cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
}

char *sym_demangle(const char *name)
{
        if (!name || !is_mangled(name))
                return NULL;
        char *d = demangle_whole(name);
        size_t tail = 0;
        if (!d) {
                /* name@plt, name@@VERSION, "name [module]": the head demangled, the rest kept */
                size_t head = strcspn(name, "@ ");
                if (!name[head] || head > SYM_DEMANGLE_MAX)
                        return NULL;
                char *copy = xmalloc(head + 1);
                memcpy(copy, name, head);
                copy[head] = 0;
                d = demangle_whole(copy);
                free(copy);
                if (!d)
                        return NULL;
                tail = head;
        }
        size_t n = strlen(d), m = tail ? strlen(name + tail) : 0;
        if (n > SYM_DEMANGLE_MAX)
                n = SYM_DEMANGLE_MAX;
        if (m > SYM_DEMANGLE_MAX)
                m = SYM_DEMANGLE_MAX;
        char *out = xmalloc(n + m + 1);
        memcpy(out, d, n);
        memcpy(out + n, name + tail, m);
        out[n + m] = 0;
        for (char *p = out; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        *p = '?';
        free(d);
        return out;
}

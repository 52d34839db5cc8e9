/* SPDX-License-Identifier: MIT */
/* pdb_names.c: owns how a PDB's public names are shown: MSVC C++ names undecorated by LLVM's
   Microsoft demangler (libLLVM, loaded on first use), x86 C names without the decoration of
   their calling convention. */
#include "symbols/pdb.h"
#include "util/dl_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llvm::microsoftDemangle(const char *, size_t *, char *, size_t *, int *, MSDemangleFlags) of
   LLVM 14 and 15 (llvm/Demangle/Demangle.h). A C++ symbol's name spells its parameter types: a
   library whose function takes other arguments does not have this name, so it is never called
   with the wrong ones. Called through dlopen rather than linked: the library is only needed when
   a PDB is read, and the build needs no C++ compiler nor LLVM's headers. */
#define LLVM_MS_DEMANGLE "_ZN4llvm17microsoftDemangleEPKcPmPcS2_PiNS_15MSDemangleFlagsE"
/* MSDF_NoAccessSpecifier | MSDF_NoCallingConvention | MSDF_NoReturnType | MSDF_NoMemberType |
   MSDF_NoVariableType */
#define MSDF_NAME_ONLY ((1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5))

typedef char *(*ms_demangle_fn)(const char *mangled, size_t *n_read, char *buf, size_t *n_buf,
                                int *status, int flags);

static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static ms_demangle_fn ms_demangle;
static char demangler_status[192];

static void demangler_load(void)
{
        static const char *const libs[] = {"libLLVM-14.so.1", "libLLVM-15.so.1", "libLLVM-14.so",
                                           "libLLVM-15.so"};
        for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
                void *h = dl_open_lazy(libs[i]);
                if (!h)
                        continue;
                void *f = dlsym(h, LLVM_MS_DEMANGLE);
                if (f) {
                        memcpy(&ms_demangle, &f, sizeof(f)); /* kept loaded for the process */
                        return;
                }
                dlclose(h);
        }
        snprintf(demangler_status, sizeof(demangler_status),
                 "MSVC C++ names are shown decorated: no libLLVM 14 or 15 with its Microsoft "
                 "demangler (apt-get install libllvm14)");
}

const char *pdb_demangler_status(void)
{
        pthread_once(&demangler_once, demangler_load);
        return demangler_status;
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
        size_t m = strlen(suffix);
        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* The length of a demangled function's name without its parameters and the qualifiers after
   them ("fix::Shape::area(int) const": "fix::Shape::area"); all of it for a variable. */
static size_t name_only_length(const char *s)
{
        static const char *const quals[] = {" const",       " volatile", " __ptr64", " __restrict",
                                            " __unaligned", "&&",        "&",        " "};
        size_t n = strlen(s);
        for (bool is_cut = true; is_cut;) {
                is_cut = false;
                for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]) && !is_cut; i++) {
                        if (has_suffix(s, n, quals[i])) {
                                n -= strlen(quals[i]);
                                is_cut = true;
                        }
                }
        }
        if (!n || s[n - 1] != ')')
                return strlen(s);
        int depth = 0;
        for (size_t i = n; i-- > 0;) {
                if (s[i] == ')')
                        depth++;
                else if (s[i] == '(' && --depth == 0)
                        return i ? i : strlen(s);
        }
        return strlen(s);
}

static size_t copy_out(char *out, size_t size, const char *s, size_t n)
{
        if (size) {
                size_t k = n < size - 1 ? n : size - 1;
                memcpy(out, s, k);
                out[k] = 0;
        }
        return n;
}

/* An x86 C name's undecorated length and start: "_f" and "_f@8" (__cdecl, __stdcall) and
   "@f@8" (__fastcall) are "f". */
static const char *x86_c_name(const char *name, size_t *n)
{
        *n = strlen(name);
        if ((name[0] != '_' && name[0] != '@') || !name[1])
                return name;
        const char *at = strrchr(name + 1, '@');
        bool has_arg_size = at && at[1] && strspn(at + 1, "0123456789") == strlen(at + 1);
        if (name[0] == '@' && !has_arg_size)
                return name;
        *n = has_arg_size ? (size_t)(at - name) - 1 : *n - 1;
        return name + 1;
}

size_t pdb_name_undecorate(const char *name, bool is_x86, char *out, size_t size)
{
        if (name[0] == '?') {
                pthread_once(&demangler_once, demangler_load);
                int status = -1;
                char *d = ms_demangle ? ms_demangle(name, NULL, NULL, NULL, &status, MSDF_NAME_ONLY)
                                      : NULL;
                if (d && status == 0) {
                        size_t n = copy_out(out, size, d, name_only_length(d));
                        free(d);
                        return n;
                }
                free(d);
                return copy_out(out, size, name, strlen(name));
        }
        size_t n = strlen(name);
        const char *s = is_x86 ? x86_c_name(name, &n) : name;
        return copy_out(out, size, s, n);
}

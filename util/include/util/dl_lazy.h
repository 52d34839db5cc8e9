/* SPDX-License-Identifier: MIT */
/* dl_lazy.h: the tree's one way of loading a library at its first use (expat, capstone,
   libcurl, libdeflate, libLLVM's demangler). */
#ifndef ETWTOP_UTIL_DL_LAZY_H
#define ETWTOP_UTIL_DL_LAZY_H

#include <dlfcn.h>

/* soname loaded for this process (never unloaded by its callers), its symbols kept out of the
   global scope; NULL where it cannot be (dlerror says why). RTLD_LAZY: the functions that the
   library and what it needs call are bound at their first call, as a linked library's are,
   where RTLD_NOW bound every one at the load. It tells where a library in the chain is not
   linked BIND_NOW itself: on Debian 12, libxml2's libstdc++ and zlib (when libxml2 read the
   manifests, its load took 0.82-0.85 of its time; bench/dlopen.sh); not libcurl, capstone, ICU
   or liblzma, which are. The symbols a caller takes it takes with dlsym
   at the load, so a missing one is still told there. */
static inline void *dl_open_lazy(const char *soname)
{
        return dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
}

#endif

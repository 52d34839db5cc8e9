/* SPDX-License-Identifier: MIT */
/* demangle.h (internal): C++ and Rust symbol names as people read them, through libiberty (the
   demangler of binutils and perf). */
#ifndef ETWTOP_SYMBOLS_DEMANGLE_H
#define ETWTOP_SYMBOLS_DEMANGLE_H

/* Longest demangled name kept; longer ones are cut (sym_table keeps raw names to 4096 too). */
#define SYM_DEMANGLE_MAX 4096

/* The demangled form of name, as `perf` shows it: C++ with its parameters
   (`bitmap_set_bit(bitmap_head*, int)`), Rust legacy and v0 without the hash
   (`<rs::Point>::norm`). A suffix the demanglers do not take is kept after the demangled part:
   a PLT stub's "@plt", a symbol version's "@@GLIBC_2.2.5", a kernel module's " [ext4]".
   Control characters become '?'. Returns a string the caller frees, or NULL when name is not a
   mangled C++ or Rust name (the caller keeps name). Thread-safe. */
char *sym_demangle(const char *name);

#endif

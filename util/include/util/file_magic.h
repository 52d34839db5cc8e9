/* SPDX-License-Identifier: MIT */
/* file_magic.h: what a file that is not a trace is, by its first bytes: the readers of .etl and
   perf.data files name it in their error (a zip of a trace, a program, a .NET trace) rather
   than a field that makes no sense in it. */
#ifndef ETWTOP_UTIL_FILE_MAGIC_H
#define ETWTOP_UTIL_FILE_MAGIC_H

#include <stddef.h>

/* For the first n bytes of a file: a phrase naming a known kind of file that no reader of
   etwtop reads, with what to do where there is something to do ("a zip archive: give the
   trace inside it, unzipped"), or NULL where the bytes name none of them. */
const char *file_magic_foreign(const void *p, size_t n);

#endif

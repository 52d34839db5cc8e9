/* SPDX-License-Identifier: MIT */
/* debuglink.h: libdwfl's find_debuginfo for etwtop, which runs as root: a debug file named by
   an image's .gnu_debuglink (untrusted data, looked up beside the image, in directories its
   owner may write) is opened only when it is a regular file, without waiting on a FIFO. */
#ifndef ETWTOP_SYMBOLS_DEBUGLINK_H
#define ETWTOP_SYMBOLS_DEBUGLINK_H

#include <elfutils/libdwfl.h>

/* A Dwfl_Callbacks.find_debuginfo: by build-id first (dwfl_build_id_find_debuginfo, under the
   absolute directories of the debuginfo path), then the debug link in the places
   dwfl_standard_find_debuginfo tries (the image's directory, its .debug, and under each
   absolute directory), each opened through in_file_open and taken only with the image's
   build-id when it has one; then, where DEBUGINFOD_URLS names servers, debuginfod, as the standard
   search ends. *userdata must be the debuginfo path string (as Dwfl_Callbacks.debuginfo_path points
   to); NULL looks by build-id only. Returns an fd that libdwfl owns (and the name in
   *debuginfo_file_name, malloc'ed), or -1. */
int debuglink_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                             Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                             GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif

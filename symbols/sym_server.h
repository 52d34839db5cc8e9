/* SPDX-License-Identifier: MIT */
/* sym_server.h (internal): the symbol path as _NT_SYMBOL_PATH spells it (and --symbol-path), and
   finding a file in it: plain directories, symbol stores (name/KEY/name) and symbol servers
   over HTTP(S), whose files are downloaded into a local store (libcurl). Finding runs on the
   store's loader thread; its progress is read on the caller's. doc/symbols.md. */
#ifndef ETWTOP_SYMBOLS_SYM_SERVER_H
#define ETWTOP_SYMBOLS_SYM_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_path;

/* Parses entries, then nt_symbol_path (NULL: none). Each is a list of elements separated by
   ';': DIR (a plain directory, also read as a symbol store), cache*[DIR] (later servers' files
   are kept in DIR), srv*[STORE*...]*URL (stores in order, the first the downstream one that
   downloads go to) and symsrv*DLL*... (as srv*). An entry without ';' and '*' is also split at
   ':' (DIR:DIR, etwtop's older form). Without a store to download into, servers' files go to
   the default cache: $XDG_CACHE_HOME/etwtop/symbols, else ~/.cache/etwtop/symbols. The strings
   are copied. */
struct sym_path *sym_path_new(const char *const *entries, uint32_t nr, const char *nt_symbol_path);
/* Cancels a download under way (sym_path_cancel), then frees. NULL is fine. */
void sym_path_free(struct sym_path *sp);

/* The plain directories, in order (the ELF lookups read them). Borrowed from sp. */
const char *const *sym_path_dirs(const struct sym_path *sp, uint32_t *nr);
/* Whether the path names anywhere to look. */
bool sym_path_is_empty(const struct sym_path *sp);

/* Says whether file is the one looked for: 0 to take it, or -errno with why (another build, a
   damaged file). It may keep what it opened in ctx: a downloaded file is checked before it is
   renamed into its store, and keeps its inode. */
typedef int (*sym_path_check_fn)(void *ctx, const char *file, char *why, size_t why_size);

/* Looks for the file name (a file name, no directory) with the symbol-store key (a PDB's
   GUID and age, an image's TimeDateStamp and SizeOfImage: pe_image.h) along the path, in its
   order: in a directory DIR/name and DIR/name/key/name (names matched ignoring case), in a
   store STORE/name/key/name, from a server URL/name/key/name, downloaded into the downstream
   store (a temporary file renamed into place, so the store never holds half a file). Each file
   found goes to check until one is taken. Returns 0 with its path in found, or -ENOENT (nothing
   taken) with note saying where it looked and what each place answered (a directory without
   the file, a file check refused and why, a URL's HTTP status or the transfer's error). A
   server that did not answer is not asked again. May block on the network: call it on the
   loader thread. key NULL: the key is not known, only directories are looked in. */
int sym_path_find(struct sym_path *sp, const char *name, const char *key, sym_path_check_fn check,
                  void *ctx, char *found, size_t found_size, char *note, size_t note_size);

/* The newest progress line (a download started, its bytes so far, its end), once: true when
   there is one the caller has not had. Any thread. */
bool sym_path_progress(struct sym_path *sp, char *buf, size_t size);

/* Ends the download under way and any later one (the store is closing). Any thread. */
void sym_path_cancel(struct sym_path *sp);

#endif

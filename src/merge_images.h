/* SPDX-License-Identifier: MIT */
/* merge_images.h: the images --merge reads for the DbgID_RSDS events it adds. */
#ifndef ETWTOP_MERGE_IMAGES_H
#define ETWTOP_MERGE_IMAGES_H

#include <stdint.h>

/* Makes CreateMergedTraceFile look for images in the --symbol-path entries given and in
   _NT_SYMBOL_PATH (directories, symbol stores, the local caches of srv* and cache*). */
void merge_images_register(const char *const *symbol_path, uint32_t nr);

#endif

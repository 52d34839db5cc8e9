/* SPDX-License-Identifier: MIT */
/* merge_images.h: where the backend finds a trace's images: --merge's for the DbgID_RSDS
   events it adds, a perf.data's for the walks of its DWARF stacks. */
#ifndef ETWTOP_MERGE_IMAGES_H
#define ETWTOP_MERGE_IMAGES_H

#include <stdint.h>

/* Makes CreateMergedTraceFile look for images in the --symbol-path entries given and in
   _NT_SYMBOL_PATH (directories, symbol stores, the local caches of srv* and cache*). */
void merge_images_register(const char *const *symbol_path, uint32_t nr);

/* Makes the conversion of a perf.data look for the images of its DWARF stack walks in the same
   places (etw_perf_data_set_image_lookup), before their recorded paths. */
void perf_images_register(const char *const *symbol_path, uint32_t nr);

#endif

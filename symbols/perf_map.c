/* SPDX-License-Identifier: MIT */
/* perf_map.c: placeholder until its module lands. */
#include "symbols/sym_table.h"

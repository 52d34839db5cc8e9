/* SPDX-License-Identifier: MIT */
/* pe_image.c: placeholder until its module lands. */
#include "symbols/sym_table.h"

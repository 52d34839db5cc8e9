/* SPDX-License-Identifier: MIT */
/* kallsyms.c: placeholder until its module lands. */
#include "symbols/sym_table.h"

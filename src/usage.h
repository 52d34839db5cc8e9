/* SPDX-License-Identifier: MIT */
/* usage.h: etwtop's usage text. */
#ifndef ETWTOP_USAGE_H
#define ETWTOP_USAGE_H

#include <stdio.h>

/* The commands and options, as -h prints them, to out. */
void usage(FILE *out);

#endif

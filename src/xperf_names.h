/* SPDX-License-Identifier: MIT */
/* xperf_names.h: xperf's names for kernel flags, stack-walk events, profile sources and LBR
   filters, parsed into the values the controller API takes. */
#ifndef ETWTOP_XPERF_NAMES_H
#define ETWTOP_XPERF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "etw/ntwmi.h"

/* "PROC_THREAD+LOADER+PROFILE" (xperf -on) or a number: group masks. Returns 0, or -EINVAL
   with the unknown name in err. */
int xperf_parse_flags(const char *text, PERFINFO_GROUPMASK *masks, char *err, size_t err_size);

/* "Profile+CSwitch+ReadyThread" or hook ids ("0x0524"): hook ids (xperf -stackwalk).
   Returns how many (at most max), or -EINVAL / -E2BIG with err filled. */
int xperf_parse_hooks(const char *text, uint16_t *hooks, uint32_t max, char *err, size_t err_size);

/* "BranchMispredictions" or a number: a KPROFILE_SOURCE (xperf -pmcprofile). */
int xperf_parse_profile_source(const char *text, uint32_t *source, char *err, size_t err_size);
/* "TotalCycles+InstructionRetired": up to max profile sources into sources; their number, or
   -errno with a message in err. */
int xperf_parse_profile_sources(const char *text, uint32_t *sources, uint32_t max, char *err,
                                size_t err_size);

/* "KERNEL+JCC+NEAR_RET": EVNTRACE_LBR_* bits (each filter suppresses that branch type). */
int xperf_parse_lbr_filters(const char *text, uint32_t *flags, char *err, size_t err_size);

/* Names back, for messages and the screen: "PROC_THREAD+LOADER+..." of masks. */
size_t xperf_format_flags(const PERFINFO_GROUPMASK *masks, char *buf, size_t size);
const char *xperf_hook_name(uint16_t hook); /* "Profile", "CSwitch"... or NULL */

#endif

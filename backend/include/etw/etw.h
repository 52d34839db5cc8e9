/* SPDX-License-Identifier: MIT */
/* etw.h: the whole ETW API surface in one include. */
#ifndef ETW_ETW_H
#define ETW_ETW_H

#include "wintypes.h"
#include "winerror.h"
#include "evntprov.h"
#include "evntcons.h"
#include "evntrace.h"
#include "ntwmi.h"

#endif

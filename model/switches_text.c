/* SPDX-License-Identifier: MIT */
/* switches_text.c: owns the text the switches model gives of its rows (C-states, PMC counts),
   from its public answers only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/switches.h"

void switches_owner_text(const struct switches *sw, bool is_thread, uint32_t pid, uint32_t tid,
                         bool has_module, char *buf, size_t size)
{
        if (!is_thread) {
                const char *pn = switches_process_name(sw, pid);
                if (*pn)
                        snprintf(buf, size, "%s", pn);
                else if (pid)
                        snprintf(buf, size, "pid %u", pid);
                else
                        snprintf(buf, size, "%s", has_module ? "Idle" : "");
                return;
        }
        char pn[SWITCHES_NAME_SIZE], tn[SWITCHES_NAME_SIZE];
        switches_thread_names(sw, tid, pn, tn);
        if (!pn[0]) /* a thread no event named: its process's name */
                snprintf(pn, sizeof(pn), "%s", switches_process_name(sw, pid));
        snprintf(buf, size, "%s%s%s (%u)", pn[0] ? pn : "?", tn[0] ? "/" : "", tn, tid);
}

void switches_cstates_text(const struct switches_cpu_row *row, char *buf, size_t size)
{
        uint64_t all = 0;
        for (uint32_t k = 0; k < SWITCHES_NR_CSTATES; k++)
                all += row->cstate_ns[k];
        size_t len = 0;
        if (size)
                buf[0] = 0;
        if (all && !row->has_cstates) {
                /* every idle period said C0 (running): the kernel told no C-state */
                snprintf(buf, size, "%s", SWITCHES_CSTATE_UNKNOWN);
                return;
        }
        for (uint32_t k = 0; all && k < SWITCHES_NR_CSTATES && len < size; k++) {
                double pct = 100.0 * (double)row->cstate_ns[k] / (double)all;
                if (pct < 1.0)
                        continue;
                char one[24];
                int n = snprintf(one, sizeof(one), "%sC%u %.0f%%", len ? " " : "", k, pct);
                if (n < 0 || len + (size_t)n >= size)
                        break; /* whole states only */
                memcpy(buf + len, one, (size_t)n + 1);
                len += (size_t)n;
        }
}

/* A count in 4 significant characters or so: 999, 12.3 K, 4.56 G. */
static void format_count(uint64_t v, char *buf, size_t size)
{
        static const char units[] = " KMGTPE";
        double d = (double)v;
        int u = 0;
        while (d >= 1000.0 && u < 6) {
                d /= 1000.0;
                u++;
        }
        if (!u)
                snprintf(buf, size, "%" PRIu64, v);
        else
                snprintf(buf, size,
                         d < 10    ? "%.2f %c"
                         : d < 100 ? "%.1f %c"
                                   : "%.0f %c",
                         d, units[u]);
}

static int pmc_index(const char *const *pmc_names, uint32_t nr_pmc, const char *const *names,
                     uint32_t nr)
{
        for (uint32_t i = 0; i < nr_pmc; i++)
                for (uint32_t k = 0; k < nr; k++)
                        if (strcmp(pmc_names[i], names[k]) == 0)
                                return (int)i;
        return -1;
}

void switches_pmc_text(const struct switches *sw, const struct switches_row *row, char *buf,
                       size_t size)
{
        const char *pmc_names[KEV_MAX_PMC];
        uint32_t nr_pmc = switches_pmc_names(sw, pmc_names);
        size_t len = 0;
        if (size)
                buf[0] = 0;
        for (uint32_t i = 0; i < row->nr_pmc && i < nr_pmc && len < size; i++) {
                char count[32];
                format_count(row->pmc[i], count, sizeof(count));
                int n = snprintf(buf + len, size - len, "%s%s %s", len ? ", " : "",
                                 pmc_names[i][0] ? pmc_names[i] : "counter", count);
                if (n < 0)
                        return;
                len += (size_t)n;
        }
        static const char *const instructions[] = {"InstructionRetired", "InstructionsRetired"};
        static const char *const cycles[] = {"TotalCycles", "UnhaltedCoreCycles",
                                             "UnhaltedReferenceCycles"};
        int ins = pmc_index(pmc_names, nr_pmc, instructions, 2);
        int cyc = pmc_index(pmc_names, nr_pmc, cycles, 3);
        if (ins >= 0 && cyc >= 0 && (uint32_t)ins < row->nr_pmc && (uint32_t)cyc < row->nr_pmc &&
            row->pmc[cyc] && len < size)
                snprintf(buf + len, size - len, ", IPC %.2f",
                         (double)row->pmc[ins] / (double)row->pmc[cyc]);
}

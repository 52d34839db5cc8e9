/* SPDX-License-Identifier: MIT */
/* frames_gen.c: owns the count of the events that move a process's addresses (frames_gen.h). */
#include "frames_gen.h"

static void moved(struct frames_gen *g, uint32_t pid)
{
        if (pid == 0 || pid == UINT32_MAX)
                g->all++; /* the kernel's, in every process */
        else
                g->by_pid[hash_mix64(pid) & (FRAMES_GEN_SLOTS - 1)]++;
}

/* One of FRAMES_GEN_KINDS (frames_gen_event). */
void frames_gen_moved(struct frames_gen *g, const struct kevent *ev)
{
        switch (ev->type) {
        case KEV_PROCESS: moved(g, ev->process.pid); break;
        case KEV_IMAGE: moved(g, ev->image.pid); break;
        case KEV_IMAGE_IDENTITY: moved(g, ev->image_identity.pid); break;
        case KEV_DBG_ID: moved(g, ev->dbg_id.pid); break;
        case KEV_CLR_MODULE: moved(g, ev->clr_module.pid); break;
        case KEV_CLR_METHOD: moved(g, ev->clr_method.pid); break;
        case KEV_KERNEL_SYMBOL: moved(g, 0); break;
        default: break;
        }
}

/* SPDX-License-Identifier: MIT */
/* stack_join.h: a sample and its stack as one, however the trace carries the stack (model's
   own header). etwtop's traces write a sample's whole stack (kernel and user frames) in one
   StackWalk event right after it. Windows writes the kernel part at the sample and the user
   part when the thread returns to user mode (a second StackWalk event, or a StackKeyUser
   reference to a stack-cache entry), with other events between. Here a sample of such a trace
   waits for its parts, and goes on with one stack, kernel frames first, as the views count a
   stack: whole when its user part came, else when no part can come any more (the thread's next
   sample on its CPU, JOIN_WAIT_NS of trace time, the end). */
#ifndef ETWTOP_MODEL_STACK_JOIN_H
#define ETWTOP_MODEL_STACK_JOIN_H

#include <stdbool.h>

#include "kevent.h"

struct stack_join;

typedef void (*stack_join_emit_fn)(void *ctx, const struct kevent *ev);

struct stack_join *stack_join_new(void);
void stack_join_free(struct stack_join *j); /* NULL is fine */

/* Stacks come whole (etwtop's traces, told by their SessionCpu events): nothing waits. */
void stack_join_set_whole(struct stack_join *j, bool is_whole);

/* Before ev reaches the symbol store: where it takes a process's mappings away or replaces
   them (the process's end, an image's unload, a new program in it), that process's waiting
   samples go on first, through emit, to be placed in the mappings they were taken in (a
   perf.data read from standard input placed a forked child's samples, taken before its exec,
   in no image: the exec's new mappings had come before them). */
void stack_join_before(struct stack_join *j, const struct kevent *ev, stack_join_emit_fn emit,
                       void *ctx);

/* An event in; out through emit: the events that wait for nothing at once, a sample with its
   joined stack right after it when it is complete, in the order they complete. */
void stack_join_event(struct stack_join *j, const struct kevent *ev, stack_join_emit_fn emit,
                      void *ctx);

/* Whether stack_join_event would hand ev on as it is and do nothing else (whole stacks, no
   sample waiting): a caller may then hand it on itself. */
bool stack_join_is_idle(const struct stack_join *j);

/* The end of the trace: every waiting sample goes on with what it has. */
void stack_join_flush(struct stack_join *j, stack_join_emit_fn emit, void *ctx);

/* Forgets every waiting sample (a restart, a zero). */
void stack_join_reset(struct stack_join *j);

#endif

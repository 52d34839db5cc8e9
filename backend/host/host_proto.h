/* SPDX-License-Identifier: MIT */
/* host_proto.h: the session host's wire protocol: framed, versioned messages between the
   library's API functions (clients) and the host that owns the sessions, their encoders, and
   parsers that take bytes and check every length (DESIGN.md "Sessions belong to the system").

   A message is a 16-byte header {u32 magic "ETWH", u16 version, u16 type, u32 body length,
   u32 reserved 0} and a body of at most HOST_MAX_BODY bytes, in the byte order of the machine
   (both ends run on it). Fields: u32, u64, and counted strings and blobs (u32 length, then the
   bytes; strings have no NUL). A client opens a connection for a request and reads one reply;
   after the reply to a CONTROL, SET_INFO, QUERY_INFO, LBR, ENUMERATE or PING it may send its
   next request on the same connection (the host serves them in turn, for the client that
   connected, and closes the connection when the client sends none for HOST_KEEP_MS or the host
   has no session left: a client that finds it closed opens another); the other requests end
   their connection with their reply, or go on as follows. A real-time consumer's connection
   carries HOST_RT_BUFFER messages and one HOST_RT_END after its reply.
   One that asks for a shared ring (HOST_FLAG_RT_RING) gets HOST_RT_RING first, with the ring's
   memory file passed alongside (SCM_RIGHTS; sealed: it maps it read-only), then HOST_RT_SLOTS
   messages that say which of its slots hold the next buffers, and one HOST_RT_END; it sends
   HOST_RT_RELEASE for the slots it is done with. A ring of no slots (the host could not make
   one) means the buffers come as HOST_RT_BUFFER messages. One that asks to read in place too
   (HOST_FLAG_RT_POOL) of a session that keeps a window gets HOST_RT_POOL instead of the ring,
   with the session's pool (the memory file its buffers are cut from, sealed the same way), then
   HOST_RT_PLACES messages that name the next buffers by their index in the pool, numbered in
   the stream from 0, and HOST_RT_RELEASE for those it is done with, as for a ring: each stays
   as it was until then (the writer sets it aside). */
#ifndef ETWTOP_HOST_PROTO_H
#define ETWTOP_HOST_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw/evntrace.h"
#include "session_defaults.h"

struct session_rt_info; /* session.h */

#define HOST_PROTO_MAGIC   0x48575445u /* "ETWH" */
#define HOST_PROTO_VERSION 1
#define HOST_HEADER_SIZE   16
#define HOST_MAX_NAME      1024 /* a session name (StartTrace documentation) */
#define HOST_MAX_PATH      4096
#define HOST_MAX_MSG_TEXT  1024
#define HOST_KEEP_MS       30000      /* a kept connection with no request for this is closed */
#define HOST_MAX_DATA      (1u << 20) /* EVENT_TRACE_PROPERTIES, information, buffers */
#define HOST_MAX_BODY      (HOST_MAX_DATA + 2 * HOST_MAX_PATH + 4096)
/* ENUMERATE: each session's EVENT_TRACE_PROPERTIES travel as one blob of this size, its logger
   name at offset sizeof(EVENT_TRACE_PROPERTIES), its log file name HOST_MAX_NAME + 1 further;
   rounded up to 8 bytes so that an array of them stays aligned */
#define HOST_ENUM_BLOB_SIZE                                                                        \
        ((sizeof(EVENT_TRACE_PROPERTIES) + 2 * (HOST_MAX_NAME + 1) + 7) & ~(size_t)7)
/* a real-time buffer's data lies this far into its message, 8-byte aligned */
#define HOST_RT_DATA_OFFSET (HOST_HEADER_SIZE + 16)

enum host_msg_type {
        HOST_REQ_START = 1,   /* StartTraceA / StartKernelTrace */
        HOST_REQ_CONTROL,     /* ControlTraceA */
        HOST_REQ_SET_INFO,    /* TraceSetInformation */
        HOST_REQ_QUERY_INFO,  /* TraceQueryInformation */
        HOST_REQ_LBR,         /* TraceConfigureLastBranchRecord */
        HOST_REQ_ENUMERATE,   /* QueryAllTracesA */
        HOST_REQ_RT_HEADER,   /* OpenTraceA of a real-time session */
        HOST_REQ_RT_ATTACH,   /* ProcessTrace of a real-time session: a stream follows */
        HOST_REQ_KEEP_WINDOW, /* etw_keep_window */
        HOST_REQ_SAVE_WINDOW, /* etw_save_window */
        HOST_REQ_PING,        /* is a host there, and whose */
        HOST_REQ_BIND,        /* etw_bind_session: the connection stays open; its end stops it */
        HOST_REQ_LAST = HOST_REQ_BIND,
        HOST_REPLY = 0x80,
        HOST_RT_BUFFER = 0x81,  /* a completed buffer, as the files hold it */
        HOST_RT_END = 0x82,     /* the session stopped: nothing follows */
        HOST_RT_RING = 0x83,    /* the shared ring's shape, its memory file passed with it */
        HOST_RT_SLOTS = 0x84,   /* buffers in the ring: the next count slots from seq */
        HOST_RT_RELEASE = 0x85, /* consumer to host: every slot before seq is done with */
        HOST_RT_POOL = 0x86,    /* in place: the session's pool's shape, its memory file with it */
        HOST_RT_PLACES = 0x87,  /* in place: the next count buffers from seq, by pool index */
        HOST_RT_STATE = 0x88,   /* the session's counters and settings generation (RT_STATE) */
};

/* Request flags. */
#define HOST_FLAG_KERNEL_TRACE 0x1u  /* START: StartKernelTrace, not StartTraceA */
#define HOST_FLAG_HAS_BUFFER   0x2u  /* SET_INFO/QUERY_INFO: the caller's buffer is not NULL */
#define HOST_FLAG_FORCE        0x4u  /* SAVE_WINDOW: replace an existing file */
#define HOST_FLAG_HAS_DEFAULTS 0x8u  /* START: the starter's handle-0 settings follow */
#define HOST_FLAG_RT_RING      0x10u /* RT_ATTACH: the buffers through a shared ring */
#define HOST_FLAG_RT_POOL      0x20u /* RT_ATTACH, with RT_RING: read in place where it can */
/* RT_ATTACH, with RT_RING: an HOST_RT_STATE before each RT_SLOTS or RT_PLACES (what a screen
   would ask its session at every refresh, sent with the buffers that make it refresh) */
#define HOST_FLAG_RT_STATE 0x40u
#define HOST_FLAGS_VALID   0x7Fu

/* A pool's buffers at most (HOST_RT_POOL): a session's largest window of 1 KiB buffers and its
   spares. */
#define HOST_RT_MAX_POOL ((uint32_t)1 << 21)

/* A shared ring's slots at most (each a session buffer: up to HOST_MAX_DATA bytes). */
#define HOST_RT_MAX_SLOTS 256u

/* A decoded request. Strings are copies, NUL-terminated; data points into the message. */
struct host_request {
        uint16_t type;
        uint32_t flags;
        uint64_t handle;
        uint32_t code;   /* ControlCode, information class, LBR configuration */
        uint32_t length; /* QUERY_INFO: the caller's buffer length */
        uint64_t value;  /* KEEP_WINDOW: bytes */
        char name[HOST_MAX_NAME + 1];
        char path[HOST_MAX_PATH + 1]; /* an absolute log file name, or the save's file */
        const uint8_t *data;          /* borrowed from the message: EVENT_TRACE_PROPERTIES,
                                         information, LBR events */
        uint32_t data_size;
        const uint8_t *extra; /* borrowed: StartKernelTrace's stack ids */
        uint32_t extra_size;
        struct session_start_defaults defaults; /* START with HOST_FLAG_HAS_DEFAULTS */
};

/* A decoded reply. */
struct host_reply {
        uint32_t code; /* the Win32 code */
        int32_t rc;    /* the -errno of the internal functions (KEEP/SAVE_WINDOW, RT_*) */
        uint64_t handle;
        uint32_t length; /* QUERY_INFO: ReturnLength; ENUMERATE: LoggerCount */
        char msg[HOST_MAX_MSG_TEXT + 1];
        const uint8_t *data; /* borrowed from the message */
        uint32_t data_size;
};

/* A decoded real-time message. */
struct host_rt_msg {
        uint16_t type;         /* HOST_RT_BUFFER, _END, _RING, _SLOTS, _POOL or _PLACES */
        uint64_t nr_lost;      /* buffers this consumer lost so far (BUFFER, END, SLOTS) */
        uint32_t code;         /* RT_END */
        const uint8_t *data;   /* RT_BUFFER: borrowed, at HOST_RT_DATA_OFFSET of the message */
        uint32_t size;         /* RT_BUFFER, _SLOTS, _PLACES: each buffer's bytes; RT_RING,
                                  RT_POOL: a slot's */
        uint32_t nr_slots;     /* RT_RING, RT_POOL: its slots (RT_RING 0: no ring); RT_SLOTS,
                                  RT_PLACES: how many */
        uint64_t seq;          /* RT_SLOTS: the first buffer's number (slot seq % the ring's);
                                  RT_PLACES: the first buffer's number in the stream */
        const uint8_t *places; /* RT_PLACES: borrowed, nr_slots little-endian u32 indexes */
        /* RT_STATE: session_rt_state's fields (session.h) */
        uint64_t settings_gen, nr_events_lost, nr_buffers_written, nr_rt_buffers_lost;
        uint32_t buffer_size_kb, max_file_mb;
};

/* A message being built; grows as needed (out of memory aborts). */
struct host_msg {
        uint8_t *data; /* owned */
        size_t size;
        size_t cap;
};

void host_msg_free(struct host_msg *m);

/* Encoders of whole messages. */
void host_msg_request(struct host_msg *m, const struct host_request *rq);
void host_msg_reply(struct host_msg *m, const struct host_reply *rp);
void host_msg_rt_buffer(struct host_msg *m, uint64_t nr_lost, const uint8_t *buf, uint32_t size);
/* The first HOST_RT_DATA_OFFSET bytes of host_msg_rt_buffer's message for a buffer of size
   bytes: sent before the buffer itself (host_io_send_rest), the buffer is not copied. */
void host_msg_rt_buffer_head(uint8_t head[HOST_RT_DATA_OFFSET], uint64_t nr_lost, uint32_t size);
void host_msg_rt_end(struct host_msg *m, uint32_t code, uint64_t nr_lost);
void host_msg_rt_ring(struct host_msg *m, uint32_t nr_slots, uint32_t slot_size);
void host_msg_rt_slots(struct host_msg *m, uint64_t nr_lost, uint64_t seq, uint32_t count,
                       uint32_t size);
void host_msg_rt_release(struct host_msg *m, uint64_t seq);
void host_msg_rt_state(struct host_msg *m, uint64_t settings_gen, uint64_t nr_events_lost,
                       uint64_t nr_buffers_written, uint64_t nr_rt_buffers_lost,
                       uint32_t buffer_size_kb, uint32_t max_file_mb);
void host_msg_rt_pool(struct host_msg *m, uint32_t nr_buffers, uint32_t buffer_size);
void host_msg_rt_places(struct host_msg *m, uint64_t nr_lost, uint64_t seq, const uint32_t *idx,
                        uint32_t count, uint32_t size);

/* Checks a message header: 0 with *type and *body_size, or -EPROTO (not this protocol, or a
   version this library does not speak), -EMSGSIZE (a body over HOST_MAX_BODY) or -EBADMSG, with
   why filled. */
int host_proto_check_header(const uint8_t *hdr, size_t size, uint16_t *type, uint32_t *body_size,
                            char *why, size_t why_size);

/* Parse whole messages (header and body, exactly size bytes). 0, or -EBADMSG/-EPROTO/-EMSGSIZE
   with why saying which field is wrong and where. Nothing is trusted: every length is checked
   against what remains, every string against its limit and for NULs, every request's fields
   against what its type needs (e.g. START's EVENT_TRACE_PROPERTIES is whole, and its
   Wnode.BufferSize is the blob's size). */
int host_proto_decode_request(const uint8_t *msg, size_t size, struct host_request *rq, char *why,
                              size_t why_size);
int host_proto_decode_reply(const uint8_t *msg, size_t size, struct host_reply *rp, char *why,
                            size_t why_size);
int host_proto_decode_rt(const uint8_t *msg, size_t size, struct host_rt_msg *rt, char *why,
                         size_t why_size);
/* The host's side of a ring: a consumer's HOST_RT_RELEASE, *seq the first buffer not done. */
int host_proto_decode_release(const uint8_t *msg, size_t size, uint64_t *seq, char *why,
                              size_t why_size);

/* session_rt_info as bytes (HOST_RT_INFO_SIZE), for RT_HEADER and RT_ATTACH replies. */
#define HOST_RT_INFO_SIZE 56
void host_rt_info_put(uint8_t out[HOST_RT_INFO_SIZE], const struct session_rt_info *info);
/* 0, or -EBADMSG for a size other than HOST_RT_INFO_SIZE or values no session has. */
int host_rt_info_get(const uint8_t *in, size_t size, struct session_rt_info *info);

/* The name of a message type, for messages. */
const char *host_proto_type_name(uint16_t type);

/* Whether a connection goes on after the reply to a request of this type (its next request may
   follow on it): the short ones, CONTROL, SET_INFO, QUERY_INFO, LBR, ENUMERATE and PING. */
bool host_proto_is_kept_after(uint16_t type);

/* printf into why (why_size bytes) where the caller wants the reason; nothing when why is NULL
   or why_size 0. */
void host_say(char *why, size_t why_size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif

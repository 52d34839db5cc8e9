/* SPDX-License-Identifier: MIT */
/* fuzz_host.c: libFuzzer target feeding arbitrary bytes to the session host's parsers (a
   request and a ring's release as the host reads them, a reply and a real-time message as a
   client reads them), and
   re-encoding what parses, which must parse again to the same request. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_proto.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* a copy on the heap, exactly size bytes: ASan sees any read past the message */
        uint8_t *msg = malloc(size ? size : 1);
        if (!msg)
                return 0;
        memcpy(msg, data, size);
        char why[256];
        static struct host_request rq, again;
        if (host_proto_decode_request(msg, size, &rq, why, sizeof(why)) == 0) {
                if (rq.data_size && (rq.data < msg || rq.data + rq.data_size > msg + size))
                        abort();
                struct host_msg m = {0};
                host_msg_request(&m, &rq);
                if (host_proto_decode_request(m.data, m.size, &again, why, sizeof(why)) != 0 ||
                    again.type != rq.type || again.data_size != rq.data_size ||
                    strcmp(again.name, rq.name) != 0 || strcmp(again.path, rq.path) != 0)
                        abort();
                host_msg_free(&m);
        } else if (!why[0]) {
                abort(); /* every refusal says why */
        }
        struct host_reply rp;
        if (host_proto_decode_reply(msg, size, &rp, why, sizeof(why)) == 0 && rp.data_size &&
            (rp.data < msg || rp.data + rp.data_size > msg + size))
                abort();
        struct host_rt_msg rt;
        if (host_proto_decode_rt(msg, size, &rt, why, sizeof(why)) == 0 &&
            rt.type == HOST_RT_BUFFER && rt.data + rt.size != msg + size)
                abort();
        /* in place: the indexes are the message's last bytes, as many as it says */
        if (host_proto_decode_rt(msg, size, &rt, why, sizeof(why)) == 0 &&
            rt.type == HOST_RT_PLACES &&
            (!rt.nr_slots || rt.nr_slots > HOST_RT_MAX_SLOTS ||
             rt.places + 4 * (size_t)rt.nr_slots != msg + size))
                abort();
        /* a state: its settings generation is never 0 */
        if (host_proto_decode_rt(msg, size, &rt, why, sizeof(why)) == 0 &&
            rt.type == HOST_RT_STATE && !rt.settings_gen)
                abort();
        uint64_t seq;
        if (host_proto_decode_release(msg, size, &seq, why, sizeof(why)) != 0 && !why[0])
                abort();
        if (host_proto_decode_rt(msg, size, &rt, why, sizeof(why)) == 0 &&
            ((rt.type == HOST_RT_RING && rt.nr_slots > HOST_RT_MAX_SLOTS) ||
             (rt.type == HOST_RT_SLOTS && (!rt.nr_slots || rt.size > HOST_MAX_DATA))))
                abort();
        struct session_rt_info info;
        host_rt_info_get(msg, size, &info);
        free(msg);
        return 0;
}

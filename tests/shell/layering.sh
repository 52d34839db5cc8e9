#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# layering.sh: the arrows of DESIGN.md that include paths alone cannot enforce: only ui/ includes
# curses, the model makes no system calls and draws nothing, backend/ and symbols/ include
# nothing of the other folders, src/ and ui/ include no backend-internal header, one allocation
# helper.
set -u
cd "$(dirname "$0")/../.."
nr_fail=0
nr_pass=0
fail() { echo "FAIL: $*" >&2; nr_fail=$((nr_fail + 1)); }

hits=$(grep -rlE '#include *[<"](n?curses|ncursesw/)' --include='*.[ch]' backend symbols src tests bench 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "curses included outside ui/: $hits"

# (model_util.h's madvise is the one exception: its big tables' placement and pages, no I/O)
hits=$(grep -rnE '#include *<(unistd|fcntl|poll|sys/[a-z]+)\.h>|\b(printf|fprintf|puts)\(' --include='*.[ch]' model 2>/dev/null |
        grep -v '^model/model_util.h:[0-9]*:#include <sys/mman.h>$')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "model makes system calls or prints: $hits"

hits=$(grep -rnE '#include *"(model|ui|symbols)/' --include='*.[ch]' backend 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend includes another folder: $hits"

hits=$(grep -rnE '#include *"(model|ui|etw|kevent|etl_)' --include='*.[ch]' symbols 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "symbols includes another folder: $hits"

hits=$(grep -rnE '\b(printf|fprintf|puts|perror)\(' --include='*.c' backend symbols 2>/dev/null |
        grep -v 'snprintf\|vsnprintf')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend or symbols print: $hits"

# src/, ui/ and model/ reach the backend through its API headers (etw/) and the decoded-event
# header (kevent.h) only: none of the backend's own headers
internal=$(cd backend && ls *.h linux/*.h | sed 's|.*/||; s/\./\\./g' | paste -sd'|')
hits=$(grep -rnE "#include *\"($internal)\"" --include='*.[ch]' src ui model bench/bench_frame.c 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "a backend-internal header outside the backend: $hits"

# backend/etl (the generic formats) includes nothing of the rest of the backend: the ETW API,
# util, its own headers and le_bytes.h only
hits=$(grep -rnE '#include *"' --include='*.[ch]' backend/etl 2>/dev/null |
        grep -vE '#include *"(etw/[A-Za-z_]+|util/[a-z_]+|etl_[a-z0-9_]+|log_file|xpress|le_bytes)\.h"')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend/etl includes more than the formats: $hits"

# backend/decode (the decoder) includes the decoded-event header, the ETW API, util, its own
# headers, le_bytes.h and of backend/etl etl_reader.h only (UTF-16 is util/utf.h)
hits=$(grep -rnE '#include *"' --include='*.[ch]' backend/decode 2>/dev/null |
        grep -vE '#include *"(etw/[A-Za-z_]+|util/[a-z_]+|kevent|kdecoder|kdecoder_int|kevent_mof|tdh_meta|tdh_info|tdh_layout|tdh_types|clr_gc|etw_manifest|tracelogging|known_templates|xml_lazy|xml_tree|lznt1|le_bytes|etl_reader)\.h"')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend/decode includes more than the decoder: $hits"

# src/, ui/ and model/ include none of backend/etl's and backend/decode's headers either
internal=$(cd backend && ls etl/*.h decode/*.h 2>/dev/null | sed 's|.*/||; s/\./\\./g' | paste -sd'|')
hits=$(grep -rnE "#include *\"($internal)\"" --include='*.[ch]' src ui model bench/bench_frame.c 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "a backend/etl or backend/decode header outside the backend: $hits"

# the model and the screen read decoded events (kevent.h), they never decode: no kdecoder.h
hits=$(grep -rnE '#include *"kdecoder\.h"' --include='*.[ch]' model ui 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "the decoder's interface in model/ or ui/: $hits"

# ui/ reads the model, never the symbol store: no symbols/ header, no sym_* call (names come
# through the model: profile_name, profile_place_text), and not struct profile's fields
hits=$(grep -rnE '#include *"symbols/|#include *"model/profile_fields\.h"|ETWTOP_MODEL_FIELDS|\bsym_[a-z_]+\(' \
        --include='*.[ch]' ui 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "ui/ reaches past the model: $hits"

# src/ reads the model through its functions too: struct profile is opaque there (its fields,
# model/profile_fields.h, are the model's and its unit tests')
hits=$(grep -rnE '#include *"model/profile_fields\.h"|ETWTOP_MODEL_FIELDS' --include='*.[ch]' src \
        2>/dev/null; grep -n 'etwtop_model_fields' src/CMakeLists.txt)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "src/ sees struct profile's fields: $hits"

# no product file over 1,000 lines (split along the seams)
hits=$(find backend src model symbols ui util unwind -name '*.[ch]' -exec wc -l {} + 2>/dev/null | awk '$2 != "total" && $1 > 1000')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "a file over 1,000 lines: $hits"
# the screen's loop stays small: its batch frames, replay moves and actions live beside it
n=$(wc -l <src/app.c)
[ "$n" -lt 700 ] && nr_pass=$((nr_pass + 1)) || fail "src/app.c has $n lines (under 700)"

# the screen's views live under ui/views/, one file each; the model has one entry
for f in ui/views/functions_view.c ui/views/branches_view.c ui/views/switches_view.c \
        ui/views/session_view.c model/profile.c; do
        [ -f "$f" ] && nr_pass=$((nr_pass + 1)) || fail "$f is missing"
done

# one allocation helper for the tree (util/xalloc.h): no folder defines its own
hits=$(grep -rnE '^(static )?(inline )?void \*x(malloc|calloc|realloc)\(' --include='*.[ch]' \
        backend symbols model ui src 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "an allocation helper outside util/: $hits"

# the session's folders (issue 23): the core includes nothing of the host or the API edge, the
# host nothing of the API edge; the API edge chooses the session operations once (no
# host_is_client() branch elsewhere); no defaults travel in thread-local state
hdrs() { (cd "backend/$1" && ls ./*.h | sed 's|^\./||; s/\./\\./g' | paste -sd'|'); }
api_h=$(hdrs api) host_h=$(hdrs host)
hits=$(grep -rnE "#include *\"($api_h|$host_h)\"" --include='*.[ch]' backend/core 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend/core includes the host or the API edge: $hits"
hits=$(grep -rnE "#include *\"($api_h)\"" --include='*.[ch]' backend/host 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend/host includes the API edge: $hits"
core_h=$(hdrs core)
hits=$(grep -rnE "#include *\"($api_h|$host_h|$core_h)\"" --include='*.[ch]' src ui model 2>/dev/null)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "a session folder's header outside the backend: $hits"
# and their targets link the same way: the core links nothing above it (not the backend's
# library, which holds the API edge, nor the host), the Linux platform nothing of the session
targets_of() { sed -n '/target_link_libraries/,/)/p' "backend/$1/CMakeLists.txt" | sed 's/#.*//'; }
hits=$(targets_of core | grep -oE '\betwtop_(backend|backend_internal|api|host)\b')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend/core links a target above it: $hits"
hits=$(targets_of linux | grep -oE '\betwtop_(backend|backend_internal|api|host|session_core)\b')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "backend/linux links a session target: $hits"
hits=$(grep -rn 'host_is_client()' --include='*.c' backend | grep -v '^backend/api/controller.c:\|^backend/host/host_client.c:')
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "a host_is_client() branch outside the ops choice: $hits"
hits=$(grep -rn '_Thread_local\|__thread' --include='*.[ch]' backend/core backend/host backend/api)
[ -z "$hits" ] && nr_pass=$((nr_pass + 1)) || fail "thread-local state in the session folders: $hits"

echo "$nr_pass passed, $nr_fail failed"
[ "$nr_fail" = 0 ]

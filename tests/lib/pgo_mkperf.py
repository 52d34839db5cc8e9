#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# pgo_mkperf.py: writes the perf.data that `perf record -b` would have written for a run of
# tests/fixtures/pgo_prog.c (no machine of ours has LBR): its executable mapping, then samples
# whose branch stacks are the last 16 branches the program takes, computed from its code
# (objdump) and the control flow of its loop. For tests/shell/pgo_export.sh. lbr-cs: `perf record -g
# -b`: each sample with its call stack too (the sampled function, loop's return into main when
# work is sampled, main's after its call of loop).
#
#   pgo_mkperf.py BINARY OUT.data lbr|lbr-cs|nolbr [ITERATIONS]
import struct
import subprocess
import sys

PID = 4242
SAMPLE_EVERY = 37  # branches between samples (a prime: the stacks vary)
DEPTH = 16


def text_mapping(path):
    """(addr, len, pgoff) of the executable PT_LOAD, page-aligned as the kernel maps it."""
    data = open(path, 'rb').read()
    assert data[:4] == b'\x7fELF' and data[4] == 2 and data[5] == 1, 'an ELF64 LE file'
    phoff, = struct.unpack_from('<Q', data, 32)
    phentsize, phnum = struct.unpack_from('<HH', data, 54)
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, _, p_memsz, _ = struct.unpack_from(
            '<IIQQQQQQ', data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1:
            addr = p_vaddr & ~0xfff
            end = (p_vaddr + p_memsz + 0xfff) & ~0xfff
            return addr, end - addr, p_offset & ~0xfff
    raise SystemExit('no executable segment in ' + path)


def code(path, function):
    """[(address, mnemonic, operand)] of function's instructions."""
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', path], check=True,
                         capture_output=True, text=True).stdout
    insns, inside = [], False
    for line in out.splitlines():
        if line.endswith('<%s>:' % function):
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            addr, _, rest = line.partition(':')
            parts = rest.split(None, 1)
            insns.append((int(addr, 16), parts[0], parts[1] if len(parts) > 1 else ''))
    assert insns, function + ' not found'
    return insns


def branches(path, iterations):
    """The taken branches of loop(iterations), in order: (from, to)."""
    work, loop = code(path, 'work'), code(path, 'loop')
    je = next(i for i in work if i[1] == 'je')
    je_target = int(je[2].split()[0], 16)
    rets = [i[0] for i in work if i[1].startswith('ret')]
    call = next(i for i in loop if i[1].startswith('call'))
    after_call = loop[loop.index(call) + 1][0]
    jne = next(i for i in loop if i[1] == 'jne')
    jne_target = int(jne[2].split()[0], 16)
    out = []
    for i in range(iterations, 0, -1):
        out.append((call[0], work[0][0]))
        if i & 3 == 0:
            out.append((je[0], je_target))
            out.append((rets[1], after_call))
        else:
            out.append((rets[0], after_call))
        if i - 1:
            out.append((jne[0], jne_target))
    return out


def stack_of(path, ip):
    """The call stack of a sample at ip, innermost first: ip, then the return addresses."""
    work, loop, main = code(path, 'work'), code(path, 'loop'), code(path, 'main')
    call = next(i for i in loop if i[1].startswith('call'))
    after_call = loop[loop.index(call) + 1][0]
    call_loop = next(i for i in main if i[1].startswith('call') and '<loop>' in i[2])
    after_loop = main[main.index(call_loop) + 1][0]
    in_work = work[0][0] <= ip <= work[-1][0]
    return [ip] + ([after_call] if in_work else []) + [after_loop]


def record(rtype, misc, body):
    size = 8 + len(body)
    assert size % 8 == 0
    return struct.pack('<IHH', rtype, misc, size) + body


def pad8(b):
    return b + b'\0' * (8 - len(b) % 8)


def main():
    binary, out_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    iterations = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
    is_lbr = mode in ('lbr', 'lbr-cs')
    is_cs = mode == 'lbr-cs'
    # IP | TID | TIME | PERIOD (| CALLCHAIN) (| BRANCH_STACK)
    sample_type = 0x1 | 0x2 | 0x4 | 0x100 | (0x20 if is_cs else 0) | (0x800 if is_lbr else 0)
    # exclude_kernel, exclude_hv, mmap, comm, sample_id_all, mmap2
    flags = (1 << 5) | (1 << 6) | (1 << 8) | (1 << 9) | (1 << 18) | (1 << 23)
    attr = struct.pack('<IIQQQQQIIQQQQIiQIHH', 0, 112, 0, 100003, sample_type, 0, flags, 0, 0,
                       0, 0, 9 if is_lbr else 0, 0, 0, 0, 0, 0, 0, 0)
    assert len(attr) == 112

    def trailer(t):  # sample_id_all: TID, TIME
        return struct.pack('<IIQ', PID, PID, t)

    t = 1000000000
    data = record(3, 0x2000, struct.pack('<II', PID, PID) + pad8(b'pgo_prog') + trailer(t))
    addr, length, pgoff = text_mapping(binary)
    name = pad8(binary.encode())
    data += record(10, 2, struct.pack('<IIQQQIIQQII', PID, PID, addr, length, pgoff, 0, 0, 0, 0,
                                      5, 2) + name + trailer(t))
    taken = branches(binary, iterations)
    loop = code(binary, 'loop')
    jne = next(i for i in loop if i[1] == 'jne')
    back_edge = (jne[0], int(jne[2].split()[0], 16))
    for n in range(SAMPLE_EVERY, len(taken), SAMPLE_EVERY):
        t += 1000
        last = taken[max(0, n - DEPTH):n][::-1]  # most recent first
        body = struct.pack('<QIIQQ', last[0][1], PID, PID, t, 100003)
        if is_cs:  # PERF_CONTEXT_USER, then the frames
            chain = [0xfffffffffffffe00] + stack_of(binary, last[0][1])
            body += struct.pack('<Q', len(chain)) + b''.join(struct.pack('<Q', a) for a in chain)
        if is_lbr:
            entries = [(frm, to, 2) for frm, to in last]  # predicted
            if not is_cs:
                # the loop's back edge mispredicted in one sample in three; every 16th sample's most recent
                # entry an interrupt's return into the program (from the kernel's half),
                # which perf2bolt leaves out
                entries = [(f, t_, 1 if (f, t_) == back_edge and (n // SAMPLE_EVERY) % 3 == 0
                            else fl) for f, t_, fl in entries]
                if n // SAMPLE_EVERY % 16 == 0:
                    entries = [(0xffffffff81a00ba0, last[0][1], 2)] + entries[:-1]
            body += struct.pack('<Q', len(entries))
            for frm, to, fl in entries:
                body += struct.pack('<QQQ', frm, to, fl)
        data += record(9, 2, body)
    t += 1000
    data += record(4, 0, struct.pack('<IIIIQ', PID, PID, PID, PID, t) + trailer(t))

    attrs_at = 104
    data_at = attrs_at + 128
    header = b'PERFILE2' + struct.pack('<QQ', 104, 128)
    header += struct.pack('<QQQQQQ', attrs_at, 128, data_at, len(data), 0, 0)
    header += b'\0' * 32  # no features
    assert len(header) == 104
    with open(out_path, 'wb') as f:
        f.write(header + attr + struct.pack('<QQ', 0, 0) + data)


main()

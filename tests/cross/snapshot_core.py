#!/usr/bin/env python3
"""Writes the core a Linux kernel would write of a framewalk snapshot, for
machines whose qemu-user writes no core (riscv64, sparc64).

  snapshot_core.py SNAPSHOT_DIR CORE

The snapshot (src/target/snapshot_target.hpp; stub_snapshots.py saves them
through qemu's gdb stub) has each thread's registers, its stack blocks,
code pages no file backs, and the maps. The core: ELFCLASS64 of the
machine's byte order, one NT_PRSTATUS per thread (elf_prstatus with the
kernel's elf_gregset_t at offset 112: riscv64's pc, x1..x31; sparc64's
%g0-%i7, tstate, tpc, tnpc, y), NT_PRPSINFO, NT_FILE naming every mapped file, a
PT_LOAD with contents for each stack and code block and one without
(p_filesz 0, as the kernel leaves file pages out) for each mapping.
What it does not hold that a kernel's would: NT_AUXV,
NT_SIGINFO, the floating-point notes, and anonymous memory beyond the
stacks.
"""
import os
import struct
import sys

EM = {"riscv64": 243, "sparc64": 43}
BIG = {"riscv64": False, "sparc64": True}
SIGNAL = 6  # pr_cursig: SIGABRT
PT_LOAD, PT_NOTE = 1, 4
NT_PRSTATUS, NT_PRPSINFO, NT_FILE = 1, 3, 0x46494C45
PAGE = 4096


def gregset(machine, regs):
    """The kernel's elf_gregset_t, as words, from DWARF-numbered registers."""
    if machine == "riscv64":  # asm/ptrace.h user_regs_struct: pc, then x1..x31
        return [regs.get(64, 0)] + [regs.get(i, 0) for i in range(1, 32)]
    # sparc64 (asm/elf_64.h): %g0-%o7, the window's %l0-%i7, tstate, tpc, tnpc, y.
    pc = regs.get(103, 0)
    return [0] + [regs.get(i, 0) for i in range(1, 32)] + [0, pc, pc + 4, 0]


def blocks(path):
    """(address, bytes) of a snapshot's .stack or code file."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at + 16 <= len(data):
        address, size = struct.unpack_from("<QQ", data, at)
        out.append((address, data[at + 16:at + 16 + size]))
        at += 16 + size
    return out


def note(e, kind, desc):
    name = b"CORE\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack(e + "III", len(name), len(desc), kind) + pad(name) + pad(desc)


def main():
    snapshot, core = sys.argv[1], sys.argv[2]
    with open(os.path.join(snapshot, "machine")) as f:
        machine = f.read().strip()
    if machine not in EM:
        sys.exit("snapshot_core.py: no core layout for %s" % machine)
    e = ">" if BIG[machine] else "<"
    notes = b""
    loads = []  # (vaddr, memsz, flags, contents)
    tids = sorted(int(n[:-5]) for n in os.listdir(snapshot) if n.endswith(".regs"))
    for tid in tids:
        regs = {}
        with open(os.path.join(snapshot, "%d.regs" % tid)) as f:
            for line in f:
                if line.strip():
                    number, value = line.split()
                    regs[int(number)] = int(value, 16)
        words = gregset(machine, regs)
        # elf_prstatus: si_signo/code/errno, pr_cursig (12), pr_sigpend,
        # pr_sighold, pr_pid (32), ppid, pgrp, sid, four timevals, pr_reg
        # (112), pr_fpvalid.
        prstatus = bytearray(112)
        struct.pack_into(e + "H", prstatus, 12, SIGNAL if tid == tids[0] else 0)
        struct.pack_into(e + "i", prstatus, 32, tid)
        prstatus += struct.pack(e + "%dQ" % len(words), *words) + struct.pack(e + "ii", 0, 0)
        notes += note(e, NT_PRSTATUS, bytes(prstatus))
        loads += [(a, len(b), 6, b) for a, b in blocks(os.path.join(snapshot, "%d.stack" % tid))]
    code = blocks(os.path.join(snapshot, "code"))
    files = []
    with open(os.path.join(snapshot, "maps")) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            perms, offset, path = parts[1], int(parts[2], 16), parts[5].strip()
            flags = (4 if "r" in perms else 0) | (2 if "w" in perms else 0) | (1 if "x" in perms else 0)
            files.append((start, end, offset, path))
            loads.append((start, end - start, flags, b""))
    # Code pages no file backs (qemu's riscv64 signal trampoline): the
    # files' own come from the files.
    loads += [(a, len(b), 5, b) for a, b in code if not any(s <= a < t for s, t, _, _ in files)]
    loads.sort(key=lambda load: load[0])  # PT_LOADs in address order, as the ELF spec wants them
    # elf_prpsinfo: state, sname, zomb, nice, flag, uid, gid, pr_pid (24),
    # ppid, pgrp, sid, pr_fname[16] (40), pr_psargs[80]. eu-stack takes the
    # process from it.
    name = os.path.basename(files[0][3]).encode()[:15] if files else b""
    prpsinfo = bytearray(136)
    struct.pack_into(e + "i", prpsinfo, 24, tids[0])
    prpsinfo[40:40 + len(name)] = name
    prpsinfo[56:56 + len(name)] = name
    notes += note(e, NT_PRPSINFO, bytes(prpsinfo))
    desc = struct.pack(e + "QQ", len(files), PAGE)
    desc += b"".join(struct.pack(e + "QQQ", s, t, o // PAGE) for s, t, o, _ in files)
    desc += b"".join(p.encode() + b"\0" for _, _, _, p in files)
    notes += note(e, NT_FILE, desc)

    ehsize, phentsize = 64, 56
    phnum = 1 + len(loads)
    at = ehsize + phentsize * phnum
    phdrs = struct.pack(e + "IIQQQQQQ", PT_NOTE, 0, at, 0, 0, len(notes), 0, 4)
    at += len(notes)
    data = b""
    for vaddr, memsz, flags, contents in loads:
        phdrs += struct.pack(e + "IIQQQQQQ", PT_LOAD, flags, at + len(data), vaddr, 0, len(contents), memsz, PAGE)
        data += contents
    ident = b"\x7fELF" + bytes([2, 2 if BIG[machine] else 1, 1, 0]) + b"\0" * 8
    header = ident + struct.pack(e + "HHIQQQIHHHHHH", 4, EM[machine], 1, 0, ehsize, 0, 0, ehsize, phentsize, phnum,
                                 0, 0, 0)
    with open(core, "wb") as f:
        f.write(header + phdrs + notes + data)


if __name__ == "__main__":
    main()

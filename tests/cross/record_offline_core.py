#!/usr/bin/env python3
"""Records the offline cores of tests/data/cores/ (tests/data/cores/README.md).

For each recording: builds fixtures/offline.c statically with the machine's
cross compiler, runs it under qemu-user until it dies (AArch64 with
-cpu max,sve=off, so that gdb can read its signal frames), takes every
thread's frames from gdb-multiarch as the truth, checks that framewalk gives
the same on the recorded files, and writes into tests/data/cores/NAME/:

  offline.xz    the program, debug info stripped (symbols kept), xz-compressed;
                for the ARM recordings also trimmed: every byte of its
                sections zeroed but the functions the stacks run through
                (whole, and 128 bytes on past each PC), its unwind tables
                and notes, and of its symbols only those functions' (the
                file keeps its layout, so the zeros cost next to nothing)
  core.xz       the core with every all-zero page of its segments left out
                (kept as memory the core does not hold), xz-compressed
  expected.txt  gdb's frames: one line per frame, "TID PC FUNCTION"

tests/target/offline_core_test.cpp replays them without qemu, gdb or a
sysroot. Run again only when the fixture or the recording changes (by name:
all of them without one):

  tests/cross/record_offline_core.py --framewalk build/framewalk [NAME ...]
"""
import argparse
import lzma
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_cores  # noqa: E402

CORES = os.path.join(HERE, "..", "data", "cores")
PAGE = 4096

# name: (machine, compiler flags, whether the program is trimmed)
RECORDINGS = {
    "aarch64-offline": ("aarch64", "-O2 -static", False),
    # Thumb-2 without unwind tables for the program's own code (prologue
    # analysis), and ARM state with them (.ARM.exidx).
    "arm-offline": ("arm", "-O2 -static", True),
    "arm-offline-arm": ("arm", "-O2 -static -marm -funwind-tables", True),
}


class Elf:
    """The few fields of a little-endian ELF32 or ELF64 file the trimming needs."""

    def __init__(self, data):
        self.data = data
        self.is64 = data[4] == 2
        if self.is64:
            self.phoff, self.shoff = struct.unpack_from("<QQ", data, 32)
            self.phentsize, self.phnum, self.shentsize, self.shnum, self.shstrndx = struct.unpack_from(
                "<HHHHH", data, 54)
            self.ehsize = 64
        else:
            self.phoff, self.shoff = struct.unpack_from("<II", data, 28)
            self.phentsize, self.phnum, self.shentsize, self.shnum, self.shstrndx = struct.unpack_from(
                "<HHHHH", data, 42)
            self.ehsize = 52

    def phdrs(self):
        """(type, flags, offset, vaddr, paddr, filesz, memsz, align) of each program header."""
        out = []
        for i in range(self.phnum):
            at = self.phoff + i * self.phentsize
            if self.is64:
                out.append(list(struct.unpack_from("<IIQQQQQQ", self.data, at)))
            else:
                t, off, va, pa, fsz, msz, fl, al = struct.unpack_from("<IIIIIIII", self.data, at)
                out.append([t, fl, off, va, pa, fsz, msz, al])
        return out

    def pack_phdr(self, p):
        t, fl, off, va, pa, fsz, msz, al = p
        if self.is64:
            return struct.pack("<IIQQQQQQ", t, fl, off, va, pa, fsz, msz, al)
        return struct.pack("<IIIIIIII", t, off, va, pa, fsz, msz, fl, al)

    def sections(self):
        """(name, type, flags, addr, offset, size, link) of each section."""
        raw = []
        for i in range(self.shnum):
            at = self.shoff + i * self.shentsize
            if self.is64:
                name, typ, flags, addr, off, size, link = struct.unpack_from("<IIQQQQI", self.data, at)
            else:
                name, typ, flags, addr, off, size, link = struct.unpack_from("<IIIIIII", self.data, at)
            raw.append([name, typ, flags, addr, off, size, link])
        strtab = raw[self.shstrndx]
        for s in raw:
            start = strtab[4] + s[0]
            s[0] = self.data[start:self.data.index(b"\0", start)].decode()
        return raw

    def symbols(self, symtab):
        """(entry offset, name offset, value, size, type) of each symbol of `symtab`."""
        entsize = 24 if self.is64 else 16
        out = []
        for at in range(symtab[4], symtab[4] + symtab[5], entsize):
            if self.is64:
                name, info, _, _, value, size = struct.unpack_from("<IBBHQQ", self.data, at)
            else:
                name, value, size, info, _, _ = struct.unpack_from("<IIIBBH", self.data, at)
            out.append((at, name, value, size, info & 0xf))
        return out


def trim_core(data):
    """A core without its all-zero pages."""
    elf = Elf(data)
    phdrs = elf.phdrs()
    notes = [p for p in phdrs if p[0] == 4]
    out_phdrs = []
    for p in phdrs:
        if p[0] != 1:
            continue
        ptype, flags, offset, vaddr, paddr, filesz, memsz, align = p
        if filesz == 0:
            out_phdrs.append([ptype, flags, 0, vaddr, paddr, 0, memsz, align])
            continue
        # Runs of pages, zero or not.
        page = 0
        pages = (filesz + PAGE - 1) // PAGE
        while page < pages:
            chunk = data[offset + page * PAGE: offset + min((page + 1) * PAGE, filesz)]
            zero = chunk.count(0) == len(chunk)
            end = page + 1
            while end < pages:
                c = data[offset + end * PAGE: offset + min((end + 1) * PAGE, filesz)]
                if (c.count(0) == len(c)) != zero:
                    break
                end += 1
            size = min(end * PAGE, filesz) - page * PAGE
            out_phdrs.append([ptype, flags, -1 if not zero else 0, vaddr + page * PAGE, 0,
                              0 if zero else size, size, align, offset + page * PAGE])
            page = end
        if memsz > filesz:
            out_phdrs.append([ptype, flags, 0, vaddr + filesz, 0, 0, memsz - filesz, align])
    all_phdrs = notes + out_phdrs
    header = bytearray(data[:elf.ehsize])
    if elf.is64:
        struct.pack_into("<QQ", header, 32, elf.ehsize, 0)  # the program headers next; no section headers
        struct.pack_into("<H", header, 56, len(all_phdrs))
        struct.pack_into("<HH", header, 60, 0, 0)
    else:
        struct.pack_into("<II", header, 28, elf.ehsize, 0)
        struct.pack_into("<H", header, 44, len(all_phdrs))
        struct.pack_into("<HH", header, 48, 0, 0)
    body = bytearray()
    cursor = elf.ehsize + len(all_phdrs) * elf.phentsize
    table = bytearray()
    for p in all_phdrs:
        if p[0] == 4:
            payload = data[p[2]:p[2] + p[5]]
        elif p[5]:
            payload = data[p[8]:p[8] + p[5]]
        else:
            payload = b""
        file_offset = cursor + len(body) if payload else 0
        body += payload
        table += elf.pack_phdr([p[0], p[1], file_offset, p[3], p[4] if p[0] == 4 else 0, p[5], p[6], p[7]])
    return bytes(header) + bytes(table) + bytes(body)


# Sections a walk reads whole: unwind tables and notes (the build-id).
KEPT_SECTIONS = (".ARM.exidx", ".ARM.extab", ".eh_frame", ".eh_frame_hdr", ".gnu_debugdata")


def trim_program(data, pcs):
    """`data` (a static program) with every byte of its allocated sections
    zeroed but the functions holding `pcs`, and of its symbols only theirs."""
    elf = Elf(data)
    out = bytearray(data)
    sections = elf.sections()
    symtab = next(s for s in sections if s[0] == ".symtab")
    strtab = sections[symtab[6]]
    symbols = elf.symbols(symtab)
    functions = sorted((value & ~1, size, entry) for entry, _, value, size, typ in symbols if typ == 2 and value)
    keep = []          # address ranges
    kept_entries = set()
    for pc in pcs:
        below = [f for f in functions if f[0] <= pc]
        if not below:
            continue
        start = max(f[0] for f in below)
        for f in below:
            if f[0] == start:  # every alias of the function
                kept_entries.add(f[2])
        size = max(f[1] for f in below if f[0] == start)
        keep.append((start - 64, max(start + size, pc + 128)))
    for name, typ, flags, addr, offset, size, _ in sections:
        if not (flags & 2) or typ == 8 or typ == 7 or name in KEPT_SECTIONS or typ == 0x70000001:
            continue  # not allocated, NOBITS, a note, an unwind table
        out[offset:offset + size] = bytes(size)
        for lo, hi in keep:
            lo, hi = max(lo, addr), min(hi, addr + size)
            if lo < hi:
                out[offset + lo - addr:offset + hi - addr] = data[offset + lo - addr:offset + hi - addr]
    # The symbols: the kept functions' entries and names, the rest zeros.
    entsize = 24 if elf.is64 else 16
    names = set()
    for entry, name, _, _, _ in symbols:
        if entry in kept_entries:
            names.add(name)
        elif entry != symtab[4]:
            out[entry:entry + entsize] = bytes(entsize)
    kept_names = bytearray(strtab[5])
    for name in names:
        end = data.index(b"\0", strtab[4] + name)
        kept_names[name:end - strtab[4]] = data[strtab[4] + name:end]
    out[strtab[4]:strtab[4] + strtab[5]] = kept_names
    return bytes(out)


def record(name, framewalk, work):
    machine_name, flags, trim = RECORDINGS[name]
    machine = compare_cores.MACHINES[machine_name]
    out_dir = os.path.join(CORES, name)
    fx = compare_cores.Fixture("offline", ["offline.c"], flags, "gdb")
    exe = compare_cores.build(machine, fx, work)
    strip = machine["cc"].replace("-gcc", "-strip")
    subprocess.run([strip, "--strip-debug", exe], check=True)
    core, run_exe = compare_cores.make_core(machine, fx, exe, machine["gdb_cpu"])
    gdb = compare_cores.gdb_threads(machine, run_exe, core)
    with open(core, "rb") as f:
        trimmed = trim_core(f.read())
    trimmed_path = os.path.join(work, "trimmed.core")
    with open(trimmed_path, "wb") as f:
        f.write(trimmed)
    with open(exe, "rb") as f:
        program = f.read()
    if trim:
        pcs = [int(f["pc"], 16) for t in gdb for f in compare_cores.physical(t["frames"])]
        program = trim_program(program, pcs)
    program_path = os.path.join(work, "trimmed.offline")
    with open(program_path, "wb") as f:
        f.write(program)
    r = subprocess.run([framewalk, "stack", "--core", trimmed_path, "--exe", program_path, "--format=json"],
                       capture_output=True, text=True)
    fw = compare_cores.json.loads(r.stdout)["threads"]
    problems = compare_cores.compare_with_gdb(gdb, fw)
    if problems:
        print("%s: framewalk and gdb differ on the recorded files:\n  %s" % (name, "\n  ".join(problems)))
        return 1
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "offline.xz"), "wb") as o:
        o.write(lzma.compress(program, preset=9))
    with open(os.path.join(out_dir, "core.xz"), "wb") as o:
        o.write(lzma.compress(trimmed, preset=9))
    with open(os.path.join(out_dir, "expected.txt"), "w") as o:
        o.write("# gdb-multiarch's frames of core.xz: TID PC FUNCTION (tests/cross/record_offline_core.py)\n")
        for t in gdb:
            for f in compare_cores.physical(t["frames"]):
                o.write("%d %s %s\n" % (t["tid"], f["pc"], f["function"] or "?"))
    sizes = {n: os.path.getsize(os.path.join(out_dir, n)) for n in ("offline.xz", "core.xz", "expected.txt")}
    print("%s: recorded %d threads, %d frames; %s" % (name, len(gdb), sum(len(t["frames"]) for t in gdb), sizes))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("names", nargs="*", help="recordings: %s (default: all)" % ", ".join(sorted(RECORDINGS)))
    args = ap.parse_args()
    unknown = [n for n in args.names if n not in RECORDINGS]
    if unknown:
        ap.error("no recording %s" % ", ".join(unknown))
    failures = 0
    for name in args.names or sorted(RECORDINGS):
        work = tempfile.mkdtemp()
        try:
            failures += record(name, os.path.abspath(args.framewalk), work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

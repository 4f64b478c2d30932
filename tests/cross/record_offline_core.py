#!/usr/bin/env python3
"""Records the offline AArch64 core of tests/data/cores/aarch64-offline/.

Builds fixtures/offline.c statically with aarch64-linux-gnu-gcc, runs it under
qemu-aarch64 (-cpu max,sve=off, so that gdb can read its signal frames) until
it dies, takes every thread's frames from gdb-multiarch as the truth, checks
that framewalk gives the same, and writes:

  offline.xz    the program, debug info stripped (symbols kept), xz-compressed
  core.xz       the core with every all-zero page of its segments left out
                (kept as memory the core does not hold), xz-compressed
  expected.txt  gdb's frames: one line per frame, "TID PC FUNCTION"

tests/target/offline_core_test.cpp replays them without qemu, gdb or a
sysroot. Run again only when the fixture or the recording changes:

  tests/cross/record_offline_core.py --framewalk build/framewalk
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

OUT = os.path.join(HERE, "..", "data", "cores", "aarch64-offline")
PAGE = 4096


def trim_core(data):
    """An ELF64 little-endian core without its all-zero pages."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    phdrs = [list(struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)) for i in range(phnum)]
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
    header = bytearray(data[:64])
    struct.pack_into("<Q", header, 32, 64)
    struct.pack_into("<H", header, 56, len(all_phdrs))
    struct.pack_into("<Q", header, 40, 0)  # no section headers
    struct.pack_into("<HH", header, 60, 0, 0)
    body = bytearray()
    cursor = 64 + len(all_phdrs) * 56
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
        table += struct.pack("<IIQQQQQQ", p[0], p[1], file_offset, p[3], p[4] if p[0] == 4 else 0, p[5],
                             p[6], p[7])
    return bytes(header) + bytes(table) + bytes(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framewalk", required=True)
    args = ap.parse_args()
    machine = compare_cores.MACHINES["aarch64"]
    work = tempfile.mkdtemp()
    try:
        fx = compare_cores.Fixture("offline", ["offline.c"], "-O2 -static", "gdb")
        exe = compare_cores.build(machine, fx, work)
        subprocess.run(["aarch64-linux-gnu-strip", "--strip-debug", exe], check=True)
        core, run_exe = compare_cores.make_core(machine, fx, exe, machine["gdb_cpu"])
        gdb = compare_cores.gdb_threads(machine, run_exe, core)
        with open(core, "rb") as f:
            trimmed = trim_core(f.read())
        trimmed_path = os.path.join(work, "trimmed.core")
        with open(trimmed_path, "wb") as f:
            f.write(trimmed)
        r = subprocess.run([args.framewalk, "stack", "--core", trimmed_path, "--exe", run_exe, "--format=json"],
                           capture_output=True, text=True)
        fw = compare_cores.json.loads(r.stdout)["threads"]
        problems = compare_cores.compare_with_gdb(gdb, fw)
        if problems:
            print("framewalk and gdb differ on the trimmed core:\n  " + "\n  ".join(problems))
            return 1
        os.makedirs(OUT, exist_ok=True)
        with open(exe, "rb") as f, open(os.path.join(OUT, "offline.xz"), "wb") as o:
            o.write(lzma.compress(f.read(), preset=9))
        with open(os.path.join(OUT, "core.xz"), "wb") as o:
            o.write(lzma.compress(trimmed, preset=9))
        with open(os.path.join(OUT, "expected.txt"), "w") as o:
            o.write("# gdb-multiarch's frames of core.xz: TID PC FUNCTION (tests/cross/record_offline_core.py)\n")
            for t in gdb:
                for f in compare_cores.physical(t["frames"]):
                    o.write("%d %s %s\n" % (t["tid"], f["pc"], f["function"] or "?"))
        sizes = {n: os.path.getsize(os.path.join(OUT, n)) for n in ("offline.xz", "core.xz", "expected.txt")}
        print("recorded %d threads, %d frames; %s" % (len(gdb), sum(len(t["frames"]) for t in gdb), sizes))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

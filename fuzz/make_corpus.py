#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/<target>/ from files of this
machine (libc, libstdc++, /bin/ls), from tiny objects compiled here with
clang (and gcc, for DRAP) for several targets, and from the SFrame sections
of tests/data/sframe plus a few encoded here. Needs clang, gcc,
objcopy and xz. The output is small (well under 2 MB) and deterministic for
a given machine; run it only when the seeds should change, then commit the
result. `make_corpus.py TARGET...` rewrites only those targets' seeds.

Inputs found by fuzzing can join the seeds: merge a run's corpus into a new
directory (build-fuzz/fuzz/<target> -merge=1 NEW fuzz/corpus-work/<target>),
then copy the smallest files of NEW into fuzz/corpus/<target>/ within a size
budget: everything in fuzz/corpus/ is replayed by the unit tests.
"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
SYSTEM_FILES = [
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/bin/ls",
]


# ---- ELF ------------------------------------------------------------------

class Elf:
    def __init__(self, data):
        self.data = data
        assert data[:4] == b"\x7fELF"
        self.is64 = data[4] == 2
        self.e = "<" if data[5] == 1 else ">"
        if self.is64:
            shoff, = struct.unpack_from(self.e + "Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(self.e + "HHH", data, 0x3a)
        else:
            shoff, = struct.unpack_from(self.e + "I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(self.e + "HHH", data, 0x2e)
        self.sections = []
        for i in range(shnum):
            off = shoff + i * shentsize
            if self.is64:
                name, typ, flags, addr, offset, size = struct.unpack_from(self.e + "IIQQQQ", data, off)
            else:
                name, typ, flags, addr, offset, size = struct.unpack_from(self.e + "IIIIII", data, off)
            self.sections.append([name, typ, flags, addr, offset, size])
        strtab = self.sections[shstrndx]
        for s in self.sections:
            start = strtab[4] + s[0]
            s[0] = data[start:data.index(b"\0", start)].decode()

    def section(self, name):
        for s in self.sections:
            if s[0] == name:
                return s
        return None

    def section_bytes(self, name):
        s = self.section(name)
        if not s or s[1] == 8:
            return None, None
        return self.data[s[4]:s[4] + s[5]], s


def cfi_records(data, endian):
    """(offset, end, is_cie, augmentation) of each record, in order."""
    out = []
    off = 0
    while off + 4 <= len(data):
        length, = struct.unpack_from(endian + "I", data, off)
        if length == 0:
            out.append((off, off + 4, None, None))
            off += 4
            continue
        if length == 0xffffffff or off + 4 + length > len(data):
            break
        cid, = struct.unpack_from(endian + "I", data, off + 4)
        end = off + 4 + length
        is_cie = cid == 0 or cid == 0xffffffff
        aug = None
        if is_cie:
            aug = data[off + 9:data.index(b"\0", off + 9)]
        out.append((off, end, is_cie, aug))
        off = end
    return out


def eh_frame_slices(data, endian, max_bytes, max_slices):
    """Runs of whole records that start at a CIE, ending in a terminator. FDE
    CIE pointers are relative, so they stay valid within the run."""
    recs = cfi_records(data, endian)
    slices = []
    seen_aug = {}
    for i, (off, end, is_cie, aug) in enumerate(recs):
        if not is_cie:
            continue
        # Prefer CIEs of augmentations not seen yet, then a few more.
        seen_aug[aug] = seen_aug.get(aug, 0) + 1
        if seen_aug[aug] > 2:
            continue
        stop = end
        for (o2, e2, c2, _) in recs[i + 1:]:
            if c2 is None or e2 - off > max_bytes:
                break
            stop = e2
        slices.append(data[off:stop] + b"\0\0\0\0")
        if len(slices) >= max_slices:
            break
    return slices


# ---- tiny objects ---------------------------------------------------------

C_SOURCE = r"""
struct frame { long a[8]; };
extern void sink(void *);
__attribute__((noinline)) long leaf(long x) { return x * 3 + 1; }
__attribute__((noinline)) long with_frame(long n) {
  struct frame f;
  for (int i = 0; i < 8; ++i) f.a[i] = leaf(n + i);
  sink(&f);
  return f.a[n & 7];
}
long uses_alloca(int n) {
  char *p = __builtin_alloca(n);
  sink(p);
  return p[0];
}
void sink(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }
"""

CXX_SOURCE = r"""
#include <stdexcept>
int thrower(int x) { if (x > 3) throw std::runtime_error("x"); return x; }
int catcher(int x) {
  try { return thrower(x); } catch (const std::exception&) { return -1; }
}
struct Guard { ~Guard(); };
Guard::~Guard() {}
int cleanup(int x) { Guard g; return thrower(x) + 1; }
"""

START_SOURCE = r"""
static long counter;
__attribute__((noinline)) static long step(long x) { counter += x; return counter; }
void _start(void) {
  long v = 0;
  for (int i = 0; i < 10; ++i) v += step(i);
  __asm__ volatile("mov $60, %%eax\n\tmov %0, %%rdi\n\tsyscall" : : "r"(v) : "rax", "rdi");
  for (;;) {}
}
"""


# gcc realigns the stack through a DRAP register (CFA = *(rbp - 8)) for an
# over-aligned local next to a variable-length array.
DRAP_SOURCE = r"""
extern void sink(volatile char *p, int n);
int drap(int n) {
  char big[256] __attribute__((aligned(64)));
  char vla[n];
  sink(big, sizeof big);
  sink(vla, n);
  return big[8] + vla[0];
}
"""


def run(cmd, **kw):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)


def try_run(cmd, cwd=None):
    try:
        run(cmd, stderr=subprocess.DEVNULL, cwd=cwd)
        return True
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False


def build_objects(tmp):
    """Small ELF files of several classes, byte orders and compressions."""
    c = os.path.join(tmp, "t.c")
    cxx = os.path.join(tmp, "t.cpp")
    start = os.path.join(tmp, "start.c")
    open(c, "w").write(C_SOURCE)
    open(cxx, "w").write(CXX_SOURCE)
    open(start, "w").write(START_SOURCE)
    out = {}

    # Relative names, run in `tmp`: no temporary path ends up in the files.
    def obj(name, *args, src=c, compiler="clang"):
        path = os.path.join(tmp, name)
        if try_run([compiler, "-c", "-O1", "-fdebug-prefix-map=%s=." % tmp, "-o", name,
                    os.path.basename(src)] + list(args), cwd=tmp):
            out[name] = path
        return path

    obj("x86_64.o")
    obj("x86_64-eh.o", "-O2", src=cxx, compiler="clang++")
    obj("x86_64-debug-frame.o", "-g1", "-fno-asynchronous-unwind-tables", "-fno-exceptions")
    obj("x86_64-gz.o", "-g1", "-gz=zlib")
    base = os.path.join(tmp, "x86_64-debug-frame.o")
    if "x86_64-debug-frame.o" in out:
        for kind in ("zstd", "zlib-gnu"):
            dst = os.path.join(tmp, "x86_64-%s.o" % kind)
            if try_run(["objcopy", "--compress-debug-sections=" + kind, base, dst]):
                out[os.path.basename(dst)] = dst
    obj("i386.o", "-m32")
    obj("i386-debug-frame.o", "-m32", "-g1", "-fno-asynchronous-unwind-tables")
    obj("ppc64be.o", "--target=powerpc64-linux-gnu")
    obj("mips-debug-frame.o", "--target=mips-linux-gnu", "-g1", "-fno-asynchronous-unwind-tables")
    obj("aarch64.o", "--target=aarch64-linux-gnu", "-mbranch-protection=pac-ret")
    drap = os.path.join(tmp, "drap.c")
    open(drap, "w").write(DRAP_SOURCE)
    obj("x86_64-drap.o", "-O2", src=drap, compiler="gcc")

    exe = os.path.join(tmp, "tiny")
    if try_run(["clang", "-O1", "-nostdlib", "-static", "-fno-pie", "-no-pie", "-Wl,--build-id",
                "-Wl,--eh-frame-hdr", "-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=0x1000",
                "-o", "tiny", "start.c"], cwd=tmp):
        out["tiny"] = exe
        # MiniDebugInfo: the symbols of the object in an xz stream, as
        # .gnu_debugdata; and a .gnu_debuglink naming the object.
        mini_src = os.path.join(tmp, "x86_64.o")
        if "x86_64.o" in out:
            xz = os.path.join(tmp, "mini.xz")
            with open(xz, "wb") as f:
                subprocess.run(["xz", "-c", "--check=crc32", mini_src], check=True, stdout=f)
            mini = os.path.join(tmp, "tiny-debugdata")
            if try_run(["objcopy", "--add-section", ".gnu_debugdata=" + xz,
                        "--add-gnu-debuglink=" + mini_src, exe, mini]):
                out["tiny-debugdata"] = mini
    return out


# ---- expressions ----------------------------------------------------------

def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


EXPRESSIONS = [
    # The PLT CFA rule of every x86-64 program.
    bytes([0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22]),
    # glibc's signal frame rules: [rsp + 160], [rsp + 40] ...
    bytes([0x77]) + sleb(160) + bytes([0x06]),
    bytes([0x77]) + sleb(40),
    bytes([0x92]) + uleb(16) + sleb(-8) + bytes([0x06]),
    bytes([0x08, 0x10, 0x0b]) + struct.pack("<h", -2) + bytes([0x1e, 0x31, 0x22]),
    bytes([0x0c]) + struct.pack("<I", 0xdeadbeef) + bytes([0x0d]) + struct.pack("<i", -5)
    + bytes([0x1b, 0x0e]) + struct.pack("<Q", 7) + bytes([0x1d]),
    bytes([0x10]) + uleb(300) + bytes([0x11]) + sleb(-300) + bytes([0x1c, 0x19, 0x1f, 0x20]),
    bytes([0x32, 0x33, 0x24, 0x3f, 0x25, 0x08, 0x80, 0x26, 0x21, 0x27, 0x1a]),
    bytes([0x31, 0x32, 0x29, 0x31, 0x32, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e]),
    bytes([0x31, 0x32, 0x33, 0x14, 0x15, 0x01, 0x16, 0x17, 0x12, 0x13, 0x96]),
    bytes([0x03]) + struct.pack("<Q", 0x401000) + bytes([0x94, 0x04, 0x23]) + uleb(16),
    # A counting loop: lit0; L: lit1; plus; dup; const1u 50; lt; bra L
    bytes([0x30, 0x31, 0x22, 0x12, 0x08, 50, 0x2d, 0x28]) + struct.pack("<h", -8),
    # skip over a bad operator
    bytes([0x2f]) + struct.pack("<h", 1) + bytes([0xff, 0x34]),
    # Operators CFI does not allow.
    bytes([0x50]), bytes([0x93, 0x08]), bytes([0x31, 0x9f]), bytes([0x9c]),
    bytes([0x31, 0x30, 0x1b]),  # divide by zero
    bytes([0x13]),              # underflow
    bytes([0x31] * 70),         # overflow
]


def expression_seeds():
    seeds = []
    for i, expr in enumerate(EXPRESSIONS):
        flags = [0x03, 0x0b] if i % 2 == 0 else [0x03, 0x62]
        if i % 5 == 0:
            flags.append(0x02)  # 4-byte addresses
        for f in flags:
            seeds.append(bytes([f]) + struct.pack("<Q", 0x7ffc00001000) + expr)
    return seeds


# ---- .eh_frame_hdr ----------------------------------------------------------

def eh_frame_hdr_seeds(elf):
    data, s = elf.section_bytes(".eh_frame_hdr")
    if not data:
        return []
    seeds = []
    e = elf.e
    count, = struct.unpack_from(e + "I", data, 8)
    for n in (1, 4, 16, 64):
        n = min(n, count)
        hdr = bytearray(data[:12 + 8 * n])
        struct.pack_into(e + "I", hdr, 8, n)
        config = 0x04 if s[3] == 0x1ef7c else (0x08 if s[3] == 0x1a1b2c else 0x00)
        seeds.append(bytes([config]) + bytes(hdr))
    # An unsorted table.
    if count >= 3:
        hdr = bytearray(data[:12 + 8 * 3])
        struct.pack_into(e + "I", hdr, 8, 3)
        hdr[12:20], hdr[20:28] = hdr[20:28], hdr[12:20]
        seeds.append(bytes([0x00]) + bytes(hdr))
    return seeds


# ---- SFrame -------------------------------------------------------------------

SFRAME_TESTDATA = os.path.join(HERE, "..", "tests", "data", "sframe")
# fuzz_sframe_roundtrip's byte 0 picks the section address (bits 0-1): 0x402048.
ROUNDTRIP_ADDRESS_OPTION = 2


def sframe_section(version, big, abi, fixed_fp, fixed_ra, fdes, sorted_flag=True):
    """Encodes an SFrame section. fdes: (start offset from the section,
    size, info, info2, rep_size, [(start, info, [words], word_size)])."""
    e = ">" if big else "<"
    fmt = {1: "B", 2: "H", 4: "I"}
    fde_size = {1: 17, 2: 20, 3: 16}[version]
    pcrel = version >= 2
    fres = bytearray()
    entries = bytearray()
    total = 0
    for i, (start, size, info, info2, rep, rows) in enumerate(fdes):
        fre_off = len(fres)
        if version == 3:
            fres += struct.pack(e + "HBBB", len(rows), info, info2, rep)
        addr_size = 1 << (info & 0xf)
        for (fstart, finfo, words, wsize) in rows:
            fres += struct.pack(e + fmt[addr_size], fstart) + bytes([finfo])
            for w in words:
                fres += struct.pack(e + fmt[wsize], w & ((1 << (8 * wsize)) - 1))
        total += len(rows)
        field = 28 + i * fde_size
        raw = start - field if pcrel else start
        if version == 3:
            entries += struct.pack(e + "qII", raw, size, fre_off)
        else:
            entries += struct.pack(e + "iIIIB", raw, size, fre_off, len(rows), info)
            if version == 2:
                entries += struct.pack(e + "BH", rep, 0)
    flags = (1 if sorted_flag else 0) | (4 if pcrel else 0)
    header = struct.pack(e + "HBBBbbBIIIII", 0xdee2, version, flags, abi, fixed_fp, fixed_ra, 0,
                         len(fdes), total, len(fres), 0, len(entries))
    return header + bytes(entries) + bytes(fres)


def fre_info(words, size_code=0, base_sp=True, mangled=False):
    return (1 if base_sp else 0) | (len(words) << 1) | (size_code << 5) | (0x80 if mangled else 0)


def encoded_sframe_seeds():
    """What the binutils test vectors lack: big-endian sections, s390x (V2
    registers in offsets, RA padding), AArch64 FLEX with PAC, and the
    reader-accepted shapes the writer refuses."""
    seeds = []
    # s390x V2: CFA r15+160 (stored 0), RA in r14 ((14 << 1) | 1), FP in r11;
    # then RA padding and FP saved at CFA-72; then CFA r11+160+16.
    s390x = [(0x1000, 0x40, 0, 0, 0, [
        (0, fre_info([0]), [0], 1),
        (4, fre_info([0, 29, 23]), [0, 29, 23], 1),
        (8, fre_info([2, 0, -72]), [2, 0, -72], 1),
        (12, fre_info([2, -48], base_sp=False), [2, -48], 1)])]
    seeds.append(sframe_section(2, True, 4, 0, 0, s390x))
    # AArch64 big-endian V3: a DEFAULT FDE with PAC (key B, mangled RA) and a
    # FLEX FDE with the CFA from x29 and the FP held in x9.
    ctrl = lambda reg, deref, reg_p=True: (reg << 3) | (2 if deref else 0) | (1 if reg_p else 0)
    aarch64 = [(0x2000, 0x20, 0x20, 0, 0, [
                   (0, fre_info([0]), [0], 1),
                   (4, fre_info([16, -8, -16], mangled=True), [16, -8, -16], 1)]),
               (0x2040, 0x20, 0, 1, 0, [
                   (0, fre_info([ctrl(31, False), 0]), [ctrl(31, False), 0], 2),
                   (8, fre_info([ctrl(29, False), 16, ctrl(0, True, False), -8, ctrl(9, False), 0]),
                    [ctrl(29, False), 16, ctrl(0, True, False), -8, ctrl(9, False), 0], 2)])]
    seeds.append(sframe_section(3, True, 1, 0, 0, aarch64))
    # AMD64 V3 FLEX: FP = CFA - 16 without a dereference, which only a control
    # word with its unused bit 2 set says (the writer refuses it).
    seeds.append(sframe_section(3, False, 3, 0, -8, [(0x3000, 0x10, 0, 1, 0, [
        (0, fre_info([ctrl(7, False), 16, 0, 4, -16]), [ctrl(7, False), 16, 0, 4, -16], 1)])]))
    # V1 PCMASK FDE with an FRE at 16 (never matches; the writer refuses it).
    seeds.append(sframe_section(1, False, 3, 0, -8, [(0x4000, 0x40, 0x10, 0, 0, [
        (0, fre_info([8]), [8], 1), (16, fre_info([16]), [16], 1)])]))
    # Unsorted V3 with two functions at one address.
    same = (0x5000, 0x10, 0, 0, 0, [(0, fre_info([8]), [8], 1)])
    seeds.append(sframe_section(3, False, 3, 0, -8, [same, same], sorted_flag=False))
    return seeds


def sframe_roundtrip_seeds():
    seeds = [bytes([ROUNDTRIP_ADDRESS_OPTION]) + s for s in encoded_sframe_seeds()]
    if os.path.isdir(SFRAME_TESTDATA):
        for name in sorted(os.listdir(SFRAME_TESTDATA)):
            if name.endswith(".json"):
                with open(os.path.join(SFRAME_TESTDATA, name)) as f:
                    seeds.append(bytes([ROUNDTRIP_ADDRESS_OPTION]) + bytes(json.load(f)["content"]))
    return sorted(set(seeds))


def sframe_generate_seeds(eh_frames, objects, aarch64_objects=()):
    """fuzz_sframe_generate's byte 0: bits 0-1 the version (0: v3), bit 2 no
    text range, bit 3 AArch64 CFI (bit 4 big-endian), bit 5 s390x CFI. Slices of linked
    .eh_frame keep their functions below the section, in the made-up text
    range; objects' FDEs are unrelocated, so they go without the range.
    (The aarch64-gcc-* files beside the seeds are gcc's AArch64 .eh_frame of
    tests/sframe/fixtures, with PAC keys A and B, in both byte orders; the
    s390x-gcc-* ones gcc's s390x .eh_frame of s390x_sframe.c, -O2.)"""
    seeds = []
    for d in aarch64_objects:
        seeds.append(bytes([0x0c]) + d)
        seeds.append(bytes([0x0d]) + d)
    for i, d in enumerate(eh_frames):
        seeds.append(bytes([(0, 2, 1)[i % 3]]) + d)
    for d in objects:
        seeds.append(bytes([0x04]) + d)
        seeds.append(bytes([0x06]) + d)
    return seeds


# ---- main -------------------------------------------------------------------

# ---- ar archives ----------------------------------------------------------

def ar_header(name, size):
    return b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, 0, 0, 0, b"644", size)


def ar_member(name, contents):
    m = ar_header(name, len(contents)) + contents
    return m + b"\n" if len(m) % 2 else m


def archive_seeds(objects):
    """GNU archives (symbol table, long names), a BSD-named one and a thin one
    of the smallest x86-64 and i386 objects (the ones with relocated CFI)."""
    picked = [n for n in ("x86_64.o", "i386.o", "x86_64-debug-frame.o") if n in objects]
    members = [(n.encode(), open(objects[n], "rb").read()) for n in picked]
    seeds = []
    long_names = b"".join(n + b"/\n" for n, _ in members)
    gnu = b"!<arch>\n" + ar_member(b"/", b"\0\0\0\0") + ar_member(b"//", long_names)
    offset = 0
    for name, data in members:
        gnu += ar_member(b"/%d" % offset, data)
        offset += len(name) + 2
    seeds.append(gnu)
    for name, data in members[:1]:
        seeds.append(b"!<arch>\n" + ar_member(name + b"/", data) + ar_member(b"text.txt/", b"not an object\n"))
        padded = name + b"\0" * (8 - len(name) % 8)
        seeds.append(b"!<arch>\n" + ar_header(b"#1/%d" % len(padded), len(padded) + len(data)) + padded + data)
    thin = b"!<thin>\n" + ar_member(b"//", long_names)
    offset = 0
    for name, data in members:
        thin += ar_header(b"/%d" % offset, len(data))
        offset += len(name) + 2
    seeds.append(thin)
    return seeds


# ---- gmon.out ---------------------------------------------------------------

def gmon_file(address_size, big, records, version=1):
    e = ">" if big else "<"
    a = "Q" if address_size == 8 else "I"
    out = b"gmon" + struct.pack(e + "I", version) + bytes(12)
    for r in records:
        if r[0] == "hist":
            _, low, high, bins, rate = r
            out += b"\0" + struct.pack(e + a + a + "II", low, high, len(bins), rate) + b"seconds".ljust(15, b"\0") + b"s"
            out += b"".join(struct.pack(e + "H", b) for b in bins)
        elif r[0] == "arc":
            _, frm, slf, count = r
            out += b"\1" + struct.pack(e + a + a + "I", frm, slf, count)
        elif r[0] == "bb":
            out += b"\2" + struct.pack(e + "I", len(r[1])) + b"".join(struct.pack(e + a + a, x, n) for x, n in r[1])
    return out


def gmon_seeds():
    """fuzz_gmon: byte 0 = layout (bit 0: 4-byte addresses, bit 1: big-endian),
    then a gmon.out whose addresses fall in the body's functions at
    0x1000 + 0x40 * i: recursion, a cycle, a histogram over all of them."""
    graph = [("hist", 0x1000, 0x1400, [i % 5 for i in range(256)], 100),
             ("arc", 0x1010, 0x1045, 3), ("arc", 0x1050, 0x1045, 12), ("arc", 0x1050, 0x1085, 15),
             ("arc", 0x1090, 0x10c4, 4), ("arc", 0x10d0, 0x1084, 2), ("arc", 0x1020, 0x1304, 7)]
    seeds = []
    for layout in range(4):
        size = 4 if layout & 1 else 8
        seeds.append(bytes([layout]) + gmon_file(size, bool(layout & 2), graph))
    seeds.append(bytes([0]) + gmon_file(8, False, [("hist", 0x1000, 0x1100, [1, 2], 100),
                                                   ("hist", 0x1000, 0x1100, [3, 4], 100),
                                                   ("hist", 0x1200, 0x1300, [5], 100),
                                                   ("bb", [(0x1000, 3), (0x1040, 1)])]))
    seeds.append(bytes([0]) + gmon_file(8, False, [("arc", 0x1000, 0x1040, 1)], version=0))
    seeds.append(bytes([0]) + gmon_file(8, False, []))
    return seeds


def line_seeds():
    """fuzz_line: the .debug_line (and .debug_line_str) of a small program
    linked by gcc at DWARF 2, 3, 4 and 5, and DWARF 64; byte 0 = 0 (little
    endian, 8-byte addresses), bytes 1-2 = the length of .debug_line_str."""
    source = (b"static int sq(int x) { return x * x; }\n"
              b"int walk(int n) { int s = 0; for (int i = 0; i < n; ++i) s += sq(i); return s; }\n"
              b"int main(int argc, char** argv) { (void)argv; return walk(argc) == 3; }\n")
    seeds = []
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "line.c")
        with open(src, "wb") as f:
            f.write(source)
        for flags in (["-gdwarf-2"], ["-gdwarf-3"], ["-gdwarf-4"], ["-gdwarf-5"], ["-gdwarf-5", "-gdwarf64"],
                      ["-gdwarf-4", "-O2"], ["-gdwarf-5", "-O2"]):
            exe = os.path.join(tmp, "line")
            subprocess.run(["gcc", "-O1", "-fdebug-prefix-map=%s=/src" % tmp] + flags + [src, "-o", exe],
                           check=True, cwd=tmp)
            elf = Elf(open(exe, "rb").read())
            line, _ = elf.section_bytes(".debug_line")
            line_str, _ = elf.section_bytes(".debug_line_str")
            line_str = line_str or b""
            seeds.append(struct.pack("<BH", 0, len(line_str)) + line_str + line)
    return seeds


def dwarf_info_seeds():
    """fuzz_dwarf_info: the .debug_info and the sections it indexes of a
    small program with inlined code, by gcc at DWARF 2, 4 and 5 (also DWARF 64)
    and clang at DWARF 4 and 5; byte 0 = 0, then .debug_abbrev, .debug_str,
    .debug_addr, .debug_str_offsets, .debug_rnglists and .debug_ranges, each
    after its 2-byte length, then .debug_info."""
    source = (b"static inline int sq(int x) { return x * x; }\n"
              b"static inline int sum(int n) { int s = 0; for (int i = 0; i < n; ++i) s += sq(i); return s; }\n"
              b"int walk(int n) { return sum(n) + sq(n); }\n"
              b"int main(int argc, char** argv) { (void)argv; return walk(argc) == 3; }\n")
    seeds = []
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "info.c")
        with open(src, "wb") as f:
            f.write(source)
        for cc, flags in (("gcc", ["-gdwarf-2"]), ("gcc", ["-gdwarf-4"]), ("gcc", ["-gdwarf-5"]),
                          ("gcc", ["-gdwarf-5", "-gdwarf64"]), ("clang", ["-gdwarf-4"]), ("clang", ["-gdwarf-5"])):
            exe = os.path.join(tmp, "info")
            subprocess.run([cc, "-O2", "-fdebug-prefix-map=%s=/src" % tmp] + flags + [src, "-o", exe],
                           check=True, cwd=tmp)
            elf = Elf(open(exe, "rb").read())
            seed = b"\0"
            for name in (".debug_abbrev", ".debug_str", ".debug_addr", ".debug_str_offsets", ".debug_rnglists",
                         ".debug_ranges"):
                data, _ = elf.section_bytes(name)
                data = (data or b"")[:0xffff]
                seed += struct.pack("<H", len(data)) + data
            info, _ = elf.section_bytes(".debug_info")
            seeds.append(seed + (info or b""))
    return seeds


def cu_index_seeds():
    """fuzz_cu_index: the .debug_cu_index of .dwp packages of the two-unit
    C++ program of conformance.inline (tests/conformance/fixtures/inline_cxx_*)
    built with -gsplit-dwarf: by g++ at DWARF 5 and llvm-dwp (version 5), at
    DWARF 4 and binutils dwp (version 2), and by clang++ at DWARF 5 and
    llvm-dwp; byte 0 = 0, then the section."""
    seeds = []
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conformance", "fixtures")
    sources = [os.path.join(fixtures, "inline_cxx_%s.cpp" % u) for u in "ab"]
    llvm_dwp = shutil.which("llvm-dwp-16") or shutil.which("llvm-dwp")
    with tempfile.TemporaryDirectory() as tmp:
        for cxx, flags, packager in (("g++", ["-gdwarf-5"], llvm_dwp), ("g++", ["-gdwarf-4"], shutil.which("dwp")),
                                     ("clang++", ["-gdwarf-5"], llvm_dwp)):
            if not packager or not shutil.which(cxx):
                continue
            exe = os.path.join(tmp, "split")
            subprocess.run([cxx, "-O2", "-gsplit-dwarf", "-I" + fixtures] + flags + sources + ["-o", exe],
                           check=True, cwd=tmp)
            subprocess.run([packager, "-e", exe, "-o", exe + ".dwp"], check=True, cwd=tmp, timeout=60)
            index, _ = Elf(open(exe + ".dwp", "rb").read()).section_bytes(".debug_cu_index")
            if index:
                seeds.append(b"\0" + index)
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
    return seeds


def backend_seeds():
    """fuzz_backend inputs: a head byte (machine = byte % 3; bit 1: the
    mappings callback fails; bit 2: memory reads claim extra bytes; bit 3:
    this program is mapped; high nibble: how many thread ids follow), the ids,
    register sets (first register: 2 bytes, count, 8-byte values), the
    overclaim, the mapping's start and size, memory's base, then memory."""
    def regs(first, values):
        return bytes([first & 0xff, first >> 8, len(values)]) + b"".join(struct.pack("<Q", v) for v in values)

    seeds = []
    stack = b"".join(struct.pack("<Q", v) for v in (0x7000, 0x401000, 0x7010, 0x401100, 0, 0))
    for machine in (0, 1, 2):
        for flags in (0, 8, 12, 2 | 8):
            x86 = regs(6, [0x6ff0, 0x6f00]) + regs(16, [0x401010])  # rbp, rsp; rip
            a64 = regs(29, [0x6ff0, 0x401004, 0x6f00, 0x401010])  # x29, x30, sp, pc
            arm = regs(11, [0x6ff0, 0, 0x6f00, 0x401004, 0x401010])  # r11..r15
            sets = [x86, a64, arm][machine]
            body = bytes([(2 << 4) | flags | machine, 1, 2, 2]) + sets + regs(300, [1] * 20)
            body += bytes([7]) + struct.pack("<Q", 0x400000) + bytes([2]) + struct.pack("<Q", 0x6f00) + stack
            seeds.append(body)
    seeds.append(bytes([(5 << 4) | 4, 3, 3, 0xff, 0x80, 1, 0, 0]))  # repeats and negatives, nothing else
    return seeds


# ---- perf.data --------------------------------------------------------------

def perf_record(rtype, misc, body):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def perf_name(s):
    b = s.encode() + b"\0"
    return b + bytes(-len(b) % 8)


def perf_attr(sample_type, ids_note=0, regs=0, stack=0, config=0, size=128):
    a = struct.pack("<IIQQQQQ", 1, size, config, 4000, sample_type, 0, (1 << 18) | (1 << 10))
    a += struct.pack("<IIQQQQIi", 0, 0, 0, 0, 0, regs, stack, 0)
    return (a + bytes(size))[:size]


def perf_file(attrs, records, features=()):
    """attrs: [(attr bytes, [ids])]; features: [(bit, bytes)] in bit order."""
    attr_size = len(attrs[0][0]) + 16
    ids_offset = 104 + attr_size * len(attrs)
    ids_blob = b"".join(struct.pack("<Q", i) for _, ids in attrs for i in ids)
    data = b"".join(records)
    data_offset = ids_offset + len(ids_blob)
    bits = [0, 0, 0, 0]
    for bit, _ in features:
        bits[bit // 64] |= 1 << (bit % 64)
    out = struct.pack("<QQQQQQQQQ", 0x32454c4946524550, 104, attr_size, 104, attr_size * len(attrs),
                      data_offset, len(data), 0, 0) + struct.pack("<4Q", *bits)
    at = ids_offset
    for a, ids in attrs:
        out += a + struct.pack("<QQ", at, 8 * len(ids))
        at += 8 * len(ids)
    out += ids_blob + data
    at = len(out) + 16 * len(features)
    for _, b in features:
        out += struct.pack("<QQ", at, len(b))
        at += len(b)
    return out + b"".join(b for _, b in features)


def perf_string(s):
    b = s.encode() + b"\0"
    b += bytes(-len(b) % 8)
    return struct.pack("<I", len(b)) + b


def perf_data_seeds():
    """fuzz_perf_data: perf.data files as perf record writes them (file and
    pipe mode), with the records an unwinder reads: mappings, names, forks,
    samples with user registers and a stack copy (x86-64's mask), a kernel
    callchain, lost and throttle records, rounds, two events told apart by id."""
    IP, TID, TIME, ADDR, CALLCHAIN, ID, CPU, PERIOD, REGS, STACK, IDENT = (
        1, 2, 4, 8, 32, 64, 128, 256, 1 << 12, 1 << 13, 1 << 16)
    trailer = lambda pid, time: struct.pack("<IIQQII", pid, pid, time, 7, 0, 0)
    st = IP | TID | TIME | ADDR | ID | CPU | PERIOD | CALLCHAIN | REGS | STACK
    regs_mask = 0xff0fff
    n_regs = bin(regs_mask).count("1")

    def sample(pid, time, ip, sp, stack_words, kernel=()):
        chain = ([2**64 - 128] + list(kernel) + [2**64 - 512, ip]) if kernel else [2**64 - 512, ip]
        body = struct.pack("<QIIQQQIIQ", ip, pid, pid, time, 0, 7, 0, 0, 4000)
        body += struct.pack("<Q", len(chain)) + b"".join(struct.pack("<Q", c) for c in chain)
        regs = [0] * n_regs
        regs[7] = sp  # sp, bit 7
        regs[8] = ip  # ip, bit 8
        regs[6] = sp + 16  # bp
        body += struct.pack("<Q", 2) + b"".join(struct.pack("<Q", r) for r in regs)
        stack = b"".join(struct.pack("<Q", w) for w in stack_words)
        body += struct.pack("<Q", len(stack)) + stack + struct.pack("<Q", len(stack))
        return perf_record(9, 2 if not kernel else 1, body)

    mmap2 = perf_record(10, 2, struct.pack("<IIQQQIIQQII", 5, 5, 0x400000, 0x1000, 0, 8, 1, 99, 0, 5, 2)
                        + perf_name("/usr/bin/prog") + trailer(5, 10))
    mmap2_id = perf_record(10, 2 | (1 << 14), struct.pack("<IIQQQBBH", 5, 5, 0x7f0000, 0x2000, 0x1000, 20, 0, 0)
                           + bytes(range(20)) + struct.pack("<II", 5, 2) + perf_name("[vdso]") + trailer(5, 11))
    comm = perf_record(3, 1 << 13, struct.pack("<II", 5, 5) + perf_name("prog") + trailer(5, 12))
    fork = perf_record(7, 0, struct.pack("<IIIIQ", 6, 5, 6, 5, 13) + trailer(6, 13))
    exit_ = perf_record(4, 0, struct.pack("<IIIIQ", 6, 5, 6, 5, 40) + trailer(6, 40))
    lost = perf_record(2, 0, struct.pack("<QQ", 7, 3) + trailer(5, 20))
    lost_samples = perf_record(13, 0, struct.pack("<Q", 2) + trailer(5, 21))
    throttle = perf_record(5, 0, struct.pack("<QQQ", 22, 7, 7) + trailer(5, 22))
    rnd = perf_record(68, 0, b"")
    stack = [0x400100, 0x7ffe0100, 0x400200, 0, 0, 0]
    s1 = sample(5, 30, 0x400010, 0x7ffe0000, stack)
    s2 = sample(6, 31, 0x400020, 0x7ffe0000, stack, kernel=(0xffffffff81000010, 0xffffffff81000020))
    s3 = sample(5, 25, 0x7f0010, 0x7ffe0000, stack[:2])
    build_id = perf_record(67, 2 | (1 << 15), struct.pack("<i", 5) + bytes(range(20)) + bytes([20, 0, 0, 0])
                           + perf_name("/usr/bin/prog"))
    features = [(2, build_id), (3, perf_string("host")), (6, perf_string("x86_64")),
                (11, struct.pack("<I", 2) + perf_string("perf") + perf_string("record"))]
    attr = perf_attr(st, regs=regs_mask, stack=48)
    seeds = [
        perf_file([(attr, [7])], [mmap2, mmap2_id, comm, fork, s3, rnd, s1, lost, lost_samples, throttle, s2, rnd,
                                  exit_], features),
        perf_file([(attr, [7])], [comm, mmap2, s1, s1[:-8]]),  # a record cut short
        perf_file([(perf_attr(IP | TID | TIME, size=64), [1])], [perf_record(9, 2, struct.pack("<QIIQ", 1, 2, 2, 3))]),
    ]
    # Two events, told apart by PERF_SAMPLE_IDENTIFIER.
    st2 = IDENT | IP | TID | TIME
    a1, a2 = perf_attr(st2), perf_attr(st2, config=1)
    seeds.append(perf_file([(a1, [100, 101]), (a2, [200])],
                           [perf_record(9, 2, struct.pack("<QQIIQ", 200, 0x10, 1, 1, 5)),
                            perf_record(9, 2, struct.pack("<QQIIQ", 101, 0x20, 1, 1, 6)),
                            perf_record(3, 0, struct.pack("<II", 1, 1) + perf_name("x") + struct.pack("<IIQQ", 1, 1, 7, 200))]))
    # Pipe mode: attributes and features as records.
    pipe = struct.pack("<QQ", 0x32454c4946524550, 16)
    pipe += perf_record(64, 0, attr + struct.pack("<Q", 7))
    pipe += perf_record(80, 0, struct.pack("<Q", 6) + perf_string("x86_64"))
    pipe += mmap2 + comm + s1 + build_id
    seeds.append(pipe)
    # AUXTRACE: trace data after the record, outside its size.
    aux = perf_record(71, 0, struct.pack("<QQQIIII", 16, 0, 0, 0, 5, 0, 0)) + bytes([0xee] * 16)
    seeds.append(perf_file([(attr, [7])], [comm, aux, s1]))
    # zstd-compressed records (perf record -z), when the zstd command is here.
    plain = mmap2 + comm + s1 + s3
    try:
        z = subprocess.run(["zstd", "-q", "-c", "-3"], input=plain, stdout=subprocess.PIPE, check=True).stdout
        half = len(z) // 2
        seeds.append(perf_file([(attr, [7])], [perf_record(81, 0, z[:half]), perf_record(81, 0, z[half:]), rnd, s2],
                               features))
    except (OSError, subprocess.CalledProcessError):
        pass
    return seeds


def write(target, blobs):
    """Replaces the seed-* files of the target; other files there (inputs a
    fuzzing run found, merged in by hand) stay."""
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        if name.startswith("seed-"):
            os.remove(os.path.join(d, name))
    for b in blobs:
        name = "seed-" + hashlib.sha1(b).hexdigest()
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)
    return sum(len(b) for b in blobs), len(blobs)


def main():
    wanted = set(sys.argv[1:])
    cfi, hdr, elfs, object_eh, linked_eh, aarch64_eh = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        objects = build_objects(tmp)
        archives = archive_seeds(objects)
        for name, path in sorted(objects.items()):
            data = open(path, "rb").read()
            elfs.append(data)
            elf = Elf(data)
            for sec in (".eh_frame", ".debug_frame"):
                d, _ = elf.section_bytes(sec)
                if d:
                    cfi.append(d[:4096])
            d, _ = elf.section_bytes(".eh_frame")
            if d and name.startswith("x86_64"):
                object_eh.append(d[:4096])
            if d and name.startswith("aarch64"):
                aarch64_eh.append(d[:4096])
        for path in SYSTEM_FILES:
            if not os.path.exists(path):
                continue
            elf = Elf(open(path, "rb").read())
            d, _ = elf.section_bytes(".eh_frame")
            if d:
                slices = eh_frame_slices(d, elf.e, 1536, 12)
                cfi.extend(slices)
                linked_eh.extend(slices)
            hdr.extend(eh_frame_hdr_seeds(elf))
    for target, blobs in (("fuzz_cfi", cfi), ("fuzz_eh_frame_hdr", hdr), ("fuzz_elf", elfs),
                          ("fuzz_archive", archives),
                          ("fuzz_expression", expression_seeds()), ("fuzz_gmon", gmon_seeds()),
                          ("fuzz_line", line_seeds()), ("fuzz_dwarf_info", dwarf_info_seeds()),
                          ("fuzz_cu_index", cu_index_seeds()), ("fuzz_backend", backend_seeds()),
                          ("fuzz_perf_data", perf_data_seeds()),
                          ("fuzz_sframe_roundtrip", sframe_roundtrip_seeds()),
                          ("fuzz_sframe_generate", sframe_generate_seeds(linked_eh, object_eh, aarch64_eh))):
        if wanted and target not in wanted:
            continue
        size, n = write(target, blobs)
        print("%-22s %4d files %8d bytes" % (target, n, size))


if __name__ == "__main__":
    sys.exit(main())

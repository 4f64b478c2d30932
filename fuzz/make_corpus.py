#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/<target>/ from files of this
machine (libc, libstdc++, /bin/ls) and from tiny objects compiled here with
clang for several targets. Needs clang, objcopy and xz. The output is small
(well under 2 MB) and deterministic for a given machine; run it only when the
seeds should change, then commit the result.

Inputs found by fuzzing can join the seeds: merge a run's corpus into a new
directory (build-fuzz/fuzz/<target> -merge=1 NEW fuzz/corpus-work/<target>),
then copy the smallest files of NEW into fuzz/corpus/<target>/ within a size
budget: everything in fuzz/corpus/ is replayed by the unit tests.
"""
import hashlib
import os
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


# ---- main -------------------------------------------------------------------

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
    cfi, hdr, elfs = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        objects = build_objects(tmp)
        for name, path in sorted(objects.items()):
            data = open(path, "rb").read()
            elfs.append(data)
            elf = Elf(data)
            for sec in (".eh_frame", ".debug_frame"):
                d, _ = elf.section_bytes(sec)
                if d:
                    cfi.append(d[:4096])
        for path in SYSTEM_FILES:
            if not os.path.exists(path):
                continue
            elf = Elf(open(path, "rb").read())
            d, _ = elf.section_bytes(".eh_frame")
            if d:
                cfi.extend(eh_frame_slices(d, elf.e, 1536, 12))
            hdr.extend(eh_frame_hdr_seeds(elf))
    for target, blobs in (("fuzz_cfi", cfi), ("fuzz_eh_frame_hdr", hdr), ("fuzz_elf", elfs),
                          ("fuzz_expression", expression_seeds())):
        size, n = write(target, blobs)
        print("%-18s %4d files %8d bytes" % (target, n, size))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""conformance.addr2line: `framewalk addr2line` against binutils addr2line.

Builds tests/conformance/fixtures/lines_*.c with gcc -O2 -g (DWARF 5, gcc 12's
default) and -O2 -gdwarf-4 (also with the debug sections compressed by
objcopy: zlib, zstd, and the legacy .zdebug_* of zlib-gnu), takes the start address of every row of their
line tables (from readelf --debug-dump=decodedline) and of every function
symbol (nm), and compares, address by address,

  framewalk addr2line -e PROG ADDR...      with  addr2line -e PROG ADDR...
  framewalk addr2line -f -e PROG ADDR...   with  addr2line -f -e PROG ADDR...

(and -a -p -s -f on the function symbols, and the function symbols on
standard input). Every difference fails the test but one kind, counted and
printed, never hidden: with -f, at an address in inlined code, binutils names
the inlined function (from .debug_info) and framewalk the function it was
inlined into (from the symbol table: inline frames are not read yet); it is
accepted only when llvm-symbolizer's inline chain at the address confirms
both names.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# name, compiler flags, and how objcopy compresses the debug sections after
# the link (ElfFile decompresses SHF_COMPRESSED sections and .zdebug_*).
VARIANTS = [("dwarf5", ["-O2", "-g"], None), ("dwarf4", ["-O2", "-gdwarf-4"], None),
            ("dwarf5_zlib", ["-O2", "-g"], "zlib"), ("dwarf4_zstd", ["-O2", "-gdwarf-4"], "zstd"),
            ("dwarf4_zdebug", ["-O2", "-gdwarf-4"], "zlib-gnu")]


def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout


def row_addresses(prog):
    out = run(["readelf", "--debug-dump=decodedline", prog])
    addrs = set()
    for line in out.splitlines():
        for token in line.split():
            if re.fullmatch(r"0x[0-9a-f]+", token):
                addrs.add(int(token, 16))
    return sorted(addrs)


def function_addresses(prog):
    addrs = set()
    for line in run(["nm", "--defined-only", prog]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwWiI":
            addrs.add(int(parts[0], 16))
    return sorted(addrs)


def answers(cmd, addrs, lines_per_answer):
    out = run(cmd + ["%x" % a for a in addrs]).splitlines()
    if len(out) != len(addrs) * lines_per_answer:
        raise SystemExit("%s: %d lines for %d addresses" % (cmd[0], len(out), len(addrs)))
    return [tuple(out[i * lines_per_answer:(i + 1) * lines_per_answer]) for i in range(len(addrs))]


def llvm_inline_chain(symbolizer, prog, addr):
    """llvm-symbolizer's frames at addr, innermost first: [(function, file:line)]."""
    out = run([symbolizer, "--obj=" + prog, "--output-style=GNU", "--functions=linkage", "--inlines",
               "0x%x" % addr]).splitlines()
    return [(out[i], out[i + 1]) for i in range(0, len(out) - 1, 2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--source", required=True, help="tests/conformance/fixtures")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cc", default="gcc")
    args = ap.parse_args()
    for tool in ("addr2line", "readelf", "nm", "objcopy", args.cc):
        if not shutil.which(tool):
            print("skipped: %s not found" % tool)
            return 77
    symbolizer = shutil.which("llvm-symbolizer-16") or shutil.which("llvm-symbolizer")
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for name, flags, compression in VARIANTS:
        prog = os.path.join(args.work, "lines_" + name)
        run([args.cc] + flags + ["-I" + args.source, os.path.join(args.source, "lines_main.c"),
                                 os.path.join(args.source, "lines_other.c"), "-o", prog])
        if compression:
            run(["objcopy", "--compress-debug-sections=" + compression, prog])
        rows = row_addresses(prog)
        funcs = function_addresses(prog)
        addrs = sorted(set(rows) | set(funcs))
        checks = [
            ("file:line", [], addrs, 1),
            ("-f", ["-f"], addrs, 2),
            ("-a -p -s -f", ["-a", "-p", "-s", "-f"], funcs, 1),
        ]
        for label, flags_, checked, per in checks:
            ours = answers([args.framewalk, "addr2line", "-e", prog] + flags_, checked, per)
            theirs = answers(["addr2line", "-e", prog] + flags_, checked, per)
            differ = accepted = 0
            for addr, a, b in zip(checked, ours, theirs):
                if a == b:
                    continue
                differ += 1
                # Only -f may differ, and only in the function's name, where the
                # address is in inlined code: binutils (and llvm-symbolizer, even
                # with --no-inlines) name the innermost inlined function from
                # .debug_info, which framewalk does not read yet; framewalk names
                # the function it was inlined into, from the symbol table. That
                # is accepted only when llvm-symbolizer's inline chain says so:
                # more than one frame, binutils' name the innermost, framewalk's
                # the outermost. The file:line part must be equal.
                same_line = a[-1] == b[-1]
                if label == "-f" and same_line and symbolizer:
                    # llvm-symbolizer 14 reads no zstd: it is asked about the
                    # uncompressed build, the same code at the same addresses.
                    oracle_prog = os.path.join(args.work, "lines_" + name.split("_")[0])
                    chain = llvm_inline_chain(symbolizer, oracle_prog, addr)
                    if len(chain) > 1 and chain[0][0] == b[0] and chain[-1][0] == a[0]:
                        accepted += 1
                        continue
                failures += 1
                print("DIFF %s %s 0x%x\n  framewalk: %r\n  addr2line: %r" % (name, label, addr, a, b))
            print("%s %-12s %5d addresses, %d equal, %d differ (%d of them in inlined code, named by the "
                  "function it was inlined into: inline frames are not read yet)"
                  % (name, label, len(checked), len(checked) - differ, differ, accepted))
        # Standard input, one address a line, as a pipe drives it.
        stdin = "".join("0x%x\n" % a for a in funcs)
        if run([args.framewalk, "addr2line", "-e", prog], stdin) != run(["addr2line", "-e", prog], stdin):
            failures += 1
            print("DIFF %s: answers to addresses on standard input" % name)
    print("conformance.addr2line: %d unexplained differences" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

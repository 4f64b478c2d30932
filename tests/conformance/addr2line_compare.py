#!/usr/bin/env python3
"""conformance.addr2line: `framewalk addr2line` against binutils addr2line.

Builds tests/conformance/fixtures/lines_*.c with gcc -O2 -g (DWARF 5, gcc 12's
default) and -O2 -gdwarf-4 (also with the debug sections compressed by
objcopy: zlib, zstd, and the legacy .zdebug_* of zlib-gnu), takes the start address of every row of their
line tables (from readelf --debug-dump=decodedline) and of every function
symbol (nm), and compares, address by address,

  framewalk addr2line -e PROG ADDR...      with  addr2line -e PROG ADDR...
  framewalk addr2line -f -e PROG ADDR...   with  addr2line -f -e PROG ADDR...

(and -a -p -s -f and -C -f on the function symbols; the function symbols on standard
input must get the answers they get as arguments); and a C++ program with header-defined functions at DWARF 5
and 4. Every difference fails the test but two kinds, counted and printed,
never hidden: binutils 2.40 with DWARF 5 prints the unit's primary file
(with the header's line) for functions in COMDAT sections, where
llvm-symbolizer and framewalk print the header (binutils is wrong). Inline
chains (-i) are compared by conformance.inline.
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
            ("dwarf4_zdebug", ["-O2", "-gdwarf-4"], "zlib-gnu"),
            ("cxx_dwarf5", ["-O2", "-g"], None), ("cxx_dwarf4", ["-O2", "-gdwarf-4"], None)]
SOURCES = {"c": ["lines_main.c", "lines_other.c"], "cxx": ["lines_cxx_a.cpp", "lines_cxx_b.cpp"]}


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


def split_answer(answer, label):
    """(function or None, file:line) of one answer."""
    if "-p" in label:
        text = answer[0].split(": ", 1)[1]
        function, _, line = text.rpartition(" at ")
        return function, line
    if "-f" in label:
        return answer[0], answer[1]
    return None, answer[0]


def oracle(work, name):
    """The build llvm-symbolizer is asked about: llvm-symbolizer 14 reads no
    zstd, so a compressed build's uncompressed twin (same code, same addresses)."""
    if name.endswith(("_zlib", "_zstd", "_zdebug")):
        name = name.rsplit("_", 1)[0]
    return os.path.join(work, "lines_" + name)


def comdat_file(symbolizer, prog, addr, ours, theirs):
    """binutils 2.40 with DWARF 5 names the unit's primary source file, with
    the right line, for a function gcc put in a COMDAT section (defined in a
    header: inline, template, implicit member); readelf's decoded line table
    and llvm-symbolizer name the header, as framewalk does. True when the
    lines are equal and llvm-symbolizer prints framewalk's file:line."""
    if not symbolizer or ours.rsplit(":", 1)[-1] != theirs.rsplit(":", 1)[-1]:
        return False
    llvm = run([symbolizer, "--obj=" + oracle(os.path.dirname(prog), os.path.basename(prog)[6:]),
                "--output-style=GNU", "--no-inlines", "--functions=none", "0x%x" % addr]).splitlines()
    return bool(llvm) and os.path.basename(llvm[0]) == os.path.basename(ours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--source", required=True, help="tests/conformance/fixtures")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--cxx", default="g++")
    args = ap.parse_args()
    for tool in ("addr2line", "readelf", "nm", "objcopy", args.cc, args.cxx):
        if not shutil.which(tool):
            print("skipped: %s not found" % tool)
            return 77
    symbolizer = shutil.which("llvm-symbolizer-16") or shutil.which("llvm-symbolizer")
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for name, flags, compression in VARIANTS:
        prog = os.path.join(args.work, "lines_" + name)
        language = "cxx" if name.startswith("cxx_") else "c"
        compiler = args.cxx if language == "cxx" else args.cc
        run([compiler] + flags + ["-I" + args.source] + [os.path.join(args.source, f) for f in SOURCES[language]]
            + ["-o", prog])
        if compression:
            run(["objcopy", "--compress-debug-sections=" + compression, prog])
        rows = row_addresses(prog)
        funcs = function_addresses(prog)
        addrs = sorted(set(rows) | set(funcs))
        checks = [
            ("file:line", [], addrs, 1),
            ("-f", ["-f"], addrs, 2),
            ("-a -p -s -f", ["-a", "-p", "-s", "-f"], funcs, 1),
            ("-C -f", ["-C", "-f"], funcs, 2),
        ]
        for label, flags_, checked, per in checks:
            ours = answers([args.framewalk, "addr2line", "-e", prog] + flags_, checked, per)
            theirs = answers(["addr2line", "-e", prog] + flags_, checked, per)
            differ = comdat = 0
            for addr, a, b in zip(checked, ours, theirs):
                if a == b:
                    continue
                differ += 1
                name_a, line_a = split_answer(a, label)
                name_b, line_b = split_answer(b, label)
                kind = None
                if name_a == name_b and comdat_file(symbolizer, prog, addr, line_a, line_b):
                    kind = "comdat"
                    comdat += 1
                if kind:
                    continue
                failures += 1
                print("DIFF %s %s 0x%x\n  framewalk: %r\n  addr2line: %r" % (name, label, addr, a, b))
            print("%s %-12s %5d addresses, %d equal, %d differ (%d where binutils names the unit's file for a "
                  "COMDAT function's header line)" % (name, label, len(checked), len(checked) - differ, differ, comdat))
        # Standard input, one address a line, as a pipe drives it: the same
        # answers as from the arguments (compared with binutils above).
        stdin = "".join("0x%x\n" % a for a in funcs)
        from_args = run([args.framewalk, "addr2line", "-f", "-e", prog] + ["%x" % a for a in funcs])
        if run([args.framewalk, "addr2line", "-f", "-e", prog], stdin) != from_args:
            failures += 1
            print("DIFF %s: answers to addresses on standard input" % name)
    print("conformance.addr2line: %d unexplained differences" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

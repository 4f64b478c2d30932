#!/usr/bin/env python3
"""conformance.inline: framewalk's inline chains against llvm-symbolizer's and
binutils addr2line -f -i's.

Builds tests/conformance/fixtures/inline_cxx_*.cpp (templates, lambdas, member
functions, nested inline calls, recursion) at -O2 with gcc (DWARF 5, DWARF 4,
-gz=zlib, zstd by objcopy) and clang (DWARF 5, DWARF 4), and asks all three
about every function symbol's address and a fixed-seed sample of addresses
in .text, then the same of glibc's libc.so.6 with libc6-dbg's debug file;
and the gcc DWARF 5 and 4 builds made into dwz pairs (compare_dwz):

  framewalk addr2line --format=json -e PROG ADDR...
      the whole chain (function, file, line, column of every frame) must equal
      llvm-symbolizer --output-style=JSON --inlines --no-demangle --functions=linkage;
  framewalk addr2line -f -i -e PROG ADDR...   (and -C -f -i -p -s)
      the text must equal binutils addr2line's, byte for byte.

Split DWARF (compare_split): gcc -gsplit-dwarf at DWARF 5 (also with
-fdebug-types-section: type units in the .dwo files) and 4 (GNU extension:
DW_AT_GNU_dwo_name, DW_FORM_GNU_addr_index/str_index) and clang
-gsplit-dwarf at DWARF 5 and 4, each built in a directory of its own (the skeletons name
their .dwo files relative to it), with a twin built without -gsplit-dwarf
whose .text must be the same bytes. framewalk's chains on the split build
at every function entry and a sample must equal llvm-symbolizer's on the
twin (the same code, its DWARF in one file) twice: with the .dwo files; and
with only a .dwp package (binutils dwp for gcc's DWARF 4, whose
.debug_cu_index is version 2; llvm-dwp for DWARF 5, version 5, and for
clang's DWARF 4, version 2), the .dwo files moved away.
llvm-symbolizer's own answers on the split build are compared too; where
they differ they must be KNOWN_ORACLE_BUGS[0]. With neither .dwo nor .dwp,
framewalk addr2line must print the same file:line for every address as with
them (the line table stays in the program), name each missing .dwo on
stderr, and not crash; with the two .dwo files' names swapped, report a
dwo id mismatch for each skeleton and still print the line table's answers. binutils 2.40 addr2line reads
no split DWARF (it does not follow DW_AT_dwo_name: no function of a split
unit, no inlined frame), so its text is not compared on these builds.

Every difference fails the test. Cases where an oracle is known to be wrong
are listed in KNOWN_ORACLE_BUGS and pinned by tests of their own whose truth
comes from the program's construction; none is accepted here.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

SOURCES = ["inline_cxx_a.cpp", "inline_cxx_b.cpp"]
# name, compiler ("gcc" or "clang"), flags
# (gcc 12 has no -gz=zstd: that build's debug sections are compressed by objcopy after the link.)
VARIANTS = [("gcc_dwarf5", "gcc", ["-O2", "-g"]), ("gcc_dwarf4", "gcc", ["-O2", "-gdwarf-4"]),
            ("gcc_zlib", "gcc", ["-O2", "-g", "-gz=zlib"]), ("gcc_zstd", "gcc", ["-O2", "-g"]),
            ("clang_dwarf5", "clang", ["-O2", "-g"]), ("clang_dwarf4", "clang", ["-O2", "-gdwarf-4"])]
SAMPLE = 400  # random addresses per program, besides every function's entry
# Split DWARF: name, compiler, flags, the packager of its .dwp.
# gcc_split5_types: the .dwo files hold DW_UT_split_type units beside the
# split compile unit (and the .dwp a .debug_tu_index): not decoded, they must
# not be taken for the compile unit.
SPLIT_VARIANTS = [("gcc_split5", "gcc", ["-O2", "-g", "-gsplit-dwarf"], "llvm-dwp"),
                  ("gcc_split4", "gcc", ["-O2", "-gdwarf-4", "-gsplit-dwarf"], "dwp"),
                  ("gcc_split5_types", "gcc", ["-O2", "-g", "-gsplit-dwarf", "-fdebug-types-section"], "llvm-dwp"),
                  ("clang_split5", "clang", ["-O2", "-g", "-gsplit-dwarf"], "llvm-dwp"),
                  ("clang_split4", "clang", ["-O2", "-gdwarf-4", "-gsplit-dwarf"], "llvm-dwp")]
SPLIT_SAMPLE = 300
# Where llvm-symbolizer 16 is wrong (each pinned by a test whose truth comes
# from the program's construction); none is accepted in the comparisons.
KNOWN_ORACLE_BUGS = [
    # llvm-symbolizer 16 applies no base address to the range lists of a split
    # unit (DW_RLE_offset_pair in .debug_rnglists.dwo, DWARF 5; .debug_ranges
    # entries at DW_AT_GNU_ranges_base, DWARF 4): where the skeleton's
    # DW_AT_low_pc is not 0 (a unit of one contiguous range), the inlined
    # levels given by DW_AT_ranges are taken at the wrong addresses and
    # dropped; llvm-dwarfdump-16 prints those lists unrelocated (e.g.
    # [0x25, 0x27) for the skeleton low_pc 0x1970). Pinned by construction:
    # the twin without -gsplit-dwarf has the same .text bytes, and there
    # llvm-symbolizer gives these levels (recurse() calls the inlined
    # Polygon::area_hash(), walk() the apply_twice <- lambda <- area_hash chain).
    "split-unit range lists without the skeleton's base address",
]
LIBRARIES = ["/usr/lib/x86_64-linux-gnu/libc.so.6"]
LIBRARY_SAMPLE = 2000
SEED = 13


def run(cmd, stdin=None, cwd=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True, cwd=cwd).stdout


def function_addresses(prog):
    addrs = set()
    for line in run(["nm", "--defined-only", prog]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addrs.add(int(parts[0], 16))
    return addrs


def text_range(prog):
    for line in run(["readelf", "-SW", prog]).splitlines():
        m = re.search(r"\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            start = int(m.group(1), 16)
            return start, start + int(m.group(2), 16)
    raise SystemExit("%s: no .text" % prog)


def debug_file(path):
    """The separate debug file of path by its build-id, if installed."""
    for line in run(["readelf", "-n", path]).splitlines():
        m = re.search(r"Build ID: ([0-9a-f]+)", line)
        if m:
            candidate = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
            return candidate if os.path.exists(candidate) else None
    return None


def llvm_chains(symbolizer, prog, addrs):
    out = json.loads(run([symbolizer, "--obj=" + prog, "--output-style=JSON", "--inlines", "--no-demangle",
                          "--functions=linkage"] + ["0x%x" % a for a in addrs]))
    chains = []
    for entry in out:
        frames = []
        for s in entry.get("Symbol", []):
            name = s.get("FunctionName", "")
            frames.append((None if name in ("", "??") else name, s.get("FileName") or None, s.get("Line", 0),
                           s.get("Column", 0)))
        # llvm-symbolizer answers an unknown address with one empty frame.
        if frames == [(None, None, 0, 0)]:
            frames = []
        chains.append(frames)
    return chains


def framewalk_chains(framewalk, prog, addrs):
    out = run([framewalk, "addr2line", "--format=json", "-e", prog] + ["%x" % a for a in addrs]).splitlines()
    chains = []
    for line in out:
        obj = json.loads(line)
        chains.append([(f["function"], f["file"], f["line"], f["column"]) for f in obj["frames"]])
    return chains


def split_by_address(text):
    """addr2line -a output: one list of lines per address."""
    answers = []
    for line in text.splitlines():
        if re.match(r"0x[0-9a-f]+(: |$)", line):
            answers.append([line])
        else:
            answers[-1].append(line)
    return [tuple(a) for a in answers]


def frames_of(answer, pretty):
    """[(function, file:line)] of one addr2line -a -f -i answer."""
    if pretty:
        out = []
        for i, line in enumerate(answer):
            text = line.split(": ", 1)[1] if i == 0 else line[len(" (inlined by) "):]
            function, _, place = text.rpartition(" at ")
            out.append((function, place))
        return out
    return [(answer[i], answer[i + 1]) for i in range(1, len(answer) - 1, 2)]


def binutils_dropped_levels(ours, theirs):
    """binutils 2.40 (dwarf2.c) ignores DW_AT_ranges given as DW_FORM_rnglistx
    on inlined subroutines (clang's DWARF 5), so it misses those levels of
    the chain and names the next one it knows, at the innermost line. True
    when its frames are framewalk's with some inlined levels left out: the
    same innermost file:line, the same outermost frame, and every one of its
    functions in framewalk's chain, in order."""
    if len(theirs) >= len(ours) or not theirs or ours[0][1] != theirs[0][1] or ours[-1][0] != theirs[-1][0]:
        return False
    names = [f[0] for f in ours]
    i = 0
    for name, _ in theirs:
        while i < len(names) and names[i] != name:
            i += 1
        if i == len(names):
            return False
        i += 1
    return True


def unit_names(symbols):
    """The base names of the compile units' DW_AT_name (their primary source files)."""
    names = set()
    for line in run(["llvm-dwarfdump-16" if shutil.which("llvm-dwarfdump-16") else "llvm-dwarfdump", "-r", "0",
                     "--debug-info", symbols]).splitlines():
        m = re.search(r'DW_AT_name\s+\("([^"]*)"\)', line)
        if m:
            names.add(os.path.basename(m.group(1)))
    return names


def binutils_unit_file(ours, theirs, units):
    """binutils 2.40 with DWARF 5 names the unit's primary source file (with
    the right line) for code from another file in some units: gcc's COMDAT
    sections (header functions, templates; conformance.addr2line documents
    it), glibc's files that include a skeleton (strfromd.c for
    strfrom-skeleton.c). True when only the innermost frame's file differs,
    binutils' being a compile unit's primary file, at the same line."""
    if len(ours) != len(theirs) or ours[1:] != theirs[1:] or ours[0][0] != theirs[0][0]:
        return False
    (our_file, _, our_line), (their_file, _, their_line) = ours[0][1].rpartition(":"), theirs[0][1].rpartition(":")
    return our_line == their_line and os.path.basename(their_file) in units and our_file != their_file


def demangle(name, cache):
    if name not in cache:
        cache[name] = run(["c++filt", name]).strip() if name.startswith("_Z") else name
    return cache[name]


def compare(args, symbolizer, name, prog, symbols_from, sample, pin, pin_files=False):
    """Compares framewalk with llvm-symbolizer and binutils on prog; returns
    (addresses, differences)."""
    failures = 0
    low, high = text_range(prog)
    rng = random.Random(SEED)
    entries = {a for a in function_addresses(symbols_from) if low <= a < high}
    addrs = sorted(entries | {rng.randrange(low, high) for _ in range(sample)})

    # The chains, against llvm-symbolizer.
    ours = framewalk_chains(args.framewalk, prog, addrs)
    theirs = llvm_chains(symbolizer, prog, addrs)
    if len(ours) != len(addrs) or len(theirs) != len(addrs):
        raise SystemExit("%s: %d/%d answers for %d addresses" % (name, len(ours), len(theirs), len(addrs)))
    differ = 0
    inlined = sum(1 for c in theirs if len(c) > 1)
    for addr, a, b in zip(addrs, ours, theirs):
        if a != b:
            differ += 1
            if differ <= 5:
                print("DIFF %s llvm 0x%x\n  framewalk:       %r\n  llvm-symbolizer: %r" % (name, addr, a, b))
    failures += differ
    print("%s: %d addresses (%d in inlined code), %d differ from llvm-symbolizer" % (name, len(addrs), inlined,
                                                                                     differ))
    # The text, against binutils, address by address (-a starts each answer).
    units = unit_names(symbols_from)
    for flags_ in (["-f", "-i"], ["-C", "-f", "-i", "-p", "-s"]):
        hex_addrs = ["%x" % a for a in addrs]
        ours_text = split_by_address(run([args.framewalk, "addr2line", "-a", "-e", prog] + flags_ + hex_addrs))
        theirs_text = split_by_address(run(["addr2line", "-a", "-e", prog] + flags_ + hex_addrs))
        if len(ours_text) != len(addrs) or len(theirs_text) != len(addrs):
            raise SystemExit("%s: addr2line %s: %d/%d answers for %d addresses"
                             % (name, " ".join(flags_), len(ours_text), len(theirs_text), len(addrs)))
        differ = dropped = comdat = 0
        pretty = "-p" in flags_
        for addr, a, b, chain, llvm in zip(addrs, ours_text, theirs_text, ours, theirs):
            if a == b:
                continue
            if chain == llvm and binutils_dropped_levels(frames_of(a, pretty), frames_of(b, pretty)):
                dropped += 1
                continue
            if chain == llvm and binutils_unit_file(frames_of(a, pretty), frames_of(b, pretty), units):
                comdat += 1
                continue
            differ += 1
            if differ <= 5:
                print("DIFF %s addr2line %s 0x%x\n  framewalk: %r\n  addr2line: %r"
                      % (name, " ".join(flags_), addr, a, b))
        failures += differ
        print("%s: addr2line %s: %d differ; binutils 2.40 wrong, framewalk equal to llvm-symbolizer: %d with "
              "inlined levels given by DW_FORM_rnglistx dropped, %d with the unit's primary file for "
              "another file's line" % (name, " ".join(flags_), differ, dropped, comdat))
    if not pin:
        return len(addrs), failures
    # Pinned by construction: walk() calls apply_twice(), which calls the
    # lambda, which calls Polygon::area_hash(); all are inlined at -O2, so
    # some address of walk() has exactly that chain (binutils 2.40 misses
    # the levels clang's DWARF 5 gives by rnglistx).
    want = [("Polygon::area_hash",), ("operator()", "$_0", "lambda"), ("apply_twice",), ("shapes::walk(",)]
    demangled = {}
    found = False
    for chain in ours:
        names = [demangle(f[0] or "", demangled) for f in chain]
        if len(names) == 4 and all(any(w in n for w in ws) for ws, n in zip(want, names)):
            found = True
            break
    if not found:
        failures += 1
        print("DIFF %s: no address with the chain area_hash <- lambda <- apply_twice <- walk" % name)
    # Pinned by construction (binutils' unit file, seen in gcc's builds):
    # code of a function the header defines (shapes::mix, Accumulator,
    # Polygon) lies in the header, and code of a std:: function in none of
    # the program's .cpp files (line 0 rows, code of no one line, are left
    # out; clang's rows inside inlined code may name the caller's file).
    misplaced = checked = 0
    for addr, chain in zip(addrs, ours if pin_files else []):
        if not chain or not chain[0][0] or not chain[0][1] or chain[0][2] == 0:
            continue
        function, path = demangle(chain[0][0], demangled), os.path.basename(chain[0][1])
        in_header = any(n in function for n in ("shapes::mix(", "shapes::Accumulator", "shapes::Polygon::"))
        in_std = function.split("<")[0].split(" ")[-1].startswith("std::")
        checked += in_header or in_std
        if (in_header and path != "inline_cxx.hpp") or (in_std and path in SOURCES):
            misplaced += 1
            if misplaced <= 5:
                print("DIFF %s 0x%x: %s in %s" % (name, addr, function, path))
    if pin_files and checked == 0:
        misplaced += 1
        print("DIFF %s: no address in a header or std:: function" % name)
    elif pin_files:
        print("%s: %d addresses in header and std:: functions, %d in the wrong file" % (name, checked, misplaced))
    failures += misplaced
    return len(addrs), failures


def compare_dwz(args, symbolizer, name, prog):
    """The program and a twin made into a dwz pair with it (dwz -m: the
    common DIEs and strings moved to a supplementary file, referred to by
    DW_FORM_GNU_ref_alt and GNU_strp_alt through .gnu_debugaltlink). dwz
    changes no code: framewalk's chains on the pair must equal
    llvm-symbolizer's on the original at every address, and its text
    binutils' on the pair. llvm-symbolizer 16 itself does not read the
    supplementary file (it prints ?? for names behind GNU_ref_alt and
    relative paths for a comp_dir in it): its answers on the pair are not
    compared. Returns (addresses, differences)."""
    work = os.path.dirname(prog)
    pair = [os.path.join(work, name + "_dwz_" + s) for s in ("a", "b")]
    common = os.path.join(work, name + "_dwz_common.debug")
    for p in pair:
        shutil.copyfile(prog, p)
    run(["dwz", "-m", common, "-M", common] + pair)
    low, high = text_range(prog)
    rng = random.Random(SEED)
    entries = {a for a in function_addresses(prog) if low <= a < high}
    addrs = sorted(entries | {rng.randrange(low, high) for _ in range(SAMPLE)})
    ours = framewalk_chains(args.framewalk, pair[0], addrs)
    truth = llvm_chains(symbolizer, prog, addrs)
    differ = sum(1 for a, b in zip(ours, truth) if a != b)
    for addr, a, b in [(x, a, b) for x, a, b in zip(addrs, ours, truth) if a != b][:5]:
        print("DIFF %s dwz 0x%x\n  framewalk (pair):         %r\n  llvm-symbolizer (original): %r" % (name, addr, a, b))
    hex_addrs = ["%x" % a for a in addrs]
    ours_text = run([args.framewalk, "addr2line", "-a", "-f", "-i", "-e", pair[0]] + hex_addrs)
    # binutils 2.40 puts the file's directory before an absolute
    # .gnu_debugaltlink path too (and then finds no supplementary file, "unable
    # to read alt ref"): it is run from the pair's directory on a relative name.
    theirs_text = run(["addr2line", "-a", "-f", "-i", "-e", os.path.basename(pair[0])] + hex_addrs, cwd=work)
    units = unit_names(prog)
    text_differ = no_chain = 0
    for a, b, chain, llvm in zip(split_by_address(ours_text), split_by_address(theirs_text), ours, truth):
        if a == b:
            continue
        if chain != llvm:
            text_differ += 1
            continue
        ours_frames, theirs_frames = frames_of(a, False), frames_of(b, False)
        if binutils_unit_file(ours_frames, theirs_frames, units):
            continue
        # binutils 2.40 reads no function of a DWARF 5 dwz file: it answers
        # with the line table's row and the ELF symbol's name only.
        if len(theirs_frames) == 1 and theirs_frames[0][1] == ours_frames[0][1] and name.endswith("dwarf5"):
            no_chain += 1
            continue
        text_differ += 1
        if text_differ <= 5:
            print("DIFF %s dwz pair, addr2line -f -i\n  framewalk: %r\n  addr2line: %r" % (name, a, b))
    print("%s dwz pair: %d addresses, %d differ from llvm-symbolizer on the original, %d from binutils on the pair "
          "(binutils 2.40 wrong, reading no function of a DWARF 5 dwz file: %d)" % (name, len(addrs), differ,
                                                                                 text_differ, no_chain))
    return len(addrs), differ + text_differ


def llvm_split_dropped_levels(ours, theirs):
    """KNOWN_ORACLE_BUGS[0]: llvm-symbolizer's chain is framewalk's with some
    inlined levels left out: the same innermost location, the same physical
    function, its functions a subsequence of framewalk's."""
    if not theirs or len(theirs) >= len(ours) or theirs[0][1:] != ours[0][1:] or theirs[-1][0] != ours[-1][0]:
        return False
    names = iter(f[0] for f in ours)
    return all(any(n == t[0] for n in names) for t in theirs)


def text_bytes(prog):
    out = prog + ".text"
    run(["objcopy", "-O", "binary", "-j", ".text", prog, out])
    with open(out, "rb") as f:
        return f.read()


def compare_broken_package(args, name, prog, package, addrs, lines_with):
    """A .dwp made hostile, in two ways: a slot count that is not a power of
    two (.debug_cu_index offset 12) and the first unit's DW_SECT_INFO
    contribution moved past the end of .debug_info.dwo. framewalk must name
    the package, the section and the offset, print the line table's answers
    and not crash. Returns the differences."""
    at = None
    for line in run(["readelf", "-SW", package]).splitlines():
        m = re.search(r"\]\s+\.debug_cu_index\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            at = int(m.group(1), 16)
    with open(package, "rb") as f:
        original = f.read()
    sections, slots = (int.from_bytes(original[at + i:at + i + 4], "little") for i in (4, 12))
    ids = [int.from_bytes(original[at + 16 + 12 * slots + 4 * c:at + 20 + 12 * slots + 4 * c], "little")
           for c in range(sections)]
    info_at = at + 16 + 12 * slots + 4 * sections + 4 * ids.index(1)
    cases = [(at + 12, (slots - 1).to_bytes(4, "little"), "bad .debug_cu_index at offset 0xc of .debug_cu_index"),
             (info_at, (0xfffff000).to_bytes(4, "little"), "bad .debug_cu_index at offset 0xfffff000 of .debug_info.dwo")]
    failures = 0
    for where, value, want in cases:
        with open(package, "wb") as f:
            f.write(original[:where] + value + original[where + 4:])
        done = subprocess.run([args.framewalk, "addr2line", "-e", prog] + ["%x" % a for a in addrs],
                              capture_output=True, text=True)
        if done.returncode != 1 or package + ": " + want not in done.stderr or done.stdout.splitlines() != lines_with:
            failures += 1
            print("DIFF %s hostile .dwp (%s): exit %d, stderr %r" % (name, want, done.returncode, done.stderr[:300]))
    with open(package, "wb") as f:
        f.write(original)
    print("%s: hostile .dwp: %d of %d cases wrong" % (name, failures, len(cases)))
    return failures


def compare_split(args, symbolizer, name, compiler, flags, packager):
    """A -gsplit-dwarf build: with its .dwo files, with only its .dwp, with
    neither. Returns (addresses, differences)."""
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prog = os.path.join(work, "inline_" + name)
    # Built from the directory, so that the .dwo files land there (clang names them after the sources).
    source = os.path.abspath(args.source)
    run([compiler] + flags + ["-I" + source] + [os.path.join(source, f) for f in SOURCES] + ["-o", prog], cwd=work)
    twin = os.path.join(work, "twin_" + name)
    run([compiler] + [f for f in flags if f != "-gsplit-dwarf"] + ["-I" + source] +
        [os.path.join(source, f) for f in SOURCES] + ["-o", twin], cwd=work)
    if text_bytes(prog) != text_bytes(twin):
        raise SystemExit("%s: the twin without -gsplit-dwarf has other code" % name)
    dwos = sorted(f for f in os.listdir(work) if f.endswith(".dwo"))
    if len(dwos) != len(SOURCES):
        raise SystemExit("%s: %d .dwo files for %d sources" % (name, len(dwos), len(SOURCES)))
    low, high = text_range(prog)
    rng = random.Random(SEED)
    entries = {a for a in function_addresses(prog) if low <= a < high}
    addrs = sorted(entries | {rng.randrange(low, high) for _ in range(SPLIT_SAMPLE)})
    failures = 0

    def against(kind, ours, theirs, known=None):
        """(differences, those that are KNOWN_ORACLE_BUGS[0] when `known`)."""
        differ = abs(len(ours) - len(theirs))
        bug = 0
        for addr, a, b in zip(addrs, ours, theirs):
            if a == b:
                continue
            if known and llvm_split_dropped_levels(a, b):
                bug += 1
                continue
            differ += 1
            if differ <= 5:
                print("DIFF %s %s 0x%x\n  framewalk:       %r\n  llvm-symbolizer: %r" % (name, kind, addr, a, b))
        return differ, bug

    with_dwo = framewalk_chains(args.framewalk, prog, addrs)
    truth = llvm_chains(symbolizer, twin, addrs)
    split_llvm = llvm_chains(symbolizer, prog, addrs)
    inlined = sum(1 for c in truth if len(c) > 1)
    named = sum(1 for c in truth if c and c[0][0])
    differ, _ = against(".dwo", with_dwo, truth)
    split_differ, bug = against(".dwo, llvm-symbolizer on the split build", with_dwo, split_llvm, True)
    failures += differ + split_differ
    print("%s: %d addresses (%d in inlined code, %d named), %d differ from llvm-symbolizer on the twin; on the split "
          "build %d differ, %d by KNOWN_ORACLE_BUGS[0] (%s)" % (name, len(addrs), inlined, named, differ, split_differ,
                                                              bug, KNOWN_ORACLE_BUGS[0]))
    if inlined == 0:
        failures += 1
        print("DIFF %s: no inlined frame at all" % name)
    lines_with = run([args.framewalk, "addr2line", "-e", prog] + ["%x" % a for a in addrs]).splitlines()
    if inlined == 0:
        failures += 1
        print("DIFF %s: no inlined frame at all: the split units were not read" % name)
    # Only the package: the .dwo files moved where nothing looks for them.
    package = prog + ".dwp"
    tool = shutil.which("llvm-dwp-16") or shutil.which("llvm-dwp") if packager == "llvm-dwp" else shutil.which("dwp")
    moved = os.path.join(work, "moved")
    os.makedirs(moved)
    if tool:
        run([tool, "-e", prog, "-o", package], cwd=work)
        for f in dwos:
            os.rename(os.path.join(work, f), os.path.join(moved, f))
        from_dwp = framewalk_chains(args.framewalk, prog, addrs)
        differ, _ = against(".dwp", from_dwp, truth)
        split_differ, bug = against(".dwp, llvm-symbolizer on the split build", from_dwp,
                                    llvm_chains(symbolizer, prog, addrs), True)
        failures += differ + split_differ
        print("%s: %d addresses, .dwp by %s only: %d differ from llvm-symbolizer on the twin; on the split build "
              "%d differ, %d by KNOWN_ORACLE_BUGS[0]" % (name, len(addrs), os.path.basename(tool), differ,
                                                         split_differ, bug))
        failures += compare_broken_package(args, name, prog, package, addrs, lines_with)
        os.remove(package)
    else:
        print("%s: .dwp skipped (no %s)" % (name, packager))
        for f in dwos:
            os.rename(os.path.join(work, f), os.path.join(moved, f))
    # Neither: the line table still answers, the missing .dwo is named, nothing crashes.
    hex_addrs = ["%x" % a for a in addrs]
    done = subprocess.run([args.framewalk, "addr2line", "-e", prog] + hex_addrs, capture_output=True, text=True)
    lines = done.stdout.splitlines()
    wrong = sum(1 for got, w in zip(lines, lines_with) if got != w) + abs(len(lines) - len(addrs))
    if sum(1 for line in lines if not line.startswith("??")) < len(addrs) // 2:
        wrong += 1  # the line table must know most of .text
    missing_named = all(os.path.join(work, f) in done.stderr for f in dwos) if named else True
    if done.returncode not in (0, 1) or wrong or not missing_named:
        failures += 1
        print("DIFF %s without .dwo/.dwp: exit %d, %d lines differ from the line table's, stderr %r"
              % (name, done.returncode, wrong, done.stderr[:300]))
    print("%s: without .dwo/.dwp: %d addresses, %d file:line differ, missing .dwo named: %s"
          % (name, len(addrs), wrong, missing_named))
    # Stale: each skeleton finds the other unit's .dwo (their names swapped): a
    # dwo id mismatch is reported for each, no function of the wrong unit is
    # used, the line table still answers.
    for f, g in zip(dwos, dwos[1:] + dwos[:1]):
        os.rename(os.path.join(moved, f), os.path.join(work, g))
    done = subprocess.run([args.framewalk, "addr2line", "-f", "-e", prog] + hex_addrs, capture_output=True, text=True)
    plain = subprocess.run([args.framewalk, "addr2line", "-e", prog] + hex_addrs, capture_output=True, text=True)
    mismatches = done.stderr.count("split DWARF unit of another dwo id")
    if done.returncode != 1 or mismatches != len(dwos) or plain.stdout.splitlines() != lines_with:
        failures += 1
        print("DIFF %s with swapped .dwo files: exit %d, %d mismatches reported, stderr %r"
              % (name, done.returncode, mismatches, done.stderr[:300]))
    print("%s: swapped .dwo files: %d dwo id mismatches reported" % (name, mismatches))
    for f, g in zip(dwos, dwos[1:] + dwos[:1]):
        os.rename(os.path.join(work, g), os.path.join(work, f))
    return len(addrs), failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--source", required=True, help="tests/conformance/fixtures")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--clang", default="clang++")
    ap.add_argument("--only", help="run only the variants whose name contains this (for development)")
    ap.add_argument("--extra", action="append", default=[],
                    help="another file to compare (its function symbols and a sample), e.g. the framewalk command")
    args = ap.parse_args()
    symbolizer = shutil.which("llvm-symbolizer-16") or shutil.which("llvm-symbolizer")
    for tool in ("addr2line", "readelf", "nm", args.cxx, symbolizer):
        if not tool or not shutil.which(tool):
            print("skipped: %s not found" % (tool or "llvm-symbolizer"))
            return 77
    compilers = {"gcc": args.cxx, "clang": shutil.which(args.clang)}
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    total = 0
    for name, compiler, flags in VARIANTS:
        if args.only and args.only not in name:
            continue
        if not compilers[compiler]:
            print("%s: skipped (no %s)" % (name, compiler))
            continue
        prog = os.path.join(args.work, "inline_" + name)
        run([compilers[compiler]] + flags + ["-I" + args.source] + [os.path.join(args.source, f) for f in SOURCES]
            + ["-o", prog])
        if name.endswith("_zstd"):
            run(["objcopy", "--compress-debug-sections=zstd", prog])
        n, f = compare(args, symbolizer, name, prog, prog, SAMPLE, True, compiler == "gcc")
        total += n
        failures += f
        if name in ("gcc_dwarf5", "gcc_dwarf4") and shutil.which("dwz"):
            n, f = compare_dwz(args, symbolizer, name, prog)
            total += n
            failures += f
    for name, compiler, flags, packager in SPLIT_VARIANTS:
        if args.only and args.only not in name:
            continue
        if not compilers[compiler]:
            print("%s: skipped (no %s)" % (name, compiler))
            continue
        n, f = compare_split(args, symbolizer, name, compilers[compiler], flags, packager)
        total += n
        failures += f
    if args.only:
        print("conformance.inline (%s only): %d addresses, %d differences" % (args.only, total, failures))
        return 1 if failures else 0
    # glibc with libc6-dbg's debug file (found by build-id): every function
    # symbol's entry and a sample of .text, when the debug file is installed.
    for extra in args.extra:
        n, f = compare(args, symbolizer, os.path.basename(extra), extra, extra, LIBRARY_SAMPLE, False)
        total += n
        failures += f
    for library in LIBRARIES:
        debug = debug_file(library)
        if not debug:
            print("%s: skipped (no debug file)" % library)
            continue
        n, f = compare(args, symbolizer, os.path.basename(library), library, debug, LIBRARY_SAMPLE, False)
        total += n
        failures += f
    print("conformance.inline: %d addresses, %d differences" % (total, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

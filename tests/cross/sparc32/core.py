#!/usr/bin/env python3
"""32-bit SPARC cores, made here from real 32-bit SPARC code, read by framewalk.

Debian has no 32-bit SPARC libc and qemu-user 7.2 writes no SPARC core, but
sparc64-linux-gnu-gcc -m32 builds 32-bit code and qemu runs it: a static
program without libc (../chain32.c, start.S; -mcpu=v8 gives EM_SPARC, run
by qemu-sparc; the default v8plus EM_SPARC32PLUS, run by qemu-sparc32plus)
runs under qemu's gdb stub to its last trap, which first flushes the
register windows to their save areas (`ta 3`, as a kernel does before it
writes a core). gdb_dump.py saves the registers and the stack there, and
this file writes the core a 32-bit kernel writes: ELFCLASS32, NT_PRSTATUS
(pr_reg at 72: the 38-word elf_gregset_t, %g0-%i7, psr, pc, npc, y, wim,
tbr), NT_FILE naming the program, its segments and the stack.

Variants: `cfi` (gcc's .eh_frame) and `windows` (no unwind tables: every
frame a register window), for each e_machine. Cores: `plain` (trapped in
trap()), `sigframe` (the trap's SIGILL delivered by qemu to chain_handler
with a struct signal_frame, returning to start.S's __restore, `mov 216,
%g1; ta 0x10`) and `rt` (SA_SIGINFO: a struct rt_signal_frame, returning
to __restore_rt, `mov 101, %g1; ta 0x10`), trapped again in the handler.
Each core also holds the main thread waiting in a join (chain32.c's
join_main, run again with argc 4 on a stack 1 MiB lower), after the
crashing thread, as x32's and s390's cores do (made_cores.chain_problems).

The truth:
- chain: framewalk's functions equal the chain the program's construction
  gives, and the walk ends `outermost`; always.
- gdb-multiarch, PC for PC: gdb's frames of the stopped program itself,
  through the stub (gdb 13 finds no registers in these cores: "Couldn't
  find general-purpose registers in core file"). Every core whole but the
  signal ones: qemu copies the interrupted window into the signal frame
  only, where the kernel also flushes it to its own save area first, and
  gdb reads that stale save area and stops after the interrupted frame's
  caller (f3); there, the frames up to it.

  core.py --framewalk build/framewalk --work DIR
Exit 77 (skipped) without sparc64-linux-gnu-gcc, qemu or gdb-multiarch.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import socket
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from made_cores import chain_problems, check, framewalk_threads, names  # noqa: E402
CC = "sparc64-linux-gnu-gcc"
MACHINES = {"sparc": ("qemu-sparc", ["-mcpu=v8"], 2), "sparc32plus": ("qemu-sparc32plus", [], 18)}
PLAIN = ["trap", "f3", "f2", "f1", "_start"]
HANDLER = ["trap2", "h2", "h1", "chain_handler"]
VARIANTS = {
    "cfi": ["-g", "-fasynchronous-unwind-tables"],
    "windows": ["-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"],
}
# Core kind: (the program's arguments, the trampoline frame's function).
KINDS = {"plain": ([], None), "sigframe": (["a"], "__restore"), "rt": (["a", "b"], "__restore_rt")}
JOIN_ARGS = ["a", "b", "c"]  # start.S: the main thread in a join
PAGE = 4096
SIGILL = 4
NT_PRSTATUS, NT_FILE = 1, 0x46494C45


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dump(qemu, program, args, stops, out):
    """Runs `program` under qemu's gdb stub to its last trap; gdb_dump.py's JSON."""
    port = free_port()
    proc = subprocess.Popen([qemu, "-g", str(port), program] + args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        env = dict(os.environ, FW_STOPS=str(stops), FW_DUMP=out)
        check(["gdb-multiarch", "-nx", "-batch", "-ex", "file " + program, "-ex", "target remote :%d" % port,
               "-x", os.path.join(HERE, "gdb_dump.py")], env=env)
    finally:
        proc.kill()
        proc.wait()
    with open(out) as f:
        return json.load(f)


def loads(program):
    """(p_vaddr, p_memsz, p_offset, p_flags, contents) of a big-endian ELF32 file's PT_LOADs."""
    data = open(program, "rb").read()
    phoff, = struct.unpack_from(">I", data, 28)
    phentsize, phnum = struct.unpack_from(">HH", data, 42)
    out = []
    for i in range(phnum):
        p_type, offset, vaddr, _, filesz, memsz, flags, _ = struct.unpack_from(">8I", data, phoff + i * phentsize)
        if p_type == 1:
            out.append((vaddr, memsz, offset, flags, data[offset:offset + filesz]))
    return out


def note(kind, name, desc):
    pad = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    return struct.pack(">III", len(name) + 1, len(desc), kind) + pad(name + b"\0") + pad(desc)


def write_core(path, e_machine, program, states):
    """The core of `states`' threads (the crashing one first, as the kernel
    writes the dumping thread first; thread ids counting down to 1), each
    stack cut short of the next one's."""
    notes = b""
    for n, state in enumerate(states):
        prstatus = bytearray(72)
        struct.pack_into(">h", prstatus, 12, SIGILL if n == 0 else 0)  # pr_cursig
        struct.pack_into(">i", prstatus, 24, len(states) - n)           # pr_pid
        prstatus += struct.pack(">38I", *state["registers"]) + struct.pack(">i", 0)
        notes += note(NT_PRSTATUS, b"CORE", bytes(prstatus))
    segments = loads(program)
    files = [(v & ~(PAGE - 1), (v + m + PAGE - 1) & ~(PAGE - 1), o & ~(PAGE - 1)) for v, m, o, _, _ in segments]
    name = os.path.abspath(program).encode()
    nt_file = struct.pack(">II", len(files), PAGE) + b"".join(struct.pack(">III", s, e, o // PAGE)
                                                              for s, e, o in files)
    nt_file += (name + b"\0") * len(files)
    notes += note(NT_FILE, b"CORE", nt_file)
    blocks = [(v, m, f, c) for v, m, _, f, c in segments]
    stacks = sorted((state["stack_start"], bytes.fromhex(state["stack"])) for state in states)
    for i, (start, contents) in enumerate(stacks):
        if i + 1 < len(stacks):
            contents = contents[:max(stacks[i + 1][0] - start, 0)]
        blocks.append((start, len(contents), 6, contents))
    blocks.sort(key=lambda b: b[0])
    phnum = 1 + len(blocks)
    at = 52 + 32 * phnum
    phdrs = struct.pack(">8I", 4, at, 0, 0, len(notes), 0, 0, 4)
    body = notes
    for vaddr, memsz, flags, contents in blocks:
        phdrs += struct.pack(">8I", 1, at + len(body), vaddr, 0, len(contents), memsz, flags, PAGE)
        body += contents
    ident = b"\x7fELF\x01\x02\x01" + b"\0" * 9  # ELFCLASS32, ELFDATA2MSB
    header = ident + struct.pack(">HHIIIIIHHHHHH", 4, e_machine, 1, 0, 52, 0, 0, 52, 32, phnum, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(header + phdrs + body)


def make(work, machine, variant, kind):
    """Runs the variant's program to its trap and writes the core: (the core, gdb's frames)."""
    qemu, _, e_machine = MACHINES[machine]
    program = os.path.join(work, "chain_%s_%s" % (machine, variant))
    args, _ = KINDS[kind]
    core = os.path.join(work, "%s_%s_%s.core" % (machine, variant, kind))
    state = dump(qemu, program, args, 2 if args else 1, core + ".json")
    join = dump(qemu, program, JOIN_ARGS, 1, core + ".join.json")
    write_core(core, e_machine, program, [state, join])
    return core, state["gdb_frames"], join["gdb_frames"]


def compare(fw, core, gdb, gdb_join, kind):
    _, trampoline = KINDS[kind]
    expected = HANDLER + [trampoline] + PLAIN if trampoline else PLAIN
    threads = framewalk_threads(fw, core)
    problems = chain_problems(threads, expected)
    if problems:
        return threads, problems, 0
    crashing, main_thread = threads
    ours = [int(f["pc"], 16) for f in crashing["frames"]]
    theirs = [pc for pc, _, _ in gdb]
    # gdb stops after the interrupted frame's caller where qemu delivered a
    # signal (see above): there, up to that frame.
    whole = len(theirs) == len(ours) if not trampoline else len(theirs) >= len(HANDLER) + 3
    if not whole or ours[:len(theirs)] != theirs:
        problems.append("PCs %s, gdb's %s" % ([hex(p) for p in ours], [hex(p) for p in theirs]))
    if trampoline and not (len(gdb) > len(HANDLER) and gdb[len(HANDLER)][1]):
        problems.append("gdb's frame %d is no signal frame" % len(HANDLER))
    joined = [pc for pc, _, _ in gdb_join]
    if [int(f["pc"], 16) for f in main_thread["frames"]] != joined:
        problems.append("main thread: PCs %s, gdb's %s" % ([f["pc"] for f in main_thread["frames"]],
                                                            [hex(p) for p in joined]))
    return threads, problems, len(theirs) + len(joined)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    for tool in [CC, "gdb-multiarch"] + [qemu for qemu, _, _ in MACHINES.values()]:
        if not shutil.which(tool):
            print("skip: no " + tool)
            return 77
    fw = os.path.abspath(args.framewalk)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    for machine, (_, cpu, _) in MACHINES.items():
        for variant, flags in VARIANTS.items():
            check([CC, "-m32"] + cpu + ["-O2", "-fno-pic", "-no-pie", "-nostdlib", "-static"] + flags +
                  ["-o", os.path.join(work, "chain_%s_%s" % (machine, variant)),
                   os.path.join(HERE, "..", "chain32.c"), os.path.join(HERE, "start.S")])
    cases = [(m, v, k) for m in MACHINES for v in VARIANTS for k in KINDS]
    failures = compared = gdb_compared = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        made = list(pool.map(lambda c: make(work, *c), cases))
        results = list(pool.map(lambda c, made_core: compare(fw, *made_core, c[2]), cases, made))
    for (machine, variant, kind), (threads, problems, against_gdb) in zip(cases, results):
        compared += sum(len(t["frames"]) for t in threads)
        gdb_compared += against_gdb
        print("%-11s %-7s %-8s %-4s %s" % (machine, variant, kind, "ok" if not problems else "FAIL",
                                           names(threads)))
        for p in problems:
            print("    " + p)
        failures += bool(problems)
    print("sparc32 cores: %d cores, %d frames against their construction, %d against gdb-multiarch; %d failed"
          % (len(cases), compared, gdb_compared, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

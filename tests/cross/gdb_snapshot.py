# Run inside gdb-multiarch attached to qemu-user's gdb stub (gdb -batch
# -x gdb_snapshot.py, then -x ../stack/gdb_frames.py for gdb's own frames):
# continues to the fatal SIGABRT and saves the stopped program as a framewalk
# snapshot (src/target/snapshot_target.hpp) in $FW_SNAPSHOT_DIR, for machines
# whose qemu-user writes no core (riscv64, sparc64):
#
#   machine   $FW_MACHINE
#   TID.regs  frame 0's registers $FW_REGISTERS ("gdbname=dwarf,...") and the
#             PC (DWARF $FW_PC_DWARF)
#   TID.stack from 128 bytes below every frame's SP that gdb reports, page by
#             page up to the first unreadable page or 1 MiB: the interrupted
#             stacks and a sigaltstack's; and the main thread's 256 KiB
#             below its environment
#   code      the page of each signal trampoline gdb walks through (qemu's
#             own page, which no file backs)
#   maps      each PT_LOAD of the files gdb has loaded, at its load bias
#             (the executable's from its relocated entry point, a library's
#             from its .text address in `info sharedlibrary`); files under
#             $FW_SYSROOT by their path in the guest, the others copied to
#             objects/ and named by that absolute path
#
# With $FW_FLUSH_WINDOWS (SPARC), a program of one thread first calls the C
# library's _setjmp, which flushes its register windows to their save areas
# on the stack, as a kernel does before it writes a core: without that, the
# callers' %l and %i registers of the windows still in the CPU are in no
# memory gdb or framewalk can read. (gdb cannot make such a call in one
# thread of several under qemu-user: a multi-threaded program flushes its
# own, stub_snapshots.py's FLUSHED.)
import os
import re
import shutil
import struct

import gdb

OUT = os.environ["FW_SNAPSHOT_DIR"]
SYSROOT = os.environ.get("FW_SYSROOT", "")
PC_DWARF = int(os.environ["FW_PC_DWARF"])
REGISTERS = [(name, int(number)) for name, number in
             (item.split("=") for item in os.environ["FW_REGISTERS"].split(","))]
FLUSH_WINDOWS = bool(os.environ.get("FW_FLUSH_WINDOWS"))
SIGNAL_SP_SLOT = int(os.environ.get("FW_SIGNAL_SP_SLOT") or 0)
PAGE = 4096
MAX_STACK = 1 << 20
MAIN_STACK = 256 << 10
GUARD = 64 << 10  # the most a guard page below a thread's stack takes


def elf_layout(path):
    """(e_entry, [(p_vaddr, p_memsz, p_offset, p_flags) of PT_LOAD], .text sh_addr) of an ELF64 file."""
    with open(path, "rb") as f:
        data = f.read()
    e = "<" if data[5] == 1 else ">"  # EI_DATA
    entry, phoff, shoff = struct.unpack_from(e + "QQQ", data, 24)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(e + "HHHHH", data, 54)
    loads = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, _, p_memsz, _ = struct.unpack_from(e + "IIQQQQQQ", data,
                                                                                 phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_memsz, p_offset, p_flags))
    text = None
    if shoff and shstrndx < shnum:
        strtab_off = struct.unpack_from(e + "Q", data, shoff + shstrndx * shentsize + 24)[0]
        for i in range(shnum):
            name, _, _, addr = struct.unpack_from(e + "IIQQ", data, shoff + i * shentsize)
            end = data.index(b"\0", strtab_off + name)
            if data[strtab_off + name:end] == b".text":
                text = addr
    return entry, loads, text


def maps_lines(path, bias, name):
    _, loads, _ = elf_layout(path)
    lines = []
    for vaddr, memsz, offset, flags in loads:
        start = (vaddr + bias) & ~(PAGE - 1)
        end = (vaddr + bias + memsz + PAGE - 1) & ~(PAGE - 1)
        perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
        lines.append("%x-%x %s %08x 00:00 0 %s" % (start, end, perms, offset & ~(PAGE - 1), name))
    return lines


def mapped_name(path):
    """The name a maps line gives `path`: its guest path under the sysroot,
    else a copy under objects/ (absolute)."""
    if SYSROOT and path.startswith(SYSROOT.rstrip("/") + "/"):
        return path[len(SYSROOT.rstrip("/")):]
    objects = os.path.join(os.path.abspath(OUT), "objects")
    os.makedirs(objects, exist_ok=True)
    copy = os.path.join(objects, os.path.basename(path))
    shutil.copy(path, copy)
    return copy


def write_maps():
    lines = []
    exe = gdb.current_progspace().filename
    m = re.search(r"Entry point: (0x[0-9a-f]+)", gdb.execute("info files", to_string=True))
    entry = elf_layout(exe)[0]
    lines += maps_lines(exe, int(m.group(1), 16) - entry if m else 0, mapped_name(exe))
    for line in gdb.execute("info sharedlibrary", to_string=True).splitlines():
        m = re.match(r"\s*(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+Yes(?: \(\*\))?\s+(\S.*)$", line)
        if not m:
            continue
        path = os.path.abspath(m.group(2))  # dlopen("./lib.so"): the run directory's
        text = elf_layout(path)[2]
        if text is None:
            continue
        lines += maps_lines(path, int(m.group(1), 16) - text, mapped_name(path))
    with open(os.path.join(OUT, "maps"), "w") as f:
        f.write("\n".join(sorted(lines, key=lambda l: int(l.split("-")[0], 16))) + "\n")


def read(address, size):
    try:
        return bytes(gdb.selected_inferior().read_memory(address, size))
    except (gdb.MemoryError, gdb.error):
        return None


def stack_blocks(seeds):
    """Pages up from each seed (an SP less 128), to the first unreadable one
    after a readable one, or 1 MiB. A seed in a guard page (the SP of a
    thread that overflowed its stack) starts at the stack above it."""
    pages = {}
    for seed in sorted(seeds):
        page = seed & ~(PAGE - 1)
        started = False
        while page < (seed & ~(PAGE - 1)) + MAX_STACK:
            if page not in pages:
                got = read(page, PAGE)
                if got is None:
                    if started or page - (seed & ~(PAGE - 1)) >= GUARD:
                        break
                    page += PAGE
                    continue
                pages[page] = got
            started = True
            page += PAGE
    blocks = []
    for page in sorted(pages):
        if blocks and blocks[-1][0] + len(blocks[-1][1]) == page:
            blocks[-1][1].extend(pages[page])
        else:
            blocks.append([page, bytearray(pages[page])])
    return blocks


def write_blocks(path, blocks):
    with open(path, "wb") as f:
        for address, data in blocks:
            f.write(struct.pack("<QQ", address, len(data)) + bytes(data))


def flush_windows():
    """Has the selected thread flush its register windows (the jmp_buf from
    malloc: below the stack pointer, gdb's dummy frame or the end of a
    sigaltstack may lie)."""
    gdb.execute("call (int)_setjmp((void*)malloc(1024))", to_string=True)
    gdb.invalidate_cached_frames()


def main_stack_seed():
    """The main thread's stack below its top, where the environment lies:
    frames gdb does not reach (interrupted code below a handler on a
    sigaltstack, where gdb stops early) are on it."""
    try:
        top = int(gdb.parse_and_eval("(unsigned long)environ"))
    except gdb.error:
        return []
    return [max(top - MAIN_STACK, 0)] if top else []


def interrupted_sp_seed(frame):
    """With $FW_SIGNAL_SP_SLOT (sparc64, where gdb stops after a signal
    frame qemu wrote): the interrupted SP, saved that many bytes above the
    trampoline frame's SP, so that the stack gdb does not reach is saved."""
    if not SIGNAL_SP_SLOT:
        return []
    try:
        slot = int(frame.read_register("sp")) + SIGNAL_SP_SLOT
        sp = int(gdb.parse_and_eval("*(unsigned long *)%d" % slot))
    except gdb.error:
        return []
    return [max(sp - 128, 0)]


def save_thread(thread, trampolines, flush):
    thread.switch()
    if flush:
        flush_windows()
    frame = gdb.newest_frame()
    regs = ["%d %x" % (PC_DWARF, frame.pc())]
    for name, number in REGISTERS:
        regs.append("%d %x" % (number, int(frame.read_register(name)) & (2**64 - 1)))
    seeds = []
    while frame is not None and len(seeds) < 8192:
        try:
            seeds.append(max(int(frame.read_register("sp")) - 128, 0))
            if frame.type() == gdb.SIGTRAMP_FRAME:
                trampolines.add(frame.pc() & ~(PAGE - 1))
                seeds += interrupted_sp_seed(frame)
            frame = frame.older()
        except gdb.error:
            break
    if thread.num == 1:
        seeds += main_stack_seed()
    tid = thread.ptid[1]
    with open(os.path.join(OUT, "%d.regs" % tid), "w") as f:
        f.write("\n".join(regs) + "\n")
    write_blocks(os.path.join(OUT, "%d.stack" % tid), stack_blocks(seeds))


def main():
    os.makedirs(OUT, exist_ok=True)
    for sig in ("SIGSEGV", "SIGUSR1", "SIGUSR2", "SIGCHLD"):
        gdb.execute("handle %s nostop noprint pass" % sig)
    gdb.execute("continue")
    with open(os.path.join(OUT, "machine"), "w") as f:
        f.write(os.environ["FW_MACHINE"] + "\n")
    write_maps()
    trampolines = set()
    inferior = gdb.selected_inferior()
    threads = sorted(inferior.threads(), key=lambda t: t.num)
    if not threads:
        raise gdb.GdbError("the program has no thread: it ended before its abort")
    for thread in threads:
        save_thread(thread, trampolines, FLUSH_WINDOWS and len(threads) == 1)
    code = [[page, bytearray(read(page, PAGE) or b"")] for page in sorted(trampolines)]
    write_blocks(os.path.join(OUT, "code"), [b for b in code if b[1]])
    print("FRAMEWALK-SNAPSHOT-SAVED " + OUT)


main()

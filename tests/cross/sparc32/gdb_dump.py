# Run inside gdb-multiarch attached to qemu-user's gdb stub (core.py):
# continues to the program's last SIGILL ($FW_STOPS stops, the first
# delivered to the handler when it has one) and saves what a 32-bit SPARC
# kernel's core of it holds, as JSON in $FW_DUMP: the registers in
# elf_gregset_t's order and the stack's pages, from the page of %sp up to
# the first page the stub cannot read; and gdb's own frames of the stopped
# program, (pc, is a signal frame, function), as made_cores.gdb_frames
# gives them of a core (gdb 13 reads no registers from a 32-bit SPARC
# Linux core).
import json
import os

import gdb

REGISTERS = (["g%d" % i for i in range(8)] + ["o%d" % i for i in range(6)] + ["sp", "o7"] +
             ["l%d" % i for i in range(8)] + ["i%d" % i for i in range(6)] + ["fp", "i7"] +
             ["psr", "pc", "npc", "y", "wim", "tbr"])
PAGE = 4096
MAX_STACK = 1 << 20

for _ in range(int(os.environ["FW_STOPS"])):
    gdb.execute("continue", to_string=True)
regs = [int(gdb.parse_and_eval("$" + name)) & 0xffffffff for name in REGISTERS]
inferior = gdb.selected_inferior()
start = regs[REGISTERS.index("sp")] & ~(PAGE - 1)
stack = b""
while len(stack) < MAX_STACK:
    try:
        stack += bytes(inferior.read_memory(start + len(stack), PAGE))
    except gdb.MemoryError:
        break
frames = []
frame = gdb.newest_frame()
while frame is not None:
    frames.append((frame.pc(), frame.type() == gdb.SIGTRAMP_FRAME, frame.name()))
    frame = frame.older()
with open(os.environ["FW_DUMP"], "w") as f:
    json.dump({"registers": regs, "stack_start": start, "stack": stack.hex(), "gdb_frames": frames}, f)
gdb.execute("kill", to_string=True)

# Run inside gdb (gdb -batch -x gdb_frames.py): prints, as one JSON line after
# the marker FRAMEWALK-GDB-JSON, every thread's frames as gdb unwinds them.
#
# For each frame: pc (frame 0's exact PC; a caller's return address, as `bt`
# prints it; after a signal frame the interrupted, exact PC), its gdb frame
# type, the function name, and its source file and line when gdb knows them. Inline frames (gdb.INLINE_FRAME) share their
# PC with the real frame that contains them and tail-call frames
# (gdb.TAILCALL_FRAME) are synthesised from DWARF call-site information: both
# are kept in the output, flagged, so that the comparison can leave them out
# (framewalk, like every CFI unwinder, has neither).
import json

import gdb

TYPES = {}
for name in ("NORMAL_FRAME", "DUMMY_FRAME", "INLINE_FRAME", "TAILCALL_FRAME", "SIGTRAMP_FRAME",
             "ARCH_FRAME", "SENTINEL_FRAME"):
    if hasattr(gdb, name):
        TYPES[getattr(gdb, name)] = name.replace("_FRAME", "").lower()


def frames_of(thread, limit):
    thread.switch()
    out = []
    stop = None
    frame = gdb.newest_frame()
    while frame is not None and len(out) < limit:
        try:
            pc = frame.pc()
        except gdb.error as e:
            stop = "error: %s" % e
            break
        name = None
        try:
            name = frame.name()
        except gdb.error:
            pass
        entry = {"pc": "0x%x" % pc, "type": TYPES.get(frame.type(), str(frame.type())), "function": name}
        # The source line (tests/stack/source_lines.py): at the PC for frame 0,
        # inside the call for callers, at the call site for an inlined call's caller.
        try:
            sal = frame.find_sal()
            if sal.symtab is not None and sal.line:
                entry["file"] = sal.symtab.filename
                entry["fullname"] = sal.symtab.fullname()
                entry["line"] = sal.line
        except gdb.error:
            pass
        out.append(entry)
        try:
            older = frame.older()
        except gdb.error as e:
            stop = "error: %s" % e
            break
        if older is None:
            stop = gdb.frame_stop_reason_string(frame.unwind_stop_reason())
        frame = older
    if stop is None:
        stop = "limit"
    return out, stop


def main():
    threads = []
    inferior = gdb.selected_inferior()
    for thread in sorted(inferior.threads(), key=lambda t: t.num):
        frames, stop = frames_of(thread, 4096)
        threads.append({"tid": thread.ptid[1], "name": thread.name, "frames": frames, "stop": stop})
    print("FRAMEWALK-GDB-JSON " + json.dumps({"pid": inferior.pid, "threads": threads}))


main()

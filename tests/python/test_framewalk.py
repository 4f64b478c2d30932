"""The Python bindings (bindings/python) over libframewalk's C API: live
processes under each freeze policy, a core, a snapshot, the calling thread,
user back-ends in Python, and the errors."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

import framewalk
from conftest import REPO, marker_line

MAIN_CHAIN = ["level2", "level1", "main"]
WORKER_CHAIN = ["worker_level1", "worker_main"]
# DWARF numbers of the stack pointer and the PC, per ELF machine.
SP_PC = {62: (7, 16), 183: (31, 32), 40: (13, 15)}


def functions(frames):
    return [f.function for f in frames]


def check_parked(frames, chain, exe):
    """pause (libc) first, an activation, then `chain` in the program, return addresses."""
    assert len(frames) > len(chain), [str(f) for f in frames]
    first = frames[0]
    assert first.function is not None and "pause" in first.function, str(first)
    assert first.activation is True and first.source == "context" and first.index == 0
    assert first.module is not None and "libc" in os.path.basename(first.module.path), str(first)
    assert functions(frames[1:1 + len(chain)]) == chain, [str(f) for f in frames]
    for i, f in enumerate(frames):
        assert f.index == i
        if i:
            assert f.activation is False, str(f)
            assert f.sp >= frames[i - 1].sp, "the stack grows down: callers' SPs do not decrease"
    for f in frames[1:1 + len(chain)]:
        assert f.source == "cfi", str(f)
        assert f.module is not None and f.module.path == str(exe), str(f)
        assert f.offset is not None and f.offset > 0


def check_main_thread(thread, child):
    frames = thread.frames()
    check_parked(frames, MAIN_CHAIN, child.exe)
    assert thread.walk_end.end == "outermost" and thread.walk_end.complete, thread.walk_end
    assert thread.walk_end.frames == len(frames)
    return frames


def check_worker(thread, child):
    frames = thread.frames()
    check_parked(frames, WORKER_CHAIN, child.exe)
    assert thread.walk_end.end == "outermost", thread.walk_end
    return frames


def stopped(child):
    """{tid: whether it is stopped}, polled a little: a thread released a moment ago may still
    show its stop."""
    for _ in range(50):
        states = {t: child.task_state(t) in ("t", "T") for t in child.tids()}
        if all(states.values()) or not any(states.values()):
            return states
        time.sleep(0.01)
    return states


# ---- live processes ------------------------------------------------------------


@pytest.mark.parametrize("freeze", ["process", "thread", "copy"])
def test_attach_each_freeze_policy(live_child, freeze):
    child = live_child
    with framewalk.attach(child.pid, freeze=freeze) as target:
        assert target.pid == child.pid
        assert target.machine == framewalk.host_machine()
        threads = list(target.threads())
        assert [t.tid for t in threads] == [child.pid, child.worker_tid]
        assert threads[0].name == "fwtarget"
        assert threads[1].name == "fw-worker"
        if freeze == "process":  # every thread stopped from the first threads() until detach
            assert stopped(child) == {child.pid: True, child.worker_tid: True}
        first = check_main_thread(threads[0], child)
        check_worker(threads[1], child)
        # A second walk of the same target gives the same frames.
        again = threads[0].frames()
        assert [(f.pc, f.sp, f.function) for f in again] == [(f.pc, f.sp, f.function) for f in first]
        # "thread": each stopped only while walked; "copy": all released once copied.
        expect = freeze == "process"
        assert stopped(child) == {child.pid: expect, child.worker_tid: expect}
    assert target.closed
    child.assert_running()


def test_attach_one_thread(live_child):
    child = live_child
    with framewalk.attach(child.pid, freeze="thread", thread=child.worker_tid) as target:
        threads = list(target.threads())
        assert [t.tid for t in threads] == [child.worker_tid]
        check_worker(threads[0], child)
    child.assert_running()


def test_frame_details(live_child):
    """Modules, symbol offsets and source lines against the program's own ELF data."""
    child = live_child
    exe = str(child.exe)
    build_id = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
        ["readelf", "-n", exe], capture_output=True, text=True, check=True).stdout).group(1)
    symbols = {}
    for line in subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout.splitlines():
        words = line.split()
        if len(words) == 3:
            symbols[words[2]] = int(words[0], 16)
    with framewalk.attach(child.pid) as target:
        thread = target.thread(child.pid)
        assert thread.name == "fwtarget"
        frames = thread.frames(source=True, registers=True)
        check_parked(frames, MAIN_CHAIN, child.exe)
    child.assert_running()

    modules = {}
    for f in frames[1:4]:
        m = f.module
        assert m.build_id == build_id
        assert m.start <= f.pc < m.end
        assert m.offset == f.pc - m.bias
        assert symbols[f.function] + m.bias + f.offset == f.pc, str(f)
        modules[m.id] = m.path
    assert len(modules) == 1, "one module id for the program"
    assert frames[0].module.id not in modules
    assert frames[0].module.build_id and re.fullmatch(r"[0-9a-f]+", frames[0].module.build_id)

    # Source lines: the lines of the calls (return addresses are looked up a byte before).
    expect = {"level2": marker_line("L2_CALL"), "level1": marker_line("L1_CALL"), "main": marker_line("MAIN_CALL")}
    for f in frames[1:4]:
        assert f.locations, str(f)
        physical = f.locations[-1]
        assert physical.inlined is False and physical.function == f.function
        assert physical.file is not None and physical.file.endswith("fwtarget.c"), physical
        assert physical.line == expect[f.function], (f.function, physical)
        assert all(loc.inlined for loc in f.locations[:-1])

    # Registers: frame 0 knows the stack pointer and the PC.
    sp, pc = SP_PC[framewalk.host_machine()]
    assert frames[0].registers[sp] == frames[0].sp
    assert frames[0].registers[pc] == frames[0].pc
    assert frames[0].locations is not None
    assert frames[1].registers.get(sp) in (None, frames[1].sp)


def test_options(live_child):
    child = live_child
    with framewalk.attach(child.pid, freeze="copy") as target:
        thread = target.thread(child.pid)
        frames = thread.frames(max_frames=2)
        assert len(frames) == 2
        assert thread.walk_end.end == "truncated" and thread.walk_end.reason == "max-frames"
        assert not thread.walk_end.complete
        bare = thread.frames(symbols=False)
        assert all(f.function is None and f.offset is None and f.locations is None for f in bare)
        assert bare[0].module is not None
        assert thread.walk_end.complete
        assert str(frames[1]).startswith("#1 ") and "level2+0x" in str(frames[1])
    child.assert_running()


def test_context_reused(live_child):
    child = live_child
    with framewalk.Context() as context:
        for freeze in ("copy", "thread"):
            with context.attach(child.pid, freeze) as target:
                check_main_thread(target.thread(child.pid), child)
    child.assert_running()


def test_detach_then_walk_is_a_state_error(live_child):
    child = live_child
    target = framewalk.attach(child.pid)
    thread = target.thread(child.pid)
    thread.frames()
    target.detach()
    target.detach()  # idempotent
    child.assert_running()
    with pytest.raises(framewalk.StateError):
        thread.frames()
    child.assert_running()
    target.close()
    with pytest.raises(framewalk.StateError, match="closed"):
        thread.frames()
    target.close()  # idempotent


def test_live_target_from_another_thread(live_child):
    child = live_child
    with framewalk.attach(child.pid) as target:
        thread = target.thread(child.pid)
        raised = []

        def walk():
            try:
                thread.frames()
            except framewalk.Error as e:
                raised.append(e)

        t = threading.Thread(target=walk)
        t.start()
        t.join()
        assert len(raised) == 1 and isinstance(raised[0], framewalk.StateError), raised
        assert "thread that attached it" in str(raised[0])
        check_main_thread(thread, child)
    child.assert_running()


# ---- a core -------------------------------------------------------------------------


def make_core(child, directory: Path) -> Path:
    gcore = shutil.which("gcore")
    if gcore is None:
        pytest.skip("gcore (gdb) is not installed")
    prefix = directory / "core"
    run = subprocess.run([gcore, "-o", str(prefix), str(child.pid)], capture_output=True, text=True, timeout=120)
    path = Path(f"{prefix}.{child.pid}")
    assert run.returncode == 0 and path.is_file(), run.stdout + run.stderr
    return path


def test_core_matches_live(live_child, tmp_path):
    child = live_child
    core_path = make_core(child, tmp_path)
    child.assert_running()
    with framewalk.attach(child.pid, freeze="process") as target:
        live = {t.tid: t.frames() for t in target.threads()}
    with framewalk.core(core_path, exe=child.exe) as target:
        assert target.pid == child.pid
        assert target.machine == framewalk.host_machine()
        threads = list(target.threads())
        assert sorted(t.tid for t in threads) == sorted(live)
        by_tid = {t.tid: t for t in threads}
        main = check_main_thread(by_tid[child.pid], child)
        worker = check_worker(by_tid[child.worker_tid], child)
        for tid, frames in ((child.pid, main), (child.worker_tid, worker)):
            assert functions(frames) == functions(live[tid])
            assert [f.sp for f in frames] == [f.sp for f in live[tid]]
            assert [f.pc for f in frames[1:]] == [f.pc for f in live[tid][1:]]
        assert isinstance(target.warnings, list)
    # Without the executable (the core names it), and with "/" as the sysroot.
    with framewalk.core(str(core_path), sysroot="/") as target:
        check_main_thread(target.thread(child.pid), child)


def test_debug_directory(program, tmp_path, ptrace_permitted):
    """A stripped program whose debug file lies only under a directory the
    context is given (DIR/.build-id/xx/yyyy.debug): names and lines come from
    it; without the directory, neither does."""
    from conftest import Child
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        pytest.fail("objcopy (binutils) is needed")
    build_id = subprocess.run(["readelf", "-n", str(program)], capture_output=True, text=True, check=True).stdout
    build_id = re.search(r"Build ID: ([0-9a-f]+)", build_id).group(1)
    debug_dir = tmp_path / "debug"
    debug_file = debug_dir / ".build-id" / build_id[:2] / (build_id[2:] + ".debug")
    debug_file.parent.mkdir(parents=True)
    subprocess.run([objcopy, "--only-keep-debug", str(program), str(debug_file)], check=True)
    stripped = tmp_path / "fwtarget-stripped"
    subprocess.run([objcopy, "--strip-all", str(program), str(stripped)], check=True)
    child = Child(stripped)
    try:
        with framewalk.Context(debug_directories=[debug_dir]) as context:
            with context.attach(child.pid) as target:
                frames = target.thread(child.pid).frames(source=True)
        names = functions(frames)
        assert [n for n in names if n in MAIN_CHAIN] == MAIN_CHAIN, names
        level2 = next(f for f in frames if f.function == "level2")
        assert level2.locations and level2.locations[-1].file.endswith("fwtarget.c"), str(level2)
        assert level2.locations[-1].line == marker_line("L2_CALL")
        with framewalk.attach(child.pid) as target:
            bare = target.thread(child.pid).frames(source=True)
        assert not [n for n in functions(bare) if n in MAIN_CHAIN], functions(bare)
        assert all(not f.locations or f.locations[-1].file is None for f in bare[1:4])
    finally:
        child.close()


# ---- errors -----------------------------------------------------------------------------


def free_pid() -> int:
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    for pid in range(pid_max - 1, 1, -1):
        if not os.path.exists(f"/proc/{pid}"):
            return pid
    raise AssertionError("no free pid")


def test_attach_no_such_process():
    pid = free_pid()
    with pytest.raises(framewalk.NoSuchProcess) as raised:
        with framewalk.attach(pid) as target:
            list(target.threads())
    assert str(pid) in str(raised.value)
    assert raised.value.status == 2
    assert isinstance(raised.value, ProcessLookupError) and isinstance(raised.value, framewalk.Error)


def test_core_not_elf(tmp_path):
    path = tmp_path / "not-a-core.txt"
    path.write_text("this is not an ELF file\n" * 10)
    with pytest.raises(framewalk.FormatError) as raised:
        framewalk.core(path)
    assert "not-a-core.txt" in str(raised.value)


def test_core_missing(tmp_path):
    path = tmp_path / "no-such-core"
    with pytest.raises(framewalk.FileError) as raised:
        framewalk.core(path)
    assert "no-such-core" in str(raised.value)


def test_core_bad_executable(tmp_path, program):
    # The executable is checked before the core is read.
    with pytest.raises(framewalk.Error) as raised:
        framewalk.core(program, exe=tmp_path / "no-such-exe")
    assert "no-such-exe" in str(raised.value)


def test_snapshot_errors(tmp_path):
    with pytest.raises(framewalk.FileError) as raised:
        framewalk.snapshot(tmp_path / "absent")
    assert "absent" in str(raised.value)
    (tmp_path / "machine").write_text("vax\n")
    (tmp_path / "maps").write_text("")
    with pytest.raises(framewalk.FormatError, match="vax"):
        framewalk.snapshot(tmp_path)


def test_argument_errors():
    with pytest.raises(framewalk.ArgumentError, match="freeze"):
        framewalk.attach(os.getpid(), freeze="everything")
    with pytest.raises(framewalk.ArgumentError):
        framewalk.attach(1 << 40)
    with pytest.raises(ValueError):  # ArgumentError is a ValueError
        framewalk.attach("not a pid")


def test_library_facts():
    assert framewalk.api_version() == 1
    assert os.path.exists(framewalk.library_path()) or "framewalk" in framewalk.library_path()
    if "FRAMEWALK_LIBRARY" in os.environ:
        assert framewalk.library_path() == os.environ["FRAMEWALK_LIBRARY"]


# ---- the calling thread -------------------------------------------------------------------


def test_self_thread():
    with framewalk.self_thread() as target:
        assert target.pid == os.getpid()
        threads = list(target.threads())
        assert [t.tid for t in threads] == [threading.get_native_id()]
        frames = threads[0].frames()
        end = threads[0].walk_end
    assert end.complete, end
    assert len(frames) >= 5
    # The first frame is the caller of fw_walk (the foreign-function machinery), a return address.
    assert frames[0].activation is False
    names = [f.function or "" for f in frames]
    assert any("ffi_call" in n or "PyEval" in n or "PyObject" in n for n in names), names
    assert all(f.module is not None for f in frames)


def test_self_thread_other_threads():
    """backtrace() in another Python thread walks that thread, down to its start."""
    result = {}

    def run():
        result["tid"] = threading.get_native_id()
        result["frames"] = framewalk.backtrace()

    t = threading.Thread(target=run)
    t.start()
    t.join()
    names = [f.function or "" for f in result["frames"]]
    assert "start_thread" in names, names
    main_ids = {f.sp for f in framewalk.backtrace()}
    assert not main_ids & {f.sp for f in result["frames"]}, "another thread's stack"

    with framewalk.self_thread() as target:
        with pytest.raises(framewalk.StateError):
            target.walk(result["tid"])


# ---- user back-ends ----------------------------------------------------------------------


class Recorded:
    """Registers, stacks and maps of the parked child read while framewalk holds it,
    with the frames framewalk gave: the truth a replay must give again."""

    def __init__(self, child):
        self.pid = child.pid
        self.truth = {}
        self.registers = {}
        self.stacks = {}  # tid: (address, bytes)
        self.blocks = []  # (address, bytes): the stacks and the vdso
        with framewalk.attach(child.pid, freeze="process") as target:
            self.machine = target.machine
            for thread in target.threads():
                frames = thread.frames(registers=True)
                assert thread.walk_end.complete
                self.truth[thread.tid] = frames
                self.registers[thread.tid] = frames[0].registers
            self.maps_text = Path(f"/proc/{child.pid}/maps").read_text()
            self.maps = []
            for line in self.maps_text.splitlines():
                fields = line.split(None, 5)
                start, end = (int(x, 16) for x in fields[0].split("-"))
                self.maps.append((start, end, fields[1], int(fields[2], 16), fields[5] if len(fields) > 5 else ""))
            with open(f"/proc/{child.pid}/mem", "rb", buffering=0) as mem:
                for tid, frames in self.truth.items():
                    sp = frames[0].sp
                    start, end = next((s, e) for s, e, *_ in self.maps if s <= sp < e)
                    low = max(start, sp - 256)  # the red zone below the stack pointer
                    mem.seek(low)
                    data = mem.read(end - low)
                    self.stacks[tid] = (low, data)
                    self.blocks.append((low, data))
                self.vdso = []
                for s, e, _, _, path in self.maps:
                    if path == "[vdso]":
                        mem.seek(s)
                        self.vdso.append((s, mem.read(e - s)))
                self.blocks += self.vdso
        child.assert_running()
        self.tids = sorted(self.truth)

    def read(self, address, size):
        for low, data in self.blocks:
            if low <= address < low + len(data):
                return data[address - low:address - low + size]
        return b""

    def executable_mappings(self):
        return [(s, e, off, path) for s, e, perms, off, path in self.maps if "x" in perms and path.startswith("/")]


def same_frames(replayed, truth):
    key = lambda f: (f.index, f.pc, f.sp, f.activation, f.source, f.function, f.offset,  # noqa: E731
                     f.module.path if f.module else None)
    assert [key(f) for f in replayed] == [key(f) for f in truth]


class Replay(framewalk.Backend):
    def __init__(self, recorded):
        super().__init__(machine=recorded.machine, pid=recorded.pid)
        self.r = recorded
        self.calls = {"detach": 0, "thread_detach": [], "set_initial_registers": []}

    def thread_ids(self):
        return self.r.tids

    def set_initial_registers(self, tid):
        self.calls["set_initial_registers"].append(tid)
        return self.r.registers[tid]

    def memory_read(self, address, size):
        return self.r.read(address, size)

    def detach(self):
        self.calls["detach"] += 1

    def thread_detach(self, tid):
        self.calls["thread_detach"].append(tid)

    def mappings(self):
        return self.r.executable_mappings()


@pytest.fixture
def recorded(live_child):
    return Recorded(live_child)


def test_backend_subclass_replays_a_live_walk(recorded):
    backend = Replay(recorded)
    with framewalk.backend(backend) as target:
        assert target.machine == recorded.machine and target.pid == recorded.pid
        threads = list(target.threads())
        assert [t.tid for t in threads] == recorded.tids
        for thread in threads:
            same_frames(thread.frames(), recorded.truth[thread.tid])
            assert thread.walk_end.complete, thread.walk_end
        assert backend.calls["set_initial_registers"] == recorded.tids
        assert backend.calls["thread_detach"] == recorded.tids
        assert backend.calls["detach"] == 0
    assert backend.calls["detach"] == 1


def test_backend_callables_with_proc_maps(recorded):
    """Callables instead of a subclass; no mappings(): the library reads /proc/PID/maps
    (the child still runs with the same mappings); next_thread given directly;
    registers as a list indexed by DWARF number."""
    regs = {}
    for tid, values in recorded.registers.items():
        top = max(values)
        regs[tid] = [values.get(i) for i in range(top + 1)]

    def next_thread(after):
        tids = recorded.tids
        return tids[0] if after == 0 else next((t for t in tids if t > after), 0)

    with framewalk.backend(next_thread=next_thread, set_initial_registers=regs.__getitem__,
                           memory_read=recorded.read, machine=recorded.machine, pid=recorded.pid) as target:
        for thread in target.threads():
            same_frames(thread.frames(), recorded.truth[thread.tid])


def test_snapshot_replays_a_live_walk(recorded, tmp_path):
    names = {62: "x86_64", 183: "aarch64", 40: "arm"}
    (tmp_path / "machine").write_text(names[recorded.machine] + "\n")
    (tmp_path / "pid").write_text(f"{recorded.pid}\n")
    (tmp_path / "maps").write_text(recorded.maps_text)
    for tid in recorded.tids:
        (tmp_path / f"{tid}.regs").write_text(
            "".join(f"{n} {v:x}\n" for n, v in sorted(recorded.registers[tid].items())))
        # Blocks of memory: each its address and size (8 bytes each, little-endian), then its
        # bytes. The main thread's file also holds the vdso.
        blocks = [recorded.stacks[tid]] + (recorded.vdso if tid == recorded.pid else [])
        (tmp_path / f"{tid}.stack").write_bytes(
            b"".join(struct.pack("<QQ", address, len(data)) + data for address, data in blocks))
    with framewalk.snapshot(tmp_path) as target:
        assert target.pid == recorded.pid
        threads = list(target.threads())
        assert [t.tid for t in threads] == recorded.tids
        for thread in threads:
            same_frames(thread.frames(), recorded.truth[thread.tid])


class Broken(Exception):
    pass


def minimal_backend(**overrides):
    """Callables of a one-thread back-end: a fake stack pointer and PC (in no module), no memory."""
    callbacks = dict(thread_ids=[7], set_initial_registers=lambda tid: {7: 0x1000, 16: 0x2000},
                     memory_read=lambda address, size: b"", machine=62)
    callbacks.update(overrides)
    return callbacks


@pytest.mark.skipif(framewalk.host_machine() != 62, reason="the fake registers are x86-64's")
def test_backend_exceptions_propagate():
    def boom(*args):
        raise Broken("boom")

    with framewalk.backend(**minimal_backend(set_initial_registers=boom)) as target:
        with pytest.raises(framewalk.BackendError) as raised:
            target.thread(7).frames()
        assert isinstance(raised.value.__cause__, Broken)
        assert "set_initial_registers" in str(raised.value) and "boom" in str(raised.value)

    with framewalk.backend(**minimal_backend(next_thread=boom)) as target:
        with pytest.raises(framewalk.BackendError) as raised:
            list(target.threads())
        assert isinstance(raised.value.__cause__, Broken)

    with framewalk.backend(**minimal_backend(memory_read=boom)) as target:
        with pytest.raises(framewalk.BackendError) as raised:
            target.thread(7).frames()
        assert isinstance(raised.value.__cause__, Broken)

    target = framewalk.backend(**minimal_backend(detach=boom))
    with pytest.raises(framewalk.BackendError):
        target.close()

    # A walk that reads no memory ends where the fake PC has no unwind information.
    with framewalk.backend(**minimal_backend()) as target:
        thread = target.thread()
        frames = thread.frames()
        assert [(f.pc, f.sp, f.activation, f.module) for f in frames] == [(0x2000, 0x1000, True, None)]
        assert thread.walk_end.end == "failed", thread.walk_end


@pytest.mark.skipif(framewalk.host_machine() != 62, reason="the fake registers are x86-64's")
def test_backend_failure_status():
    """A callback that fails without raising (set_initial_registers gives None, next_thread a
    negative id): the library's status is FW_ERR_BACKEND ("a user back-end's callback failed")."""
    with framewalk.backend(**minimal_backend(set_initial_registers=lambda tid: None)) as target:
        with pytest.raises(framewalk.BackendError) as raised:
            target.thread(7).frames()
        assert "set_initial_registers" in str(raised.value)
    with framewalk.backend(**minimal_backend(next_thread=lambda after: -5)) as target:
        with pytest.raises(framewalk.BackendError):
            list(target.threads())


def test_backend_argument_errors():
    with pytest.raises(TypeError):
        framewalk.backend(memory_read=lambda a, s: b"")
    with pytest.raises(framewalk.Unsupported):
        framewalk.backend(**minimal_backend(machine=8))  # EM_MIPS: not unwound yet
    # A register number beyond the register file: the library's refusal, from the callback.
    with framewalk.backend(**minimal_backend(set_initial_registers=lambda tid: {70000: 1})) as target:
        with pytest.raises(framewalk.BackendError) as raised:
            target.thread(7).frames()
        assert isinstance(raised.value.__cause__, framewalk.ArgumentError)
        assert "70000" in str(raised.value)


# ---- the declarations against the header ---------------------------------------------------


def test_struct_layouts(tmp_path):
    """The ctypes structures have the C structures' sizes and field offsets (the header compiled
    by gcc); the enums' values of _capi are the header's."""
    from framewalk import _capi

    structs = {"fw_walk_end": _capi.fw_walk_end, "fw_walk_options": _capi.fw_walk_options,
               "fw_module_info": _capi.fw_module_info, "fw_frame_info": _capi.fw_frame_info,
               "fw_source_location": _capi.fw_source_location, "fw_backend": _capi.fw_backend}
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "framewalk/framewalk.h"', "int main(void) {"]
    for name, cls in structs.items():
        lines.append(f'  printf("{name} %zu\\n", sizeof({name}));')
        for field, _ in cls._fields_:
            lines.append(f'  printf("{name}.{field} %zu\\n", offsetof({name}, {field}));')
    constants = {"FW_ERR_BACKEND": _capi.FW_ERR_BACKEND, "FW_ERR_NO_MEMORY": _capi.FW_ERR_NO_MEMORY,
                 "FW_FREEZE_COPY": _capi.FREEZE["copy"], "FW_FREEZE_THREAD": _capi.FREEZE["thread"],
                 "FW_STOP": _capi.FW_STOP, "FW_END_FAILED": len(_capi.END_NAMES) - 1,
                 "FW_STOP_UNSUPPORTED_MACHINE": len(_capi.REASON_NAMES) - 1,
                 "FRAMEWALK_API_VERSION": _capi.API_VERSION}
    for name in constants:
        lines.append(f'  printf("{name} %d\\n", (int){name});')
    lines += ["  return 0;", "}"]
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines) + "\n")
    subprocess.run(["gcc", "-std=c99", "-I", str(REPO / "include"), "-o", str(tmp_path / "layout"), str(source)],
                   check=True, capture_output=True, timeout=60)
    out = dict(line.split() for line in subprocess.run(
        [str(tmp_path / "layout")], check=True, capture_output=True, text=True).stdout.splitlines())
    for name, cls in structs.items():
        assert int(out[name]) == ctypes.sizeof(cls), name
        for field, _ in cls._fields_:
            assert int(out[f"{name}.{field}"]) == getattr(cls, field).offset, f"{name}.{field}"
    for name, value in constants.items():
        assert int(out[name]) == value, name

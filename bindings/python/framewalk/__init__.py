"""framewalk: the call stacks of live processes, core files, snapshots, the
calling thread and your own back-ends, from Python (ctypes over the C API of
libframewalk.so, include/framewalk/framewalk.h).

    import framewalk
    with framewalk.attach(pid) as target:
        for thread in target.threads():
            for frame in thread.frames(source=True):
                print(frame)
            print(thread.walk_end.message)

Every target is a context manager: leaving the block detaches (a live
process is left as it was) and frees it. A live target is used by the thread
that attached it (Linux ties ptrace to the tracing thread).
"""
from __future__ import annotations

import ctypes
import os
import platform
import threading
from ctypes import byref, c_int, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _capi
from ._capi import library_path
from ._errors import (ArgumentError, BackendError, Error, FileError, FormatError, LibraryError, NoSuchProcess,
                      OutOfMemory, PermissionDenied, StateError, ThreadGone, Unsupported, error_for)

__version__ = "0.1.0"

__all__ = [
    "attach", "core", "snapshot", "self_thread", "backend", "backtrace", "Backend", "Context", "Target", "Thread",
    "Frame", "Module", "Location", "WalkEnd", "api_version", "set_debuginfod", "release_held_threads",
    "library_path", "MACHINES", "host_machine",
    "Error", "ArgumentError", "NoSuchProcess", "PermissionDenied", "ThreadGone", "FileError", "FormatError",
    "Unsupported", "StateError", "BackendError", "OutOfMemory", "LibraryError",
]

#: ELF e_machine numbers of the machines framewalk unwinds.
MACHINES = {"x86_64": 62, "aarch64": 183, "arm": 40}

_MASK64 = (1 << 64) - 1
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def host_machine() -> int:
    """The ELF e_machine of this machine (62 x86-64, 183 AArch64, 40 ARM; 0 otherwise)."""
    m = platform.machine().lower()
    if m in ("x86_64", "amd64"):
        return 62
    if m in ("aarch64", "arm64"):
        return 183
    if m.startswith("arm"):
        return 40
    return 0


# ---- helpers ----------------------------------------------------------------


def _text(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")


def _path(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else os.fsdecode(b)


def _last_error() -> str:
    return _text(_capi.lib().fw_last_error()) or ""


def _raise_status(status: int) -> None:
    message = _last_error() or f"framewalk: status {status}"
    raise error_for(status, message)


def _check(status: int) -> None:
    if status != _capi.FW_OK:
        _raise_status(status)


def _c_int(value: Any, what: str) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be an integer, not {value!r}") from None
    if not _INT_MIN <= v <= _INT_MAX:
        raise ArgumentError(f"{what} {v} is out of range")
    return v


def _encode_path(path: Any) -> bytes:
    return os.fsencode(os.fspath(path))


def api_version() -> int:
    """The loaded library's C API version (FRAMEWALK_API_VERSION)."""
    return _capi.lib().fw_api_version()


def set_debuginfod(enabled: bool) -> None:
    """The default of Context.set_debuginfod for contexts made from now on (off until set)."""
    _capi.lib().fw_set_debuginfod(1 if enabled else 0)


def release_held_threads() -> None:
    """Detach every thread any live target of this process holds (for a signal handler)."""
    _capi.lib().fw_release_held_threads()


# ---- results ----------------------------------------------------------------


@dataclass
class Module:
    """The module (mapped file) a frame's PC is in."""
    path: str          # as mapped ("[vdso]")
    build_id: str      # lower-case hex; "" when none or unreadable
    start: int         # mapped addresses [start, end)
    end: int
    bias: int          # run-time address = link-time address + bias
    id: int            # unique in the process, never reused
    offset: int        # the link-time address of the frame's PC in this module


@dataclass
class Location:
    """One entry of a frame's source: an inlined call, or the physical function (the last)."""
    function: Optional[str]  # the inlined function; for the physical function, the frame's function
    file: Optional[str]      # None when no line information covers the PC
    line: int                # 0 when unknown
    column: int              # 0 when not recorded
    inlined: bool


@dataclass
class Frame:
    """One frame of a walk, innermost first, copied out of the walk's callback."""
    index: int
    pc: int                  # exact for an activation, else the return address
    sp: int
    activation: bool         # the PC is exact (frame 0, or interrupted by a signal)
    source: str              # how its registers were found: "context", "cfi", "debug_frame", "exidx",
                             # "sframe", "signal", "fp", "prologue", "jit"
    module: Optional[Module]
    function: Optional[str] = None  # demangled; None when no symbol covers the PC (or symbols=False)
    offset: Optional[int] = None    # the PC's offset in the function
    locations: Optional[List[Location]] = None     # with source=True: inlined calls first, then the function
    registers: Optional[Dict[int, int]] = None     # with registers=...: DWARF number -> value, where known

    def __str__(self) -> str:
        where = f"{self.function}+{self.offset:#x}" if self.function is not None else "??"
        text = f"#{self.index:<2} {self.pc:#018x} {where}"
        if self.module is not None:
            text += f" ({self.module.path})"
        if self.locations:
            loc = self.locations[-1]
            if loc.file:
                text += f" at {loc.file}:{loc.line}"
        return text + f" [{self.source}]"


@dataclass
class WalkEnd:
    """How a walk ended."""
    end: str      # "outermost" (the stack's natural end), "callback", "truncated" (max_frames), "failed"
    reason: str   # "outermost", "cannot-unwind", "callback", "max-frames", "no-unwind-info", "bad-memory",
                  # "cfa-did-not-advance", "bad-unwind-info", "no-registers", "unsupported-machine"
    address: int  # the PC or memory address the reason names
    frames: int   # frames the walk gave
    message: str  # the reason as a sentence

    @property
    def complete(self) -> bool:
        """The walk reached the stack's natural end."""
        return self.end == "outermost"


def _name(names: Sequence[str], value: int) -> str:
    return names[value] if 0 <= value < len(names) else str(value)


def _walk_end(end: _capi.fw_walk_end) -> WalkEnd:
    return WalkEnd(end=_name(_capi.END_NAMES, end.end), reason=_name(_capi.REASON_NAMES, end.reason),
                   address=end.address, frames=end.frames, message=_text(end.message) or "")


_source_names: Dict[int, str] = {}


def _source_name(lib, source: int) -> str:
    name = _source_names.get(source)
    if name is None:
        name = _text(lib.fw_frame_source_name(source)) or str(source)
        _source_names[source] = name
    return name


def _copy_frame(lib, fp: int, symbols: bool, source: bool, registers: Optional[Sequence[int]]) -> Frame:
    """Everything of a frame, copied while the callback runs (its strings die with it)."""
    info = _capi.fw_frame_info()
    lib.fw_frame_get_info(fp, byref(info))
    module = None
    mi = _capi.fw_module_info()
    if lib.fw_frame_module(fp, byref(mi)):
        module = Module(path=_path(mi.path) or "", build_id=_text(mi.build_id) or "", start=mi.start, end=mi.end,
                        bias=mi.bias, id=mi.id, offset=info.module_offset)
    function = offset = None
    if symbols:
        off = c_uint64(0)
        name = lib.fw_frame_function(fp, byref(off))
        if name is not None:
            function, offset = _text(name), off.value
    locations = None
    if source:
        locations = []
        n = lib.fw_frame_source_locations(fp, None, 0)
        if n:
            array = (_capi.fw_source_location * n)()
            n = min(n, lib.fw_frame_source_locations(fp, array, n))
            for loc in array[:n]:
                fn = _text(loc.function)
                if fn is None and not loc.inlined:
                    fn = function
                locations.append(Location(function=fn, file=_path(loc.file), line=loc.line, column=loc.column,
                                          inlined=bool(loc.inlined)))
    regs = None
    if registers is not None:
        regs = {}
        v = c_uint64(0)
        for r in registers:
            if lib.fw_frame_register(fp, r, byref(v)):
                regs[r] = v.value
    return Frame(index=lib.fw_frame_index(fp), pc=info.pc, sp=info.sp, activation=bool(info.activation),
                 source=_source_name(lib, info.source), module=module, function=function, offset=offset,
                 locations=locations, registers=regs)


# ---- context ------------------------------------------------------------------


class Context:
    """Modules, caches and options, reusable across targets (a default one is
    made for each target otherwise). Used by one thread at a time."""

    def __init__(self, sysroot: Optional[Union[str, os.PathLike]] = None,
                 debug_directories: Sequence[Union[str, os.PathLike]] = (),
                 debuginfod: Optional[bool] = None):
        lib = _capi.lib()
        self._handle = lib.fw_context_new()
        if not self._handle:
            raise OutOfMemory("fw_context_new: out of memory")
        self._sysroot: Optional[str] = None
        if sysroot is not None:
            self.sysroot = sysroot
        for directory in debug_directories:
            self.add_debug_directory(directory)
        if debuginfod is not None:
            self.set_debuginfod(debuginfod)

    def set_debuginfod(self, enabled: bool) -> None:
        """Fetch missing debug files from the servers DEBUGINFOD_URLS names, for files this context opens from now on."""
        _check(_capi.lib().fw_context_set_debuginfod(self._h(), 1 if enabled else 0))

    def add_debug_directory(self, directory: Union[str, os.PathLike]) -> None:
        """A directory searched for separate debug files (by build-id and debug link) before /usr/lib/debug."""
        _check(_capi.lib().fw_context_add_debug_directory(self._h(), _encode_path(directory)))

    @property
    def sysroot(self) -> Optional[str]:
        """A prefix for every file a core or snapshot names (files of another machine)."""
        return self._sysroot

    @sysroot.setter
    def sysroot(self, sysroot: Optional[Union[str, os.PathLike]]) -> None:
        _check(_capi.lib().fw_context_set_sysroot(self._h(), _encode_path(sysroot) if sysroot else None))
        self._sysroot = os.fspath(sysroot) if sysroot else None

    def _h(self) -> int:
        if not self._handle:
            raise StateError("the context is closed")
        return self._handle

    def close(self) -> None:
        """Frees the context (its targets keep what they need)."""
        h, self._handle = self._handle, None
        if h:
            _capi.lib().fw_context_free(h)

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # The targets, made in this context.
    def attach(self, pid: int, freeze: str = "process", thread: Optional[int] = None) -> "Target":
        return attach(pid, freeze, thread, context=self)

    def core(self, path, exe=None) -> "Target":
        return core(path, exe, context=self)

    def snapshot(self, directory) -> "Target":
        return snapshot(directory, context=self)

    def self_thread(self) -> "Target":
        return self_thread(context=self)

    def backend(self, backend_object=None, **callables) -> "Target":
        return backend(backend_object, context=self, **callables)


def _context(context: Optional[Context], sysroot=None) -> Context:
    if context is None:
        return Context(sysroot)
    if sysroot is not None:
        context.sysroot = sysroot
    return context


# ---- targets -------------------------------------------------------------------


class _Pending:
    """Exceptions raised by Python callbacks during a call into the library."""

    def __init__(self) -> None:
        self.errors: List[Tuple[str, BaseException]] = []

    def take(self) -> List[Tuple[str, BaseException]]:
        errors, self.errors = self.errors, []
        return errors


class Thread:
    """A thread of a target: its id and name; frames() walks it."""

    def __init__(self, target: "Target", tid: int, name: str):
        self.target = target
        self.tid = tid
        self.name = name
        #: How the last frames() walk ended (a WalkEnd), None before one.
        self.walk_end: Optional[WalkEnd] = None

    def frames(self, max_frames: int = 256, symbols: bool = True, source: bool = False,
               registers: Union[bool, Iterable[int]] = False) -> List[Frame]:
        """Walks the thread: its frames, innermost first; self.walk_end says how the walk ended.
        symbols: name each frame's function; source: its file, line and inlined calls;
        registers: True (all known) or DWARF numbers: the values each frame's registers had."""
        frames, self.walk_end = self.target.walk(self.tid, max_frames=max_frames, symbols=symbols, source=source,
                                                 registers=registers)
        return frames

    def __repr__(self) -> str:
        return f"<framewalk.Thread {self.tid} {self.name!r}>"


class Target:
    """What is walked: made by attach(), core(), snapshot(), self_thread() or
    backend(). A context manager: leaving it detaches and frees the target."""

    def __init__(self, handle: int, context: Context, kind: str, *, live: bool = False, is_self: bool = False,
                 pending: Optional[_Pending] = None, keep: Any = None):
        self._handle = handle
        self.context = context
        self.kind = kind  # "live", "core", "snapshot", "self", "backend"
        self._owner = threading.get_native_id() if (live or is_self) else None
        self._is_self = is_self
        self._pending = pending
        self._keep = keep  # what the library calls back into: alive as long as the target

    # -- plumbing
    def _h(self) -> int:
        if not self._handle:
            raise StateError(f"the {self.kind} target is closed")
        if self._owner is not None and not self._is_self and threading.get_native_id() != self._owner:
            raise StateError(f"a live target is used by the thread that attached it (thread {self._owner}), "
                             f"not thread {threading.get_native_id()}: Linux ties ptrace to the tracing thread")
        return self._handle

    def _after_call(self, status: int) -> None:
        """Raises what a back-end's Python callback raised during the call, else the call's failure."""
        pending = self._pending.take() if self._pending is not None else []
        if pending:
            where, exc = pending[0]
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: as they are
                raise exc
            message = f"the back-end's {where} raised {type(exc).__name__}: {exc}"
            if status != _capi.FW_OK and _last_error():
                message += f" ({_last_error()})"
            raise BackendError(message) from exc
        _check(status)

    # -- properties
    @property
    def pid(self) -> int:
        return _capi.lib().fw_target_pid(self._h())

    @property
    def machine(self) -> int:
        """ELF e_machine of the target's code (62 x86-64, 183 AArch64, 40 ARM)."""
        return _capi.lib().fw_target_machine(self._h())

    @property
    def warnings(self) -> List[str]:
        """Problems met opening the target that did not stop it (a missing file, a build-id mismatch)."""
        lib, h, out = _capi.lib(), self._h(), []
        while True:
            w = lib.fw_target_warning(h, len(out))
            if w is None:
                return out
            out.append(_text(w))

    # -- threads and walks
    def threads(self) -> Iterator[Thread]:
        """The target's threads (with freeze="process", the first stops the process until detach)."""
        lib, after = _capi.lib(), 0
        while True:
            tid = c_int(0)
            status = lib.fw_next_thread(self._h(), after, byref(tid))
            self._after_call(status)
            if tid.value <= 0:
                return
            name = _text(lib.fw_thread_name(self._h(), tid.value)) or ""
            yield Thread(self, tid.value, name)
            after = tid.value

    def thread(self, tid: Optional[int] = None) -> Thread:
        """The thread `tid` (without walking the list), or the first thread when None."""
        if tid is None:
            for t in self.threads():
                return t
            raise NoSuchProcess(f"the {self.kind} target has no thread")
        tid = _c_int(tid, "thread id")
        return Thread(self, tid, _text(_capi.lib().fw_thread_name(self._h(), tid)) or "")

    def _register_numbers(self, registers: Union[bool, Iterable[int]]) -> Optional[List[int]]:
        if registers is False or registers is None:
            return None
        if registers is True:
            numbers = list(range(128))
            if self.machine == 40:  # ARM VFP d0-d31
                numbers += list(range(256, 288))
            return numbers
        return [int(r) for r in registers]

    def walk(self, tid: int, max_frames: int = 256, symbols: bool = True, source: bool = False,
             registers: Union[bool, Iterable[int]] = False) -> Tuple[List[Frame], WalkEnd]:
        """Walks thread `tid`: (its frames innermost first, how the walk ended). See Thread.frames."""
        lib, h = _capi.lib(), self._h()
        tid = _c_int(tid, "thread id")
        if self._is_self and tid != threading.get_native_id():
            raise StateError(f"the calling thread's target walks the thread that calls it "
                             f"({threading.get_native_id()}), not thread {tid}")
        max_frames = int(max_frames)
        if max_frames < 1:
            raise ArgumentError(f"max_frames must be at least 1, not {max_frames}")
        numbers = self._register_numbers(registers)
        frames: List[Frame] = []
        failure: List[BaseException] = []

        def on_frame(fp, _arg):
            try:
                frames.append(_copy_frame(lib, fp, symbols, source, numbers))
                return _capi.FW_CONTINUE
            except BaseException as e:  # noqa: B902 -- re-raised once the walk is over
                failure.append(e)
                return _capi.FW_STOP

        callback = _capi.FRAME_CALLBACK(on_frame)
        options = _capi.fw_walk_options(ctypes.sizeof(_capi.fw_walk_options), max_frames)
        end = _capi.fw_walk_end()
        status = lib.fw_walk(h, tid, callback, None, byref(options), byref(end))
        if failure:
            if self._pending is not None:
                self._pending.take()
            raise failure[0]
        self._after_call(status)
        return frames, _walk_end(end)

    # -- lifetime
    def detach(self) -> None:
        """Lets the process go (every thread still held); idempotent. The target stays readable."""
        if not self._handle:
            return
        self._after_call(_capi.lib().fw_target_detach(self._h()))

    def close(self) -> None:
        """Detaches, then frees the target; idempotent."""
        h, self._handle = self._handle, None
        if h:
            _capi.lib().fw_target_free(h)
            self._after_call(_capi.FW_OK)

    @property
    def closed(self) -> bool:
        return not self._handle

    def __enter__(self) -> "Target":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            h, self._handle = self._handle, None
            if h:
                _capi.lib().fw_target_free(h)
        except Exception:
            pass

    def __repr__(self) -> str:
        try:
            state = "closed" if not self._handle else f"pid {self.pid}"
        except Error:
            state = "of another thread"
        return f"<framewalk.Target {self.kind} {state}>"


def _new_target(make: Callable[[Any], int], context: Context, kind: str, **kw) -> Target:
    out = c_void_p()
    status = make(byref(out))
    pending = kw.get("pending")
    if pending is not None and pending.errors:
        where, exc = pending.take()[0]
        if not isinstance(exc, Exception):
            raise exc
        raise BackendError(f"the back-end's {where} raised {type(exc).__name__}: {exc}") from exc
    _check(status)
    return Target(out.value, context, kind, **kw)


def attach(pid: int, freeze: str = "process", thread: Optional[int] = None, *,
           context: Optional[Context] = None) -> Target:
    """A live process (ptrace), or only its thread `thread`. freeze:
    "process": every thread stopped from the first threads() until detach (consistent);
    "thread": each thread stopped only while it is walked (least disturbance);
    "copy": all stopped at once, registers and stacks copied, all released (shortest pause)."""
    pid = _c_int(pid, "pid")
    if isinstance(freeze, str):
        if freeze not in _capi.FREEZE:
            raise ArgumentError(f"freeze must be one of {', '.join(_capi.FREEZE)}, not {freeze!r}")
        policy = _capi.FREEZE[freeze]
    else:
        policy = _c_int(freeze, "freeze")
    ctx = _context(context)
    lib = _capi.lib()
    if thread is None:
        return _new_target(lambda out: lib.fw_target_attach(ctx._h(), pid, policy, out), ctx, "live", live=True)
    tid = _c_int(thread, "thread id")
    return _new_target(lambda out: lib.fw_target_attach_thread(ctx._h(), pid, tid, policy, out), ctx, "live",
                       live=True)


def core(path, exe=None, sysroot=None, *, context: Optional[Context] = None) -> Target:
    """A core file; `exe` the executable (default: the path the core names); `sysroot` a prefix
    for every file the core names (also set on `context` when one is given)."""
    ctx = _context(context, sysroot)
    lib = _capi.lib()
    c_path = _encode_path(path)
    c_exe = _encode_path(exe) if exe is not None else None
    return _new_target(lambda out: lib.fw_target_core(ctx._h(), c_path, c_exe, out), ctx, "core")


def snapshot(directory, sysroot=None, *, context: Optional[Context] = None) -> Target:
    """A snapshot directory: `machine`, `maps`, per thread TID.regs and TID.stack (docs/C_API.md)."""
    ctx = _context(context, sysroot)
    lib = _capi.lib()
    c_dir = _encode_path(directory)
    return _new_target(lambda out: lib.fw_target_snapshot(ctx._h(), c_dir, out), ctx, "snapshot")


def self_thread(*, context: Optional[Context] = None) -> Target:
    """The calling thread. Its one thread is whichever thread walks it; the walk runs inside
    fw_walk, so the first frame is the foreign-call machinery (libffi) that called it."""
    ctx = _context(context)
    lib = _capi.lib()
    return _new_target(lambda out: lib.fw_target_self(ctx._h(), out), ctx, "self", is_self=True)


_per_thread = threading.local()


def backtrace(max_frames: int = 256, symbols: bool = True, source: bool = False) -> List[Frame]:
    """The calling thread's frames, innermost first (starting in libffi, which called the library).
    Each Python thread keeps its own target (and context, with its caches) for the next call."""
    target = getattr(_per_thread, "target", None)
    if target is None or target.closed:
        target = _per_thread.target = self_thread()
    return target.walk(threading.get_native_id(), max_frames=max_frames, symbols=symbols, source=source)[0]


# ---- user back-ends -----------------------------------------------------------------


class Backend:
    """A back-end of your own: subclass it, or pass callables to the constructor.

    Required: next_thread(after_tid) -> the thread after `after_tid` (0: the first), 0 when no more
    (or thread_ids() -> the ids in order, which the default next_thread walks);
    set_initial_registers(tid) -> {DWARF number: value} (a list: values from register 0), or None
    when the thread has none; memory_read(address, size) -> bytes (a prefix, or b"" when unreadable).
    Optional: detach(), thread_detach(tid), mappings() -> [(start, end, file_offset, path), ...] for
    each executable mapping (without it, /proc/PID/maps of `pid`).

    An exception a callback raises fails the library call that made it, and is re-raised from it as
    the __cause__ of a BackendError.
    """

    #: ELF e_machine (62 x86-64, 183 AArch64, 40 ARM); None: this machine's.
    machine: Optional[int] = None
    #: The process's id: for messages, and for /proc/PID/maps when there is no mappings().
    pid: int = 0

    # Optional callbacks: None when absent.
    detach: Optional[Callable[[], None]] = None
    thread_detach: Optional[Callable[[int], None]] = None
    mappings: Optional[Callable[[], Iterable[Tuple[int, int, int, str]]]] = None

    _CALLBACKS = ("thread_ids", "next_thread", "set_initial_registers", "memory_read", "detach", "thread_detach",
                  "mappings")

    def __init__(self, *, machine: Optional[int] = None, pid: Optional[int] = None, **callbacks):
        if machine is not None:
            self.machine = machine
        if pid is not None:
            self.pid = pid
        for name, fn in callbacks.items():
            if name not in self._CALLBACKS:
                raise TypeError(f"Backend() got an unexpected callback {name!r}")
            if name == "thread_ids" and fn is not None and not callable(fn):
                ids = list(fn)
                fn = (lambda ids=ids: ids)
            setattr(self, name, fn)

    def thread_ids(self) -> Iterable[int]:
        raise NotImplementedError("a Backend needs next_thread or thread_ids")

    def next_thread(self, after_tid: int) -> int:
        return _next_in(list(self.thread_ids()), after_tid)

    def set_initial_registers(self, tid: int) -> Optional[Union[Dict[int, int], Sequence[int]]]:
        raise NotImplementedError("a Backend needs set_initial_registers")

    def memory_read(self, address: int, size: int) -> bytes:
        raise NotImplementedError("a Backend needs memory_read")


def _next_in(ids: List[int], after_tid: int) -> int:
    if after_tid == 0:
        return ids[0] if ids else 0
    i = ids.index(after_tid)  # ValueError: not one of ours
    return ids[i + 1] if i + 1 < len(ids) else 0


def _callback(obj: Any, name: str) -> Optional[Callable]:
    """The object's callback `name`, None when absent or the Backend's unimplemented default."""
    fn = getattr(obj, name, None)
    if fn is None or not callable(fn):
        return None
    if isinstance(obj, Backend) and name in ("thread_ids", "next_thread", "set_initial_registers", "memory_read"):
        if getattr(fn, "__func__", None) is getattr(Backend, name):
            return None
    return fn


def _runs(registers) -> List[Tuple[int, List[int]]]:
    """{number: value} as runs of consecutive numbers: [(first, [values])]."""
    items = registers.items() if hasattr(registers, "items") else enumerate(registers)
    pairs = sorted((int(k), int(v) & _MASK64) for k, v in items if v is not None)
    runs: List[Tuple[int, List[int]]] = []
    for number, value in pairs:
        if number < 0:
            raise ValueError(f"register number {number}")
        if runs and runs[-1][0] + len(runs[-1][1]) == number:
            runs[-1][1].append(value)
        else:
            runs.append((number, [value]))
    return runs


def _backend_struct(obj: Any, pending: _Pending):
    """The fw_backend for `obj`, and the callback objects to keep alive with it."""
    lib = _capi.lib()
    next_thread = _callback(obj, "next_thread")
    if next_thread is None:
        ids = _callback(obj, "thread_ids")
        if ids is None:
            raise TypeError("a back-end needs next_thread(after_tid) or thread_ids()")
        next_thread = (lambda after, ids=ids: _next_in(list(ids()), after))
    set_registers = _callback(obj, "set_initial_registers")
    memory_read = _callback(obj, "memory_read")
    if set_registers is None or memory_read is None:
        raise TypeError("a back-end needs set_initial_registers(tid) and memory_read(address, size)")
    detach, thread_detach, mappings = (_callback(obj, n) for n in ("detach", "thread_detach", "mappings"))

    def guarded(where: str, fail, fn):
        def call(*args):
            try:
                return fn(*args)
            except BaseException as e:  # noqa: B902 -- re-raised after the library call
                pending.errors.append((where, e))
                return fail
        return call

    def c_next_thread(_arg, after):
        tid = int(next_thread(after))
        return tid if _INT_MIN <= tid <= _INT_MAX else -1

    def c_set_initial_registers(_arg, tid, state):
        registers = set_registers(tid)
        if registers is None:
            return 1
        for first, values in _runs(registers):
            array = (c_uint64 * len(values))(*values)
            status = lib.fw_thread_state_set_registers(state, first, len(values), array)
            if status != _capi.FW_OK:
                raise error_for(status, _last_error())
        return 0

    def c_memory_read(_arg, address, out, size):
        data = memory_read(address, size)
        if not data:
            return 0
        n = min(len(data), size)
        if not isinstance(data, bytes):
            data = bytes(memoryview(data)[:n])
        ctypes.memmove(out, data, n)
        return n

    def c_report_mappings(_arg, handle):
        for start, end, offset, path in mappings():
            status = lib.fw_mappings_add(handle, int(start), int(end), int(offset), _encode_path(path))
            if status != _capi.FW_OK:
                raise error_for(status, _last_error())
        return 0

    s = _capi.fw_backend()
    s.struct_size = ctypes.sizeof(_capi.fw_backend)
    machine = getattr(obj, "machine", None)
    s.machine = int(machine) if machine is not None else host_machine()
    s.pid = int(getattr(obj, "pid", 0) or 0)
    keep: List[Any] = [obj]  # the callback objects (ctypes thunks) the library calls: alive with the target

    def put(field: str, thunk) -> None:
        setattr(s, field, thunk)
        keep.append(thunk)

    put("next_thread", _capi.NEXT_THREAD(guarded("next_thread", -1, c_next_thread)))
    put("set_initial_registers",
        _capi.SET_INITIAL_REGISTERS(guarded("set_initial_registers", 1, c_set_initial_registers)))
    put("memory_read", _capi.MEMORY_READ(guarded("memory_read", 0, c_memory_read)))
    if detach is not None:
        put("detach", _capi.DETACH(guarded("detach", None, lambda _arg: detach())))
    if thread_detach is not None:
        put("thread_detach", _capi.THREAD_DETACH(guarded("thread_detach", None, lambda _arg, tid: thread_detach(tid))))
    if mappings is not None:
        put("report_mappings", _capi.REPORT_MAPPINGS(guarded("mappings", 1, c_report_mappings)))
    keep.append(s)
    return s, keep


def backend(backend_object: Any = None, *, context: Optional[Context] = None, **callbacks) -> Target:
    """A target over your own back-end: a Backend (subclass) instance, any object with the same
    methods, or the callables themselves as keywords (backend(next_thread=..., memory_read=...,
    set_initial_registers=..., machine=62, pid=...))."""
    if backend_object is None:
        backend_object = Backend(**callbacks)
    elif callbacks:
        raise TypeError("backend(): give a back-end object or callables, not both")
    pending = _Pending()
    struct, keep = _backend_struct(backend_object, pending)
    ctx = _context(context)
    lib = _capi.lib()
    return _new_target(lambda out: lib.fw_target_backend(ctx._h(), byref(struct), None, out), ctx, "backend",
                       pending=pending, keep=keep)

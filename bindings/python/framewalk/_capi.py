"""ctypes declarations of include/framewalk/framewalk.h, and the loader of
libframewalk.so.

Where the library is looked for, in order:
  1. the file named by the environment variable FRAMEWALK_LIBRARY;
  2. libframewalk.so beside this package;
  3. build/libframewalk.so of the framewalk checkout holding this package
     (bindings/python/framewalk/ in a source tree);
  4. ctypes.util.find_library("framewalk") (the system's library path).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_int, c_size_t, c_uint, c_uint64, c_void_p)
from pathlib import Path

from ._errors import LibraryError

API_VERSION = 1  # FRAMEWALK_API_VERSION these declarations follow

# fw_status
FW_OK = 0
FW_ERR_ARGUMENT = 1
FW_ERR_NO_PROCESS = 2
FW_ERR_PERMISSION = 3
FW_ERR_THREAD_GONE = 4
FW_ERR_IO = 5
FW_ERR_FORMAT = 6
FW_ERR_UNSUPPORTED = 7
FW_ERR_STATE = 8
FW_ERR_BACKEND = 9
FW_ERR_NO_MEMORY = 10

# fw_freeze
FREEZE = {"process": 0, "thread": 1, "copy": 2}

# fw_walk_action
FW_CONTINUE = 0
FW_STOP = 1

# fw_end, fw_stop_reason: their names in Python
END_NAMES = ("outermost", "callback", "truncated", "failed")
REASON_NAMES = ("outermost", "cannot-unwind", "callback", "max-frames", "no-unwind-info", "bad-memory",
                "cfa-did-not-advance", "bad-unwind-info", "no-registers", "unsupported-machine")


class fw_walk_end(Structure):
    _fields_ = [("end", c_int), ("reason", c_int), ("address", c_uint64), ("frames", c_size_t),
                ("message", c_char * 192)]


class fw_walk_options(Structure):
    _fields_ = [("struct_size", c_size_t), ("max_frames", c_size_t), ("skip_frames", c_size_t)]


class fw_module_info(Structure):
    _fields_ = [("id", c_uint64), ("path", c_char_p), ("build_id", c_char_p), ("start", c_uint64),
                ("end", c_uint64), ("bias", c_uint64)]


class fw_frame_info(Structure):
    _fields_ = [("pc", c_uint64), ("sp", c_uint64), ("activation", c_int), ("source", c_int),
                ("module_id", c_uint64), ("module_offset", c_uint64)]


class fw_source_location(Structure):
    _fields_ = [("function", c_char_p), ("file", c_char_p), ("line", c_uint), ("column", c_uint),
                ("inlined", c_int)]


# Callback types. Pointers the library passes (fw_frame *, fw_thread_state *,
# fw_mappings *, void *arg, void *out) arrive as ints (or None for NULL).
FRAME_CALLBACK = CFUNCTYPE(c_int, c_void_p, c_void_p)
NEXT_THREAD = CFUNCTYPE(c_int, c_void_p, c_int)
DETACH = CFUNCTYPE(None, c_void_p)
SET_INITIAL_REGISTERS = CFUNCTYPE(c_int, c_void_p, c_int, c_void_p)
MEMORY_READ = CFUNCTYPE(c_size_t, c_void_p, c_uint64, c_void_p, c_size_t)
THREAD_DETACH = CFUNCTYPE(None, c_void_p, c_int)
REPORT_MAPPINGS = CFUNCTYPE(c_int, c_void_p, c_void_p)


class fw_backend(Structure):
    _fields_ = [("struct_size", c_size_t), ("machine", c_int), ("pid", c_int),
                ("next_thread", NEXT_THREAD), ("detach", DETACH),
                ("set_initial_registers", SET_INITIAL_REGISTERS), ("memory_read", MEMORY_READ),
                ("thread_detach", THREAD_DETACH), ("report_mappings", REPORT_MAPPINGS)]


# name: (restype, argtypes)
_PROTOTYPES = {
    "fw_api_version": (c_int, []),
    "fw_last_error": (c_char_p, []),
    "fw_context_new": (c_void_p, []),
    "fw_context_free": (None, [c_void_p]),
    "fw_context_set_sysroot": (c_int, [c_void_p, c_char_p]),
    "fw_context_add_debug_directory": (c_int, [c_void_p, c_char_p]),
    "fw_context_set_debuginfod": (c_int, [c_void_p, c_int]),
    "fw_set_debuginfod": (None, [c_int]),
    "fw_target_attach": (c_int, [c_void_p, c_int, c_int, POINTER(c_void_p)]),
    "fw_target_attach_thread": (c_int, [c_void_p, c_int, c_int, c_int, POINTER(c_void_p)]),
    "fw_target_core": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    "fw_target_snapshot": (c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "fw_target_self": (c_int, [c_void_p, POINTER(c_void_p)]),
    "fw_thread_state_set_registers": (c_int, [c_void_p, c_uint, c_uint, POINTER(c_uint64)]),
    "fw_mappings_add": (c_int, [c_void_p, c_uint64, c_uint64, c_uint64, c_char_p]),
    "fw_target_backend": (c_int, [c_void_p, POINTER(fw_backend), c_void_p, POINTER(c_void_p)]),
    "fw_target_detach": (c_int, [c_void_p]),
    "fw_target_free": (None, [c_void_p]),
    "fw_target_pid": (c_int, [c_void_p]),
    "fw_target_machine": (c_int, [c_void_p]),
    "fw_target_warning": (c_char_p, [c_void_p, c_size_t]),
    "fw_release_held_threads": (None, []),
    "fw_next_thread": (c_int, [c_void_p, c_int, POINTER(c_int)]),
    "fw_thread_name": (c_char_p, [c_void_p, c_int]),
    "fw_walk": (c_int, [c_void_p, c_int, FRAME_CALLBACK, c_void_p, POINTER(fw_walk_options),
                        POINTER(fw_walk_end)]),
    "fw_frame_index": (c_size_t, [c_void_p]),
    "fw_frame_pc": (c_uint64, [c_void_p]),
    "fw_frame_sp": (c_uint64, [c_void_p]),
    "fw_frame_is_activation": (c_int, [c_void_p]),
    "fw_frame_get_source": (c_int, [c_void_p]),
    "fw_frame_source_name": (c_char_p, [c_int]),
    "fw_frame_get_info": (None, [c_void_p, POINTER(fw_frame_info)]),
    "fw_frame_register": (c_int, [c_void_p, c_uint, POINTER(c_uint64)]),
    "fw_frame_module": (c_int, [c_void_p, POINTER(fw_module_info)]),
    "fw_frame_function": (c_char_p, [c_void_p, POINTER(c_uint64)]),
    "fw_frame_source_locations": (c_size_t, [c_void_p, POINTER(fw_source_location), c_size_t]),
    "fw_backtrace": (c_int, [c_void_p, c_int, POINTER(fw_frame_info), c_size_t, POINTER(c_size_t),
                             POINTER(fw_walk_end)]),
}


def candidates() -> list:
    """Where the library is looked for, in order (see the module's docstring)."""
    found = []
    env = os.environ.get("FRAMEWALK_LIBRARY")
    if env:
        return [("FRAMEWALK_LIBRARY", env)]
    here = Path(__file__).resolve().parent
    found.append(("beside the package", str(here / "libframewalk.so")))
    repo = here.parents[2]  # bindings/python/framewalk -> the checkout's root
    if (repo / "include" / "framewalk" / "framewalk.h").is_file():
        found.append(("the checkout's build tree", str(repo / "build" / "libframewalk.so")))
    name = ctypes.util.find_library("framewalk")
    if name:
        found.append(("the library path", name))
    return found


_lock = threading.Lock()
_lib = None


def _declare(lib, where: str):
    missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
    if missing:
        raise LibraryError(f"{where} has no C API symbols ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): "
                           "a libframewalk built without src/capi?")
    for name, (restype, argtypes) in _PROTOTYPES.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    version = lib.fw_api_version()
    if version != API_VERSION:
        raise LibraryError(f"{where} has C API version {version}; these bindings follow version {API_VERSION}")
    return lib


def lib():
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for how, path in candidates():
            explicit = how == "FRAMEWALK_LIBRARY"
            if not explicit and os.sep in path and not os.path.exists(path):
                tried.append(f"{path} ({how}): absent")
                continue
            try:
                loaded = ctypes.CDLL(path)
            except OSError as e:
                if explicit:
                    raise LibraryError(f"FRAMEWALK_LIBRARY={path}: {e}") from None
                tried.append(f"{path} ({how}): {e}")
                continue
            try:
                _lib = _declare(loaded, path)
            except LibraryError as e:
                if explicit:
                    raise
                tried.append(str(e))
                continue
            _lib._framewalk_path = path
            return _lib
        if not any(how == "the library path" for how, _ in candidates()):
            tried.append("ctypes.util.find_library('framewalk'): not found")
        raise LibraryError("libframewalk.so not found; set FRAMEWALK_LIBRARY to its path. Tried: " + "; ".join(tried))


def library_path() -> str:
    """The path (or name) the library was loaded from."""
    return lib()._framewalk_path

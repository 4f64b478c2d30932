"""framewalk's exceptions: one per fw_status, all subclasses of Error."""
from __future__ import annotations


class Error(Exception):
    """A failed framewalk call. `message` is the library's sentence
    (fw_last_error()), `status` the fw_status number."""

    status = 0

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ArgumentError(Error, ValueError):
    """FW_ERR_ARGUMENT: a null or out-of-range argument."""
    status = 1


class NoSuchProcess(Error, ProcessLookupError):
    """FW_ERR_NO_PROCESS: no such process or thread."""
    status = 2


class PermissionDenied(Error, PermissionError):
    """FW_ERR_PERMISSION: ptrace not permitted."""
    status = 3


class ThreadGone(Error):
    """FW_ERR_THREAD_GONE: the thread exited."""
    status = 4


class FileError(Error, OSError):
    """FW_ERR_IO: a file could not be read."""
    status = 5


class FormatError(Error):
    """FW_ERR_FORMAT: a file is not what it should be (not ELF, a bad core, a bad snapshot)."""
    status = 6


class Unsupported(Error):
    """FW_ERR_UNSUPPORTED: a machine or file kind framewalk does not unwind."""
    status = 7


class StateError(Error):
    """FW_ERR_STATE: a call out of order (a detached or closed target, a live
    target used from another thread than the one that attached it)."""
    status = 8


class BackendError(Error):
    """FW_ERR_BACKEND: a user back-end's callback failed. When a Python
    callback raised, that exception is the __cause__."""
    status = 9


class OutOfMemory(Error, MemoryError):
    """FW_ERR_NO_MEMORY."""
    status = 10


class LibraryError(Error, OSError):
    """libframewalk.so could not be found or loaded, or lacks the C API."""
    status = 0


BY_STATUS = {cls.status: cls for cls in (ArgumentError, NoSuchProcess, PermissionDenied, ThreadGone, FileError,
                                         FormatError, Unsupported, StateError, BackendError, OutOfMemory)}


def error_for(status: int, message: str) -> Error:
    cls = BY_STATUS.get(status)
    if cls is None:
        e = Error(message)
        e.status = status
        return e
    return cls(message)

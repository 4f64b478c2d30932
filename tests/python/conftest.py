"""Fixtures of the Python binding tests: the test program (compiled with gcc
at test time), a running child of it parked in known functions, ptrace's
availability.

Run: FRAMEWALK_LIBRARY=build/libframewalk.so PYTHONPATH=bindings/python python3 -m pytest -q tests/python
(without PYTHONPATH the checkout's bindings/python is used; without
FRAMEWALK_LIBRARY the checkout's build/libframewalk.so)."""
from __future__ import annotations

import ctypes
import errno
import importlib.util
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

if importlib.util.find_spec("framewalk") is None:  # not installed, no PYTHONPATH: the checkout's
    sys.path.insert(0, str(REPO / "bindings" / "python"))

SOURCE = HERE / "fwtarget.c"


def marker_line(marker: str) -> int:
    """The line of fwtarget.c holding /* MARKER */."""
    for number, line in enumerate(SOURCE.read_text().splitlines(), 1):
        if f"/* {marker} */" in line:
            return number
    raise AssertionError(f"no {marker} in {SOURCE}")


@pytest.fixture(scope="session")
def program(tmp_path_factory) -> Path:
    """fwtarget.c built with gcc (-O0 -g: no inlining, no tail calls, line information)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is needed to build the test program (scripts/install-deps.sh installs it)")
    out = tmp_path_factory.mktemp("program") / "fwtarget"
    subprocess.run([gcc, "-O0", "-g", "-pthread", "-Wl,--build-id", "-o", str(out), str(SOURCE)], check=True,
                   capture_output=True, timeout=60)
    return out


class Child:
    """A running fwtarget, parked: both threads asleep in pause()."""

    def __init__(self, exe: Path):
        self.exe = exe
        self.proc = subprocess.Popen([str(exe)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, bufsize=0)
        self.pid = self.proc.pid
        self._buffer = b""
        words = self.read_line().split()
        assert words[0] == "ready" and int(words[1]) == self.pid, words
        self.worker_tid = int(words[2])
        self.wait_parked()

    def read_line(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError(f"fwtarget {self.pid} said nothing for {timeout} s")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"fwtarget {self.pid} closed its output (exit status {self.proc.poll()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def tids(self) -> list:
        return sorted(int(t) for t in os.listdir(f"/proc/{self.pid}/task"))

    def task_state(self, tid: int) -> str:
        stat = Path(f"/proc/{self.pid}/task/{tid}/stat").read_text()
        return stat[stat.rindex(")") + 2]

    def tracer(self, tid: int) -> int:
        status = Path(f"/proc/{self.pid}/task/{tid}/status").read_text()
        return int(re.search(r"^TracerPid:\s*(\d+)", status, re.M).group(1))

    def wait_parked(self, timeout: float = 10.0) -> None:
        """Until every thread sleeps (in pause: nothing else sleeps once 'ready' is printed)."""
        deadline = time.monotonic() + timeout
        while True:
            tids = self.tids()
            if len(tids) == 2 and all(self.task_state(t) == "S" for t in tids):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"fwtarget {self.pid}: threads {tids} in states "
                                     f"{[self.task_state(t) for t in tids]}, not asleep")
            time.sleep(0.002)

    def assert_running(self) -> None:
        """Left as it was: no thread stopped or traced, and it answers a signal."""
        deadline = time.monotonic() + 2.0
        while True:
            states = {t: (self.task_state(t), self.tracer(t)) for t in self.tids()}
            if all(state not in ("t", "T") and tracer == 0 for state, tracer in states.values()):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"fwtarget {self.pid} left stopped or traced: {states} (tid: (state, tracer))")
            time.sleep(0.01)
        os.kill(self.pid, signal.SIGUSR1)
        line = self.read_line(timeout=5.0)
        assert line.startswith("pong "), line
        self.wait_parked()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


@pytest.fixture
def child(program):
    c = Child(program)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="session")
def ptrace_permitted(program) -> None:
    """Skips when this process may not ptrace its own child (a container without
    CAP_SYS_PTRACE and with yama's ptrace_scope 3, a seccomp filter): checked with
    libc's ptrace, not with framewalk, so that a framewalk failure still fails."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    PTRACE_SEIZE = 0x4206
    proc = subprocess.Popen(["sleep", "30"])
    try:
        if libc.ptrace(PTRACE_SEIZE, proc.pid, None, None) != 0:
            e = ctypes.get_errno()
            if e in (errno.EPERM, errno.EACCES):
                pytest.skip(f"ptrace not permitted here: {os.strerror(e)}")
            pytest.fail(f"ptrace(PTRACE_SEIZE) of a child failed: {os.strerror(e)}")
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def live_child(child, ptrace_permitted):
    return child

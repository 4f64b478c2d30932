#!/usr/bin/env python3
"""framewalk stack fetches a stripped program's debug file from debuginfod.

Starts a local debuginfod serving one directory (the fixture's debug file),
waits until it serves the file by build-id, then dumps the stripped fixture:

  - with DEBUGINFOD_URLS naming the server, the fixture's static function is
    named (its only name is in the debug file's .symtab), live and from a core;
  - with --no-debuginfod, or without DEBUGINFOD_URLS, it is not;
  - with -s, the fetched file's DWARF gives that function's source line
    (the line of its pause loop, from the fixture's source), and only then;
  - framewalk addr2line -f on the stripped program names that function and
    its file from the fetched debug file, and only with DEBUGINFOD_URLS
    and without --no-debuginfod.

Exit status 77 (skipped) when debuginfod or gcore is not installed.

  debuginfod_test.py --framewalk build/framewalk --fixtures build/tests/stack/fixtures
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

NAME = "only_the_debug_file_names_me"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split()[-1]
    sys.exit(f"{path}: no build-id")


def wait_served(url, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--library", help="libframewalk.so: also check the C API's per-context switch (Python bindings)")
    args = ap.parse_args()
    server_bin = shutil.which("debuginfod")
    if not server_bin or not shutil.which("gcore"):
        print("debuginfod or gcore not installed: skipped")
        return 77
    target = os.path.join(args.fixtures, "debuginfod_target")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "debuginfod_target.c")
    with open(source) as f:
        loop_line = next(i for i, text in enumerate(f, 1) if "for (;;) pause();" in text)
    want_line = f"debuginfod_target.c:{loop_line}"
    served = os.path.join(args.fixtures, "debuginfod_served")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = subprocess.Popen([server_bin, "-F", served, "-p", str(port), "-d", os.path.join(tmp, "db.sqlite")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        fixture = subprocess.Popen([target], stdout=subprocess.PIPE, text=True)
        try:
            if fixture.stdout.readline().strip() != "ready":
                sys.exit("the fixture did not start")
            url = f"http://127.0.0.1:{port}"
            if not wait_served(f"{url}/buildid/{build_id(target)}/debuginfo", 60):
                sys.exit("debuginfod did not serve the debug file within 60 s")
            core = os.path.join(tmp, "core")
            subprocess.run(["gcore", "-o", core, str(fixture.pid)], capture_output=True, check=True)
            core = f"{core}.{fixture.pid}"
            env_with = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=os.path.join(tmp, "cache"))
            env_without = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
            cases = [
                ("live, DEBUGINFOD_URLS set", ["-p", str(fixture.pid)], env_with, True),
                ("core, DEBUGINFOD_URLS set", ["--core", core], env_with, True),
                ("live, --no-debuginfod", ["-p", str(fixture.pid), "--no-debuginfod"], env_with, False),
                ("live, no DEBUGINFOD_URLS", ["-p", str(fixture.pid)], env_without, False),
            ]
            for what, extra, env, want_name in cases:
                # A fresh client cache for the cases that must not find the file.
                if not want_name:
                    env = dict(env, DEBUGINFOD_CACHE_PATH=tempfile.mkdtemp(dir=tmp))
                out = subprocess.run([args.framewalk, "stack", "-s", *extra], capture_output=True, text=True,
                                     env=env, timeout=120).stdout
                named = f"{NAME}+" in out
                # The line under the function's frame.
                lines = out.splitlines()
                located = any(f"{NAME}+" in a and want_line in b for a, b in zip(lines, lines[1:]))
                print(f"{what}: {'named' if named else 'not named'}, {'line' if located else 'no line'}")
                if named != want_name or located != want_name:
                    failures.append(what)
                    print(out)
            if args.library:
                # Through the C API: two contexts in one process, debuginfod on
                # in one and off in the other; each has its own way.
                bindings = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python")
                script = (
                    "import sys, framewalk\n"
                    "for on in (False, True):\n"
                    "    with framewalk.Context(debuginfod=on) as c, c.core(sys.argv[1]) as t:\n"
                    "        names = [f.function or '' for th in t.threads() for f in th.frames()]\n"
                    "        print(on, any(n == sys.argv[2] for n in names))\n")
                env = dict(env_with, DEBUGINFOD_CACHE_PATH=tempfile.mkdtemp(dir=tmp), PYTHONPATH=bindings,
                           FRAMEWALK_LIBRARY=args.library)
                out = subprocess.run([sys.executable, "-c", script, core, NAME], capture_output=True, text=True,
                                     env=env, timeout=120)
                print(f"C API contexts, debuginfod off then on: {out.stdout.split()}")
                if out.stdout.split() != ["False", "False", "True", "True"]:
                    failures.append("C API contexts")
                    print(out.stdout, out.stderr)
            # addr2line: the function's entry, known from the debug file only.
            nm = subprocess.run(["nm", os.path.join(served, "debuginfod_target.debug")], capture_output=True,
                                text=True, check=True).stdout
            entry = next(line.split()[0] for line in nm.splitlines() if line.endswith(" " + NAME))
            for what, extra, env, want in [
                ("addr2line, DEBUGINFOD_URLS set", [], env_with, True),
                ("addr2line, --no-debuginfod", ["--no-debuginfod"], env_with, False),
                ("addr2line, no DEBUGINFOD_URLS", [], env_without, False),
            ]:
                if not want:
                    env = dict(env, DEBUGINFOD_CACHE_PATH=tempfile.mkdtemp(dir=tmp))
                out = subprocess.run([args.framewalk, "addr2line", "-f", *extra, "-e", target, "0x" + entry],
                                     capture_output=True, text=True, env=env, timeout=120).stdout
                found = out.startswith(NAME + "\n") and "debuginfod_target.c:" in out
                print(f"{what}: {'found' if found else 'not found'}")
                if found != want:
                    failures.append(what)
                    print(out)
        finally:
            fixture.kill()
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    if failures:
        print("FAILED:", ", ".join(failures))
        return 1
    print("debuginfod: all cases as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

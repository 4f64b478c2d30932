"""What the tests of cores made here from a 32-bit program's code share
(x32/core.py, s390/core.py): running the tools, framewalk's frames of the
core's one thread, gdb-multiarch's."""
import json
import shutil
import subprocess


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def check(cmd, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def framewalk_frames(fw, core):
    out = json.loads(check([fw, "stack", "--core", core, "--format", "json"]))
    (thread,) = out["threads"]
    return thread


def gdb_frames(program, core):
    """gdb's frames of the core's thread, (pc, is a signal frame, function);
    None without gdb-multiarch."""
    if not shutil.which("gdb-multiarch"):
        return None
    script = ("python\nimport gdb\nf = gdb.newest_frame()\nwhile f is not None:\n"
              "    print('FRAME', hex(f.pc()), f.type() == gdb.SIGTRAMP_FRAME, f.name())\n"
              "    f = f.older()\nend\n")
    r = run(["gdb-multiarch", "-nx", "-batch", "-ex", "file " + program, "-ex", "core-file " + core,
             "-ex", script])
    frames = []
    for line in r.stdout.splitlines():
        if line.startswith("FRAME "):
            _, pc, sigtramp, name = line.split(" ", 3)
            frames.append((int(pc, 16), sigtramp == "True", name))
    return frames

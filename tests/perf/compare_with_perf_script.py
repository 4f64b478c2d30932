#!/usr/bin/env python3
"""framewalk report on perf.data files recorded here, against perf script.

Builds a small -O2 C program without frame pointers whose hot loop has a
known call chain (main -> outer -> lib_middle -> lib_inner -> spin, the
middle two in a shared library the test builds), records it for about
0.5 s with `perf record -e cpu-clock -F 2000 --call-graph dwarf`, and
compares `framewalk report --format=script --link-addresses` with
`perf script --no-inline` sample by sample (user frames: module and
address). Where perf's stack is complete (it reaches main), framewalk's
must be the same; differences are counted and shown, and more than 2% of
them fail the test. By construction, every sample whose innermost frame is
in spin must show spin, lib_inner, lib_middle, outer, main in that order.
Then the same program built with frame pointers, recorded with
`--call-graph fp`: framewalk's user frames come from the kernel's
callchain, as perf's do, so every sample must be perf's exactly, and the
known chain must be there.

Exit 77 (skipped) without perf, a compiler, or a perf event to record with.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

LIB = r"""
#include <stdint.h>
extern volatile uint64_t fw_sink;
__attribute__((noinline)) uint64_t spin(uint64_t n);
__attribute__((noinline)) uint64_t lib_inner(uint64_t n) { uint64_t r = spin(n); fw_sink += r; return r + 1; }
__attribute__((noinline)) uint64_t lib_middle(uint64_t n) { uint64_t r = lib_inner(n) * 3; fw_sink ^= r; return r + 2; }
"""

PROG = r"""
#include <stdint.h>
#include <time.h>
volatile uint64_t fw_sink;
uint64_t lib_middle(uint64_t n);
__attribute__((noinline)) uint64_t spin(uint64_t n) {
  volatile uint64_t scratch[2] = {0, 0};  /* a frame of its own: gcc omits a leaf's frame pointer otherwise */
  for (uint64_t i = 0; i < n; ++i) scratch[i & 1] += (i * i) ^ fw_sink;
  return scratch[0] + scratch[1];
}
__attribute__((noinline)) uint64_t outer(uint64_t n) { uint64_t r = lib_middle(n) + 5; fw_sink += r; return r; }
int main(void) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    fw_sink += outer(200000);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 500000000L);
  return 0;
}
"""

CHAIN = ["spin", "lib_inner", "lib_middle", "outer", "main"]
FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
HEAD = re.compile(r"^(\S.*?)\s+(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d+):")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def parse(text):
    """Samples of perf script's text: {(tid, time): [(address, symbol, module)]}, in order."""
    samples, order, key = {}, [], None
    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            key = (m.group(2), m.group(3))
            samples[key] = []
            order.append(key)
            continue
        m = FRAME.match(line)
        if m and key is not None:
            samples[key].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return samples, order


def user(frames):
    return [f for f in frames if f[2] != "[kernel.kallsyms]" and not f[0] >= 0xffff800000000000]


def name(symbol):
    return re.sub(r"\+0x[0-9a-f]+$", "", symbol)


def compare(label, framewalk_text, perf_text, limit, complete_only=True):
    fw, order = parse(framewalk_text)
    pf, _ = parse(perf_text)
    complete = same = differ = missing = 0
    reach_fw = reach_perf = 0
    shown = 0
    for key in order:
        f = user(fw[key])
        fw_names = [name(x[1]) for x in f]
        if "main" in fw_names or "_start" in fw_names:
            reach_fw += 1
        if key not in pf:
            missing += 1
            continue
        p = user(pf[key])
        p_names = [name(x[1]) for x in p]
        if "main" in p_names or "_start" in p_names:
            reach_perf += 1
        elif complete_only:
            continue
        complete += 1
        if [(x[0], x[2]) for x in f] == [(x[0], x[2]) for x in p]:
            same += 1
            continue
        differ += 1
        if shown < 5:
            shown += 1
            print(f"{label}: sample tid {key[0]} at {key[1]} differs:")
            print("  framewalk: " + " <- ".join(f"{x[1]}@{x[0]:x}" for x in f))
            print("  perf:      " + " <- ".join(f"{x[1]}@{x[0]:x}" for x in p))
    what = "perf's complete (reaching main)" if complete_only else "compared"
    print(f"{label}: {len(order)} samples ({missing} not in perf script's output); {what}: "
          f"{complete}, framewalk's the same: {same}, different: {differ}; "
          f"reaching main or _start: framewalk {reach_fw}, perf {reach_perf}")
    ok = complete > 0 and differ <= limit * complete
    return ok, fw, order


def by_construction(label, fw, order):
    checked = wrong = 0
    for key in order:
        f = user(fw[key])
        if not f or name(f[0][1]) != "spin":
            continue
        checked += 1
        names = [name(x[1]) for x in f]
        if names[: len(CHAIN)] != CHAIN:
            wrong += 1
            if wrong <= 3:
                print(f"{label}: sample in spin without the known chain: {' <- '.join(names)}")
    print(f"{label}: {checked} samples in spin, {checked - wrong} with spin <- lib_inner <- lib_middle <- outer <- main")
    return checked >= 50 and wrong == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    for tool in ("perf", args.cc):
        if not shutil.which(tool):
            print(f"skip: no {tool}")
            return 77
    work = os.path.abspath(args.work)
    args.framewalk = os.path.abspath(args.framewalk)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(work, "lib.c"), "w") as f:
        f.write(LIB)
    with open(os.path.join(work, "prog.c"), "w") as f:
        f.write(PROG)
    flags = ["-O2", "-g", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"]
    r = run([args.cc, *flags, "-fPIC", "-shared", "-o", "libfwperf.so", "lib.c"], cwd=work)
    if r.returncode:
        print(r.stderr)
        return 1
    r = run([args.cc, *flags, "-o", "prog", "prog.c", "-L.", "-lfwperf", "-Wl,-rpath," + work], cwd=work)
    if r.returncode:
        print(r.stderr)
        return 1
    # The same with frame pointers, for --call-graph fp (its library beside it).
    os.makedirs(os.path.join(work, "fp"))
    fp_flags = ["-O2", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls"]
    for cmd in ([args.cc, *fp_flags, "-fPIC", "-shared", "-o", "fp/libfwperf.so", "lib.c"],
                [args.cc, *fp_flags, "-o", "fp/prog", "prog.c", "-Lfp", "-lfwperf", "-Wl,-rpath," + work + "/fp"]):
        r = run(cmd, cwd=work)
        if r.returncode:
            print(r.stderr)
            return 1
    env = dict(os.environ, HOME=work)  # perf's build-id cache and config stay in the work directory
    ok = True
    for mode, limit, prog in (("dwarf", 0.02, "./prog"), ("fp", 0.0, "./fp/prog")):
        data = os.path.join(work, mode + ".data")
        r = run(["perf", "record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-F", "2000", "--call-graph", mode,
                 "-o", data, prog], cwd=work, env=env)
        if r.returncode or not os.path.exists(data):
            print(f"skip: perf record failed: {r.stderr[:300]}")
            return 77
        p = run(["perf", "script", "-i", data, "--no-inline"], cwd=work, env=env)
        fwr = run([args.framewalk, "report", data, "--format=script", "--link-addresses", "--stats"], cwd=work, env=env)
        sys.stdout.write(fwr.stderr)
        if fwr.returncode:
            print(f"{mode}: framewalk report failed ({fwr.returncode})")
            ok = False
            continue
        # The sampled-profile formats from the same samples: the folded stacks weigh what the samples do.
        folded = run([args.framewalk, "report", data, "--format=folded"], cwd=work, env=env)
        total = sum(int(line.rsplit(" ", 1)[1]) for line in folded.stdout.splitlines() if line.strip())
        periods = sum(int(m.group(1)) for m in re.finditer(r"^\S.*?:\s+(\d+) cpu-clock:", fwr.stdout, re.M))
        print(f"{mode}: --format=folded weighs {total}, the samples' periods add up to {periods}")
        if folded.returncode or total != periods or total == 0:
            ok = False
        # --call-graph fp: framewalk's user frames are the kernel's callchain, as perf's are: all the same.
        good, fw, order = compare(mode, fwr.stdout, p.stdout, limit, complete_only=(mode == "dwarf"))
        ok &= good
        ok &= by_construction(mode, fw, order)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks of tests/profile/gprof_conformance.sh.

  compare_gprof.py REPORT.json FLAT.txt GRAPH.txt PROG
                                                    framewalk's JSON against gprof -b -p / -b -q
  compare_gprof.py --add-ticks PC COUNT IN OUT      a 64-bit little-endian gmon.out with COUNT ticks more at PC
  compare_gprof.py --rebase BIAS IN OUT             a 64-bit little-endian gmon.out with BIAS added to every address
  compare_gprof.py --same A.json B.json             two reports with the same counts and times
  compare_gprof.py --pprof REPORT.json PROFILE.txt  the arcs of a pprof profile (protoc --decode) against the JSON
  compare_gprof.py --pprof-top REPORT.json TOP.txt  go tool pprof -top -sample_index=calls against the JSON
"""
import json
import subprocess
import re
import struct
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def our_arcs(report):
    arcs = {}
    for a in report["arcs"]:
        key = (a["caller"], a["callee"])
        arcs[key] = arcs.get(key, 0) + a["count"]
    return arcs


def gprof_flat(path):
    rows = {}
    started = False
    for line in open(path):
        if re.match(r"\s*time\s+seconds\s+seconds", line):
            started = True
            continue
        if not started or not line.strip():
            continue
        t = line.split()
        if len(t) >= 7:
            rows[t[6]] = (float(t[2]), int(t[3]))
        elif len(t) == 4:
            rows[t[3]] = (float(t[2]), 0)
    return rows


def strip_name(text):
    text = re.sub(r"\s*\[\d+\]\s*$", "", text.strip())
    return re.sub(r"\s*<cycle \d+>$", "", text)


def gprof_arcs(path):
    """(caller, callee) -> count from each entry's children lines."""
    arcs = {}
    entry = []
    lines = open(path).read().split("\n")
    body = False
    for line in lines + ["-" * 47]:
        if line.startswith("index % time"):
            body = True
            continue
        if not body:
            continue
        if line.startswith("Index by function name"):
            break
        if re.match(r"^-{20,}$", line):
            primary = next((i for i, l in enumerate(entry) if l.startswith("[")), None)
            if primary is not None and "as a whole" not in entry[primary]:
                m = re.match(r"^\[\d+\]\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(?:[\d+]+\s+)?(.*)$", entry[primary])
                caller = strip_name(m.group(1)) if m else caller
                for child in entry[primary + 1:]:
                    m = re.match(r"^\s+(?:[\d.]+\s+[\d.]+\s+)?(\d+)(?:/\d+)?\s+(.*)$", child)
                    if not m:
                        continue
                    key = (caller, strip_name(m.group(2)))
                    arcs[key] = arcs.get(key, 0) + int(m.group(1))
            entry = []
            continue
        if line.strip():
            entry.append(line)
    return arcs


# Calls fixtures/pg_callgraph.c makes when run with 150 rounds: fib(12) makes
# 465 calls of fib, is_even(5..11) 6..12 calls of is_even and is_odd.
ROUNDS = 150
KNOWN = {("main", "fib"): ROUNDS, ("fib", "fib"): ROUNDS * 464, ("main", "work_a"): ROUNDS // 3,
         ("main", "work_b"): ROUNDS // 3, ("main", "work_c"): ROUNDS // 3, ("work_c", "work_a"): ROUNDS,
         ("main", "is_even"): ROUNDS, ("fib", "spin"): ROUNDS * 465, ("work_a", "spin"): ROUNDS // 3 + ROUNDS}


def symbols_before(prog):
    """Sorted (address, name) of PROG's function symbols, as gprof knows them."""
    out = subprocess.run(["nm", "-n", "--defined-only", prog], check=True, capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        t = line.split()
        if len(t) == 3 and t[1] in "TtWw":
            symbols.append((int(t[0], 16), t[2]))
    return symbols


def as_gprof_names(functions, prog):
    """framewalk's flat profile with each name@plt stub folded into the symbol
    before it: gprof 2.40 knows no PLT stubs and gives their ticks to the
    function symbol that precedes .plt (_init), where framewalk names the stub
    (docs/OUTPUT.md)."""
    symbols = symbols_before(prog)
    folded = {}
    for f in functions:
        name = f["name"]
        if name.endswith("@plt"):
            address = int(f["address"], 16)
            before = [s for a, s in symbols if a <= address]
            name = before[-1] if before else name
        g = folded.setdefault(name, {"name": name, "calls": 0, "self_seconds": 0.0})
        g["calls"] += f["calls"]
        g["self_seconds"] += f["self_seconds"]
    return folded


def compare(report_path, flat_path, graph_path, prog):
    report = load(report_path)
    ok = True
    ours, theirs = our_arcs(report), gprof_arcs(graph_path)
    for key, count in KNOWN.items():
        if ours.get(key) != count:
            print(f"arc {key[0]} -> {key[1]}: framewalk {ours.get(key)}, the program made {count} calls")
            ok = False
    for key in sorted(set(ours) | set(theirs)):
        if ours.get(key) != theirs.get(key):
            print(f"arc {key[0]} -> {key[1]}: framewalk {ours.get(key)}, gprof {theirs.get(key)}")
            ok = False
    flat = gprof_flat(flat_path)
    tick = report["histogram"]["seconds_per_tick"]
    tolerance = tick + 0.005  # a bin's share at a function's edge, and gprof's two decimals
    functions = as_gprof_names(report["functions"], prog)
    worst = 0.0
    for name, (self_seconds, calls) in flat.items():
        f = functions.get(name)
        if f is None:
            print(f"flat: {name} is in gprof's flat profile, not in framewalk's")
            ok = False
            continue
        if f["calls"] != calls:
            print(f"flat: {name}: framewalk {f['calls']} calls, gprof {calls}")
            ok = False
        diff = abs(f["self_seconds"] - self_seconds)
        worst = max(worst, diff)
        if diff > tolerance:
            print(f"flat: {name}: framewalk {f['self_seconds']:.4f} s, gprof {self_seconds:.2f} s")
            ok = False
    for f in functions.values():
        if (f["calls"] or f["self_seconds"] >= 0.005) and f["name"] not in flat:
            print(f"flat: {f['name']} is in framewalk's flat profile, not in gprof's")
            ok = False
    print(f"{len(ours)} arcs ({sum(ours.values())} calls), {len(flat)} functions of the flat profile; "
          f"self times within {worst:.4f} s of gprof's (tolerance {tolerance:.3f} s); "
          f"{report['histogram']['total_ticks']:.0f} ticks: {'same' if ok else 'DIFFERENT'}")
    return ok


def rebase(bias, source, target):
    data = bytearray(open(source, "rb").read())
    pos = 20
    while pos < len(data):
        tag = data[pos]
        if tag == 0:
            low, high = struct.unpack_from("<QQ", data, pos + 1)
            struct.pack_into("<QQ", data, pos + 1, low + bias, high + bias)
            bins = struct.unpack_from("<I", data, pos + 17)[0]
            pos += 41 + 2 * bins
        elif tag == 1:
            frm, slf = struct.unpack_from("<QQ", data, pos + 1)
            struct.pack_into("<QQ", data, pos + 1, frm + bias, slf + bias)
            pos += 21
        else:
            raise SystemExit(f"{source}: tag {tag} at {pos}")
    open(target, "wb").write(data)
    return True


def add_ticks(pc, count, source, target):
    """COUNT more ticks in the histogram bin that holds PC."""
    data = bytearray(open(source, "rb").read())
    pos, added = 20, False
    while pos < len(data):
        tag = data[pos]
        if tag == 0:
            low, high, bins = struct.unpack_from("<QQI", data, pos + 1)
            if low <= pc < high and not added:
                index = (pc - low) * bins // (high - low)
                at = pos + 41 + 2 * index
                struct.pack_into("<H", data, at, struct.unpack_from("<H", data, at)[0] + count)
                added = True
            pos += 41 + 2 * bins
        elif tag == 1:
            pos += 21
        else:
            raise SystemExit(f"{source}: tag {tag} at {pos}")
    if not added:
        raise SystemExit(f"{source}: no histogram holds {pc:#x}")
    open(target, "wb").write(data)
    return True


def same(a_path, b_path):
    a, b = load(a_path), load(b_path)
    keys = ("name", "calls", "self_calls", "self_ticks")
    fa = [tuple(f[k] for k in keys) for f in a["functions"]]
    fb = [tuple(f[k] for k in keys) for f in b["functions"]]
    ok = fa == fb and our_arcs(a) == our_arcs(b)
    print(f"runtime addresses: load bias {b['load_bias']}: {'same report' if ok else 'DIFFERENT report'}")
    return ok


def protoc_text(path):
    """Messages of protoc --decode output as lists of (field, value) pairs."""
    top = {"sample": [], "location": [], "function": [], "string_table": []}
    stack = []
    for line in open(path):
        line = line.strip()
        if line.endswith("{"):
            stack.append((line[:-1].strip(), []))
        elif line == "}":
            name, fields = stack.pop()
            if stack:
                stack[-1][1].append((name, fields))
            elif name in top:
                top[name].append(fields)
        elif ":" in line:
            field, value = line.split(":", 1)
            value = value.strip()
            value = json.loads(value) if value.startswith('"') else int(value) if value.lstrip("-").isdigit() else value
            if stack:
                stack[-1][1].append((field, value))
            elif field == "string_table":
                top["string_table"].append(value)
    return top


def pprof(report_path, text_path):
    report, p = load(report_path), protoc_text(text_path)
    strings = p["string_table"]
    names = {}
    for f in p["function"]:
        d = dict(f)
        names[d["id"]] = strings[d.get("name", 0)]
    location_names = {}
    for loc in p["location"]:
        d = dict(loc)
        # The last line is the function the location is in; earlier ones were inlined into it.
        line = dict([v for k, v in loc if k == "line"][-1])
        location_names[d["id"]] = names[line["function_id"]]
    arcs = {}
    for s in p["sample"]:
        ids = [v for k, v in s if k == "location_id"]
        values = [v for k, v in s if k == "value"]
        if len(ids) == 2:
            key = (location_names[ids[1]], location_names[ids[0]])
            arcs[key] = arcs.get(key, 0) + values[0]
    ok = arcs == our_arcs(report)
    print(f"pprof: {len(arcs)} arc samples, {sum(arcs.values())} calls: {'same' if ok else 'DIFFERENT'} as the JSON")
    return ok


def pprof_lines(text_path, exe, symbolizer, want_sites):
    """Every caller location with inline lines against llvm-symbolizer's
    inline chain at the call (the byte before the return address); there
    must be `want_sites` of them."""
    p = protoc_text(text_path)
    strings = p["string_table"]
    names = {dict(f)["id"]: strings[dict(f).get("name", 0)] for f in p["function"]}
    inlined = []
    for loc in p["location"]:
        lines = [dict(v) for k, v in loc if k == "line"]
        if len(lines) > 1:
            inlined.append((dict(loc)["address"], [(names[l["function_id"]], l.get("line", 0)) for l in lines]))
    if not inlined:
        print("pprof lines: no location with inline lines")
        return False
    query = "".join("0x%x\n" % (a - 1) for a, _ in inlined)
    out = subprocess.run([symbolizer, "--obj=" + exe, "--inlining", "--demangle", "--functions=linkage"],
                         input=query, capture_output=True, text=True, check=True).stdout
    answers = [block.splitlines() for block in out.strip().split("\n\n")]
    ok = len(answers) == len(inlined) == want_sites
    for (address, lines), block in zip(inlined, answers):
        want = [(block[i], int(block[i + 1].split(":")[-2])) for i in range(0, len(block), 2)]
        got = [(name, line) for name, line in lines]
        # The last line's function is the profile's own name for the caller (its symbol).
        if [w[1] for w in want] != [g[1] for g in got] or [w[0] for w in want[:-1]] != [g[0] for g in got[:-1]]:
            print(f"pprof lines at 0x{address:x}: framewalk {got}, llvm-symbolizer {want}")
            ok = False
    print(f"pprof lines: {len(inlined)} call sites in inlined code, "
          f"{sum(len(l) for _, l in inlined)} lines: {'same' if ok else 'DIFFERENT'} as llvm-symbolizer")
    return ok


def pprof_top(report_path, top_path):
    report = load(report_path)
    received = {f["name"]: f["calls"] + f["self_calls"] for f in report["functions"]}
    ok, rows = True, 0
    for line in open(top_path):
        t = line.split()
        if len(t) == 6 and t[0].isdigit():
            rows += 1
            if int(t[0]) != received.get(t[5], 0):
                print(f"go tool pprof: {t[5]} flat {t[0]}, framewalk {received.get(t[5])} calls")
                ok = False
    ok = ok and rows > 0
    print(f"go tool pprof -top -sample_index=calls: {rows} functions: {'same calls' if ok else 'DIFFERENT'}")
    return ok


def main(argv):
    if argv[1] == "--rebase":
        return rebase(int(argv[2], 0), argv[3], argv[4])
    if argv[1] == "--add-ticks":
        return add_ticks(int(argv[2], 0), int(argv[3]), argv[4], argv[5])
    if argv[1] == "--same":
        return same(argv[2], argv[3])
    if argv[1] == "--pprof-lines":
        return pprof_lines(argv[2], argv[3], argv[4], int(argv[5]))
    if argv[1] == "--pprof":
        return pprof(argv[2], argv[3])
    if argv[1] == "--pprof-top":
        return pprof_top(argv[2], argv[3])
    return compare(argv[1], argv[2], argv[3], argv[4])


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)

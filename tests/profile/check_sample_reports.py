#!/usr/bin/env python3
"""Reads back every report format of the fixture profile (sample_fixture.hpp)
the way its consumer would, and checks that each gives the split known by
construction, so that all formats agree:

  check_sample_reports.py DIR SCHEMA

DIR holds out.text, out.json, out.folded, out-off.folded, out.pprof,
out.speedscope, out.firefox, out.html (sample_reports.sh writes them).
speedscope's file is validated against SCHEMA (the required parts of its
schema) with python3-jsonschema; the Firefox profile's tables are checked
for consistency (lengths, indexes, prefixes before their stacks); pprof's
protobuf is decoded here (the gtest reads it with protobuf's classes).
"""
import gzip
import json
import re
import sys

MS = 1_000_000
EXPECTED = {
    "on-cpu": {
        "square": (600 * MS, 600 * MS), "compute": (0, 600 * MS), "run": (0, 900 * MS), "main": (0, 900 * MS),
        "memcpy": (300 * MS, 300 * MS), "parse": (0, 300 * MS), "thread_start": (0, 100 * MS),
        "worker": (0, 100 * MS), "recurse": (100 * MS, 100 * MS),
    },
    "off-cpu": {
        "read": (700 * MS, 700 * MS), "parse": (0, 700 * MS), "run": (0, 700 * MS), "main": (0, 700 * MS),
        "pthread_cond_wait": (300 * MS, 300 * MS), "worker": (0, 300 * MS), "thread_start": (0, 300 * MS),
    },
}
TOTAL = 1000 * MS
failures = []


def check(fmt, kind, got):
    want = EXPECTED[kind]
    if got != want:
        failures.append(f"{fmt} {kind}: got {sorted(got.items())}, expected {sorted(want.items())}")
    else:
        print(f"{fmt} {kind}: {len(got)} functions, the expected self and total weights")


def from_stacks(stacks):
    """(names root first, weight) pairs into {name: (self, total)}."""
    self_w, total_w = {}, {}
    for names, w in stacks:
        if not names:
            continue
        self_w[names[-1]] = self_w.get(names[-1], 0) + w
        for n in set(names):
            total_w[n] = total_w.get(n, 0) + w
    return {n: (self_w.get(n, 0), total_w[n]) for n in total_w}


def strip_module(name):
    return re.sub(r" \([^()]*\)$", "", name)


def folded(path):
    stacks = []
    for line in open(path):
        names, w = line.rstrip("\n").rsplit(" ", 1)
        stacks.append(([n[:-4] if n.endswith("_[i]") else n for n in names.split(";")], int(w)))
    return from_stacks(stacks)


def text(path):
    """The top-function rows of each section, as percentages."""
    out, kind = {}, None
    for line in open(path):
        if line.startswith("on-CPU, all threads"):
            kind = "on-cpu"
        elif line.startswith("off-CPU, all threads"):
            kind = "off-cpu"
        elif kind and re.match(r"^ +[0-9.]+%", line):
            f = line.split()
            out.setdefault(kind, {})[f[4]] = (f[0], f[2])
    return out


def pct(w):
    return f"{100 * w / TOTAL:.2f}%"


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """A protobuf message's fields: (number, value) with value an int or bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wire == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((num, v))
    return out


def packed(v):
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def pprof(path):
    """profile.proto: samples (2), locations (4), functions (5), strings (6)."""
    top = fields(gzip.open(path).read())
    strings = [v.decode() for n, v in top if n == 6]
    functions, locations, samples = {}, {}, []
    for n, v in top:
        if n == 5:
            f = dict(fields(v))
            functions[f[1]] = strings[f.get(2, 0)]
        elif n == 4:
            f = fields(v)
            lid = dict(f)[1]
            locations[lid] = [dict(fields(l)).get(1) for k, l in f if k == 4]
        elif n == 2:
            locs, vals = [], []
            for k, x in fields(v):
                if k == 1:
                    locs += packed(x)
                elif k == 2:
                    vals += packed(x)
            samples.append((locs, vals))
    out = {}
    for kind, index in (("on-cpu", 1), ("off-cpu", 2)):
        stacks = []
        for locs, vals in samples:
            if vals[index]:
                names = []
                for lid in reversed(locs):  # root first; a location's lines innermost first
                    names += [functions[f] for f in reversed(locations[lid])]
                stacks.append((names, vals[index]))
        out[kind] = from_stacks(stacks)
    return out


def speedscope(path, schema_path):
    doc = json.load(open(path))
    try:
        import jsonschema
        jsonschema.validate(doc, json.load(open(schema_path)))
        print("speedscope: valid against the schema")
    except ImportError:
        for key in ("$schema", "shared", "profiles"):
            assert key in doc, key
        print("speedscope: python3-jsonschema missing, required keys checked only")
    frames = [strip_module(f["name"]) for f in doc["shared"]["frames"]]
    out = {"on-cpu": [], "off-cpu": []}
    for p in doc["profiles"]:
        assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"])
        assert p["endValue"] == sum(p["weights"])
        kind = "off-cpu" if p["name"].endswith("off-CPU") else "on-cpu"
        out[kind] += [([frames[i] for i in s], w) for s, w in zip(p["samples"], p["weights"])]
    return {k: from_stacks(v) for k, v in out.items()}


def firefox(path):
    doc = json.load(open(path))
    meta = doc["meta"]
    assert meta["version"] == 24 and meta["preprocessedProfileVersion"] == 41, meta
    out = {"on-cpu": [], "off-cpu": []}
    for t in doc["threads"]:
        strings = t["stringArray"]
        for table in ("samples", "stackTable", "frameTable", "funcTable", "resourceTable", "nativeSymbols", "markers"):
            tab = t[table]
            for col, values in tab.items():
                if isinstance(values, list):
                    assert len(values) == tab["length"], (table, col)
        st, ft, fn, rt = t["stackTable"], t["frameTable"], t["funcTable"], t["resourceTable"]
        for i, p in enumerate(st["prefix"]):
            assert p is None or 0 <= p < i, ("prefix", i, p)
            assert 0 <= st["frame"][i] < ft["length"]
        assert all(0 <= f < fn["length"] for f in ft["func"])
        assert all(0 <= n < len(strings) for n in fn["name"])
        assert all(-1 <= r < rt["length"] for r in fn["resource"])
        assert all(0 <= lib < len(doc["libs"]) for lib in rt["lib"])
        times = t["samples"]["time"]
        assert times == sorted(times)
        kind = "off-cpu" if t["name"].endswith("(off-CPU)") else "on-cpu"
        for s, w in zip(t["samples"]["stack"], t["samples"]["weight"]):
            names = []
            while s is not None:
                names.append(strings[fn["name"][ft["func"][st["frame"][s]]]])
                s = st["prefix"][s]
            out[kind].append((names[::-1], round(w * MS) if t["samples"]["weightType"] == "tracing-ms" else w))
    print(f"firefox: {len(doc['threads'])} threads, tables consistent, version 24/41")
    return {k: from_stacks(v) for k, v in out.items()}


def html(path):
    page = open(path).read()
    assert "http://" not in page and "https://" not in page, "the page refers to the network"
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))
    out = {}
    for kind, tree in zip(("on-cpu", "off-cpu"), data["trees"]):
        stacks = []
        for node, _thread, w in tree["weights"]:
            names = []
            while node:
                names.append(data["fns"][tree["fn"][node]][0])
                node = tree["parent"][node]
            stacks.append((names[::-1], w))
        out[kind] = from_stacks(stacks)
    return out


def main():
    d, schema = sys.argv[1], sys.argv[2]
    report = json.load(open(f"{d}/out.json"))
    for r in report["reports"]:
        check("json", r["kind"], {f["name"]: (f["self"], f["total"]) for f in r["top"]})
    t = text(f"{d}/out.text")
    for kind, want in EXPECTED.items():
        exp = {n: (pct(s), pct(tot)) for n, (s, tot) in want.items()}
        if t.get(kind) != exp:
            failures.append(f"text {kind}: got {t.get(kind)}, expected {exp}")
        else:
            print(f"text {kind}: the expected percentages")
    check("folded", "on-cpu", folded(f"{d}/out.folded"))
    check("folded", "off-cpu", folded(f"{d}/out-off.folded"))
    for name, result in (("pprof", pprof(f"{d}/out.pprof")), ("speedscope", speedscope(f"{d}/out.speedscope", schema)),
                         ("firefox", firefox(f"{d}/out.firefox")), ("html", html(f"{d}/out.html"))):
        for kind in EXPECTED:
            check(name, kind, result[kind])
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print("all formats: the same totals")


main()

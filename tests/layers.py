#!/usr/bin/env python3
"""Every #include of src/<layer>/ names only its own layer, a layer it uses
(directly or through another) as the build's layer table says (layers.txt,
written by CMakeLists.txt's framewalk_layer calls), or a public header
(include/framewalk/). tools/ is on top and may use everything. The mcount
runtime's machine entry points (src/arch/<machine>/mcount_*) are the mcount
layer's: machine quirks live in arch/, whoever compiles them.

usage: layers.py SRC_DIR LAYERS_TXT"""
import os
import re
import sys


def main():
    src, table_path = sys.argv[1], sys.argv[2]
    uses = {}
    for line in open(table_path):
        if ":" in line:
            name, rest = line.split(":", 1)
            uses[name.strip()] = rest.split()
    for name, deps in uses.items():
        for dep in deps:
            if dep not in uses:
                print(f"layers.txt: {name} uses {dep}, which is no layer")
                return 1

    def closure(name):
        seen, todo = set(), [name]
        while todo:
            layer = todo.pop()
            if layer not in seen:
                seen.add(layer)
                todo.extend(uses.get(layer, []))
        return seen

    problems = []
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for folder in folders:
        if folder == "tools":
            continue
        if folder not in uses:
            problems.append(f"src/{folder}/: a folder that is no layer of CMakeLists.txt")
            continue
        for root, _, files in os.walk(os.path.join(src, folder)):
            for f in sorted(files):
                path = os.path.join(root, f)
                if not f.endswith((".cpp", ".hpp", ".h", ".c", ".S")):
                    continue
                layer = "mcount" if folder == "arch" and f.startswith("mcount_") else folder
                allowed = closure(layer) | {"framewalk"}  # include/framewalk/
                for number, line in enumerate(open(path, errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"/]+)/', line)
                    if m and m.group(1) not in allowed:
                        rel = os.path.relpath(path, os.path.dirname(src))
                        problems.append(f"{rel}:{number}: {layer} includes {m.group(1)}/, a layer it does not use")
    for p in problems:
        print(p)
    print(f"{len(folders)} folders, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

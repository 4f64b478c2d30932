#!/usr/bin/env bash
# framewalk addr2line against binutils addr2line and llvm-symbolizer, in the
# same run: N addresses (default 100,000; a fixed seed) inside the functions
# of a large file with DWARF, each tool given them all on standard input;
# then the latency of one address on a file not yet read (the first answer),
# and each tool's peak memory, whole and its own (anonymous: without the
# mapped file's pages). Reports medians over RUNS and ratios.
#
#   bench/symbolize_vs_peers.sh FRAMEWALK [FILE] [N] [RUNS]
#
# FILE defaults to the framewalk binary itself (a RelWithDebInfo build: gcc,
# -O2 -g, DWARF 5, about 19 MB of .debug_info, C++ with deep inlining).
#
# framewalk is timed three ways, for its cache of inflated sections
# (docs/addr2line.md): fw, cold (FRAMEWALK_CACHE=off: every compressed
# section inflated, nothing written); fw_write, the first run (an empty
# cache: inflated and written; the emptying is timed with it); fw_warm, the
# runs after (the sections mapped from the cache). The cache is a directory
# of this run's, not the user's. On a file without compressed sections the
# three are the same.
set -eu
usage="usage: symbolize_vs_peers.sh FRAMEWALK [FILE] [N] [RUNS]"
fw=${1:?$usage}
file=${2:-$fw}
count=${3:-100000}
runs=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1fx", a/b}'; }

llvm=llvm-symbolizer
command -v llvm-symbolizer-16 >/dev/null && llvm=llvm-symbolizer-16
# Inline frames when this framewalk has them (an older one refuses -i).
fw_flags="-f -i -C"
if ! echo 0 | FRAMEWALK_CACHE=off "$fw" addr2line -i -e "$file" >/dev/null 2>&1; then
  fw_flags="-f -C"
  echo "note: this framewalk refuses -i; timed without inline frames" >&2
fi

# Addresses: every function's entry first, then random addresses inside
# random functions (FUNC symbols with a size, from nm), up to N in all.
# (A file without a symbol table, as libc.so.6: its dynamic symbols.)
nm_flags=(--defined-only -S)
nm "${nm_flags[@]}" "$file" 2>/dev/null | grep -q . || nm_flags+=(-D)
nm "${nm_flags[@]}" "$file" | python3 -c '
import random, sys
count = int(sys.argv[1])
funcs = []
for line in sys.stdin:
    f = line.split()
    if len(f) >= 4 and f[2] in "tTwW" and int(f[1], 16) > 0:
        funcs.append((int(f[0], 16), int(f[1], 16)))
funcs = sorted(set(funcs))
rng = random.Random(1)
out = [a for a, _ in funcs][:count]
while len(out) < count:
    a, size = rng.choice(funcs)
    out.append(a + rng.randrange(size))
print("\n".join("0x%x" % a for a in out))
' "$count" >"$tmp/addrs"
echo "file: $file ($(du -h "$file" | cut -f1)), $(wc -l <"$tmp/addrs") addresses, $llvm, framewalk $fw_flags"

cache="$tmp/cache"
run_fw() { FRAMEWALK_CACHE=off "$fw" addr2line $fw_flags -e "$file" <"$1"; }
run_fw_write() { rm -rf "$cache"; XDG_CACHE_HOME="$cache" "$fw" addr2line $fw_flags -e "$file" <"$1"; }
run_fw_warm() { XDG_CACHE_HOME="$cache" "$fw" addr2line $fw_flags -e "$file" <"$1"; }
run_binutils() { addr2line -f -i -C -e "$file" <"$1"; }
run_llvm() { "$llvm" --obj="$file" --inlining --demangle <"$1"; }

head -1 "$tmp/addrs" >"$tmp/one"
vars="fw='$fw' file='$file' llvm='$llvm' fw_flags='$fw_flags' cache='$cache'"
peak_kb() { /usr/bin/time -f %M bash -c "$(declare -f "$1"); $vars; $1 '$2' >/dev/null" 2>&1 | tail -1; }

# Peak anonymous memory (RssAnon, sampled every millisecond): the tool's own
# memory, without the pages of the mapped file it has read (those count in
# peak_mb, and are shared with the page cache).
own_kb() {
  python3 - "$@" <<'PY'
import subprocess, sys, time
addrs, cmd = sys.argv[2], sys.argv[3:]
with open(addrs) as stdin:
    p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            for line in open("/proc/%d/status" % p.pid):
                if line.startswith("RssAnon:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.001)
print(peak)
PY
}
own_cmd_fw() { echo env FRAMEWALK_CACHE=off "$fw" addr2line $fw_flags -e "$file"; }
own_cmd_fw_write() { rm -rf "$cache"; echo env XDG_CACHE_HOME="$cache" "$fw" addr2line $fw_flags -e "$file"; }
own_cmd_fw_warm() { echo env XDG_CACHE_HOME="$cache" "$fw" addr2line $fw_flags -e "$file"; }
own_cmd_binutils() { echo addr2line -f -i -C -e "$file"; }
own_cmd_llvm() { echo "$llvm" --obj="$file" --inlining --demangle; }

printf '%-16s %12s %12s %12s %12s %10s\n' tool all_ms first_ms peak_mb own_mb lines
for tool in fw fw_write fw_warm binutils llvm; do
  # fw_warm's cache is filled by the run before it (fw_write's last).
  t_all=$(median_ms bash -c "$(declare -f run_$tool); $vars; run_$tool '$tmp/addrs'")
  t_one=$(median_ms bash -c "$(declare -f run_$tool); $vars; run_$tool '$tmp/one'")
  kb=$(peak_kb "run_$tool" "$tmp/addrs")
  # shellcheck disable=SC2046  # the command's words
  own=$(own_kb "$tool" "$tmp/addrs" $(own_cmd_$tool))
  lines=$(run_$tool "$tmp/addrs" | wc -l)
  printf '%-16s %12s %12s %12s %12s %10s\n' "$tool" "$t_all" "$t_one" "$(awk -v k="$kb" 'BEGIN {printf "%.1f", k/1024}')" \
    "$(awk -v k="$own" 'BEGIN {printf "%.1f", k/1024}')" "$lines"
  eval "all_$tool=$t_all one_$tool=$t_one"
done
for fw_run in fw fw_write fw_warm; do
  eval "all=\$all_$fw_run one=\$one_$fw_run"
  printf '%-20s %s (all), %s (first)\n' "binutils/$fw_run:" "$(ratio "$all_binutils" "$all")" "$(ratio "$one_binutils" "$one")"
  printf '%-20s %s (all), %s (first)\n' "llvm/$fw_run:" "$(ratio "$all_llvm" "$all")" "$(ratio "$one_llvm" "$one")"
done

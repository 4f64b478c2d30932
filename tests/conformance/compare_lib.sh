# Sourced by the readelf conformance scripts (readelf_frames.sh,
# readelf_arm_unwind.sh): how a difference is kept and reported. Uses the
# caller's $diffdir.

# keep_diff FILE EXPECTED GOT EXPECTED_STATUS GOT_STATUS
keep_diff() {
  local name
  name=$(echo "$1" | tr '/' '_')
  { echo "exit status: readelf $4, framewalk $5"; diff "$2" "$3" | head -50; } >"$diffdir/$name.diff"
}
export -f keep_diff

# finish_comparison RESULTS: lists the files that differ ("diff ..." lines)
# and exits 1 if there are any, else 0.
finish_comparison() {
  if echo "$1" | grep -q '^diff '; then
    echo "$1" | grep '^diff ' | head -20
    echo "diffs in $diffdir"
    exit 1
  fi
  exit 0
}

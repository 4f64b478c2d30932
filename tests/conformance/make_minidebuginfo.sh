#!/bin/sh
# Builds a MiniDebugInfo variant of IN: its .debug_frame and .symtab go into
# an xz-compressed ELF stored as .gnu_debugdata; the outer file loses both.
set -eu
in=$1
out=$2
objcopy=${OBJCOPY:-objcopy}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$objcopy" --only-keep-debug "$in" "$tmp/full.debug"
"$objcopy" --remove-section=.debug_info --remove-section=.debug_abbrev --remove-section=.debug_line \
  --remove-section=.debug_line_str --remove-section=.debug_str --remove-section=.debug_aranges \
  --remove-section=.debug_loclists --remove-section=.debug_rnglists --remove-section=.gdb_index \
  --remove-section=.comment "$tmp/full.debug" "$tmp/mini.debug"
xz -T1 -c "$tmp/mini.debug" > "$tmp/mini.debug.xz"
"$objcopy" --strip-all --remove-section=.debug_frame --remove-section=.gnu_debuglink \
  --add-section .gnu_debugdata="$tmp/mini.debug.xz" "$in" "$out"

# Sourced by the bench scripts: scaled copies of corpus traces, made once
# and cached.
#
# scaled_copy TOOL SRC N OUT: runs `python3 TOOL SRC N OUT` (a scaling script
# such as ../shared/tools/scale_trace.py) unless OUT already exists.
scaled_copy() {
  local tool=$1 src=$2 n=$3 out=$4
  if [ ! -f "$out" ]; then
    echo "making $out ($(basename "$tool") x$n)..." >&2
    python3 "$tool" "$src" "$n" "$out"
  fi
}

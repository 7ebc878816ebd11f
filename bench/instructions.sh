#!/usr/bin/env bash
# Instructions executed by `tracelens report`, this build (A) against a
# baseline commit (B), counted by valgrind's cachegrind without its cache
# model (`--cache-sim=no`): a figure that repeats from run to run, for
# changes of a few percent that the wall and CPU times of bench/ab.sh
# cannot resolve on a shared machine. It is not time: a change that trades
# instructions for cache misses (or the reverse) shows here the wrong way,
# so confirm with bench/ab.sh. Runs each binary once, threads serialised
# (about 15x slower than a normal run). Not a test: it asserts nothing.
#
# usage: bench/instructions.sh BASE_REV [TRACE]   (TRACE default: the owlv2 x4 copy)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
base_rev=${1:?usage: bench/instructions.sh BASE_REV [TRACE]}
command -v valgrind > /dev/null || { echo "bench: needs valgrind" >&2; exit 2; }
shared=../shared
cache=${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}
trace=${2:-}
if [ -z "$trace" ]; then
  big="$shared/corpus/pytorch/h100_owlv2_large.json.gz"
  [ -f "$big" ] || { echo "bench: $big not found (needs ../shared/corpus)" >&2; exit 2; }
  mkdir -p "$cache"
  trace="$cache/owlv2_x4.json"
  scaled_copy "$shared/tools/scale_trace.py" "$big" 4 "$trace"
fi
release_binary
a_bin=$bin
baseline_binary "$base_rev"
scratch_dir tracelens-instructions

# count BIN: the instructions BIN executes on the report of $trace.
count() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$1" report "$trace" -o "$work/r.xlsx" -q 2>&1 |
    awk '/I[ ]+refs:/ {gsub(",", "", $NF); print $NF}'
}
a=$(count "$a_bin")
b=$(count "$b_bin")
printf '%-12s %16s\n' run instructions
printf '%-12s %16s\n' A "$a" "B $sha" "$b"
printf '%-12s %15.3fx\n' B/A "$(awk "BEGIN{print $b / $a}")"

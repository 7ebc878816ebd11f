#!/usr/bin/env bash
# Benchmark: wall time, throughput (MB/s of uncompressed input: JSON, or the
# protobuf for XPlane) and peak RSS of the whole `tracelens report` (Excel +
# CSV written) on the corpus traces (PyTorch, JAX, rocprofv3), on x4 / x16
# copies of the largest PyTorch one made with ../shared/tools/scale_trace.py,
# and on x4 / x16 copies of the rocprofv3 one made with bench/scale_rocprof.py;
# then `tracelens diff` on the qwen H100/MI300 pair and its x4 / x16 copies.
#
# usage: bench/run.sh [--no-scaled] [RUNS]
# Needs GNU time (/usr/bin/time) and python3. Scaled copies are cached in
# ${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}. This is not a test: it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
scaled=1
if [ "${1:-}" = "--no-scaled" ]; then scaled=0; shift; fi
runs=${1:-3}
shared=../shared
cache=${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}
mkdir -p "$cache"
release_binary
need_gnu_time

traces=()
if [ -d "$shared/corpus/pytorch" ]; then
  for t in "$shared"/corpus/pytorch/*.json.gz; do traces+=("$t"); done
  big="$shared/corpus/pytorch/h100_owlv2_large.json.gz"
  if [ "$scaled" = 1 ] && [ -f "$big" ]; then
    for n in 4 16; do
      out="$cache/owlv2_x$n.json"
      scaled_copy "$shared/tools/scale_trace.py" "$big" "$n" "$out"
      traces+=("$out")
    done
  fi
  for t in "$shared"/corpus/jax/*.xplane.pb "$shared"/corpus/rocprof/*.json.gz; do
    [ -f "$t" ] && traces+=("$t")
  done
  roc="$shared/corpus/rocprof/908_results.json.gz"
  if [ "$scaled" = 1 ] && [ -f "$roc" ]; then
    for n in 4 16; do
      out="$cache/908_x${n}_results.json"
      scaled_copy bench/scale_rocprof.py "$roc" "$n" "$out"
      traces+=("$out")
    done
  fi
else
  echo "bench: ../shared/corpus not found; measuring testdata only" >&2
  traces+=(testdata/example.json)
fi

json_mb() {
  case "$1" in
    *.gz) gzip -dc "$1" | wc -c ;;
    *) wc -c < "$1" ;;
  esac | awk '{printf "%.1f", $1 / 1e6}'
}

# measure LABEL MB COMMAND...: runs COMMAND $runs times, @OUT@ in its
# arguments replaced by a fresh folder each time, and prints the best wall
# time, MB/s and the highest peak RSS.
measure() {
  local label=$1 mb=$2; shift 2
  local best_wall="" best_rss="" t0 t1 wall rss
  for _ in $(seq "$runs"); do
    work=$(mktemp -d)
    t0=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$work/time" "${@//@OUT@/$work}" 2>/dev/null
    t1=$(date +%s%N)
    wall=$(awk "BEGIN{printf \"%.3f\", ($t1 - $t0) / 1e9}")
    read -r rss < "$work/time"
    rm -rf "$work"
    if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; fi
    if [ -z "$best_rss" ] || [ "$rss" -gt "$best_rss" ]; then best_rss=$rss; fi
  done
  printf "%-34s %9s %9s %9.0f %10.1f\n" "$label" "$mb" "$best_wall" \
    "$(awk "BEGIN{print ($best_wall > 0) ? $mb / $best_wall : 0}")" "$(awk "BEGIN{print $best_rss / 1024}")"
}

printf "%-34s %9s %9s %9s %10s\n" trace "input MB" "wall s" "MB/s" "peak MB"
for t in "${traces[@]}"; do
  measure "$(basename "$t")" "$(json_mb "$t")" "$bin" report "$t" -o @OUT@/r.xlsx --csv @OUT@/csv -q
done
echo "(wall: best of $runs runs; peak: highest RSS of the runs; report = Excel + all CSV sheets)"

# tracelens diff: the corpus qwen pair (H100 vs MI300) and x4 / x16 copies of
# both sides (scale_trace.py); throughput over the two JSON inputs together.
base="$shared/corpus/pytorch/h100_qwen15_05b.json.gz"
variant="$shared/corpus/pytorch/mi300_qwen15_05b.json.gz"
if [ -f "$base" ] && [ -f "$variant" ]; then
  pairs=("$base|$variant")
  if [ "$scaled" = 1 ]; then
    for n in 4 16; do
      for side in h100 mi300; do
        scaled_copy "$shared/tools/scale_trace.py" \
          "$shared/corpus/pytorch/${side}_qwen15_05b.json.gz" "$n" "$cache/qwen_${side}_x$n.json"
      done
      pairs+=("$cache/qwen_h100_x$n.json|$cache/qwen_mi300_x$n.json")
    done
  fi
  echo
  printf "%-34s %9s %9s %9s %10s\n" "diff pair" "input MB" "wall s" "MB/s" "peak MB"
  for p in "${pairs[@]}"; do
    a=${p%%|*}; b=${p##*|}
    mb=$(awk "BEGIN{printf \"%.1f\", $(json_mb "$a") + $(json_mb "$b")}")
    measure "$(basename "$a") vs mi300" "$mb" "$bin" diff "$a" "$b" --out @OUT@/diff -q
  done
  echo "(diff: the six files written; input MB = both traces' JSON)"
fi

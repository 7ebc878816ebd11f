#!/usr/bin/env bash
# Benchmark of `tracelens report` on JAX profiles (XSpace protobufs): the
# corpus profile jax_conv_minimal_08 and copies of it N times larger
# (bench/scale_xplane.py, default x256 and x1024), each run RUNS times.
# Prints, per profile, the medians of wall time, CPU time (user+sys) and
# CPU/wall, the peak RSS, the events in the file and MB/s of protobuf; then
# how much the peak grows per event between the two largest profiles and
# the fixed part that leaves (issue 13's goals: at most 64 bytes per event,
# a fixed part under 40 MiB, CPU/wall at least 1.6). The report is written
# as a workbook, or with --csv as CSV sheets. Not a test: it asserts nothing.
#
# usage: bench/xplane.sh [--csv] [RUNS] [N...]   (RUNS default 3)
# Copies are cached in ${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
csv=0
if [ "${1:-}" = "--csv" ]; then csv=1; shift; fi
runs=${1:-3}
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(256 1024)
src=../shared/corpus/jax/jax_conv_minimal_08.xplane.pb
if [ ! -f "$src" ]; then
  echo "bench: $src not found (../shared/corpus is needed)" >&2
  exit 1
fi
cache=${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}
mkdir -p "$cache"
release_binary
need_gnu_time

per_copy=$(python3 bench/scale_xplane.py --count "$src")
profiles=("1|$src")
for n in "${sizes[@]}"; do
  out="$cache/jax_conv_x$n.xplane.pb"
  scaled_copy bench/scale_xplane.py "$src" "$n" "$out"
  profiles+=("$n|$out")
done

# once PROFILE: one run, printing "wall cpu rss_kb".
once() {
  local out
  out=$(mktemp -d)
  local sheets=(-o "$out/r.xlsx")
  [ "$csv" = 1 ] && sheets=(--csv "$out/csv")
  timed_run "$bin" report "$1" "${sheets[@]}" -q
  rm -rf "$out"
}

printf '%-8s %9s %10s %8s %8s %8s %9s %8s\n' copies "input MB" events "wall s" "CPU s" CPU/wall "peak MiB" "MB/s"
results=()
for p in "${profiles[@]}"; do
  n=${p%%|*}; file=${p#*|}
  times=$(mktemp)
  for _ in $(seq "$runs"); do once "$file" >> "$times"; done
  w=$(median 1 "$times"); c=$(median 2 "$times"); r=$(median 3 "$times")
  rm -f "$times"
  mb=$(wc -c < "$file" | awk '{printf "%.1f", $1 / 1e6}')
  events=$((per_copy * n))
  printf '%-8s %9s %10d %8.3f %8.3f %8.2f %9.0f %8.0f\n' "x$n" "$mb" "$events" "$w" "$c" \
    "$(awk "BEGIN{print $c / $w}")" "$(awk "BEGIN{print $r / 1024}")" "$(awk "BEGIN{print $mb / $w}")"
  results+=("$events $r")
done
if [ ${#results[@]} -ge 3 ]; then
  read -r e1 r1 <<< "${results[-2]}"
  read -r e2 r2 <<< "${results[-1]}"
  awk -v e1="$e1" -v r1="$r1" -v e2="$e2" -v r2="$r2" 'BEGIN {
    per = (r2 - r1) * 1024 / (e2 - e1)
    printf "peak growth %.0f bytes per event between the two largest; fixed part %.0f MiB\n",
      per, (r1 * 1024 - per * e1) / 1048576 }'
fi
echo "(medians of $runs runs; peak: median RSS; report written as $([ "$csv" = 1 ] && echo CSV || echo a workbook))"

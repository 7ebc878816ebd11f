#!/usr/bin/env bash
# A/B benchmark of `tracelens report` against a baseline commit: for the
# owlv2 trace and its x4 / x16 copies (../shared/tools/scale_trace.py), runs
# this build (A) and the baseline (B) alternately, A B A B …, and prints the
# median wall time, CPU time (user+sys), peak RSS and MB/s of JSON for each,
# with B/A ratios: the ratios of the medians, then after "paired" the
# medians of the ratios of the runs of each round (less moved by a host
# whose speed drifts during the run). With --reference VENV it also runs
# the reference's TraceLens_generate_perf_report_pytorch from that virtual
# environment on the x1 trace (in the same alternation). With --rocprof,
# the traces are the rocprofv3 908_results and its x4 / x16 copies
# (bench/scale_rocprof.py) instead. The report is written as a workbook,
# or with --csv as a folder of CSV sheets (what the reference writes with
# the corpus README's command: R/A compares like with like only with
# --csv). Not a test: it asserts nothing.
#
# usage: bench/ab.sh [--reference VENV] [--rocprof] [--csv] BASE_REV [RUNS]
#   (RUNS default 3)
# The baseline is built once in ${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}/base-<sha>.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
ref_venv=""
rocprof=0
csv=0
while [ $# -gt 0 ]; do
  case $1 in
    --reference) ref_venv=$2; shift 2 ;;
    --rocprof) rocprof=1; shift ;;
    --csv) csv=1; shift ;;
    *) break ;;
  esac
done
base_rev=${1:?usage: bench/ab.sh [--reference VENV] [--rocprof] [--csv] BASE_REV [RUNS]}
runs=${2:-3}
shared=../shared
cache=${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}
mkdir -p "$cache"
need_gnu_time
if [ "$rocprof" = 1 ] && [ -n "$ref_venv" ]; then
  echo "bench: --reference runs the reference's PyTorch report; it does not go with --rocprof" >&2
  exit 2
fi
if [ "$rocprof" = 1 ]; then
  big="$shared/corpus/rocprof/908_results.json.gz"
  scaler=bench/scale_rocprof.py
  stem=908
else
  big="$shared/corpus/pytorch/h100_owlv2_large.json.gz"
  scaler="$shared/tools/scale_trace.py"
  stem=owlv2
fi
[ -f "$big" ] || { echo "bench: $big not found (needs ../shared/corpus)" >&2; exit 2; }

release_binary
a_bin=$bin
baseline_binary "$base_rev"

traces=("$big")
for n in 4 16; do
  out="$cache/${stem}_x$n.json"
  [ "$rocprof" = 1 ] && out="$cache/${stem}_x${n}_results.json"
  scaled_copy "$scaler" "$big" "$n" "$out"
  traces+=("$out")
done

json_mb() {
  case "$1" in
    *.gz) gzip -dc "$1" | wc -c ;;
    *) wc -c < "$1" ;;
  esac | awk '{printf "%.1f", $1 / 1e6}'
}

# once KIND TRACE: one run, appending "wall cpu rss_kb" to $work/KIND.
once() {
  local kind=$1 trace=$2 out
  out=$(mktemp -d)
  local sheets=(-o "$out/r.xlsx")
  [ "$csv" = 1 ] && sheets=(--csv "$out/csv")
  case $kind in
    A) cmd=("$a_bin" report "$trace" "${sheets[@]}" -q) ;;
    B) cmd=("$b_bin" report "$trace" "${sheets[@]}" -q) ;;
    R) cmd=("$ref_venv/bin/TraceLens_generate_perf_report_pytorch" --profile_json_path "$trace"
            --output_csvs_dir "$out/ref" --enable_kernel_summary --short_kernel_study) ;;
  esac
  timed_run "${cmd[@]}" >> "$work/$kind"
  rm -rf "$out"
}

printf '%-16s %8s  %-4s %8s %8s %9s %8s\n' trace "JSON MB" run "wall s" "CPU s" "peak MiB" "MB/s"
for t in "${traces[@]}"; do
  work=$(mktemp -d)
  mb=$(json_mb "$t")
  kinds=(A B)
  if [ -n "$ref_venv" ] && [ "$t" = "$big" ]; then kinds+=(R); fi
  for _ in $(seq "$runs"); do
    for k in "${kinds[@]}"; do once "$k" "$t"; done
  done
  name=$(basename "$t" | sed 's/\.json.*//')
  for k in "${kinds[@]}"; do
    w=$(median 1 "$work/$k"); c=$(median 2 "$work/$k"); r=$(median 3 "$work/$k")
    label=$k; [ "$k" = B ] && label="B $sha"; [ "$k" = R ] && label=ref
    printf '%-16s %8s  %-4s %8.3f %8.3f %9.0f %8.0f\n' "$name" "$mb" "$label" "$w" "$c" \
      "$(awk "BEGIN{print $r / 1024}")" "$(awk "BEGIN{print $mb / $w}")"
  done
  for k in "${kinds[@]:1}"; do
    printf '%-16s %8s  %-4s %8.2fx %7.2fx %8.2fx   paired %.2fx %.2fx %.2fx\n' "" "" "$k/A" \
      "$(awk "BEGIN{print $(median 1 "$work/$k") / $(median 1 "$work/A")}")" \
      "$(awk "BEGIN{print $(median 2 "$work/$k") / $(median 2 "$work/A")}")" \
      "$(awk "BEGIN{print $(median 3 "$work/$k") / $(median 3 "$work/A")}")" \
      "$(paired_median 1 "$work/$k" "$work/A")" "$(paired_median 2 "$work/$k" "$work/A")" \
      "$(paired_median 3 "$work/$k" "$work/A")"
  done
  rm -rf "$work"
done
if [ -n "$ref_venv" ] && [ "$csv" = 0 ]; then
  echo "note: the reference wrote CSV sheets (the corpus README's command), A and B a" \
    "workbook, which costs them more; --csv compares like with like"
fi

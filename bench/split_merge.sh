#!/usr/bin/env bash
# Benchmark (not a test): wall time, CPU time and peak RSS of `tracelens
# split` and `tracelens merge` against the reference's
# TraceLens_split_inference_trace and TraceFusion, in alternating rounds on
# the same inputs: the corpus's own split and fusion inputs, and scaled
# copies of them made with ../shared/tools/scale_trace.py (copies laid end to
# end in time, so a one-step serving trace becomes a trace of N steps).
#
# usage: bench/split_merge.sh [ROUNDS] [SPLIT_SCALE] [MERGE_SCALE]
#   ROUNDS       alternating rounds per case (default 3)
#   SPLIT_SCALE  copies of the SGLang decode trace (default 100, about 60 MB)
#   MERGE_SCALE  copies of each DLRM rank (default 8, about 7 MB a rank)
# The reference runs from a venv where it is installed:
#   python3 -m venv /tmp/tv && /tmp/tv/bin/pip install ../shared/reference/TraceLens-*
# (REFERENCE_VENV=/path overrides /tmp/tv). Needs GNU time. Asserts nothing.
# Prints one line per case and tool: median wall s, CPU s, peak RSS MB, and
# the median of the per-round ratios reference / tracelens.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
rounds=${1:-3}
split_scale=${2:-100}
merge_scale=${3:-8}
venv=${REFERENCE_VENV:-/tmp/tv}
shared=$(cd ../shared && pwd)
[ -x "$venv/bin/TraceLens_split_inference_trace" ] || {
  echo "bench: the reference is not installed in $venv (see the usage above)" >&2
  exit 2
}
need_gnu_time
release_binary
scratch_dir tracelens-split-bench
cache=${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}
mkdir -p "$cache"

synth=$shared/corpus/split/synth_vllm.json
sglang=$shared/corpus/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz
sglang_big=$cache/sglang_decode_x$split_scale.json
scaled_copy "$shared/tools/scale_trace.py" "$sglang" "$split_scale" "$sglang_big"
ranks=("$shared"/corpus/multirank/dlrm_v100_8rank/worker*.json.gz)
big_ranks=()
for r in "${ranks[@]}"; do
  out=$cache/$(basename "$r" .json.gz)_x$merge_scale.json
  scaled_copy "$shared/tools/scale_trace.py" "$r" "$merge_scale" "$out"
  big_ranks+=("$out")
done

# The reference's merge has no command: its API, as its README shows it.
cat > "$work/fuse.py" <<'EOF'
import sys
from TraceLens.TraceFusion.trace_fuse import TraceFuse
TraceFuse(sys.argv[2:]).merge_and_save(sys.argv[1])
EOF

# case NAME OURS_CMD... -- REF_CMD...: ROUNDS alternating runs of each, each
# into a fresh output folder ($work/out), then one summary line per tool.
case_run() {
  local name=$1; shift
  local ours=() ref=()
  while [ "$1" != "--" ]; do ours+=("$1"); shift; done
  shift
  ref=("$@")
  : > "$work/ours" ; : > "$work/ref"
  for _ in $(seq "$rounds"); do
    rm -rf "$work/out"; mkdir "$work/out"
    timed_run "${ours[@]}" >> "$work/ours"
    rm -rf "$work/out"; mkdir "$work/out"
    timed_run "${ref[@]}" >> "$work/ref"
  done
  printf "%-34s tracelens %7.3f s wall %7.3f s CPU %7.1f MB | reference %7.3f s %7.3f s %7.1f MB | ratio wall %.1fx RSS %.1fx\n" \
    "$name" \
    "$(median 1 "$work/ours")" "$(median 2 "$work/ours")" "$(awk "BEGIN{print $(median 3 "$work/ours") / 1024}")" \
    "$(median 1 "$work/ref")" "$(median 2 "$work/ref")" "$(awk "BEGIN{print $(median 3 "$work/ref") / 1024}")" \
    "$(paired_median 1 "$work/ref" "$work/ours")" "$(paired_median 3 "$work/ref" "$work/ours")"
}

ref_split=$venv/bin/TraceLens_split_inference_trace
ref_py=$venv/bin/python
out=$work/out
case_run "split synth_vllm steady 8" \
  "$bin" split "$synth" -o "$out" --find-steady-state --num-steps 8 -q -- \
  "$ref_split" "$synth" -o "$out" --find-steady-state --num-steps 8
case_run "split synth_vllm each step" \
  "$bin" split "$synth" -o "$out" --store-single-iteration -q -- \
  "$ref_split" "$synth" -o "$out" --store-single-iteration
case_run "split sglang_decode each step" \
  "$bin" split "$sglang" -o "$out" --store-single-iteration -q -- \
  "$ref_split" "$sglang" -o "$out" --store-single-iteration
case_run "split sglang_decode x$split_scale each step" \
  "$bin" split "$sglang_big" -o "$out" --store-single-iteration -q -- \
  "$ref_split" "$sglang_big" -o "$out" --store-single-iteration
case_run "split sglang_decode x$split_scale steady 8" \
  "$bin" split "$sglang_big" -o "$out" --find-steady-state --num-steps 8 -q -- \
  "$ref_split" "$sglang_big" -o "$out" --find-steady-state --num-steps 8
case_run "merge 2 small ranks" \
  "$bin" merge "$shared"/corpus/fusion/rank0.json "$shared"/corpus/fusion/rank1.json -o "$out/m.json.gz" -q -- \
  "$ref_py" "$work/fuse.py" "$out/m.json" "$shared"/corpus/fusion/rank0.json "$shared"/corpus/fusion/rank1.json
case_run "merge 8 DLRM ranks" \
  "$bin" merge "${ranks[@]}" -o "$out/m.json.gz" -q -- \
  "$ref_py" "$work/fuse.py" "$out/m.json" "${ranks[@]}"
case_run "merge 8 DLRM ranks x$merge_scale" \
  "$bin" merge "${big_ranks[@]}" -o "$out/m.json.gz" -q -- \
  "$ref_py" "$work/fuse.py" "$out/m.json" "${big_ranks[@]}"

#!/usr/bin/env bash
# Runs two builds of tracelens over the same inputs and checks that they
# write the same outputs: every subcommand (report, tree, collectives,
# compare, roofline) on every trace of ../shared/corpus and testdata/, with
# the option combinations that change what is written.
#
# usage: tools/same-outputs.sh OLD_BIN NEW_BIN [WORKDIR]
#
# Compared per case: exit code, stdout, stderr, and every file written.
# CSV, Markdown, JSON, SVG and text files must be byte-identical; .xlsx
# workbooks are compared member by member (the XML of every worksheet,
# shared strings, styles, charts), leaving out docProps/core.xml, which holds
# the creation time. Prints one line per differing case and a total; exits 1
# when anything differs.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN [WORKDIR]" >&2; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${3:-$(mktemp -d)}
shared=$(realpath "$repo/../shared" 2>/dev/null || true)
corpus=$shared/corpus
mkdir -p "$work"

cases=()
add() { cases+=("$1"); }

# Inputs are referred to through links in the work directory so that every
# path printed is the same for both builds.
mkdir -p "$work/in"
# testdata is copied: a case that writes beside its input must not write
# into the repository (corpus cases always name their outputs).
rm -rf "$work/in/testdata"; cp -r "$repo/testdata" "$work/in/testdata"
[ -d "$corpus" ] && ln -sfn "$corpus" "$work/in/corpus"

traces=(in/testdata/example.json in/testdata/cpu_only.json in/testdata/no_flows.json
        in/testdata/unknown_phase.json)
for f in "$repo"/testdata/bad/*; do traces+=("in/testdata/bad/$(basename "$f")"); done
if [ -d "$corpus" ]; then
  for f in "$corpus"/pytorch/*.json.gz; do traces+=("in/corpus/pytorch/$(basename "$f")"); done
  for d in "$corpus"/inference/*/; do
    n=$(basename "$d")
    for f in "$d"*.json.gz "$d"capture_traces/*.json.gz; do
      traces+=("in/corpus/inference/$n/${f#"$d"}")
    done
  done
  for f in "$corpus"/multirank/dlrm_v100_8rank/*.json.gz; do
    traces+=("in/corpus/multirank/dlrm_v100_8rank/$(basename "$f")")
  done
  traces+=(in/corpus/rocprof/908_results.json.gz in/corpus/jax/jax_conv_minimal_08.xplane.pb)
  traces+=(in/corpus/pftrace/rocprofv3_like.pftrace in/corpus/pftrace/rocprofv3_like.traceconv_style.json)
fi

for t in "${traces[@]}"; do
  add "report $t --csv out/csv -o out/r.xlsx --md out/r.md"
  add "tree $t"
  add "tree $t --modules"
  add "tree $t --all --depth 4"
done
add "report in/testdata/example.json --md -"
add "report in/testdata/example.json --csv out/csv -q"
add "report - --csv out/csv < in/testdata/example.json"
add "tree in/testdata/example.json --grep 'aten::(mm|addmm)'"
add "tree in/testdata/example.json --grep '('"
if [ -d "$corpus" ]; then
  p=in/corpus/pytorch
  for t in mi300_falconsai_vit mi300_normalization_layers mi300_qwen15_05b h100_bert_small; do
    add "report $p/$t.json.gz --gpu-arch MI300X --plots out/plots --csv out/csv -o out/r.xlsx --md out/r.md"
    add "report $p/$t.json.gz --gpu-arch H100 -o out/r.xlsx --md -"
  done
  add "report $p/h100_qwen15_05b.json.gz --micro-idle-thresh-us 50 --topk-short-kernels 5 --short-kernel-threshold-us 20 --short-kernel-histogram-bins 7 --include-unlinked-kernels --csv out/csv"
  add "report $p/mi210_gpu_only.json.gz --include-unlinked-kernels --csv out/csv --md -"
  add "tree $p/h100_bert_small.json.gz --grep 'nn.Module' --depth 2"
  m=in/corpus/multirank/dlrm_v100_8rank
  add "collectives --trace-dir $m --world-size 8 --csv out/csv -o out/c.xlsx --md out/c.md"
  add "collectives --trace-dir $m --world-size 8 -o out/c.xlsx --md -"
  add "collectives --trace-dir $m --world-size 8 --gpus-per-node 4 --csv out/csv"
  add "collectives --trace-dir $m --world-size 8 --rank-regex 'worker(\\d+)' --csv out/csv"
  add "collectives --trace-dir $m --world-size 4 --csv out/csv"
  add "collectives --trace-dir $p --world-size 2 --csv out/csv"
  for pair in qwen15_05b falconsai_vit; do
    a=$p/h100_$pair.ref; b=$p/mi300_$pair.ref
    add "compare $a $b --names h100 mi300 --csv out/csv -o out/c.xlsx --md out/c.md --json out/c.json"
    add "compare $a $b --fail-above 5 --min-ms 0.1"
    add "compare $a $b --json -"
    add "compare $a $b --sheets roofline ops_all --csv out/csv"
    add "compare $p/h100_$pair.json.gz $p/mi300_$pair.json.gz --csv out/csv --md out/c.md --fail-above 10"
  done
  add "compare $p/h100_bert_small.json.gz $p/mi300_bert_small.ref $p/h100_bert_small.ref --json out/c.json --md -"
fi
add "roofline gemm --m 4096 --n 4096 --k 4096 --gpu-arch MI300X --time-us 250"
add "roofline gemm --m 8 --n 4096 --k 4096 --batch 32 --bias --dtype fp32"
add "roofline sdpa --batch 4 --heads 32 --kv-heads 8 --seq-q 2048 --head-dim 128 --causal --gpu-arch H100 --time-us 900"
add "roofline sdpa --batch 1 --heads 16 --seq-q 1 --seq-kv 4096 --head-dim 64 --dtype fp16"
add "roofline conv --input 8,64,56,56 --weight 128,64,3,3 --stride 2,2 --padding 1,1 --gpu-arch MI300X"
add "roofline conv --input 8,64,56 --weight 128,32,3 --groups 2 --dtype fp8"
add "roofline gemm --m 0 --n 1 --k 1"
add "roofline gemm --m 1 --n 1 --k 1 --dtype int3"

# Runs case $2 with binary $1 in directory $3.
run_case() {
  local bin=$1 c=$2 dir=$3
  rm -rf "$dir"; mkdir -p "$dir/out"; ln -s "$work/in" "$dir/in"
  (cd "$dir" && eval "\"$bin\" $c" > stdout 2> stderr; echo $? > code)
  # The temporary files are named after the process id; none may be left.
  find "$dir/out" -name '.*.tmp' > "$dir/leftover"
  rm -f "$dir/in"
}

# Same files, xlsx member by member; prints what differs.
same_tree() {
  local a=$1 b=$2 bad=0
  local la lb
  la=$(cd "$a" && find . -type f | sort); lb=$(cd "$b" && find . -type f | sort)
  if [ "$la" != "$lb" ]; then echo "  files differ: $(diff <(echo "$la") <(echo "$lb") | grep '^[<>]' | tr '\n' ' ')"; return 1; fi
  while IFS= read -r f; do
    [ -z "$f" ] && continue
    case "$f" in
      *.xlsx)
        local xa xb
        xa=$(mktemp -d); xb=$(mktemp -d)
        (cd "$xa" && unzip -q "$a/$f") ; (cd "$xb" && unzip -q "$b/$f")
        rm -f "$xa/docProps/core.xml" "$xb/docProps/core.xml"
        if ! diff -r -q "$xa" "$xb" > /dev/null; then
          echo "  $f: $(diff -r -q "$xa" "$xb" | head -3 | tr '\n' ' ')"; bad=1
        fi
        rm -rf "$xa" "$xb" ;;
      *)
        if ! cmp -s "$a/$f" "$b/$f"; then echo "  $f differs"; bad=1; fi ;;
    esac
  done <<< "$la"
  return $bad
}

n=0; failed=0
for c in "${cases[@]}"; do
  n=$((n + 1))
  run_case "$old" "$c" "$work/a"
  run_case "$new" "$c" "$work/b"
  if ! msg=$(same_tree "$work/a" "$work/b"); then
    failed=$((failed + 1))
    echo "DIFF: tracelens $c"
    echo "$msg"
  fi
done
echo "$n cases, $failed differ (old: $old, new: $new)"
[ "$failed" -eq 0 ]

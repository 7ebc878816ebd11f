#!/usr/bin/env bash
# Benchmark (not a test): fleet mode on a synthetic job of RANKS rank traces
# of STEPS profiler steps, made by tools/synth_fleet.py from the corpus's
# 8-rank DLRM job (rank 700 and the second step planted slow, when there
# are that many ranks). Prints, for the map (`tracelens summarize`) and the
# reduce (`tracelens fleet`): wall and CPU seconds, peak RSS, and the map's
# throughput in MB/s of uncompressed JSON; then the outliers found.
#
# usage: bench/fleet.sh [RANKS] [STEPS] [JOBS]
#   RANKS  ranks of the job (default 1024)
#   STEPS  profiler steps per rank (default 3)
#   JOBS   traces summarised at once (default: the cores)
# The fleet is written to a scratch folder under /tmp, deleted at the end.
# Needs GNU time (/usr/bin/time) and python3. Asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
ranks=${1:-1024}
steps=${2:-3}
jobs=${3:-$(nproc)}
src=../shared/corpus/multirank/dlrm_v100_8rank
[ -d "$src" ] || { echo "bench: $src not found" >&2; exit 2; }
need_gnu_time
release_binary
scratch_dir tracelens-fleet-bench
plant=()
[ "$ranks" -gt 700 ] && plant+=(--slow-rank 700)
[ "$steps" -gt 1 ] && plant+=(--slow-step 1)
echo "making $ranks rank traces of $steps steps ..." >&2
python3 tools/synth_fleet.py "$src" "$work/job" --ranks "$ranks" --steps "$steps" \
    "${plant[@]}" --seed 7 >&2
json_bytes=$(
    for f in "$work"/job/*.json.gz; do gzip -dc "$f" | wc -c; done | awk '{s+=$1} END{print s}')

measure() { # label, command...
    local label=$1; shift
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > /dev/null
    read -r wall user sys rss < "$work/time"
    echo "$label $wall $user $sys $rss"
}
read -r _ mw mu ms mr < <(measure map "$bin" summarize "$work/job" --out "$work/s" -j "$jobs" -q)
read -r _ rw ru rs rr < <(measure reduce "$bin" fleet "$work/s" --out "$work/r" -q)
summary_bytes=$(du -sb "$work/s" | cut -f1)
awk -v n="$ranks" -v k="$steps" -v jb="$json_bytes" -v sb="$summary_bytes" \
    -v mw="$mw" -v mu="$mu" -v ms="$ms" -v mr="$mr" \
    -v rw="$rw" -v ru="$ru" -v rs="$rs" -v rr="$rr" 'BEGIN {
    printf "fleet: %d ranks x %d steps, %.0f MB of JSON, summaries %.0f MB\n", n, k, jb/1e6, sb/1e6
    printf "%-8s %8s %8s %10s %10s\n", "step", "wall s", "CPU s", "peak MiB", "MB/s JSON"
    printf "%-8s %8.2f %8.2f %10.0f %10.0f\n", "map", mw, mu+ms, mr/1024, jb/1e6/mw
    printf "%-8s %8.2f %8.2f %10.0f %10s\n", "reduce", rw, ru+rs, rr/1024, "-"
}'
echo "outliers:"
head -4 "$work/r/fleet_outliers.csv"

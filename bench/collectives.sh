#!/usr/bin/env bash
# Benchmark (not a test): wall time and peak RSS of `tracelens collectives`
# on a large synthetic job: RANKS rank traces of about 50 MB of JSON each.
#
# One ~50 MB rank trace is made from corpus/pytorch/a100_allreduce_2rank
# (a real NCCL trace with full collective metadata) with
# ../shared/tools/scale_trace.py; it is then copied once per rank with
# distributedInfo.rank / world_size rewritten. The copies are plain JSON
# files in a scratch folder under /tmp, deleted at the end.
#
# usage: bench/collectives.sh [RANKS] [SCALE]
#   RANKS  number of ranks (default 64)
#   SCALE  scale_trace.py copies per rank trace (default 6, about 50 MB)
# Needs GNU time (/usr/bin/time) and python3. Asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
ranks=${1:-64}
scale=${2:-6}
shared=../shared
src="$shared/corpus/pytorch/a100_allreduce_2rank.json.gz"
[ -f "$src" ] || { echo "bench: $src not found" >&2; exit 2; }
need_gnu_time
release_binary
scratch_dir tracelens-coll-bench
echo "making one rank trace: scale_trace.py x$scale ..." >&2
python3 "$shared/tools/scale_trace.py" "$src" "$scale" "$work/base.json"
echo "writing $ranks rank traces ..." >&2
mkdir "$work/job"
python3 - "$work/base.json" "$work/job" "$ranks" <<'EOF'
import re, sys
base, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(base, "rb").read()
cut = data.index(b'"traceEvents"')
head, body = data[:cut], data[cut:]
for r in range(n):
    h = re.sub(rb'"rank": *\d+', b'"rank": %d' % r, head, count=1)
    h = re.sub(rb'"world_size": *\d+', b'"world_size": %d' % n, h, count=1)
    with open(f"{out}/worker{r}.json", "wb") as f:
        f.write(h)
        f.write(body)
EOF
total_mb=$(du -sm "$work/job" | cut -f1)
each_mb=$(awk "BEGIN{printf \"%.1f\", $(wc -c < "$work/base.json") / 1e6}")
/usr/bin/time -f "%e %M" -o "$work/time" "$bin" collectives --trace-dir "$work/job" \
  --world-size "$ranks" --csv "$work/csv" -o "$work/report.xlsx" -q
read -r wall rss_kb < "$work/time"
printf "ranks %d, %s MB JSON each, %s MB in all\n" "$ranks" "$each_mb" "$total_mb"
printf "wall %s s, %.0f MB/s, peak RSS %.1f MB\n" "$wall" \
  "$(awk "BEGIN{print $total_mb / $wall}")" "$(awk "BEGIN{print $rss_kb / 1024}")"

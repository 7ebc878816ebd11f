#!/usr/bin/env bash
# Replays the reproducers of issue 12 (bad input, interruption, output paths)
# against the release binary, each under a 4 GB address-space limit, and
# prints one line per case: exit code, peak RSS, the first stderr line and
# how many files were left behind (temp/staging files after any run, outputs
# after a failed one). `compare` runs with -q: its verdict is the exit code
# (0 pass, 1 regression, 2 unreadable input).
# The multi-rank case needs ../shared/corpus (skipped, saying so, without).
#
# usage: bench/hostile.sh            (work files under a temp folder)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
release_binary
scratch_dir tracelens-hostile
cd "$work"
python3 - <<'EOF'
import gzip, zipfile, json
# 1a: one 1 GiB string inside an event (a ~1 MB .gz); a 10 MB run of '['.
with gzip.open("huge_string.json.gz", "wb", compresslevel=1) as f:
    f.write(b'{"traceEvents":[{"ph":"X","name":"')
    chunk = b"a" * (1 << 24)
    for _ in range(64):
        f.write(chunk)
    f.write(b'","ts":1,"dur":1,"pid":1,"tid":1}]}')
with open("brackets.json", "wb") as f:
    f.write(b'{"traceEvents":' + b"[" * 10_000_000)
# 1b: an xlsx whose one sheet claims a cell at XFD1048576.
sheet = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
         'spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>'
         '<row r="1"><c r="A1" t="inlineStr"><is><t>type</t></is></c></row>'
         '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>')
book = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/'
        'spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships"><sheets><sheet name="gpu_timeline" sheetId="1" r:id="rId1"/></sheets></workbook>')
rels = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
root = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
types = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/'
         '2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
         'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
         '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
         'officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" '
         'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>')
with zipfile.ZipFile("xfd.xlsx", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("[Content_Types].xml", types)
    z.writestr("_rels/.rels", root)
    z.writestr("xl/workbook.xml", book)
    z.writestr("xl/_rels/workbook.xml.rels", rels)
    z.writestr("xl/worksheets/sheet1.xml", sheet)
EOF
cp "$OLDPWD/testdata/example.json" t.json
"$bin" report t.json --csv base -q 2>/dev/null
# 4: baselines whose busy_time is not a usable number, and broken sheets.
for v in inf -1 1e400 nan; do
  cp -r base "base_$v"
  sed -i "s/^busy_time,[^,]*,/busy_time,$v,/" "base_$v/gpu_timeline.csv"
done
cp -r base slow
awk -F, 'BEGIN{OFS=","} NR>1{$2=$2*10} {print}' base/gpu_timeline.csv > slow/gpu_timeline.csv
cp -r base truncated; head -c 200 base/ops_summary.csv > truncated/ops_summary.csv
cp -r base quote; printf 'name,"unterminated\n' > quote/ops_summary.csv
cp -r base text; sed -i 's/^busy_time,[^,]*,/busy_time,fast,/' text/gpu_timeline.csv
cp -r base utf8; printf 'type,time ms,percent\n\xff\xfe,1,2\n' > utf8/gpu_timeline.csv
cp -r base header; head -1 base/gpu_timeline.csv > header/gpu_timeline.csv
mkfifo fifo.json

# case NAME CMD...: runs CMD under the limit in a fresh folder `out`.
case_() {
  local name=$1; shift
  rm -rf out; mkdir out
  local code rss line left
  ( ulimit -v 4000000; cd out && /usr/bin/time -f '%M' -o ../rss timeout 60 "$@" >/dev/null 2>../err )
  code=$?
  rss=$(tail -1 rss 2>/dev/null)
  line=$(grep -v '^Command exited' err | head -1 | cut -c1-150)
  # Temp or staging files anywhere, and outputs a failed run left in
  # `out` (the directories a case makes itself are not outputs).
  left=$(find out "$work" -maxdepth 3 \( -name '.tracelens-staging-*' -o -name '*.tmp' \) | wc -l)
  if [ "$code" != 0 ]; then
    left=$((left + $(cd out && ls -A | grep -cvx -e x.xlsx -e m.md)))
  fi
  printf '%-34s exit %-3s %6s MB  left %-2s %s\n' "$name" "$code" "$((${rss:-0} / 1024))" "$left" "$line"
}
W=$work
case_ "1a 1 GiB string (1 MB .gz)"       "$bin" report "$W/huge_string.json.gz" -q
case_ "1a 10 MB of ["                     "$bin" report "$W/brackets.json" -q
case_ "1b xlsx claiming XFD1048576"       "$bin" compare "$W/xfd.xlsx" "$W/base" -q
case_ "2 -o is a directory"               sh -c "mkdir x.xlsx && exec $bin report $W/t.json --csv csv -o x.xlsx -q"
case_ "2 --md is a directory"             sh -c "mkdir m.md && exec $bin report $W/t.json --csv csv --md m.md -q"
case_ "3 SIGINT while writing"            sh -c "TRACELENS_TEST_PAUSE_BEFORE_COMMIT_MS=3000 $bin report $W/t.json --csv csv -o r.xlsx -q & sleep 1; kill -INT \$!; wait \$!"
for v in inf -1 1e400 nan; do
  case_ "4 baseline busy_time $v"         "$bin" compare "$W/base_$v" "$W/slow" --fail-above 5 -q
done
for b in truncated quote text utf8 header; do
  case_ "4 baseline sheet: $b"            "$bin" compare "$W/$b" "$W/base" --fail-above 5 -q
done
case_ "6 FIFO input"                      "$bin" report "$W/fifo.json" -q
case_ "6 -o equal to the input"           "$bin" report "$W/t.json" -o "$W/t.json" -q
case_ "6 -o and --md on one path"         "$bin" report "$W/t.json" -o same --md same -q
dlrm=$OLDPWD/../shared/corpus/multirank/dlrm_v100_8rank
if [ -d "$dlrm" ]; then
  mkdir ranks
  for f in "$dlrm"/*.json.gz; do cp "$f" ranks/; done
  # Drop the first ncclKernel event of worker 3.
  f=$(ls ranks/worker3_*.json.gz)
  python3 - "$f" <<'EOF'
import gzip, json, sys
p = sys.argv[1]
t = json.load(gzip.open(p))
ev = t["traceEvents"]
i = next(i for i, e in enumerate(ev) if e.get("name", "").startswith("ncclKernel"))
del ev[i]
with gzip.open(p, "wt") as f:
    json.dump(t, f)
EOF
  case_ "5 one ncclKernel dropped (rank 3)" sh -c "exec $bin collectives --trace-dir $W/ranks --world-size 8 --csv c 1>&2"
  sed 's/^/    /' err
else
  echo "5 one ncclKernel dropped: skipped, ../shared/corpus not found"
fi

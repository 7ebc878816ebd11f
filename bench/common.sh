# Sourced by the bench scripts (from the repository root): the release
# binary, GNU time, a scratch folder, and scaled copies of corpus traces
# made once and cached.

# release_binary: builds the release binary and sets $bin to its absolute
# path (CARGO_TARGET_DIR respected).
release_binary() {
  cargo build --release --quiet
  local dir=${CARGO_TARGET_DIR:-target}
  case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
  bin=$dir/release/tracelens
}

# need_gnu_time: exits (2) unless GNU time is at /usr/bin/time.
need_gnu_time() {
  [ -x /usr/bin/time ] || {
    echo "bench: needs GNU time at /usr/bin/time (apt-get install time)" >&2
    exit 2
  }
}

# scratch_dir NAME: sets $work to a new folder /tmp/NAME.XXXXXX, deleted
# when the script exits.
scratch_dir() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT
}

# scaled_copy TOOL SRC N OUT: runs `python3 TOOL SRC N OUT` (a scaling script
# such as ../shared/tools/scale_trace.py) unless OUT already exists.
scaled_copy() {
  local tool=$1 src=$2 n=$3 out=$4
  if [ ! -f "$out" ]; then
    echo "making $out ($(basename "$tool") x$n)..." >&2
    python3 "$tool" "$src" "$n" "$out"
  fi
}

# baseline_binary REV: builds commit REV once in
# ${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}/base-<sha> (reused after) and
# sets $b_bin to its release binary and $sha to the short commit id.
baseline_binary() {
  local cache=${TRACELENS_BENCH_DIR:-/tmp/tracelens-bench}
  sha=$(git rev-parse --short "$1")
  local base_dir="$cache/base-$sha"
  if [ ! -x "$base_dir/target/release/tracelens" ]; then
    echo "building baseline $sha in $base_dir ..." >&2
    rm -rf "$base_dir"
    mkdir -p "$cache"
    git clone -q . "$base_dir"
    git -C "$base_dir" checkout -q "$sha"
    (cd "$base_dir" && cargo build --release --quiet)
  fi
  b_bin=$base_dir/target/release/tracelens
}

# timed_run CMD...: runs CMD once, its output discarded, and prints
# "WALL_S CPU_S PEAK_RSS_KB". Wall and CPU time (user+sys of CMD and its
# children) come from bash's clock and `times`, to the millisecond (GNU
# time rounds to 10 ms, a tenth of a small report); the peak RSS comes from
# GNU time (of bash and the command: the command's).
timed_run() {
  local out
  out=$(mktemp -d)
  /usr/bin/time -f "%M" -o "$out/rss" bash -c '
    start=$EPOCHREALTIME
    "$@" >/dev/null 2>&1
    end=$EPOCHREALTIME
    echo "$start $end"
    times' _ "$@" > "$out/times"
  # times: the shell's line, then its children's: "0m0.081s 0m0.012s".
  awk -v rss="$(tail -1 "$out/rss")" '
    NR == 1 { wall = $2 - $1 }
    NR == 3 { cpu = 0
              for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); cpu += t[1] * 60 + t[2] } }
    END { printf "%.4f %.4f %d\n", wall, cpu, rss }' "$out/times"
  rm -rf "$out"
}

# middle: the median of the numbers on standard input, one a line (the
# mean of the middle two for an even count).
middle() {
  sort -g | awk '{v[NR]=$1} END{print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'
}

# median COLUMN FILE: the median of a column of space-separated numbers.
median() {
  cut -d' ' -f"$1" "$2" | middle
}

# paired_median COLUMN FILE_X FILE_A: the median, over the rounds of an
# alternating run, of X's figure divided by A's in the same round (line i of
# each file). Each ratio compares two runs a few seconds apart, so a host
# whose speed drifts from minute to minute moves it less than it moves the
# ratio of the two medians.
paired_median() {
  paste -d' ' <(cut -d' ' -f"$1" "$2") <(cut -d' ' -f"$1" "$3") |
    awk '{print $1 / $2}' | middle
}

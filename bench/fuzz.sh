#!/usr/bin/env bash
# Mutation fuzzing for a given time (tests/fuzz.rs): trace loaders + report,
# report readers + compare gate, tree diff, replay scripts (compiled by
# python3 when it is on the PATH); under a 4 GB address-space limit,
# with a fresh seed unless TRACELENS_FUZZ_SEED is set. Crashers are saved
# under ${TRACELENS_FUZZ_OUT:-/tmp} as tracelens-crash-KIND-SEED-ROUND/.
#
# usage: bench/fuzz.sh [SECONDS]   (default 600)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
seed=${TRACELENS_FUZZ_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
cargo test --release --test fuzz --no-run --quiet
# 4 GB of address space: an unbounded allocation fails instead of swapping.
ulimit -v 4000000
TRACELENS_FUZZ_SECONDS=$secs TRACELENS_FUZZ_SEED=$seed \
  cargo test --release --test fuzz --quiet -- --nocapture 2>&1 | grep -E "fuzz:|panicked|saved|test result"

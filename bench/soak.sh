#!/usr/bin/env bash
# The long form of the soak test (tests/soak/test_soak.cc): random
# collectives and send/receive rings on 4 CPU ranks in 2 domains, and on 4
# emulated GPU ranks in 2 domains, each for SOAK_SECONDS (default 300, so
# 10 minutes in all), checking every result and that the processes do not
# grow. Writes the report to bench/results/soak-<date>.md (or $REPORT).
#
#   bench/soak.sh                     # build/ must hold a build with tests
#   SOAK_SECONDS=60 SOAK_SEED=7 bench/soak.sh
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$repo/build}
export SOAK_SECONDS=${SOAK_SECONDS:-300}
export SOAK_SEED=${SOAK_SEED:-1}
export SOAK_MAX_MB=${SOAK_MAX_MB:-64}
report=${REPORT:-$repo/bench/results/soak-$(date +%F).md}

# The tree the test is built from, taken before it runs for ten minutes.
commit="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet || echo ' (with uncommitted changes)')"
cmake --build "$build" --target test_soak
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
status=0
"$build/tests/soak/test_soak" 2>&1 | tee "$log" || status=$?

{
  echo "# Soak: $((2 * SOAK_SECONDS)) s of random work, seed $SOAK_SEED"
  echo
  echo "- Command: \`SOAK_SECONDS=$SOAK_SECONDS SOAK_SEED=$SOAK_SEED SOAK_MAX_MB=$SOAK_MAX_MB bench/soak.sh\`"
  echo "- Commit: $commit"
  echo "- Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
  echo "- Wall time: $((SECONDS - start)) s; gtest exit status $status"
  echo
  echo '```'
  grep -E '^(soak |  rank 0 |\[  (PASSED|FAILED)|rank [0-9]+:)' "$log" || true
  echo '```'
} >"$report"
echo "wrote $report"
exit "$status"

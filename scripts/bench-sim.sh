#!/usr/bin/env bash
# Wall time and simulated operations per second of `zklab simulate` at scale, from its own
# summary line: the standard lock at 1,000 and 10,000 clients under 1% connection loss and three
# expiries, the children-watch lock at 1,000 clients fault-free.
# Usage: scripts/bench-sim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
run() {
  local started line
  started=$EPOCHREALTIME
  line=$(./target/release/zklab simulate "$@" --trace-dir target/bench-traces | tail -1)
  printf '%-70s %s (%s s with start-up)\n' "$*" "$line" "$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
}
run --recipe standard --clients 1000 --faults loss-before-apply=0.005,loss-after-apply=0.005,expire=3
run --recipe standard --clients 10000 --faults loss-before-apply=0.005,loss-after-apply=0.005,expire=3
run --recipe parent-watch --clients 1000

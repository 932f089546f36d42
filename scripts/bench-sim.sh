#!/usr/bin/env bash
# Wall time, simulated operations per second and peak memory of `zklab simulate` at scale, from
# its own summary line and GNU time: the standard lock at 1,000, 10,000 and 20,000 clients under
# 1% connection loss and three expiries, the children-watch lock at 1,000 clients fault-free.
# Usage: scripts/bench-sim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
[ -x /usr/bin/time ] || { echo "needs GNU time for peak memory: apt-get install time" >&2; exit 2; }
run() {
  local out
  # The run's last line (steps, wall time, operations/s), then GNU time's peak resident memory.
  out=$( { /usr/bin/time -f 'peak %M KiB, %e s with start-up' ./target/release/zklab simulate "$@" \
    --trace-dir target/bench-traces -q || true; } 2>&1 | tail -2 | paste -sd ' ')
  printf '%-70s %s\n' "$*" "$out"
}
run --recipe standard --clients 1000 --faults loss-before-apply=0.005,loss-after-apply=0.005,expire=3
run --recipe standard --clients 10000 --faults loss-before-apply=0.005,loss-after-apply=0.005,expire=3
run --recipe standard --clients 20000 --faults loss-before-apply=0.005,loss-after-apply=0.005,expire=3
run --recipe parent-watch --clients 1000

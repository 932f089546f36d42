#!/usr/bin/env bash
# Allocations a checker step makes (benches/allocations.rs): the standard lock checked under a
# counting allocator at N=3, 4 and 5 with loss-after-apply and expire, with symmetry, on one
# thread; what each check allocated divided by its steps. Counts, not times. Prints one
# JSON object a line and appends each to bench/allocations.jsonl (scripts/bench-record.sh says
# what every record shares). The build is `cargo bench`'s (the release profile), not the
# profile-guided one: the count does not depend on the optimiser's guesses.
# Usage: scripts/bench-allocations.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-record.sh
BENCH_BUILD=bench
export BENCH_BUILD
cargo bench --quiet --bench allocations | python3 -c '
import json, sys
sys.path.insert(0, "scripts")
import bench_record
for line in sys.stdin:
    record = json.loads(line)
    print(line, end="")
    bench_record.append("bench/allocations.jsonl", {"benchmark": "allocations", "source": "scripts/bench-allocations.sh", **record})
'

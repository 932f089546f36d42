#!/usr/bin/env bash
# Wall time, simulated operations per second and peak memory of `zklab simulate` at scale, from
# its own summary line and GNU time: the standard lock at 1,000 to 100,000 clients under 1%
# connection loss and three expiries, the children-watch lock at 1,000 to 10,000 clients
# fault-free. From 40,000 clients on, a listing of the standard lock's queue is longer than the
# Java client's default jute.maxbuffer (docs/simulation.md), so those runs raise it to 16 MiB.
# The children-watch lock at 10,000 clients takes about two minutes and several GiB: its herd is
# a hundred million steps. Each run is also appended to bench/sim.jsonl as one JSON record
# (scripts/bench-record.sh: date, commit, machine, build).
# Usage: scripts/bench-sim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The build for long checks: whole-program and profile-guided optimisation (scripts/build-pgo.sh).
zklab=$(scripts/build-pgo.sh)
source scripts/bench-record.sh
[ -x /usr/bin/time ] || { echo "needs GNU time for peak memory: apt-get install time" >&2; exit 2; }
run() {
  local out
  # The run's last line (steps, wall time, operations/s), then GNU time's peak resident memory.
  out=$( { /usr/bin/time -f 'peak %M KiB, %e s with start-up' "$zklab" simulate "$@" \
    --trace-dir target/bench-traces -q || true; } 2>&1 | tail -2 | paste -sd ' ')
  printf '%-70s %s\n' "$*" "$out"
  python3 - "$out" "$@" <<'PY'
import json, os, re, sys
out, args = sys.argv[1], sys.argv[2:]
config = {}
for flag, value in zip(args, args[1:]):
    if flag.startswith("--"):
        config[flag[2:].replace("-", "_")] = int(value) if value.isdigit() else value
config.setdefault("faults", "none")
record = {"benchmark": "sim", "source": "scripts/bench-sim.sh", "config": config}
run = re.search(r"(\d+) of (\d+) runs passed[^;]*; (\d+) steps in ([\d.]+) s wall \(([\d.]+) simulated operations/s\)", out)
time = re.search(r"peak (\d+) KiB, ([\d.]+) s with start-up", out)
if run and time:
    record.update({"runs": int(run[2]), "passed": int(run[1]), "steps": int(run[3]),
                   "wall_ms": round(float(run[4]) * 1000), "ops_per_s": round(float(run[5])),
                   "peak_rss_mib": round(int(time[1]) / 1024), "wall_with_start_up_ms": round(float(time[2]) * 1000)})
else:
    record.update({"failed": True, "output": out})
sys.path.insert(0, "scripts")
import bench_record
bench_record.append("bench/sim.jsonl", record)
PY
}
faults=loss-before-apply=0.005,loss-after-apply=0.005,expire=3
for n in 1000 10000 20000; do
  run --recipe standard --clients "$n" --faults "$faults"
done
for n in 50000 100000; do
  run --recipe standard --clients "$n" --faults "$faults" --jute-maxbuffer 16777216
done
for n in 1000 2000 4000 10000; do
  run --recipe parent-watch --clients "$n"
done

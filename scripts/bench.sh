#!/usr/bin/env bash
# Unique states, states per second, peak memory and bytes per stored state (peak memory over
# unique states) of the standard lock for N=2..5, with and
# without faults, from zklab's own JSON report. Each run is bounded so the table always ends:
# a bounded run says so; `sym` rows count symmetry classes (--symmetry). Each run is also appended
# to bench/check.jsonl as one JSON record (scripts/bench-record.sh: date, commit, machine, build).
# Usage: scripts/bench.sh [max-states] [timeout-seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
max_states=${1:-20000000}
timeout=${2:-300}
# The build for long checks: whole-program and profile-guided optimisation (scripts/build-pgo.sh).
zklab=$(scripts/build-pgo.sh)
source scripts/bench-record.sh
printf '%-2s %-4s %-42s %12s %12s %9s %12s %10s %11s %s\n' N mode faults unique total ms states/s peak-MiB bytes/state bounded
for faults in none loss-before-apply,loss-after-apply,expire; do
  for n in 2 3 4 5; do
    for mode in full sym; do
      flag=(); [ "$mode" = sym ] && flag=(--symmetry)
      json=$("$zklab" check --recipe standard --clients "$n" --faults "$faults" "${flag[@]}" \
        --max-states "$max_states" --timeout "$timeout" --max-memory 16000 --json -q --trace-dir target/bench-traces || true)
      python3 - "$n" "$mode" "$faults" "$json" "$max_states" "$timeout" <<'PY'
import json, os, sys
n, mode, faults, text, max_states, timeout = sys.argv[1:7]

sys.path.insert(0, "scripts")
import bench_record


def append(measurement):
    bench_record.append("bench/check.jsonl", measurement)

config = {"recipe": "standard", "clients": int(n), "faults": faults, "symmetry": mode == "sym",
          "max_states": int(max_states), "timeout_s": int(timeout)}
if not text.strip():
    print(f'{n:<2} {mode:<4} {faults:<42} (no report: the run failed)')
    append({"benchmark": "check", "source": "scripts/bench.sh", "config": config, "failed": True})
    sys.exit(0)
r = json.loads(text)
rate = r["total_states"] * 1000 / max(r["elapsed_ms"], 1)
peak = (r.get("peak_rss_kib") or 0) / 1024
per_state = r.get("bytes_per_state") or 0
print(f'{n:<2} {mode:<4} {faults:<42} {r["unique_states"]:>12} {r["total_states"]:>12} {r["elapsed_ms"]:>9} {rate:>12.0f} {peak:>10.0f} {per_state:>11} {r["bounded"]}')
append({"benchmark": "check", "source": "scripts/bench.sh", "config": config,
        "unique_states": r["unique_states"], "total_states": r["total_states"],
        "elapsed_ms": r["elapsed_ms"], "states_per_s": round(rate), "peak_rss_mib": round(peak),
        "bytes_per_state": per_state, "bounded": r["bounded"]})
PY
    done
  done
done

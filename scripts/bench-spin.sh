#!/usr/bin/env bash
# The standard lock side by side with Spin, from one run on one machine: zklab's rows (its own
# JSON report, `--symmetry`, 60 s each) and then Spin's rows for the same configurations, from a
# Promela model of the lock and its matrix script (their `run.sh`, which prints a Markdown table).
# Spin's model is coarser (a request, its apply and its reply are one step): compare verdicts,
# time and memory, not state counts.
# Usage: scripts/bench-spin.sh PATH/TO/run.sh      (needs `spin`: apt-get install spin)
set -euo pipefail
spin_run=${1:?usage: scripts/bench-spin.sh PATH/TO/spin/run.sh}
[ -x "$spin_run" ] || { echo "error: $spin_run is not an executable script" >&2; exit 2; }
command -v spin >/dev/null || { echo "error: spin is not installed (apt-get install spin)" >&2; exit 2; }
spin_run=$(cd "$(dirname "$spin_run")" && pwd)/$(basename "$spin_run")
cd "$(dirname "$0")/.."
cargo build --release --quiet
echo "zklab (standard lock, --symmetry, --timeout 60, 2 threads):"
printf '%-2s %-28s %12s %10s %10s %11s %s\n' N faults classes ms peak-MiB bytes/class verdict
row() {
  local n=$1 faults=$2 json
  json=$(./target/release/zklab check --recipe standard --clients "$n" --faults "$faults" --symmetry \
    --timeout 60 --json -q --trace-dir target/bench-traces || true)
  python3 - "$n" "$faults" "$json" <<'PY'
import json, sys
n, faults, text = sys.argv[1:4]
r = json.loads(text)
bad = [p["name"] for p in r["properties"] if p["status"] == "violated"]
verdict = "BOUNDED (60 s)" if r["bounded"] else ("violated: " + ",".join(bad) if bad else "all hold")
print(f'{n:<2} {faults:<28} {r["unique_states"]:>12} {r["elapsed_ms"]:>10} {(r.get("peak_rss_kib") or 0) // 1024:>10} {r.get("bytes_per_state") or 0:>11} {verdict}')
PY
}
for n in 5 6 7; do row "$n" none; done
for n in 4 5; do row "$n" loss-after-apply,expire; done
row 4 all
echo
echo "Spin (the same lock; F1 a lost create reply, F2 an expiry):"
TIMEOUT=60 TRAILS=0 "$spin_run" '^ok N=[567]$|^F1guid\+F2 noP2 N=[45]$'

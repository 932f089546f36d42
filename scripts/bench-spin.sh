#!/usr/bin/env bash
# The standard lock side by side with Spin, from one run on one machine: zklab's rows (its own
# JSON report, `--symmetry`, 60 s each) and then Spin's rows for the same configurations, from a
# Promela model of the lock and its matrix script (their `run.sh`, which prints a Markdown table).
# Spin's model is coarser (a request, its apply and its reply are one step): compare verdicts,
# time and memory, not state counts.
#
# With --long, the rows that decide who is ahead follow, each without a time limit (about half
# an hour and 13 GiB at most): zklab's N=8 without faults beside Spin's N=7, and N=6 with
# loss-after-apply and expire on both sides. Spin's N=6 with faults is compiled here with
# -DCOLLAPSE, which its matrix script does not use: without it its states do not fit 24 GiB.
# Every row, zklab's and Spin's, is also appended to bench/spin.jsonl as one JSON record
# (scripts/bench-record.sh: date, commit, machine, build); Spin's rows keep the columns of its
# matrix script's table as they are.
# Usage: scripts/bench-spin.sh [--long] PATH/TO/run.sh      (needs `spin`: apt-get install spin)
set -euo pipefail
long=0
if [ "${1:-}" = --long ]; then long=1; shift; fi
spin_run=${1:?usage: scripts/bench-spin.sh [--long] PATH/TO/spin/run.sh}
[ -x "$spin_run" ] || { echo "error: $spin_run is not an executable script" >&2; exit 2; }
command -v spin >/dev/null || { echo "error: spin is not installed (apt-get install spin)" >&2; exit 2; }
[ -f "$(dirname "$spin_run")/zklock.pml" ] || { echo "error: no zklock.pml beside $spin_run" >&2; exit 2; }
spin_run=$(cd "$(dirname "$spin_run")" && pwd)/$(basename "$spin_run")
cd "$(dirname "$0")/.."
# The build for long checks: whole-program and profile-guided optimisation (scripts/build-pgo.sh).
zklab=$(scripts/build-pgo.sh)
source scripts/bench-record.sh
# record JSON: appends one record (an object) to bench/spin.jsonl after the fields all share.
record() {
  python3 - "$1" <<'PY'
import json, os, sys
sys.path.insert(0, "scripts")
import bench_record
bench_record.append("bench/spin.jsonl", {"benchmark": "spin", "source": "scripts/bench-spin.sh", **json.loads(sys.argv[1])})
PY
}
# spin_rows: Spin's matrix script's Markdown table, passed through, each row also recorded.
spin_rows() {
  local table
  table=$(mktemp -t zklab-spin-rows.XXXXXX)
  tee "$table"
  python3 - "$(cat "$table")" <<'PY' | while IFS= read -r json; do record "$json"; done
import json, sys
rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in sys.argv[1].splitlines() if l.startswith("|")]
header, body = (rows[0], rows[2:]) if len(rows) > 1 else ([], [])
for cells in body:
    print(json.dumps({"tool": "spin", "config": {"row": cells[0]}, "columns": dict(zip(header, cells))}))
PY
  rm -f "$table"
}
# row N FAULTS [SECONDS]: one zklab run, bounded to SECONDS (no bound when empty).
row() {
  local n=$1 faults=$2 seconds=${3:-} json bound=()
  [ -n "$seconds" ] && bound=(--timeout "$seconds")
  json=$("$zklab" check --recipe standard --clients "$n" --faults "$faults" --symmetry \
    "${bound[@]}" --max-states 400000000 --json -q --trace-dir target/bench-traces || true)
  python3 - "$n" "$faults" "$seconds" "$json" <<'PY' | { IFS= read -r line; printf '%s\n' "$line"; IFS= read -r json; record "$json"; }
import json, sys
n, faults, seconds, text = sys.argv[1:5]
r = json.loads(text)
bad = [p["name"] for p in r["properties"] if p["status"] == "violated"]
bound = f"BOUNDED ({seconds} s)" if seconds else "BOUNDED (states or memory)"
verdict = bound if r["bounded"] else ("violated: " + ",".join(bad) if bad else "all hold")
print(f'{n:<2} {faults:<28} {r["unique_states"]:>12} {r["elapsed_ms"]:>10} {(r.get("peak_rss_kib") or 0) // 1024:>10} {r.get("bytes_per_state") or 0:>11} {verdict}')
config = {"recipe": "standard", "clients": int(n), "faults": faults, "symmetry": True,
          "timeout_s": int(seconds) if seconds else None}
print(json.dumps({"tool": "zklab", "config": config, "unique_states": r["unique_states"],
                  "total_states": r["total_states"], "elapsed_ms": r["elapsed_ms"],
                  "peak_rss_mib": (r.get("peak_rss_kib") or 0) // 1024,
                  "bytes_per_state": r.get("bytes_per_state") or 0, "bounded": r["bounded"], "verdict": verdict}))
PY
}
header() {
  echo "zklab (standard lock, --symmetry, 2 threads, the profile-guided build, $1):"
  printf '%-2s %-28s %12s %10s %10s %11s %s\n' N faults classes ms peak-MiB bytes/class verdict
}
header "--timeout 60"
for n in 5 6 7; do row "$n" none 60; done
for n in 4 5; do row "$n" loss-after-apply,expire 60; done
row 4 all 60

echo
echo "Spin (the same lock; F1 a lost create reply, F2 an expiry):"
TIMEOUT=60 TRAILS=0 "$spin_run" '^ok N=[567]$|^F1guid\+F2 noP2 N=[45]$' | spin_rows
[ "$long" = 1 ] || exit 0

echo
header "no time limit"
row 8 none
row 6 loss-after-apply,expire
echo
echo "Spin, no time limit: N=7 without faults (its matrix script's row)"
TIMEOUT=100000 TRAILS=0 "$spin_run" '^ok N=7$' | spin_rows
echo
echo "Spin, N=6 with F1 and F2, compiled with -DCOLLAPSE -DMEMLIM=21500:"
work=$(mktemp -d -t zklock-collapse.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$(dirname "$spin_run")/zklock.pml" "$work/"
pan=$(
  cd "$work"
  spin -a -DN=6 -DF1 -DF2 -DNO_P2 zklock.pml >/dev/null
  gcc -O2 -w -DSAFETY -DCOLLAPSE -DMEMLIM=21500 -o pan pan.c
  /usr/bin/time -f 'wall %e s, peak %M KiB' ./pan -m200000 -w28 2>&1 |
    grep -E 'errors:|states, stored|^wall' || true
)
printf '%s\n' "$pan"
record "$(python3 - "$pan" <<'PY'
import json, re, sys
out = sys.argv[1]
errors, stored = re.search(r"errors: (\d+)", out), re.search(r"([\d.e+]+) states, stored", out)
time = re.search(r"wall ([\d.]+) s, peak (\d+) KiB", out)
print(json.dumps({"tool": "spin", "config": {"row": "F1guid+F2 noP2 N=6", "compiled": "-DSAFETY -DCOLLAPSE -DMEMLIM=21500"},
                  "errors": int(errors[1]) if errors else None,
                  "stored_states": int(float(stored[1])) if stored else None,
                  "elapsed_ms": round(float(time[1]) * 1000) if time else None,
                  "peak_rss_mib": round(int(time[2]) / 1024) if time else None}))
PY
)"

#!/usr/bin/env bash
# Each built-in lock's verdict under each fault kind alone, at N=2 (CLIENTS=3 for N=3): a random
# campaign of SCHEDULES schedules (default 40) that stops at the first violation, shrinks it and
# saves it in traces/client-check/ (docs/your-lock.md, "What it finds", is this table). One row
# per lock and fault: the property broken and the seed that broke it, or "none in SCHEDULES".
# Each violation's schedule is saved as traces/client-check/FAULTS/client-check-LOCK-nN-PROPERTY.json.
#
#   [CLIENTS=N] [FAULTS='K ...'] scripts/client-check-verdicts.sh [SCHEDULES [LOCK ...]]
#       (default: 40 schedules, every built-in lock, N=2, every fault kind alone and none)
set -euo pipefail
cd "$(dirname "$0")/.."
schedules=${1:-40}
shift || true
libraries=${*:-kazoo kazoo-listening go node curator writelock}
case "$schedules" in '' | *[!0-9]* | 0) echo "client-check-verdicts: SCHEDULES must be a positive number" >&2; exit 2 ;; esac
clients=${CLIENTS:-2}
kinds=${FAULTS:-none loss-before-apply loss-after-apply expire disconnect}
for faults in $kinds; do
  case "$faults" in none | loss-before-apply | loss-after-apply | expire | disconnect) ;;
    *) echo "client-check-verdicts: unknown fault kind '$faults' in FAULTS" >&2; exit 2 ;;
  esac
done
case "$clients" in 2 | 3 | 4) ;; *) echo "client-check-verdicts: CLIENTS must be 2, 3 or 4" >&2; exit 2 ;; esac
cargo build --release --quiet
printf '%-16s %-18s %s\n' lock faults verdict
for library in $libraries; do
  for faults in $kinds; do
    report=$(./target/release/zklab client-check --library "$library" --clients "$clients" --faults "$faults" \
      --schedules "$schedules" --trace-dir "traces/client-check/$faults" --json -q) || true
    verdict=$(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
bad = [run for run in r["runs"] if run["findings"]]
if not bad:
    print("none in %d schedules (%d undecided)" % (r["schedules"], r["undecided"]))
else:
    run = bad[0]
    saved = r["saved"]
    again = "shown again" if saved["shown_again"] else "NOT shown again"
    print("%s at seed %s: %s (%d choices, %s)" % (run["findings"][0]["property"], run.get("seed"), saved["file"],
                                                 saved["steps"], again))
' "$report")
    printf '%-16s %-18s %s\n' "$library" "$faults" "$verdict"
  done
done

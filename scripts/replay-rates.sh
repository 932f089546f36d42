#!/usr/bin/env bash
# How often a schedule run again tells the same history (issue "Your lock as it runs", item 2:
# 99 % or more), for each built-in library this machine has, at N=2 under loss-after-apply and
# expire (at most two faults a schedule): one campaign each, every schedule run REPLAYS more
# times (`client-check --replay-check`), violations kept going past and not shrunk. Prints a
# table with the seeds of the schedules that did not replay (run one again with `--seed S
# --schedules 1 --replay-check 20`) and appends one JSON record per campaign to
# bench/replay.jsonl (scripts/bench-record.sh says what every record shares).
#
#   scripts/replay-rates.sh [SCHEDULES [LIBRARIES [REPLAYS]]]
#       SCHEDULES: a campaign's schedules (default 50)
#       LIBRARIES: a comma list (default kazoo,kazoo-listening,curator,writelock,go,node)
#       REPLAYS:   runs again of each schedule (default 2)
#
# A measurement of the scheduler, not a test: nothing else should run on the machine meanwhile
# (a loaded machine is what makes a client's reaction outlast the quiet test).
set -euo pipefail
cd "$(dirname "$0")/.."
schedules=${1:-50}
libraries=${2:-kazoo,kazoo-listening,curator,writelock,go,node}
replays=${3:-2}
for n in "$schedules" "$replays"; do
  case "$n" in '' | *[!0-9]* | 0) echo "replay-rates: SCHEDULES and REPLAYS must be positive numbers" >&2; exit 2 ;; esac
done
for library in ${libraries//,/ }; do
  case "$library" in kazoo | kazoo-listening | curator | writelock | go | node) ;;
    *) echo "replay-rates: unknown library '$library' (kazoo, kazoo-listening, curator, writelock, go, node)" >&2; exit 2 ;;
  esac
done
cargo build --release --quiet
source scripts/bench-record.sh
BENCH_BUILD=release
export BENCH_BUILD
ZKLAB=./target/release/zklab SCHEDULES=$schedules LIBRARIES=$libraries REPLAYS=$replays exec python3 - <<'PY'
import json, os, subprocess, sys, tempfile

sys.path.insert(0, "scripts")
import bench_record

zklab, schedules, replays = os.environ["ZKLAB"], os.environ["SCHEDULES"], os.environ["REPLAYS"]
FAULTS = "loss-after-apply,expire"


def campaign(library):
    """One campaign's JSON report, or None if the library cannot start here."""
    r = subprocess.run([zklab, "client-check", "--library", library, "--clients", "2", "--faults", FAULTS,
                        "--max-faults", "2", "--schedules", schedules, "--replay-check", replays, "--keep-going",
                        "--shrink-runs", "0", "--json", "-q", "--trace-dir", tempfile.mkdtemp()],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        print(f"{library:<16} (cannot run here: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode})")
        return None
    return json.loads(r.stdout)


print(f"{'library':<16} {'schedules':>9} {'replays':>7} {'the same':>8} {'rate':>7}  did not replay (seeds)")
for library in os.environ["LIBRARIES"].split(","):
    report = campaign(library)
    if report is None:
        continue
    parted = [run["seed"] for run in report["runs"] if run["replayed_same"] < run["replayed"]]
    rate = 100.0 * report["replayed_same"] / report["replayed"]
    print(f"{library:<16} {report['schedules']:>9} {report['replayed']:>7} {report['replayed_same']:>8} {rate:>6.1f}%  "
          f"{', '.join(map(str, parted)) or '-'}")
    bench_record.append("bench/replay.jsonl", {
        "benchmark": "replay-rates", "source": "scripts/replay-rates.sh",
        "config": {"library": library, "clients": 2, "faults": FAULTS, "max_faults": 2,
                   "schedules": int(schedules), "replays_each": int(replays)},
        "seconds": report["seconds"], "replayed": report["replayed"], "replayed_same": report["replayed_same"],
        "did_not_replay": parted, "replay_waited": report.get("replay_waited", 0), "violations": report["violations"], "undecided": report["undecided"]})
PY

#!/usr/bin/env bash
# How fast `zklab client-check` explores real lock code: schedules per second and zklab's peak
# memory for each built-in library this machine has, at N=2 and N=3, without faults and with
# loss-after-apply and expire. One campaign each, its clients' processes started once and reset
# between schedules (docs/your-lock.md), every violation kept going past (--keep-going) and
# saved unshrunk. Prints a table and appends one JSON record per campaign to
# bench/client-check.jsonl (scripts/bench-record.sh says what every record shares).
#
#   scripts/bench-client-check.sh [SCHEDULES]      (default 40 schedules a campaign)
#
# A benchmark, not a test: the figures go to the record and docs/internals/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
schedules=${1:-40}
case "$schedules" in '' | *[!0-9]* | 0) echo "bench-client-check: SCHEDULES must be a positive number" >&2; exit 2 ;; esac
cargo build --release --quiet --features real-server
source scripts/bench-record.sh
BENCH_BUILD=release
export BENCH_BUILD
ZKLAB=./target/release/zklab SCHEDULES=$schedules python3 - <<'PY'
import json, os, subprocess, sys, tempfile, threading, time

sys.path.insert(0, "scripts")
import bench_record

zklab, schedules = os.environ["ZKLAB"], os.environ["SCHEDULES"]


def available(library):
    """Whether a one-schedule campaign of `library` can start here (its needs installed)."""
    r = subprocess.run([zklab, "client-check", "--library", library, "--schedules", "1", "-q", "--json",
                        "--trace-dir", tempfile.mkdtemp()], capture_output=True, text=True)
    return r.returncode in (0, 1)


def campaign(library, clients, faults):
    """One campaign; its JSON report and zklab's peak resident memory (VmHWM) in MiB."""
    trace_dir = tempfile.mkdtemp()
    p = subprocess.Popen([zklab, "client-check", "--library", library, "--clients", str(clients),
                          "--faults", faults, "--schedules", schedules, "--keep-going", "--shrink-runs", "0",
                          "--json", "-q", "--trace-dir", trace_dir], stdout=subprocess.PIPE, text=True)
    peak = [0]

    def watch():
        while p.poll() is None:
            try:
                for line in open(f"/proc/{p.pid}/status"):
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    out = p.communicate()[0]
    t.join()
    return json.loads(out), peak[0] / 1024


print(f"{'library':<12} {'N':>2} {'faults':<26} {'schedules':>9} {'per s':>6} {'violated':>8} {'undecided':>9} {'peak MiB':>8}")
for library in ["kazoo", "curator", "writelock", "go", "node"]:
    if not available(library):
        print(f"{library:<12} (not on this machine)")
        continue
    for clients in (2, 3):
        for faults in ("none", "loss-after-apply,expire"):
            report, peak = campaign(library, clients, faults)
            print(f"{library:<12} {clients:>2} {faults:<26} {report['schedules']:>9} {report['schedules_per_second']:>6.1f} "
                  f"{report['violations']:>8} {report['undecided']:>9} {peak:>8.1f}")
            bench_record.append("bench/client-check.jsonl", {
                "benchmark": "client-check", "source": "scripts/bench-client-check.sh",
                "config": {"library": library, "clients": clients, "faults": faults, "schedules": int(schedules)},
                "seconds": report["seconds"], "schedules_per_second": report["schedules_per_second"],
                "violations": report["violations"], "undecided": report["undecided"],
                "peak_rss_mib": round(peak, 1)})
PY

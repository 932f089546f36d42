#!/usr/bin/env bash
# How fast `zklab client-check` explores real lock code: schedules per second and zklab's peak
# memory for each built-in library this machine has, at N=2 and N=3, without faults and with
# loss-after-apply and expire (at most two faults a schedule). One campaign each, its clients'
# processes started once and reset between schedules (docs/your-lock.md), every violation kept
# going past (--keep-going) and saved unshrunk. Each campaign also counts the distinct
# server-side states its schedules covered (src/client_check/server_state.rs); where zklab has a
# model of the library (kazoo: kazoo-lock, curator: curator-mutex) the checker's state count for
# that model in the same world (each fault kind once) is put beside it. Prints a table and
# appends one JSON record per campaign to bench/client-check.jsonl (scripts/bench-record.sh says
# what every record shares).
#
#   scripts/bench-client-check.sh [SCHEDULES [LIBRARIES]]
#       SCHEDULES: a campaign's schedules (default 40)
#       LIBRARIES: a comma list (default kazoo,curator,writelock,go,node)
#
# A benchmark, not a test: the figures go to the record and docs/internals/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
schedules=${1:-40}
case "$schedules" in '' | *[!0-9]* | 0) echo "bench-client-check: SCHEDULES must be a positive number" >&2; exit 2 ;; esac
libraries=${2:-kazoo,curator,writelock,go,node}
for library in ${libraries//,/ }; do
  case "$library" in kazoo | curator | writelock | go | node) ;; *) echo "bench-client-check: unknown library '$library' (kazoo, curator, writelock, go, node)" >&2; exit 2 ;; esac
done
cargo build --release --quiet
source scripts/bench-record.sh
BENCH_BUILD=release
export BENCH_BUILD
ZKLAB=./target/release/zklab SCHEDULES=$schedules LIBRARIES=$libraries python3 - <<'PY'
import json, os, subprocess, sys, tempfile, threading, time

sys.path.insert(0, "scripts")
import bench_record

zklab, schedules = os.environ["ZKLAB"], os.environ["SCHEDULES"]
# The checker's model of a library, where zklab has one.
MODELS = {"kazoo": "kazoo-lock", "curator": "curator-mutex"}


def available(library):
    """Whether a one-schedule campaign of `library` can start here (its needs installed)."""
    r = subprocess.run([zklab, "client-check", "--library", library, "--schedules", "1", "-q", "--json",
                        "--trace-dir", tempfile.mkdtemp()], capture_output=True, text=True)
    return r.returncode in (0, 1)


def checker_states(library, clients, faults):
    """The checker's unique states for the library's model in the same world, or None."""
    if library not in MODELS or faults == "none":
        return None
    r = subprocess.run([zklab, "check", "--recipe", MODELS[library], "--clients", str(clients), "--faults", faults,
                        "--continue", "--json", "-q"], capture_output=True, text=True)
    return json.loads(r.stdout)["unique_states"]


def campaign(library, clients, faults):
    """One campaign; its JSON report and zklab's peak resident memory (VmHWM) in MiB."""
    trace_dir = tempfile.mkdtemp()
    p = subprocess.Popen([zklab, "client-check", "--library", library, "--clients", str(clients),
                          "--faults", faults, "--max-faults", "2", "--schedules", schedules, "--keep-going",
                          "--shrink-runs", "0",
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


print(f"{'library':<12} {'N':>2} {'faults':<26} {'schedules':>9} {'per s':>6} {'violated':>8} {'undecided':>9} "
      f"{'peak MiB':>8} {'server states':>13} {'checker states':>14}")
for library in os.environ["LIBRARIES"].split(","):
    if not available(library):
        print(f"{library:<12} (not on this machine)")
        continue
    for clients in (2, 3):
        for faults in ("none", "loss-after-apply,expire"):
            report, peak = campaign(library, clients, faults)
            model = checker_states(library, clients, faults)
            print(f"{library:<12} {clients:>2} {faults:<26} {report['schedules']:>9} {report['schedules_per_second']:>6.1f} "
                  f"{report['violations']:>8} {report['undecided']:>9} {peak:>8.1f} {report['server_states']:>13} "
                  f"{'-' if model is None else model:>14}")
            bench_record.append("bench/client-check.jsonl", {
                "benchmark": "client-check", "source": "scripts/bench-client-check.sh",
                "config": {"library": library, "clients": clients, "faults": faults,
                           "max_faults": 0 if faults == "none" else 2, "schedules": int(schedules)},
                "seconds": report["seconds"], "schedules_per_second": report["schedules_per_second"],
                "violations": report["violations"], "undecided": report["undecided"],
                "peak_rss_mib": round(peak, 1), "server_states": report["server_states"],
                "checker_model": MODELS.get(library) if model is not None else None, "checker_states": model})
PY

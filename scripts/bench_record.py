"""Appends a benchmark record to bench/*.jsonl: the measurement after the fields every record
shares, which scripts/bench-record.sh sets (BENCH_DATE, BENCH_COMMIT, BENCH_DIRTY, BENCH_MACHINE,
BENCH_BUILD). Imported by the benchmark scripts' Python; docs/internals/performance.md says what
each file holds."""
import json
import os


def append(path, measurement):
    e = os.environ
    shared = {"date": e["BENCH_DATE"], "commit": e["BENCH_COMMIT"], "dirty": e["BENCH_DIRTY"] == "true",
              "machine": e["BENCH_MACHINE"], "build": e["BENCH_BUILD"]}
    with open(path, "a") as f:
        f.write(json.dumps({**shared, **measurement}) + "\n")

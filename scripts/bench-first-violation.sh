#!/usr/bin/env bash
# How fast a broken recipe fails: every suite case that breaks a property (src/suite.rs), checked
# with the default stop at the first violation and with --continue (everything explored), plus
# blind-retry with every fault. Prints unique states, milliseconds and peak memory of each, from
# zklab's own JSON report (one run each; the machine's other load shows in the times). Each run
# is also appended to bench/first-violation.jsonl as one JSON record (scripts/bench-record.sh).
# Usage: scripts/bench-first-violation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The build for long checks: whole-program and profile-guided optimisation (scripts/build-pgo.sh).
zklab=$(scripts/build-pgo.sh)
source scripts/bench-record.sh
ZKLAB=$zklab python3 - <<'PY'
import json, os, re, subprocess

import sys
sys.path.insert(0, "scripts")
import bench_record


def append(measurement):
    bench_record.append("bench/first-violation.jsonl", measurement)

# Each suite case as rustfmt lays it out, one field a line; `violated` is a list or a named one.
cases = []
pattern = (r'Case \{\s*recipe: "([^"]+)",\s*clients: (\d+),\s*faults: "([^"]+)",\s*client: (\w+),\s*'
           r'first_sequence: (-?\d+|i32::MAX|i32::MIN),\s*violated: (&\[[^\]]*\]|[\w:]+)')
for m in re.finditer(pattern, open("src/suite.rs").read()):
    if re.sub(r'\s', '', m.group(6)) != "&[]":
        first = {"i32::MAX": "2147483647", "i32::MIN": "-2147483648"}.get(m.group(5), m.group(5))
        cases.append(m.groups()[:4] + (first,))
cases.append(("blind-retry", "2", "all", "Java", "0"))

def run(case, extra):
    recipe, clients, faults, client, first = case
    args = [os.environ["ZKLAB"], "check", "--recipe", recipe, "--clients", clients, "--faults", faults,
            "--client", client.lower(), "--first-sequence", first, "--json", "-q",
            "--trace-dir", "target/bench-traces", "--timeout", "600"] + extra
    r = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    measured = r["unique_states"], r["elapsed_ms"], (r.get("peak_rss_kib") or 0) // 1024
    violated = sorted(p["name"] for p in r["properties"] if p["status"] == "violated")
    append({"benchmark": "first-violation", "source": "scripts/bench-first-violation.sh",
            "config": {"recipe": recipe, "clients": int(clients), "faults": faults, "client": client.lower(),
                       "first_sequence": int(first), "mode": "continue" if extra else "stop", "timeout_s": 600},
            "unique_states": measured[0], "elapsed_ms": measured[1], "peak_rss_mib": measured[2],
            "bounded": r["bounded"], "violated": violated})
    return measured

print(f'{"recipe":<44} {"N":>2} {"faults":<48} {"stop: states":>12} {"ms":>7} {"MiB":>5}   {"continue: states":>16} {"ms":>8} {"MiB":>6}')
for case in cases:
    s, c = run(case, []), run(case, ["--continue"])
    print(f'{case[0]:<44} {case[1]:>2} {case[2]:<48} {s[0]:>12} {s[1]:>7} {s[2]:>5}   {c[0]:>16} {c[1]:>8} {c[2]:>6}')
PY

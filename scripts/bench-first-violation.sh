#!/usr/bin/env bash
# How fast a broken recipe fails: every suite case that breaks a property (src/suite.rs), checked
# with the default stop at the first violation and with --continue (everything explored), plus
# blind-retry with every fault. Prints unique states, milliseconds and peak memory of each, from
# zklab's own JSON report (one run each; the machine's other load shows in the times).
# Usage: scripts/bench-first-violation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The build for long checks: whole-program and profile-guided optimisation (scripts/build-pgo.sh).
zklab=$(scripts/build-pgo.sh)
ZKLAB=$zklab python3 - <<'PY'
import json, os, re, subprocess

cases = []
for line in open("src/suite.rs"):
    m = re.search(r'Case \{ recipe: "([^"]+)", clients: (\d+), faults: "([^"]+)", client: (\w+), '
                  r'first_sequence: (-?\d+), violated: &\[([^\]]*)\]', line)
    if m and m.group(6).strip():
        cases.append(m.groups()[:5])
cases.append(("blind-retry", "2", "all", "Java", "0"))

def run(case, extra):
    recipe, clients, faults, client, first = case
    args = [os.environ["ZKLAB"], "check", "--recipe", recipe, "--clients", clients, "--faults", faults,
            "--client", client.lower(), "--first-sequence", first, "--json", "-q",
            "--trace-dir", "target/bench-traces", "--timeout", "600"] + extra
    r = json.loads(subprocess.run(args, capture_output=True, text=True).stdout)
    return r["unique_states"], r["elapsed_ms"], (r.get("peak_rss_kib") or 0) // 1024

print(f'{"recipe":<44} {"N":>2} {"faults":<48} {"stop: states":>12} {"ms":>7} {"MiB":>5}   {"continue: states":>16} {"ms":>8} {"MiB":>6}')
for case in cases:
    s, c = run(case, []), run(case, ["--continue"])
    print(f'{case[0]:<44} {case[1]:>2} {case[2]:<48} {s[0]:>12} {s[1]:>7} {s[2]:>5}   {c[0]:>16} {c[1]:>8} {c[2]:>6}')
PY

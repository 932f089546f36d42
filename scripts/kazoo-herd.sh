#!/usr/bin/env bash
# The herd row of a real kazoo 2.8 Lock (scripts/kazoo-herd.py) beside the model's
# (`zklab herd --recipes kazoo-lock`), at each client count, against a fresh standalone
# ZooKeeper (scripts/zk-server.sh); exits 1 if their requests per acquisition are more than 5%
# apart. PYTHON picks the interpreter that has kazoo.
#
#   bash scripts/kazoo-herd.sh [CLIENTS ...]      (default: 5 50)
set -euo pipefail
cd "$(dirname "$0")/.."
fail() { echo "kazoo-herd: $*" >&2; exit 2; }
python=${PYTHON:-python3}
"$python" -c 'import kazoo' 2>/dev/null || fail "$python has no kazoo (apt-get install python3-kazoo, or set PYTHON)"
. scripts/zk-server.sh
cargo build --release --quiet
start_server >"$work/port" || { tail -20 "$work/server.log" >&2 || true; fail "the ZooKeeper server did not start"; }
port=$(cat "$work/port")
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(5 50)
bad=0
for n in "${counts[@]}"; do
  real=$("$python" scripts/kazoo-herd.py "127.0.0.1:$port" "$n")
  model=$(./target/release/zklab herd --recipes kazoo-lock --clients "$n" -o "$work/herd.svg" --json)
  echo "real:  $real"
  echo "model: $model"
  # Requests per acquisition must agree within 5%.
  "$python" -c 'import json, sys
real = json.loads(sys.argv[1])["requests_per_acquisition"]
model = json.loads(sys.argv[2])[0]["herd"]["requests_per_acquisition"]
off = abs(model - real) / real
print("requests per acquisition: real %.2f, model %.2f (%.1f%% apart)" % (real, model, 100 * off))
sys.exit(0 if off <= 0.05 else 1)' "$real" "$model" || bad=1
done
exit "$bad"

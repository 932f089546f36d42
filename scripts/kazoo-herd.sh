#!/usr/bin/env bash
# The herd row of a real kazoo 2.8 Lock (scripts/kazoo-herd.py) beside the model's
# (`zklab herd --recipes kazoo-lock`), at each client count, against a fresh standalone
# ZooKeeper (scripts/zk-server.sh). PYTHON picks the interpreter that has kazoo.
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
for n in "${counts[@]}"; do
  echo "real:  $("$python" scripts/kazoo-herd.py "127.0.0.1:$port" "$n")"
  ./target/release/zklab herd --recipes kazoo-lock --clients "$n" -o "$work/herd.svg" | sed -n 2p | sed 's/^/model: /'
done

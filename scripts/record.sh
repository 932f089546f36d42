#!/usr/bin/env bash
# Records op scripts with the real client libraries against a real ZooKeeper, one expected file
# per library: conformance/expected/java/NAME.json (the Java client, scripts/RecordJava.java) and
# conformance/expected/kazoo/NAME.json (kazoo, scripts/record-kazoo.py), then checks the model
# against both (`zklab zk-script --client java|kazoo`).
#
#   bash scripts/record.sh conformance/cases/44-outage-missed-change.json [CASE.json ...]
#
# The server is started as scripts/conformance.sh starts it (scripts/zk-server.sh). Needs a JDK
# (the Java recorder runs as a single source file, on Debian's zookeeper.jar, whose manifest
# names Jackson for its JSON) and kazoo (Debian: python3-kazoo). PYTHON picks the interpreter
# that has kazoo (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "record: $*" >&2; exit 2; }

[ $# -gt 0 ] || fail "usage: scripts/record.sh CASE.json [CASE.json ...]"
for case in "$@"; do [ -f "$case" ] || fail "no such case: $case"; done
python=${PYTHON:-python3}
"$python" -c 'import kazoo' 2>/dev/null || fail "$python has no kazoo (apt-get install python3-kazoo, or set PYTHON)"
command -v javac >/dev/null || fail "no JDK (javac) on PATH"

. scripts/zk-server.sh

cargo build --release --quiet
start_server >"$work/port" || { tail -20 "$work/server.log" >&2 || true; fail "the ZooKeeper server did not start"; }
port=$(cat "$work/port")
mkdir -p conformance/expected/java conformance/expected/kazoo
bad=0
for case in "$@"; do
  name=$(basename "$case")
  java -cp "$classpath" scripts/RecordJava.java "127.0.0.1:$port" "$case" \
    >"conformance/expected/java/$name" 2> >(grep -v '^SLF4J' >&2) || fail "$name: the Java recorder failed"
  "$python" scripts/record-kazoo.py "127.0.0.1:$port" "$case" >"conformance/expected/kazoo/$name" ||
    fail "$name: the kazoo recorder failed"
  for client in java kazoo; do
    if ./target/release/zklab zk-script "$case" --client "$client" --expect "conformance/expected/$client/$name" \
      >/dev/null; then
      echo "$name ($client): recorded; the model agrees"
    else
      echo "$name ($client): recorded; the model DIFFERS"
      bad=$((bad + 1))
    fi
  done
done
[ "$bad" -eq 0 ]

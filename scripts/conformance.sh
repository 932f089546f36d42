#!/usr/bin/env bash
# Runs every op script of conformance/cases against a real ZooKeeper server and against the model,
# and prints one row per recording: does each match it? conformance/expected/NAME.json is run with
# the default client, conformance/expected/{java,kazoo}/NAME.json with `--client java|kazoo`. A case
# with no recording yet compares the model with the server. Exits 1 if any row does not match.
#
# The server is a standalone one started here, as the recordings' was: tickTime 100, session
# timeouts 200..20000 ms, four-letter words allowed (the runner reads watches and ephemerals
# with them), no admin server; on 127.0.0.1, a free port and a temporary data dir, stopped on exit.
#
# Then differential fuzzing: FUZZ_SCRIPTS (200) random op scripts of seed FUZZ_SEED (1) run against
# the model and the server (zklab zk-fuzz); a mismatch is shrunk and saved as a case pair in
# FUZZ_SAVE_DIR (zklab-fuzz/cases and zklab-fuzz/expected). FUZZ_SCRIPTS=0 skips it.
#
# ZooKeeper comes from ZOOKEEPER_CLASSPATH (a java classpath), else ZOOKEEPER_HOME (an unpacked
# release: its jars in lib/), else the Debian package (apt-get install zookeeper).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s%N)

fail() { echo "conformance: $*" >&2; exit 2; }

. scripts/zk-server.sh

cargo build --release --quiet
zklab=./target/release/zklab

# Run in this shell (not $(...)) so the trap knows the server's PID.
start_server >"$work/port" || { tail -20 "$work/server.log" >&2 || true; fail "the ZooKeeper server did not start"; }
port=$(cat "$work/port")
echo "ZooKeeper $(ask "$port" srvr | sed -n 's/^Zookeeper version: \([^,-]*\).*/\1/p') on 127.0.0.1:$port" \
  "(pid $server_pid, serving after $((($(date +%s%N) - started) / 1000000)) ms)"

printf '%-40s %-6s %-6s %s\n' case model server match
bad=0
rows=0
notes=$work/notes
: >"$notes"
# One row: the model and the server against a recording ($2, or none yet) with a client ($3).
row() {
  local name=$1 expected=$2 label=$1${3:+ ($3)} live=$work/$1.$3.server.json model server match
  local flag=(${3:+--client "$3"})
  rows=$((rows + 1))
  if [ -n "$expected" ]; then
    model=yes server=yes
    "$zklab" zk-script "$case" "${flag[@]}" --expect "$expected" >/dev/null 2>"$work/model.err" || model=no
    "$zklab" zk-script "$case" "${flag[@]}" --server "127.0.0.1:$port" --expect "$expected" >"$live" \
      2>"$work/server.err" || server=no
    [ "$model" = no ] && sed "s/^/  $label model: /" "$work/model.err" >>"$notes"
    [ "$server" = no ] && sed "s/^/  $label server: /" "$work/server.err" >>"$notes"
    match=$([ "$model$server" = yesyes ] && echo yes || echo no)
  else
    model=- server=-
    match=yes
    if ! "$zklab" zk-script "$case" "${flag[@]}" --server "127.0.0.1:$port" >"$live" 2>"$work/server.err"; then
      match=no
      sed "s/^/  $label server: /" "$work/server.err" >>"$notes"
    elif ! "$zklab" zk-script "$case" "${flag[@]}" --expect "$live" >/dev/null 2>"$work/model.err"; then
      match=no
      sed "s/^/  $label model vs server: /" "$work/model.err" >>"$notes"
    fi
  fi
  [ "$match" = yes ] || bad=$((bad + 1))
  printf '%-40s %-6s %-6s %s\n' "$label" "$model" "$server" "$match"
}
for case in conformance/cases/*.json; do
  name=$(basename "$case" .json)
  recorded=0
  [ -f "conformance/expected/$name.json" ] && recorded=1 && row "$name" "conformance/expected/$name.json" ""
  for client in java kazoo; do
    [ -f "conformance/expected/$client/$name.json" ] && recorded=1 &&
      row "$name" "conformance/expected/$client/$name.json" "$client"
  done
  [ "$recorded" = 1 ] || row "$name" "" ""
done
if [ -s "$notes" ]; then
  echo "differences:"
  cat "$notes"
fi
echo "$bad of $rows recordings differ ($(ls conformance/cases/*.json | wc -l) cases)"

fuzz_bad=0
if [ "${FUZZ_SCRIPTS:-200}" -gt 0 ]; then
  "$zklab" zk-fuzz --server "127.0.0.1:$port" --scripts "${FUZZ_SCRIPTS:-200}" --seed "${FUZZ_SEED:-1}" \
    --save-dir "${FUZZ_SAVE_DIR:-zklab-fuzz}" || fuzz_bad=1
fi
ms=$((($(date +%s%N) - started) / 1000000))
echo "wall time $((ms / 1000)).$((ms % 1000 / 100)) s"
[ "$bad" -eq 0 ] && [ "$fuzz_bad" -eq 0 ]

#!/usr/bin/env bash
# Runs every op script of conformance/cases against a real ZooKeeper server and against the model,
# and prints one row per case: does each match the recording in conformance/expected? A case with
# no recording yet compares the model with the server. Exits 1 if any row does not match.
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

if [ -n "${ZOOKEEPER_CLASSPATH:-}" ]; then
  classpath=$ZOOKEEPER_CLASSPATH
elif [ -n "${ZOOKEEPER_HOME:-}" ]; then
  [ -d "$ZOOKEEPER_HOME/lib" ] || fail "ZOOKEEPER_HOME=$ZOOKEEPER_HOME has no lib/ directory"
  classpath="$ZOOKEEPER_HOME/lib/*:$ZOOKEEPER_HOME/*"
elif [ -f /usr/share/java/zookeeper.jar ]; then
  # Debian's jar names its dependencies in its manifest.
  classpath=/usr/share/java/zookeeper.jar
else
  fail "no ZooKeeper found: install Debian's zookeeper package, or set ZOOKEEPER_HOME or ZOOKEEPER_CLASSPATH"
fi
command -v java >/dev/null || fail "no java on PATH"

cargo build --release --quiet
zklab=./target/release/zklab

work=$(mktemp -d)
server_pid=
stop() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop EXIT

# A four-letter word's answer (bash's /dev/tcp: no netcat needed).
ask() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf $2 >&3 && cat <&3" 2>/dev/null
}

# `ruok` answers `imok` as soon as the port is open; `srvr` names the version only once the
# server serves requests.
serving() {
  [ "$(ask "$1" ruok)" = imok ] && ask "$1" srvr | grep -q '^Zookeeper version'
}

# A port nothing answers on; the server may still lose it to a race, so starting is retried.
start_server() {
  local port attempt i
  for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then continue; fi
    rm -rf "$work/data" && mkdir -p "$work/data"
    cat >"$work/zoo.cfg" <<EOF
tickTime=100
minSessionTimeout=200
maxSessionTimeout=20000
dataDir=$work/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
EOF
    java -Xmx256m -cp "$classpath" org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" \
      >"$work/server.log" 2>&1 &
    server_pid=$!
    for i in $(seq 600); do
      if serving "$port"; then
        echo "$port"
        return 0
      fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  done
  return 1
}

# Run in this shell (not $(...)) so the trap knows the server's PID.
start_server >"$work/port" || { tail -20 "$work/server.log" >&2 || true; fail "the ZooKeeper server did not start"; }
port=$(cat "$work/port")
echo "ZooKeeper $(ask "$port" srvr | sed -n 's/^Zookeeper version: \([^,-]*\).*/\1/p') on 127.0.0.1:$port" \
  "(pid $server_pid, serving after $((($(date +%s%N) - started) / 1000000)) ms)"

printf '%-32s %-6s %-6s %s\n' case model server match
bad=0
notes=$work/notes
: >"$notes"
for case in conformance/cases/*.json; do
  name=$(basename "$case" .json)
  expected=conformance/expected/$name.json
  live=$work/$name.server.json
  if [ -f "$expected" ]; then
    model=yes server=yes
    "$zklab" zk-script "$case" --expect "$expected" >/dev/null 2>"$work/model.err" || model=no
    "$zklab" zk-script "$case" --server "127.0.0.1:$port" --expect "$expected" >"$live" 2>"$work/server.err" || server=no
    [ "$model" = no ] && sed "s/^/  $name model: /" "$work/model.err" >>"$notes"
    [ "$server" = no ] && sed "s/^/  $name server: /" "$work/server.err" >>"$notes"
    row=$([ "$model$server" = yesyes ] && echo yes || echo no)
  else
    model=- server=-
    row=yes
    if ! "$zklab" zk-script "$case" --server "127.0.0.1:$port" >"$live" 2>"$work/server.err"; then
      row=no
      sed "s/^/  $name server: /" "$work/server.err" >>"$notes"
    elif ! "$zklab" zk-script "$case" --expect "$live" >/dev/null 2>"$work/model.err"; then
      row=no
      sed "s/^/  $name model vs server: /" "$work/model.err" >>"$notes"
    fi
  fi
  [ "$row" = yes ] || bad=$((bad + 1))
  printf '%-32s %-6s %-6s %s\n' "$name" "$model" "$server" "$row"
done
if [ -s "$notes" ]; then
  echo "differences:"
  cat "$notes"
fi
echo "$bad of $(ls conformance/cases/*.json | wc -l) cases differ"

fuzz_bad=0
if [ "${FUZZ_SCRIPTS:-200}" -gt 0 ]; then
  "$zklab" zk-fuzz --server "127.0.0.1:$port" --scripts "${FUZZ_SCRIPTS:-200}" --seed "${FUZZ_SEED:-1}" \
    --save-dir "${FUZZ_SAVE_DIR:-zklab-fuzz}" || fuzz_bad=1
fi
ms=$((($(date +%s%N) - started) / 1000000))
echo "wall time $((ms / 1000)).$((ms % 1000 / 100)) s"
[ "$bad" -eq 0 ] && [ "$fuzz_bad" -eq 0 ]

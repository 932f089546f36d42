# A standalone ZooKeeper like the one the recordings came from, for scripts/conformance.sh and
# scripts/record.sh (sourced, after they define fail()): tickTime 100, session timeouts
# 200..20000 ms, four-letter words allowed, no admin server; on 127.0.0.1, a free port and a
# temporary data dir, stopped (by its PID) on exit. Sets $classpath, $work, $server_pid and
# defines ask, serving and start_server.
#
# ZooKeeper comes from ZOOKEEPER_CLASSPATH (a java classpath), else ZOOKEEPER_HOME (an unpacked
# release: its jars in lib/), else the Debian package (apt-get install zookeeper).

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
    # The container manager's sweep (every minute by default) is put off for a day: the model's
    # server never reaps a container by itself (the reaper is a fault the checker places), so a
    # sweep landing inside a case would make a difference no script asked for.
    java -Xmx256m -Dznode.container.checkIntervalMs=86400000 -cp "$classpath" \
      org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" \
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


#!/usr/bin/env bash
# The served model answers real client libraries as ZooKeeper does: every op script of
# conformance/cases run by the real Java client (scripts/RecordJava.java) and by real kazoo
# (scripts/record-kazoo.py) against `zklab serve`, each compared with what a real ZooKeeper 3.8
# answered the same library (conformance/expected/{java,kazoo}/NAME.json, else
# conformance/expected/NAME.json, which kazoo recorded and where the two libraries do not
# differ). One row per case and library; exits 1 if any differs.
#
# The served model is started as scripts/conformance.sh starts the real server: tick 100 ms,
# session timeouts 200..20000 ms, on 127.0.0.1 and a free port, stopped on exit.
# Needs a JDK and Debian's zookeeper.jar (ZOOKEEPER_CLASSPATH overrides), and kazoo (PYTHON picks
# the interpreter, default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "serve-conformance: $*" >&2; exit 2; }

classpath=${ZOOKEEPER_CLASSPATH:-/usr/share/java/zookeeper.jar}
python=${PYTHON:-/usr/bin/python3}
[ -n "${ZOOKEEPER_CLASSPATH:-}" ] || [ -f "$classpath" ] || fail "no $classpath (apt-get install zookeeper)"
"$python" -c 'import kazoo' 2>/dev/null || fail "$python has no kazoo (apt-get install python3-kazoo, or set PYTHON)"
command -v javac >/dev/null || fail "no JDK (javac) on PATH"

cargo build --release --quiet
zklab=./target/release/zklab
work=$(mktemp -d)
"$zklab" serve --port 0 --tick-ms 100 --max-session-timeout-ms 20000 >"$work/addr" 2>"$work/serve.log" &
served=$!
trap 'kill "$served" 2>/dev/null; wait "$served" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.05; done
addr=$(cat "$work/addr")
[ -n "$addr" ] || { cat "$work/serve.log" >&2; fail "zklab serve did not start"; }
echo "zklab serve on $addr"
# The Java recorder compiled once, not once per case.
javac -nowarn -cp "$classpath" -d "$work/java" scripts/RecordJava.java 2> >(grep -v '^Note:' >&2)

printf '%-40s %-6s %s\n' case client match
bad=0
rows=0
# A library that cannot run a case against a real server either is not asked to here.
cannot_run() {
  case "$1 $2" in
  # The Java client's connect timeout is its session timeout: with the 1 ms this case asks for,
  # it never connects (to a real ZooKeeper 3.8 neither).
  "java 40-session-timeout-clamp.json") return 0 ;;
  # The recorders run under a chroot (/zklab): kazoo sends delete("/") as a delete of the chroot
  # node, which succeeds (on a real server too), so the case's point cannot be made through it.
  "kazoo 27-errors-bad-arguments.json") return 0 ;;
  esac
  return 1
}
for case in conformance/cases/*.json; do
  name=$(basename "$case")
  for client in java kazoo; do
    cannot_run "$client" "$name" && continue
    expected=conformance/expected/$client/$name
    [ -f "$expected" ] || expected=conformance/expected/$name
    [ -f "$expected" ] || continue
    rows=$((rows + 1))
    out=$work/$client-$name
    if [ "$client" = java ]; then
      java -cp "$classpath:$work/java" RecordJava "$addr" "$case" >"$out" 2> >(grep -v '^SLF4J' >"$work/err") || true
    else
      "$python" scripts/record-kazoo.py "$addr" "$case" >"$out" 2>"$work/err" || true
    fi
    if "$zklab" zk-script "$case" --results "$out" --expect "$expected" >/dev/null 2>"$work/diff"; then
      printf '%-40s %-6s %s\n' "$name" "$client" yes
    else
      printf '%-40s %-6s %s\n' "$name" "$client" NO
      sed 's/^/    /' "$work/diff" "$work/err" | head -8
      bad=$((bad + 1))
    fi
  done
done
echo "$((rows - bad)) of $rows runs of a real client library against zklab serve match the real server's recording"
[ "$bad" -eq 0 ]

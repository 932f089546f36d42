#!/usr/bin/env python3
"""Records what a real kazoo client and a real ZooKeeper answer to an op script.

    python3 scripts/record-kazoo.py HOST:PORT CASE.json > conformance/expected/kazoo/CASE.json

Used only to record expected outputs (conformance/FORMAT.md); `zklab zk-script --client kazoo`
must then give the same answers. Needs kazoo (Debian: python3-kazoo) and a standalone server
that allows four-letter words, as scripts/conformance.sh starts one. Like zklab's live runner it
deletes every top-level node but /zookeeper and runs chrooted under a fresh /zklab.

Each session talks to the server through a TCP proxy of its own, so `disconnect` can cut its
connection (and refuse new ones) and `reconnect` can let it back in; `expire` cuts the
connection, has a second client take the session over and close it, and lets the first client
back in to learn it expired.

What is recorded, and why it is not everything kazoo does:
- Every watcher callback, grouped into one event per WatchedEvent kazoo hands out, with `via`
  naming the ops whose watchers got it. kazoo's CONNECTING is written "Disconnected" and
  CONNECTED "SyncConnected" (ZooKeeper's names for them).
- A close or an expiry is written once per session as {"state": "Closed"|"Expired"}. The
  Disconnected kazoo hands every watcher when the connection an expiry cuts goes is listed (the
  connection always goes first); the state events of the end itself are not (every recording
  does the same).
- After an expiry kazoo opens a new session by itself; the recorder stops the client instead,
  and answers a later request of the expired handle SessionExpired itself, as a closed handle
  answers ConnectionClosed.
"""

import json
import logging
import socket
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import Create2
from kazoo.security import OPEN_ACL_UNSAFE
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import Callback, EventType, KazooState, KeeperState
from kazoo.retry import KazooRetry

ROOT = "/zklab"
PATIENCE = 10.0

EVENT_NAMES = {
    EventType.CREATED: "NodeCreated",
    EventType.DELETED: "NodeDeleted",
    EventType.CHANGED: "NodeDataChanged",
    EventType.CHILD: "NodeChildrenChanged",
}
STATE_NAMES = {KeeperState.CONNECTING: "Disconnected", KeeperState.CONNECTED: "SyncConnected"}


class ScriptError(Exception):
    pass


def four_letter_word(server, word):
    host, port = server.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(word.encode())
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode()


def session_id(text):
    if not text.startswith("0x"):
        return None
    try:
        value = int(text[2:], 16)
    except ValueError:
        return None
    return value - (1 << 64) if value >= 1 << 63 else value


def per_session(answer, start=None):
    """`wchc` and `dump` list a session id, then its paths indented by a tab."""
    out, current = {}, None
    lines = answer.splitlines()
    if start is not None:
        lines = lines[next((i for i, l in enumerate(lines) if l.startswith(start)), len(lines)) + 1:]
    for line in lines:
        if line.startswith("\t"):
            if current is not None:
                out.setdefault(current, []).append(line[1:])
        else:
            current = session_id(line.strip().rstrip(":"))
            if start is not None and current is None:
                break
    return out


def connections(server):
    """Session id -> negotiated timeout, for every session with a connection (`cons`)."""
    out = {}
    for line in four_letter_word(server, "cons").splitlines():
        fields = dict(f.split("=", 1) for f in line[line.find("(") + 1:line.rfind(")")].split(",") if "=" in f)
        if "sid" in fields:
            out[session_id(fields["sid"])] = int(fields.get("to", "0"))
    return out


def unrooted(path):
    if path == ROOT:
        return "/"
    if path.startswith(ROOT + "/"):
        return path[len(ROOT):]
    return None


def wait_for(what, condition, patience=PATIENCE):
    deadline = time.monotonic() + patience
    while not condition():
        if time.monotonic() > deadline:
            raise ScriptError("timed out waiting for " + what)
        time.sleep(0.005)


class Proxy:
    """A TCP proxy in front of the server for one session that can be cut and restored."""

    def __init__(self, server):
        host, port = server.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.passing = True
        self.pairs = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if not self.passing:
                    conn.close()
                    continue
                try:
                    up = socket.create_connection(self.upstream)
                except OSError:
                    conn.close()
                    continue
                self.pairs.append((conn, up))
            threading.Thread(target=self._pump, args=(conn, up), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, conn), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            self.passing = False
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def restore(self):
        with self.lock:
            self.passing = True

    def close(self):
        self.cut()
        self.listener.close()


class Session:
    def __init__(self, name, client, proxy):
        self.name = name
        self.client = client
        self.proxy = proxy
        self.handle = "connected"
        self.id, self.password = client.client_id
        self.states = []  # KazooState changes, in order
        self.received = []  # (WatchedEvent, via)
        self.lock = threading.Lock()
        client.add_listener(self._state_changed)

    def _state_changed(self, state):
        with self.lock:
            self.states.append(state)

    def watcher(self, via):
        def watch(event):
            with self.lock:
                self.received.append((event, via))

        return watch

    def state_count(self):
        with self.lock:
            return len(self.states)

    def states_since(self, mark):
        with self.lock:
            return self.states[mark:]

    def flush(self):
        """Runs every watcher callback kazoo has queued (its callback queue is FIFO)."""
        if self.client._stopped.is_set():
            return
        done = threading.Event()
        self.client.handler.dispatch_callback(Callback("watch", lambda: done.set(), ()))
        if not done.wait(PATIENCE):
            raise ScriptError("session %s: watcher callbacks did not run" % self.name)


class Recorder:
    def __init__(self, server):
        self.server = server
        self.sessions = {}
        self.names = {}
        self.inbox = {}

    def prepare(self):
        cleaner = KazooClient(hosts=self.server, timeout=4)
        cleaner.start(timeout=PATIENCE)
        for child in cleaner.get_children("/"):
            if child != "zookeeper":
                cleaner.delete("/" + child, recursive=True)
        cleaner.create(ROOT, b"")
        cleaner.stop()
        cleaner.close()

    def run(self, script):
        results = []
        try:
            for i, op in enumerate(script["ops"]):
                results.append(self.op(i, op))
        finally:
            self.finish()
        return {"case": script["name"], "results": results}

    def op(self, i, op):
        kind = op["op"]
        result = {"i": i, "op": kind, "ok": True}
        for field in ("s", "path"):
            if field in op:
                result[field] = op[field]
        if kind == "open":
            self.open(op, result)
        elif kind == "sleep":
            time.sleep(op.get("ms", 0) / 1000.0)
        elif kind == "server_watches":
            watches = per_session(four_letter_word(self.server, "wchc"))
            result["data_watches"] = self.by_session(watches)
            mntr = four_letter_word(self.server, "mntr")
            result["total_watches"] = next(
                int(l.split()[1]) for l in mntr.splitlines() if l.startswith("zk_watch_count"))
        elif kind == "server_ephemerals":
            dump = four_letter_word(self.server, "dump")
            result["ephemerals"] = self.by_session(per_session(dump, "Sessions with Ephemerals"))
        else:
            self.session_op(i, kind, op, result)
        return result

    def open(self, op, result):
        # `jute_maxbuffer` is the Java client's setting: kazoo reads replies of any length.
        name = op["s"]
        proxy = Proxy(self.server)
        retry = KazooRetry(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.3, max_jitter=0)
        client = KazooClient(hosts=proxy.address + ROOT, timeout=op.get("timeout_ms", 4000) / 1000.0,
                             connection_retry=retry)
        client.start(timeout=PATIENCE)
        session = Session(name, client, proxy)
        self.sessions[name] = session
        self.names[session.id] = name
        result["negotiated_timeout_ms"] = connections(self.server)[session.id]

    def session_op(self, i, kind, op, result):
        name = op["s"]
        session = self.sessions[name]
        handle = session.handle
        if kind == "events":
            if handle == "connected":
                session.client.exists("/")
            session.flush()
            result["events"] = self.take_events(session)
        elif kind == "state":
            result["state"] = handle
        elif kind == "disconnect":
            self.disconnect(session)
            session.handle = "disconnected"
        elif kind == "reconnect":
            self.reconnect(session)
        elif kind == "expire" and handle == "disconnected":
            self.take_over_and_close(session)
        elif handle == "disconnected":
            raise ScriptError("op %d: %s on session %s while it is disconnected" % (i, kind, name))
        elif handle == "closed":
            result.update(ok=False, err="ConnectionClosed")
        elif handle == "expired":
            result.update(ok=False, err="SessionExpired")
        elif kind == "close":
            session.client.stop()
            session.client.close()
            self.wait_unconnected(session)
            self.ended(session, "Closed", len(session.received))
        elif kind == "expire":
            # The connection goes first (its watchers hear Disconnected), then the session is
            # expired, and the client learns it on reconnecting.
            self.disconnect(session)
            self.take_over_and_close(session)
            self.reconnect(session)
        else:
            self.request(i, kind, op, session, result)

    def disconnect(self, session):
        mark = session.state_count()
        session.proxy.cut()
        wait_for("session %s to see its connection go" % session.name,
                 lambda: KazooState.SUSPENDED in session.states_since(mark))
        self.wait_unconnected(session)
        session.flush()

    def wait_unconnected(self, session):
        wait_for("the server to drop session %s's connection" % session.name,
                 lambda: session.id not in connections(self.server))

    def take_over_and_close(self, session):
        thief = KazooClient(hosts=self.server + ROOT, timeout=4, client_id=(session.id, session.password))
        thief.start(timeout=PATIENCE)
        thief.stop()
        thief.close()

    def reconnect(self, session):
        mark = session.state_count()
        with session.lock:
            events_mark = len(session.received)
        session.proxy.restore()
        wait_for("session %s to reconnect" % session.name,
                 lambda: any(s in (KazooState.CONNECTED, KazooState.LOST) for s in session.states_since(mark)))
        if KazooState.LOST in session.states_since(mark):
            # The watchers' own state events on the way to Expired are the expiry's.
            self.ended(session, "Expired", events_mark)
        else:
            session.handle = "connected"
            session.client.exists("/")
            session.flush()

    def ended(self, session, state, mark):
        """The session closed or expired: stop its client (kazoo would open a new session after
        an expiry) and report the end once, without the watchers' state events from `mark` on."""
        session.flush()
        session.client.stop()
        session.client.close()
        session.handle = state.lower()
        with session.lock:
            session.received = session.received[:mark] + [
                (e, v) for e, v in session.received[mark:] if e.type != EventType.NONE]
        # In arrival order: what the watchers heard before the end, then the end.
        self.inbox.setdefault(session.name, []).extend(self.drain(session))
        self.inbox[session.name].append({"state": state})

    def take_events(self, session):
        return self.inbox.pop(session.name, []) + self.drain(session)

    def drain(self, session):
        """The watcher callbacks received since the last drain, one entry per WatchedEvent."""
        with session.lock:
            received, session.received = session.received, []
        grouped = []
        for event, via in received:
            for group in grouped:
                if group[0] is event:
                    group[1].append(via)
                    break
            else:
                grouped.append((event, [via]))
        out = []
        for event, via in grouped:
            via.sort(key=lambda v: int(v.split(":")[0]))
            if event.type == EventType.NONE:
                if event.state in STATE_NAMES:
                    out.append({"type": "None", "state": STATE_NAMES[event.state], "via": via})
            else:
                out.append({"type": EVENT_NAMES[event.type], "path": event.path, "via": via})
        return out

    def stat(self, stat):
        owner = stat.ephemeralOwner
        owner = self.names.get(owner, hex(owner)) if owner else 0
        return {"version": stat.version, "cversion": stat.cversion, "aversion": stat.aversion,
                "dataLength": stat.dataLength, "numChildren": stat.numChildren, "ephemeralOwner": owner}

    def request(self, i, kind, op, session, result):
        client = session.client
        path = op.get("path")
        watch = session.watcher("%d:%s" % (i, kind)) if op.get("watch") else None
        try:
            if kind == "create" and op.get("mode") == "container":
                # kazoo 2.8 has no container mode: its own create2 request with the container
                # flag (4), which a server reads as the mode whatever the op code.
                request = Create2(_prefix_root(client.chroot, path), op.get("data", "").encode(),
                                  OPEN_ACL_UNSAFE, 4)
                answer = client.handler.async_result()
                client._call(request, answer)
                created, stat = answer.get()
                if op.get("stat"):
                    result["stat"] = self.stat(stat)
                result["created"] = client.unchroot(created)
            elif kind == "create":
                mode = op.get("mode", "persistent")
                created = client.create(path, op.get("data", "").encode(), ephemeral="ephemeral" in mode,
                                        sequence="sequential" in mode, include_data=bool(op.get("stat")))
                if op.get("stat"):
                    created, stat = created
                    result["stat"] = self.stat(stat)
                result["created"] = created
            elif kind == "delete":
                client.delete(path, version=op.get("version", -1))
            elif kind == "exists":
                stat = client.exists(path, watch=watch)
                result["stat"] = self.stat(stat) if stat else None
            elif kind == "get_data":
                data, stat = client.get(path, watch=watch)
                result["data"] = data.decode()
                result["stat"] = self.stat(stat)
            elif kind == "set_data":
                result["stat"] = self.stat(client.set(path, op.get("data", "").encode(), op.get("version", -1)))
            elif kind == "get_children":
                children = client.get_children(path, watch=watch, include_data=bool(op.get("stat")))
                if op.get("stat"):
                    children, stat = children
                    result["stat"] = self.stat(stat)
                result["raw"] = list(children)
                result["children"] = sorted(children)
                result["raw_sorted"] = result["raw"] == result["children"]
            elif kind == "sync":
                client.sync(path)
            elif kind == "multi":
                result["results"] = self.multi(i, client, op["ops"])
            else:
                raise ScriptError("op %d: unknown op `%s`" % (i, kind))
        except KazooException as e:
            name = type(e).__name__
            result.update(ok=False, err=name[:-len("Error")] if name.endswith("Error") else name)

    def multi(self, i, client, ops):
        """A transaction of the ops; a failed one raises the error of the op that failed it
        (kazoo gives every op its result: the failed op's error, RolledBackError for the rest)."""
        t = client.transaction()
        for o in ops:
            data = o.get("data", "").encode()
            version = o.get("version", -1)
            if o["op"] == "create":
                mode = o.get("mode", "persistent")
                t.create(o["path"], data, ephemeral="ephemeral" in mode, sequence="sequential" in mode)
            elif o["op"] == "delete":
                t.delete(o["path"], version)
            elif o["op"] == "set_data":
                t.set_data(o["path"], data, version)
            elif o["op"] == "check":
                t.check(o["path"], version)
            else:
                raise ScriptError("op %d: unknown multi op `%s`" % (i, o["op"]))
        results = t.commit()
        failed = [r for r in results if isinstance(r, Exception) and type(r).__name__ != "RolledBackError"]
        if failed:
            raise failed[0]
        out = []
        for o, r in zip(ops, results):
            if o["op"] == "create":
                out.append({"created": r})
            elif o["op"] == "set_data":
                out.append({"stat": self.stat(r)})
            else:
                out.append({})
        return out

    def by_session(self, raw):
        out = {}
        for sid, paths in raw.items():
            paths = sorted(p for p in (unrooted(p) for p in paths) if p is not None)
            if paths:
                out[self.names.get(sid, hex(sid))] = paths
        return out

    def finish(self):
        for session in self.sessions.values():
            if not session.client._stopped.is_set():
                session.client.stop()
                session.client.close()
            session.proxy.close()


def main():
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    if len(sys.argv) != 3:
        sys.exit("usage: record-kazoo.py HOST:PORT CASE.json")
    server, case = sys.argv[1], sys.argv[2]
    with open(case) as f:
        script = json.load(f)
    recorder = Recorder(server)
    try:
        recorder.prepare()
        recording = recorder.run(script)
    except (ScriptError, NoNodeError, OSError) as e:
        sys.exit("record-kazoo: %s: %s" % (case, e))
    lines = [json.dumps(r, sort_keys=True) for r in recording["results"]]
    print('{"case": %s,\n "results": [\n  %s\n ]}' % (json.dumps(recording["case"]), ",\n  ".join(lines)))


if __name__ == "__main__":
    main()

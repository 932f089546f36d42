// Records what the real Java ZooKeeper client and a real ZooKeeper answer to an op script.
//
//     java -cp zookeeper.jar scripts/RecordJava.java HOST:PORT CASE.json > conformance/expected/java/CASE.json
//
// Used only to record expected outputs (conformance/FORMAT.md); `zklab zk-script --client java`
// must then give the same answers. zookeeper.jar is Debian's (its manifest names the jars it
// needs, Jackson among them, which this file uses for JSON). The server must allow four-letter
// words, as the one scripts/conformance.sh starts does. Like zklab's live runner it deletes every
// top-level node but /zookeeper and runs chrooted under a fresh /zklab.
//
// Each session talks to the server through a TCP proxy of its own, so `disconnect` can cut its
// connection (and refuse new ones) and `reconnect` can let it back in; `expire` cuts the
// connection, has a second client take the session over and close it, and lets the first client
// back in to learn it expired.
//
// What is recorded: every watcher's process() call, grouped into one event per WatchedEvent the
// client hands out, with `via` naming the ops whose watchers got it. A close or an expiry is
// written once per session as {"state": "Closed"|"Expired"}; the Disconnected the client hands
// every watcher when the connection an expiry cuts goes is listed (the connection always goes
// first), the state events of the end itself (Expired, Closed) are not, as in every recording.
// A closed handle's requests are answered
// ConnectionClosed by the recorder (as kazoo's closed handle answers), without asking the client.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ZKConfig;
import org.apache.zookeeper.data.Stat;

public class RecordJava {
    static final String ROOT = "/zklab";
    static final long PATIENCE_MS = 10_000;

    static class ScriptError extends Exception {
        ScriptError(String message) { super(message); }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: RecordJava.java HOST:PORT CASE.json");
            System.exit(2);
        }
        JsonNode script = new ObjectMapper().readTree(new File(args[1]));
        Recorder recorder = new Recorder(args[0]);
        Map<String, Object> recording;
        try {
            recorder.prepare();
            recording = recorder.run(script);
        } catch (ScriptError | IOException | KeeperException | InterruptedException e) {
            System.err.println("record-java: " + args[1] + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        StringBuilder out = new StringBuilder("{\"case\": " + json(recording.get("case")) + ",\n \"results\": [\n");
        List<?> results = (List<?>) recording.get("results");
        for (int i = 0; i < results.size(); i++) {
            out.append("  ").append(json(results.get(i))).append(i + 1 < results.size() ? ",\n" : "\n");
        }
        System.out.print(out.append(" ]}\n"));
        System.exit(0);
    }

    /** JSON as Python's json.dumps(sort_keys=True) writes it, like the other recordings. */
    static String json(Object value) {
        if (value == null) return "null";
        if (value instanceof String s) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') b.append('\\').append(c);
                else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
            return b.append('"').toString();
        }
        if (value instanceof Map<?, ?> m) {
            StringJoiner j = new StringJoiner(", ", "{", "}");
            new TreeMap<>(m).forEach((k, v) -> j.add(json(k) + ": " + json(v)));
            return j.toString();
        }
        if (value instanceof List<?> l) {
            StringJoiner j = new StringJoiner(", ", "[", "]");
            l.forEach(v -> j.add(json(v)));
            return j.toString();
        }
        return value.toString();
    }

    static String ask(String server, String word) throws IOException {
        String[] hp = server.split(":");
        try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static Long sessionId(String text) {
        if (!text.startsWith("0x")) return null;
        try {
            return Long.parseUnsignedLong(text.substring(2), 16);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** `wchc` and `dump` list a session id, then its paths indented by a tab. */
    static Map<Long, List<String>> perSession(String answer, String start) {
        Map<Long, List<String>> out = new TreeMap<>();
        List<String> lines = Arrays.asList(answer.split("\n"));
        if (start != null) {
            int at = 0;
            while (at < lines.size() && !lines.get(at).startsWith(start)) at++;
            lines = lines.subList(Math.min(at + 1, lines.size()), lines.size());
        }
        Long current = null;
        for (String line : lines) {
            if (line.startsWith("\t")) {
                if (current != null) out.computeIfAbsent(current, k -> new ArrayList<>()).add(line.substring(1));
            } else {
                current = sessionId(line.trim().replaceAll(":$", ""));
                if (start != null && current == null) break;
            }
        }
        return out;
    }

    /** The sessions that still have a connection (`cons`). */
    static Set<Long> connected(String server) throws IOException {
        Set<Long> out = new HashSet<>();
        for (String line : ask(server, "cons").split("\n")) {
            int at = line.indexOf("sid=");
            if (at < 0) continue;
            String rest = line.substring(at + 4);
            int end = rest.indexOf(',') >= 0 ? rest.indexOf(',') : rest.indexOf(')');
            Long id = sessionId(end >= 0 ? rest.substring(0, end) : rest);
            if (id != null) out.add(id);
        }
        return out;
    }

    static String unrooted(String path) {
        if (path.equals(ROOT)) return "/";
        if (path.startsWith(ROOT + "/")) return path.substring(ROOT.length());
        return null;
    }

    interface Check {
        boolean holds() throws Exception;
    }

    static void waitFor(String what, Check check) throws ScriptError {
        long deadline = System.currentTimeMillis() + PATIENCE_MS;
        try {
            while (!check.holds()) {
                if (System.currentTimeMillis() > deadline) throw new ScriptError("timed out waiting for " + what);
                Thread.sleep(5);
            }
        } catch (ScriptError e) {
            throw e;
        } catch (Exception e) {
            throw new ScriptError(what + ": " + e);
        }
    }

    /** A TCP proxy in front of the server for one session that can be cut and restored. */
    static class Proxy {
        final InetSocketAddress upstream;
        final ServerSocket listener;
        final List<Socket> sockets = new ArrayList<>();
        boolean passing = true;

        Proxy(String server) throws IOException {
            String[] hp = server.split(":");
            upstream = new InetSocketAddress(hp[0], Integer.parseInt(hp[1]));
            listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
            Thread t = new Thread(this::accept);
            t.setDaemon(true);
            t.start();
        }

        String address() {
            return "127.0.0.1:" + listener.getLocalPort();
        }

        void accept() {
            while (true) {
                Socket conn;
                try {
                    conn = listener.accept();
                } catch (IOException e) {
                    return;
                }
                synchronized (this) {
                    try {
                        if (!passing) {
                            conn.close();
                            continue;
                        }
                        Socket up = new Socket(upstream.getAddress(), upstream.getPort());
                        sockets.add(conn);
                        sockets.add(up);
                        pump(conn, up);
                        pump(up, conn);
                    } catch (IOException e) {
                        closeQuietly(conn);
                    }
                }
            }
        }

        static void pump(Socket from, Socket to) {
            Thread t = new Thread(() -> {
                try {
                    from.getInputStream().transferTo(to.getOutputStream());
                } catch (IOException e) {
                    // the other side went away
                }
                closeQuietly(from);
                closeQuietly(to);
            });
            t.setDaemon(true);
            t.start();
        }

        static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                // already closed
            }
        }

        synchronized void cut() {
            passing = false;
            sockets.forEach(Proxy::closeQuietly);
            sockets.clear();
        }

        synchronized void restore() {
            passing = true;
        }

        void close() {
            cut();
            try {
                listener.close();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    record Received(WatchedEvent event, String via) {}

    static class Session {
        final String name;
        final Proxy proxy;
        final List<KeeperState> states = new ArrayList<>();
        final List<Received> received = new ArrayList<>();
        ZooKeeper zk;
        String handle = "connected";
        long id;
        byte[] password;
        long lastEvent = System.nanoTime();

        Session(String name, Proxy proxy) {
            this.name = name;
            this.proxy = proxy;
        }

        synchronized void state(KeeperState state) {
            states.add(state);
            lastEvent = System.nanoTime();
        }

        synchronized int stateCount() {
            return states.size();
        }

        synchronized boolean sawSince(int mark, KeeperState... wanted) {
            for (KeeperState s : states.subList(mark, states.size())) {
                if (Arrays.asList(wanted).contains(s)) return true;
            }
            return false;
        }

        Watcher watcher(String via) {
            return event -> {
                synchronized (this) {
                    received.add(new Received(event, via));
                    lastEvent = System.nanoTime();
                }
            };
        }

        /** A round trip through the client's event thread: every event queued before has been handed out. */
        void flush() throws ScriptError {
            CountDownLatch done = new CountDownLatch(1);
            zk.exists("/", false, (rc, path, ctx, stat) -> done.countDown(), null);
            try {
                if (!done.await(PATIENCE_MS, TimeUnit.MILLISECONDS)) throw new ScriptError("session " + name + ": no answer");
            } catch (InterruptedException e) {
                throw new ScriptError("interrupted");
            }
        }

        /** While disconnected nothing can go through the client: wait until its event thread has been quiet a while. */
        void settle() throws ScriptError {
            waitFor("session " + name + "'s events to settle", () -> {
                synchronized (this) {
                    return System.nanoTime() - lastEvent > 200_000_000L;
                }
            });
        }
    }

    static class Recorder {
        final String server;
        final Map<String, Session> sessions = new TreeMap<>();
        final Map<Long, String> names = new HashMap<>();
        final Map<String, List<Object>> inbox = new HashMap<>();

        Recorder(String server) {
            this.server = server;
        }

        ZooKeeper connect(String address, int timeoutMs, Watcher watcher, long id, byte[] password)
                throws IOException, ScriptError {
            return connect(address, timeoutMs, watcher, id, password, new ZKClientConfig());
        }

        /** `config` is for a new session's client (taking a session over uses the defaults). */
        ZooKeeper connect(String address, int timeoutMs, Watcher watcher, long id, byte[] password, ZKClientConfig config)
                throws IOException, ScriptError {
            CountDownLatch up = new CountDownLatch(1);
            Watcher counting = event -> {
                if (event.getState() == KeeperState.SyncConnected) up.countDown();
                if (watcher != null) watcher.process(event);
            };
            ZooKeeper zk = password == null
                    ? new ZooKeeper(address, timeoutMs, counting, config)
                    : new ZooKeeper(address, timeoutMs, counting, id, password);
            try {
                if (!up.await(PATIENCE_MS, TimeUnit.MILLISECONDS)) throw new ScriptError("cannot connect to " + address);
            } catch (InterruptedException e) {
                throw new ScriptError("interrupted");
            }
            return zk;
        }

        void prepare() throws IOException, ScriptError, KeeperException, InterruptedException {
            ZooKeeper cleaner = connect(server, 4000, null, 0, null);
            for (String child : cleaner.getChildren("/", false)) {
                if (!child.equals("zookeeper")) ZKUtil.deleteRecursive(cleaner, "/" + child);
            }
            cleaner.create(ROOT, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            cleaner.close();
        }

        Map<String, Object> run(JsonNode script) throws ScriptError, IOException, InterruptedException {
            List<Object> results = new ArrayList<>();
            try {
                int i = 0;
                for (JsonNode op : script.get("ops")) results.add(op(i++, op));
            } finally {
                for (Session s : sessions.values()) {
                    s.zk.close();
                    s.proxy.close();
                }
            }
            Map<String, Object> out = new HashMap<>();
            out.put("case", script.get("name").asText());
            out.put("results", results);
            return out;
        }

        Map<String, Object> op(int i, JsonNode op) throws ScriptError, IOException, InterruptedException {
            String kind = op.get("op").asText();
            Map<String, Object> result = new TreeMap<>();
            result.put("i", i);
            result.put("op", kind);
            result.put("ok", true);
            if (op.has("s")) result.put("s", op.get("s").asText());
            if (op.has("path")) result.put("path", op.get("path").asText());
            switch (kind) {
                case "open" -> open(op, result);
                case "sleep" -> Thread.sleep(op.path("ms").asLong(0));
                case "server_watches" -> {
                    result.put("data_watches", bySession(perSession(ask(server, "wchc"), null)));
                    for (String line : ask(server, "mntr").split("\n")) {
                        if (line.startsWith("zk_watch_count")) result.put("total_watches", Integer.parseInt(line.split("\\s+")[1]));
                    }
                }
                case "server_ephemerals" ->
                    result.put("ephemerals", bySession(perSession(ask(server, "dump"), "Sessions with Ephemerals")));
                default -> sessionOp(i, kind, op, result);
            }
            return result;
        }

        void open(JsonNode op, Map<String, Object> result) throws IOException, ScriptError {
            String name = op.get("s").asText();
            Session session = new Session(name, new Proxy(server));
            // `jute_maxbuffer`: the client's own limit on a reply's length (ZKClientConfig).
            ZKClientConfig config = new ZKClientConfig();
            if (op.has("jute_maxbuffer")) config.setProperty(ZKConfig.JUTE_MAXBUFFER, op.get("jute_maxbuffer").asText());
            session.zk = connect(session.proxy.address() + ROOT, op.path("timeout_ms").asInt(4000), event -> {
                if (event.getType() == EventType.None) session.state(event.getState());
            }, 0, null, config);
            session.id = session.zk.getSessionId();
            session.password = session.zk.getSessionPasswd();
            sessions.put(name, session);
            names.put(session.id, name);
            result.put("negotiated_timeout_ms", session.zk.getSessionTimeout());
        }

        void sessionOp(int i, String kind, JsonNode op, Map<String, Object> result)
                throws ScriptError, IOException, InterruptedException {
            String name = op.get("s").asText();
            Session session = sessions.get(name);
            String handle = session.handle;
            if (kind.equals("events")) {
                if (handle.equals("connected")) session.flush();
                result.put("events", takeEvents(session));
            } else if (kind.equals("state")) {
                result.put("state", handle);
            } else if (kind.equals("disconnect")) {
                disconnect(session);
                session.handle = "disconnected";
            } else if (kind.equals("reconnect")) {
                reconnect(session);
            } else if (kind.equals("expire") && handle.equals("disconnected")) {
                takeOverAndClose(session);
            } else if (handle.equals("disconnected")) {
                throw new ScriptError("op " + i + ": " + kind + " on session " + name + " while it is disconnected");
            } else if (handle.equals("closed")) {
                result.put("ok", false);
                result.put("err", "ConnectionClosed");
            } else if (handle.equals("expired") && (kind.equals("close") || kind.equals("expire"))) {
                result.put("ok", false);
                result.put("err", "SessionExpired");
            } else if (kind.equals("close")) {
                int mark = session.received.size();
                session.zk.close();
                waitUnconnected(session);
                session.settle();
                ended(session, "Closed", mark);
            } else if (kind.equals("expire")) {
                // The connection goes first (its watchers hear Disconnected), then the session
                // is expired, and the client learns it on reconnecting.
                disconnect(session);
                takeOverAndClose(session);
                reconnect(session);
            } else {
                request(i, kind, op, session, result);
            }
        }

        void disconnect(Session session) throws ScriptError {
            int mark = session.stateCount();
            session.proxy.cut();
            waitFor("session " + session.name + " to see its connection go",
                    () -> session.sawSince(mark, KeeperState.Disconnected));
            waitUnconnected(session);
            session.settle();
        }

        void waitUnconnected(Session session) throws ScriptError {
            waitFor("the server to drop session " + session.name + "'s connection",
                    () -> !connected(server).contains(session.id));
        }

        void takeOverAndClose(Session session) throws IOException, ScriptError, InterruptedException {
            ZooKeeper thief = connect(server + ROOT, 4000, null, session.id, session.password);
            thief.close();
        }

        void reconnect(Session session) throws ScriptError {
            int mark = session.stateCount();
            int eventsMark;
            synchronized (session) {
                eventsMark = session.received.size();
            }
            session.proxy.restore();
            waitFor("session " + session.name + " to reconnect",
                    () -> session.sawSince(mark, KeeperState.SyncConnected, KeeperState.Expired));
            if (session.sawSince(mark, KeeperState.Expired)) {
                session.settle();
                ended(session, "Expired", eventsMark);
            } else {
                session.handle = "connected";
                session.flush();
            }
        }

        /** The session closed or expired: its end is reported once, without the watchers' state events from `mark` on. */
        void ended(Session session, String state, int mark) {
            synchronized (session) {
                List<Received> kept = new ArrayList<>(session.received.subList(0, Math.min(mark, session.received.size())));
                for (Received r : session.received.subList(Math.min(mark, session.received.size()), session.received.size())) {
                    if (r.event().getType() != EventType.None) kept.add(r);
                }
                session.received.clear();
                session.received.addAll(kept);
            }
            session.handle = state.toLowerCase();
            // In arrival order: what the watchers heard before the end, then the end.
            List<Object> inbox = this.inbox.computeIfAbsent(session.name, k -> new ArrayList<>());
            inbox.addAll(drain(session));
            inbox.add(Map.of("state", state));
        }

        List<Object> takeEvents(Session session) {
            List<Object> out = new ArrayList<>(inbox.getOrDefault(session.name, List.of()));
            inbox.remove(session.name);
            out.addAll(drain(session));
            return out;
        }

        /** The watcher calls received since the last drain, one entry per WatchedEvent. */
        List<Object> drain(Session session) {
            List<Received> received;
            synchronized (session) {
                received = new ArrayList<>(session.received);
                session.received.clear();
            }
            List<WatchedEvent> events = new ArrayList<>();
            Map<WatchedEvent, List<String>> via = new IdentityHashMap<>();
            for (Received r : received) {
                if (!via.containsKey(r.event())) events.add(r.event());
                via.computeIfAbsent(r.event(), k -> new ArrayList<>()).add(r.via());
            }
            List<Object> out = new ArrayList<>();
            for (WatchedEvent event : events) {
                List<String> ops = via.get(event);
                ops.sort(Comparator.comparingInt(v -> Integer.parseInt(v.split(":")[0])));
                Map<String, Object> e = new TreeMap<>();
                e.put("via", ops);
                if (event.getType() == EventType.None) {
                    e.put("type", "None");
                    e.put("state", event.getState().toString());
                } else {
                    e.put("type", event.getType().toString());
                    e.put("path", event.getPath());
                }
                out.add(e);
            }
            return out;
        }

        Object stat(Stat stat) {
            Map<String, Object> s = new TreeMap<>();
            s.put("version", stat.getVersion());
            s.put("cversion", stat.getCversion());
            s.put("aversion", stat.getAversion());
            s.put("dataLength", stat.getDataLength());
            s.put("numChildren", stat.getNumChildren());
            long owner = stat.getEphemeralOwner();
            s.put("ephemeralOwner", owner == 0 ? (Object) 0 : names.getOrDefault(owner, "0x" + Long.toHexString(owner)));
            return s;
        }

        void request(int i, String kind, JsonNode op, Session session, Map<String, Object> result)
                throws ScriptError, InterruptedException {
            ZooKeeper zk = session.zk;
            String path = op.path("path").asText("");
            Watcher watch = op.path("watch").asBoolean(false) ? session.watcher(i + ":" + kind) : null;
            byte[] data = op.path("data").asText("").getBytes(StandardCharsets.UTF_8);
            int version = op.path("version").asInt(-1);
            boolean wantsStat = op.path("stat").asBoolean(false);
            try {
                switch (kind) {
                    case "create" -> {
                        CreateMode mode = switch (op.path("mode").asText("persistent")) {
                            case "ephemeral" -> CreateMode.EPHEMERAL;
                            case "persistent_sequential" -> CreateMode.PERSISTENT_SEQUENTIAL;
                            case "ephemeral_sequential" -> CreateMode.EPHEMERAL_SEQUENTIAL;
                            case "container" -> CreateMode.CONTAINER;
                            default -> CreateMode.PERSISTENT;
                        };
                        Stat stat = new Stat();
                        result.put("created", zk.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, mode, stat));
                        if (wantsStat) result.put("stat", stat(stat));
                    }
                    case "delete" -> zk.delete(path, version);
                    case "exists" -> {
                        Stat stat = watch != null ? zk.exists(path, watch) : zk.exists(path, false);
                        result.put("stat", stat == null ? null : stat(stat));
                    }
                    case "get_data" -> {
                        Stat stat = new Stat();
                        byte[] got = watch != null ? zk.getData(path, watch, stat) : zk.getData(path, false, stat);
                        result.put("data", new String(got == null ? new byte[0] : got, StandardCharsets.UTF_8));
                        result.put("stat", stat(stat));
                    }
                    case "set_data" -> result.put("stat", stat(zk.setData(path, data, version)));
                    case "get_children" -> {
                        // Without `stat` the plain getChildren (names only, as recipes call it);
                        // with it getChildren2, whose reply carries the parent's Stat too.
                        Stat stat = new Stat();
                        List<String> raw = wantsStat
                                ? (watch != null ? zk.getChildren(path, watch, stat) : zk.getChildren(path, false, stat))
                                : (watch != null ? zk.getChildren(path, watch) : zk.getChildren(path, false));
                        List<String> sorted = new ArrayList<>(raw);
                        Collections.sort(sorted);
                        result.put("raw", raw);
                        result.put("children", sorted);
                        result.put("raw_sorted", raw.equals(sorted));
                        if (wantsStat) result.put("stat", stat(stat));
                    }
                    case "sync" -> {
                        // 3.8's sync is asynchronous only: wait for its callback.
                        CompletableFuture<Integer> done = new CompletableFuture<>();
                        zk.sync(path, (rc, p, ctx) -> done.complete(rc), null);
                        int rc;
                        try {
                            rc = done.get(PATIENCE_MS, TimeUnit.MILLISECONDS);
                        } catch (ExecutionException | TimeoutException e) {
                            throw new ScriptError("op " + i + ": sync did not complete: " + e);
                        }
                        if (rc != 0) throw KeeperException.create(KeeperException.Code.get(rc), path);
                    }
                    case "multi" -> result.put("results", multi(i, zk, op.get("ops")));
                    default -> throw new ScriptError("op " + i + ": unknown op `" + kind + "`");
                }
            } catch (KeeperException e) {
                String name = e.getClass().getSimpleName();
                result.put("ok", false);
                result.put("err", name.endsWith("Exception") ? name.substring(0, name.length() - "Exception".length()) : name);
            } catch (IllegalArgumentException e) {
                result.put("ok", false);
                result.put("err", "BadArguments");
            }
        }

        /** A multi of the ops: a failed one throws the exception of the op that failed it. */
        List<Object> multi(int i, ZooKeeper zk, JsonNode ops) throws ScriptError, KeeperException, InterruptedException {
            List<Op> list = new ArrayList<>();
            for (JsonNode o : ops) {
                String path = o.path("path").asText("");
                byte[] data = o.path("data").asText("").getBytes(StandardCharsets.UTF_8);
                int version = o.path("version").asInt(-1);
                list.add(switch (o.path("op").asText()) {
                    case "create" -> Op.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, switch (o.path("mode").asText("persistent")) {
                        case "ephemeral" -> CreateMode.EPHEMERAL;
                        case "persistent_sequential" -> CreateMode.PERSISTENT_SEQUENTIAL;
                        case "ephemeral_sequential" -> CreateMode.EPHEMERAL_SEQUENTIAL;
                        case "container" -> CreateMode.CONTAINER;
                        default -> CreateMode.PERSISTENT;
                    });
                    case "delete" -> Op.delete(path, version);
                    case "set_data" -> Op.setData(path, data, version);
                    case "check" -> Op.check(path, version);
                    default -> throw new ScriptError("op " + i + ": unknown multi op `" + o.path("op").asText() + "`");
                });
            }
            List<Object> out = new ArrayList<>();
            for (OpResult r : zk.multi(list)) {
                Map<String, Object> one = new TreeMap<>();
                // The Java client leaves its chroot on the paths of a multi's creates (3.8, on a
                // real server too); the recorder takes it off, as the client does for a create.
                if (r instanceof OpResult.CreateResult c) {
                    String created = c.getPath();
                    one.put("created", created.startsWith(ROOT + "/") ? created.substring(ROOT.length()) : created);
                }
                if (r instanceof OpResult.SetDataResult d) one.put("stat", stat(d.getStat()));
                out.add(one);
            }
            return out;
        }

        Map<String, Object> bySession(Map<Long, List<String>> raw) {
            Map<String, Object> out = new TreeMap<>();
            raw.forEach((id, paths) -> {
                List<String> mine = new ArrayList<>();
                for (String p : paths) {
                    String u = unrooted(p);
                    if (u != null) mine.add(u);
                }
                Collections.sort(mine);
                if (!mine.isEmpty()) out.put(names.getOrDefault(id, "0x" + Long.toHexString(id)), mine);
            });
            return out;
        }
    }
}

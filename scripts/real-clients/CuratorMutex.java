// One client of `zklab real --library curator`: Curator 5.4's own InterProcessMutex (Debian
// libcurator-recipes-java), unchanged, taking the lock ROUNDS times. The driver runs one process
// per client, each through its own proxy, and reads what it does from stdout, one line per
// event, as scripts/real-clients/kazoo_lock.py prints them, each stamped first with
// System.nanoTime() (CLOCK_MONOTONIC on Linux: the one clock of the run's history):
//   session ID PASSWORD | acquiring | acquired TOKEN | write TOKEN | releasing | released
//   | error NAME | done
// (`releasing` just before release() is called: the hold ends there)
// and `suspended` when Curator says the connection is SUSPENDED or LOST (below).
// TOKEN is the lock node's sequence number. HOLD_MS -1 holds for one round trip to the server
// instead of a time (see `hold`). After `done` it waits for a line: `reset` closes the client
// and starts over in a new session (zklab client-check runs schedule after schedule on one
// JVM so); anything else closes it and ends. It starts once a line comes on stdin (every client
// is connected).
//
//   java -cp <zookeeper and curator jars> CuratorMutex.java HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS

import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;

public class CuratorMutex {
    static synchronized void say(String line) {
        System.out.println(System.nanoTime() + " " + line);
        System.out.flush();
    }

    /** The mutex, with the path of its own lock node (which Curator keeps to itself). */
    static class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String node() {
            return getLockPath();
        }
    }

    static long seen = 0;

    /** Half a hold: HOLD_MS/2 of sleep, or with HOLD_MS -1 one round trip to the server (an
     *  exists of the holder's node), so that under zklab's scheduler a hold lasts as many steps
     *  as the schedule gives it and no timer decides when it ends. */
    static void hold(CuratorFramework client, String node, int hold) throws InterruptedException {
        if (hold >= 0) {
            Thread.sleep(hold / 2);
            return;
        }
        try {
            client.checkExists().forPath(node);
        } catch (Exception e) {
            say("error " + e.getClass().getSimpleName());
        }
    }

    /** A new life's sessions are its own: the served model of each run numbers its sessions
     *  from the start again, so a new life's first session may have the id the last life's
     *  had, and must be said all the same. */
    static synchronized void forgetSessions() {
        seen = 0;
    }

    static synchronized void session(CuratorFramework client, boolean always) {
        try {
            org.apache.zookeeper.ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            long id = zk.getSessionId();
            if (id != 0 && (always || id != seen)) {
                seen = id;
                StringBuilder hex = new StringBuilder();
                for (byte b : zk.getSessionPasswd()) hex.append(String.format("%02x", b));
                say("session " + Long.toHexString(id) + " " + hex);
            }
        } catch (Exception e) {
            say("error " + e.getClass().getSimpleName());
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while ("reset".equals(life(args, in))) {
            // a new session, a new client: the run before is over
        }
    }

    /** One session's rounds; the line that came after `done`. */
    static String life(String[] args, BufferedReader in) throws Exception {
        forgetSessions();
        String hosts = args[0], path = args[1];
        int timeout = Integer.parseInt(args[2]), rounds = Integer.parseInt(args[3]), hold = Integer.parseInt(args[4]);
        // Without the ensemble tracker, which watches /zookeeper/config for dynamic
        // reconfiguration (nothing a lock reads): its thread's requests would race the lock's
        // on the one connection, and their order is not the schedule's to choose.
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(timeout)
                .connectionTimeoutMs(Math.max(timeout, 5000))
                // Retried at once, for ever: a retry's back-off is a JVM sleep, which looks
                // quiet to zklab's scheduler, so the request after it would race the next
                // choice. Nothing spins meanwhile: a request made while disconnected waits in
                // the ZooKeeper client for the next connection.
                .retryPolicy(new RetryNTimes(Integer.MAX_VALUE, 0))
                .ensembleTracker(false)
                .build();
        // As Curator's documentation asks of a lock's user: SUSPENDED means the lock may be
        // lost (stop using it), LOST that it is; after RECONNECTED to the same session it is
        // still held. The driver reads `suspended` as the end of the holder's belief, and a
        // `session` line naming the session it acquired in as its return.
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                say("suspended");
            }
            // CONNECTED is the first session, which the main thread says too: said once, by
            // whichever comes first (two lines, or one, as the threads happened to run, would
            // make one schedule tell two histories). RECONNECTED is said always.
            if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
                boolean always = state == ConnectionState.RECONNECTED;
                new Thread(() -> session(c, always)).start();
            }
        });
        client.start();
        client.blockUntilConnected();
        session(client, false);
        in.readLine(); // every client is connected: go
        Mutex mutex = new Mutex(client, path);
        for (int r = 0; r < rounds; r++) {
            while (true) {
                try {
                    say("acquiring");
                    mutex.acquire();
                    break;
                } catch (Exception e) {
                    // Asked again at once (no sleep, for the reason the retry policy says).
                    say("error " + e.getClass().getSimpleName());
                }
            }
            String node = mutex.node();
            long token = Long.parseLong(node.substring(node.length() - 10));
            say("acquired " + token);
            hold(client, node, hold);
            say("write " + token);
            hold(client, node, hold);
            say("releasing");
            while (true) {
                try {
                    mutex.release();
                    break;
                } catch (IllegalMonitorStateException e) {
                    say("error " + e.getClass().getSimpleName());
                    break;
                } catch (Exception e) {
                    say("error " + e.getClass().getSimpleName());
                }
            }
            say("released");
        }
        say("done");
        String line = in.readLine();
        client.close();
        return line;
    }
}

// One client of `zklab client-check --library writelock`: ZooKeeper's own lock recipe,
// org.apache.zookeeper.recipes.lock.WriteLock (the zookeeper-recipes-lock artifact, 3.8; Debian
// ships it beside zookeeper.jar), unchanged, taking the lock ROUNDS times and saying what it does
// on stdout in the line protocol of kazoo_lock.py (docs/your-lock.md), each line stamped first
// with System.nanoTime() (CLOCK_MONOTONIC on Linux, the clock every client stamps with).
//
//   java -cp <zookeeper.jar and zookeeper-recipes-lock.jar> ZkWriteLock.java HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS
//
// HOLD_MS -1 holds for one round trip to the server (an exists of the holder's node). It starts
// once a line comes on stdin (every client is connected). After `done` it waits for a line:
// `reset` closes the session and starts over in a new one (zklab client-check runs schedule
// after schedule on one JVM so); anything else closes it and ends.
//
// What an application has to add around WriteLock, and adds here:
// - lock() returns false when the lock is not free yet; the recipe calls the LockListener's
//   lockAcquired() later, from the ZooKeeper event thread, when its turn comes. The driver waits
//   for that call.
// - A ZooKeeper handle whose session expired is dead for good: the driver opens a new one (a
//   new session) and a new WriteLock on it, and asks again.
// - The recipe retries a request lost with its connection itself (ProtocolSupport: ten tries,
//   each waiting retryDelay times its number). The driver sets retryDelay to 0 rather than the
//   default 500 ms, so that no timer races zklab's scheduler.
// - After its own request is lost with the connection (a hold's exists), the driver waits for
//   the handle to connect again, or to learn its session is gone, before its next request.
// It does not listen to the connection's state while it holds: WriteLock's documentation does
// not ask it to, so a holder whose session expires believes it holds until its release fails.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.recipes.lock.LockListener;
import org.apache.zookeeper.recipes.lock.WriteLock;

public class ZkWriteLock {
    static synchronized void say(String line) {
        System.out.println(System.nanoTime() + " " + line);
        System.out.flush();
    }

    static String hosts, path;
    static int timeout;

    /** One session: its handle and a lock on it. `turn` is given when the recipe calls
     *  lockAcquired(), or when the session expires (then `expired` is set). */
    static class Session {
        final Semaphore turn = new Semaphore(0);
        volatile boolean expired = false;
        final ZooKeeper zk;
        final WriteLock lock;

        Session() throws Exception {
            CountDownLatch connected = new CountDownLatch(1);
            zk = new ZooKeeper(hosts, timeout, event -> {
                if (event.getState() == KeeperState.SyncConnected) {
                    connected.countDown();
                }
                if (event.getState() == KeeperState.Expired) {
                    expired = true;
                    turn.release();
                }
                seen(event.getState());
            });
            connected.await();
            StringBuilder hex = new StringBuilder();
            for (byte b : zk.getSessionPasswd()) hex.append(String.format("%02x", b));
            say("session " + Long.toHexString(zk.getSessionId()) + " " + hex);
            lock = new WriteLock(zk, path, ZooDefs.Ids.OPEN_ACL_UNSAFE, new LockListener() {
                public void lockAcquired() {
                    turn.release();
                }

                public void lockReleased() {}
            });
            // Retried at once: a retry's timer (a JVM sleep, which looks quiet to zklab's
            // scheduler) would race the next choice.
            lock.setRetryDelay(0);
        }

        /** Disconnections seen, and the count at the last (re)connection. */
        private long lost = 0, back = 0;

        synchronized void seen(KeeperState state) {
            if (state == KeeperState.Disconnected) {
                lost++;
            } else if (state == KeeperState.SyncConnected) {
                back = lost;
            }
            notifyAll();
        }

        synchronized long lost() {
            return lost;
        }

        /** Waits until a disconnection after `before` was seen and the handle is connected
         *  again, or its session is gone. */
        synchronized void awaitReconnect(long before) throws InterruptedException {
            while (!expired && !(lost > before && back == lost)) {
                wait();
            }
        }

        void close() {
            try {
                zk.close();
            } catch (Exception e) {
                // a dead handle closes with an error; nothing to do
            }
        }
    }

    static void hold(Session s, int hold) throws InterruptedException {
        if (hold >= 0) {
            Thread.sleep(hold / 2);
            return;
        }
        long before = s.lost();
        try {
            s.zk.exists(s.lock.getId(), false);
        } catch (KeeperException.ConnectionLossException e) {
            say("error " + e.getClass().getSimpleName());
            // The next request waits for the connection to come back. Sent at once, it would
            // race the ZooKeeper client's own clean-up of the lost connection (failing at once,
            // or waiting for the reconnect, as the client's threads happened to run), and one
            // schedule would tell two histories.
            s.awaitReconnect(before);
        } catch (Exception e) {
            say("error " + e.getClass().getSimpleName());
        }
    }

    public static void main(String[] args) throws Exception {
        hosts = args[0];
        path = args[1];
        timeout = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]), hold = Integer.parseInt(args[4]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while ("reset".equals(life(rounds, hold, in))) {
            // a new session, a new lock: the run before is over
        }
    }

    /** One session's rounds; the line that came after `done`. */
    static String life(int rounds, int hold, BufferedReader in) throws Exception {
        Session s = new Session();
        in.readLine(); // every client is connected: go
        for (int r = 0; r < rounds; r++) {
            while (true) {
                if (s.expired) {
                    s.close();
                    s = new Session();
                }
                try {
                    // lockAcquired() is called when lock() finds it owns the lock at once too:
                    // that call's permit is not this ask's.
                    s.turn.drainPermits();
                    say("acquiring");
                    if (s.lock.lock()) {
                        break;
                    }
                    s.turn.acquire();
                    if (s.lock.isOwner() && !s.expired) {
                        break;
                    }
                } catch (KeeperException.SessionExpiredException e) {
                    say("error " + e.getClass().getSimpleName());
                    s.expired = true;
                } catch (Exception e) {
                    say("error " + e.getClass().getSimpleName());
                }
            }
            String node = s.lock.getId();
            long token = Long.parseLong(node.substring(node.length() - 10));
            say("acquired " + token);
            hold(s, hold);
            say("write " + token);
            hold(s, hold);
            say("releasing");
            try {
                s.lock.unlock();
            } catch (RuntimeException e) {
                // unlock() wraps what failed its delete (a SessionExpired, say)
                Throwable why = e.getCause() != null ? e.getCause() : e;
                say("error " + why.getClass().getSimpleName());
            }
            say("released");
        }
        say("done");
        String line = in.readLine();
        s.close();
        return line;
    }
}

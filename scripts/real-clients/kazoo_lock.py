#!/usr/bin/env python3
"""One client of `zklab real --library kazoo`: kazoo 2.8's own Lock recipe (Debian
python3-kazoo), unchanged, taking the lock ROUNDS times. The driver runs one process per client,
each through its own proxy, and reads what it does from stdout, one line per event, each line
stamped first with CLOCK_MONOTONIC in nanoseconds (time.monotonic_ns(), the clock the driver and
every other client read) taken as the client acts:

    session ID PASSWORD   (hex; on connecting, and again on each new session)
    acquiring             (Lock.acquire() called)
    acquired TOKEN        (it returned; TOKEN is the lock node's sequence number)
    write TOKEN           (the holder writes to the fenced resource, halfway through its hold)
    releasing             (about to call Lock.release(): the hold ends here)
    released              (Lock.release() returned)
    error NAME            (an exception; the client tries again)
    done                  (every round taken)

With ZKLAB_HEED_LOSS=1 in its environment the client heeds kazoo's connection states, as
kazoo's docs advise: on SUSPENDED or LOST it says `suspended` and no longer believes it holds.

It starts once a line comes on stdin (every client is connected). After `done` it waits for
another line: `reset` closes its session and starts over in a new one (zklab client-check runs
schedule after schedule on the same processes so); anything else closes the session and ends.

    python3 kazoo_lock.py HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS

HOLD_MS -1 holds for one round trip to the server instead of a time (see `hold`).
"""

import os
import sys
import threading
import time

from kazoo.client import KazooClient, KazooState

out = threading.Lock()


def say(*words):
    with out:
        sys.stdout.write(" ".join(str(w) for w in (time.monotonic_ns(),) + words) + "\n")
        sys.stdout.flush()


def hold(zk, lock, hold_ms):
    """Half a hold: HOLD_MS/2 of sleep, or with HOLD_MS -1 one round trip to the server (an
    exists of the holder's node), so that under zklab's scheduler a hold lasts as many steps as
    the schedule gives it and no timer decides when it ends."""
    if hold_ms >= 0:
        time.sleep(hold_ms / 2000.0)
        return
    try:
        zk.exists(lock.path + "/" + lock.node)
    except Exception as e:
        say("error", type(e).__name__)


def main():
    hosts, path, timeout_ms, rounds, hold_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    while life(hosts, path, timeout_ms, rounds, hold_ms) == "reset":
        pass


def life(hosts, path, timeout_ms, rounds, hold_ms):
    """One session's rounds; the line that came after `done`."""
    zk = KazooClient(hosts=hosts, timeout=timeout_ms / 1000.0, connection_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.2})
    seen = [None]

    def session():
        sid, password = zk.client_id or (0, b"")
        if sid and sid != seen[0]:
            seen[0] = sid
            say("session", "%x" % sid, password.hex())

    heed = os.environ.get("ZKLAB_HEED_LOSS") == "1"

    def listener(state):
        if state == KazooState.CONNECTED:
            threading.Thread(target=session, daemon=True).start()
        elif heed:
            # kazoo's docs' advice: a holder stops trusting its lock once the connection is
            # SUSPENDED or the session LOST (it holds again only back in the same session).
            say("suspended")

    zk.add_listener(listener)
    zk.start(timeout=30)
    session()
    sys.stdin.readline()  # every client is connected: go
    lock = zk.Lock(path)
    for _ in range(rounds):
        while True:
            try:
                say("acquiring")
                lock.acquire()
                break
            except Exception as e:  # ConnectionLoss, SessionExpired: kazoo's Lock leaves it to the caller
                say("error", type(e).__name__)
                time.sleep(0.05)
        token = int(lock.node[-10:])
        say("acquired", token)
        hold(zk, lock, hold_ms)
        say("write", token)
        hold(zk, lock, hold_ms)
        say("releasing")
        while True:
            try:
                lock.release()
                break
            except Exception as e:
                say("error", type(e).__name__)
                time.sleep(0.05)
        say("released")
    say("done")
    line = sys.stdin.readline().strip()
    zk.stop()
    zk.close()
    return line


if __name__ == "__main__":
    main()

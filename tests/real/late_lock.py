"""A kazoo lock whose hold is a timed wait zklab's quiet test cannot see, for the test of a
replay that waits for a late request (tests/real/client_check.rs).

It is the Python client of docs/your-lock.md, but before its hold's round trip it waits
HOLD_MS on a threading.Event: a futex with a timeout, which looks blocked (quiet) to the
scheduler, as a JVM thread's timed park or an event loop's timer does. Its next request
comes HOLD_MS after the scheduler took it for done.
"""
import sys, threading, time
from kazoo.client import KazooClient


def say(*w):
    print(time.monotonic_ns(), *w, flush=True)


hosts, path, timeout_ms, rounds, hold_ms = sys.argv[1:6]
zk = KazooClient(hosts=hosts, timeout=int(timeout_ms) / 1000)
zk.start()
sid, pw = zk.client_id
say("session", "%x" % sid, pw.hex())
sys.stdin.readline()
lock = zk.Lock(path)
for _ in range(int(rounds)):
    say("acquiring")
    lock.acquire()
    token = int(lock.node[-10:])
    say("acquired", token)
    threading.Event().wait(int(hold_ms) / 1000)  # the timer the quiet test cannot see
    zk.exists(path + "/" + lock.node)
    say("write", token)
    say("releasing")
    lock.release()
    say("released")
say("done")
sys.stdin.readline()
zk.stop()

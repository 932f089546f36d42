#!/usr/bin/env python3
"""A real kazoo 2.8 Lock with N contenders against a real ZooKeeper, measured as `zklab herd`
measures the model: requests per acquisition and watch notifications per release.

    python3 scripts/kazoo-herd.py HOST:PORT CLIENTS

Each client is its own KazooClient (its own session) with its own Lock on /lock; all ask at
once, each acquires once, holds briefly and releases. Requests are counted at the client, on
kazoo's request queue (`KazooClient._call`), so pings and the session handshake are not
counted, as the model counts none. Prints one JSON line. scripts/kazoo-herd.sh starts the server.
"""

import json
import sys
import threading
import time

from kazoo.client import KazooClient

PATH = "/lock"


def main():
    server, clients = sys.argv[1], int(sys.argv[2])
    admin = KazooClient(hosts=server)
    admin.start(timeout=15)
    admin.ensure_path(PATH)
    requests = [0] * clients
    notifications = [0]
    lock = threading.Lock()
    zks = []
    for i in range(clients):
        zk = KazooClient(hosts=server, timeout=10)
        original = zk._call

        def counted(request, async_object, i=i, original=original):
            with lock:
                requests[i] += 1
            return original(request, async_object)

        zk._call = counted
        zk.start(timeout=15)
        zks.append(zk)
    start = threading.Barrier(clients)
    acquired = [0]

    def contend(i):
        held = zks[i].Lock(PATH, "c%d" % i)
        predecessor_watch = held._watch_predecessor

        def watched(event):
            with lock:
                notifications[0] += 1
            return predecessor_watch(event)

        held._watch_predecessor = watched
        start.wait()
        held.acquire()
        with lock:
            acquired[0] += 1
        time.sleep(0.002)
        held.release()

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(clients)]
    began = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - began
    for zk in zks:
        zk.stop()
        zk.close()
    admin.stop()
    admin.close()
    print(json.dumps({
        "recipe": "kazoo 2.8 Lock",
        "clients": clients,
        "acquisitions": acquired[0],
        "requests_per_acquisition": round(sum(requests) / acquired[0], 3),
        "notifications_per_release": round(notifications[0] / acquired[0], 3),
        "seconds": round(elapsed, 2),
    }))


if __name__ == "__main__":
    main()

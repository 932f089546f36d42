// One client of `zklab client-check --library node`: a lock written on node-zookeeper-client
// (npm) as ZooKeeper's recipes page describes it, taking the lock ROUNDS times and saying what
// it does on stdout in the line protocol of kazoo_lock.py (docs/your-lock.md), each line
// stamped first with CLOCK_MONOTONIC in nanoseconds (libuv's hrtime on Linux).
//
//   node node_lock.js HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS
//
// The recipe: create LOCK_PATH/<guid>-lock- ephemeral and sequential (the guid finds the node
// again if the connection is lost before the reply); list the children; the lowest holds;
// otherwise exists-with-watch on the next lower one, and list again once it is gone. Unlock
// deletes the node. HOLD_MS -1 holds for one round trip (an exists of the holder's node).
// After `done` it waits for a line: `reset` closes the session and starts over in a new one;
// anything else ends it.
'use strict';
const zookeeper = require('node-zookeeper-client');
const crypto = require('crypto');
const readline = require('readline');

const say = (...words) => process.stdout.write([process.hrtime.bigint(), ...words].join(' ') + '\n');
const [hosts, path, timeoutMs, rounds, holdMs] = process.argv.slice(2);
// node-zookeeper-client does not start a new session once one expires: the client ends, and
// this program (as applications on it do) makes a new one. A request of the old one fails, and
// the lock is tried again on the new one.
let client = null;
let seen = null;
// Waits on a watch of a client whose session expired end with it (its watches never fire).
const waiting = new Set();
function connect() {
  const c = zookeeper.createClient(hosts, { sessionTimeout: Number(timeoutMs), spinDelay: 50, retries: 0 });
  c.on('connected', () => {
    const id = c.getSessionId().toString('hex');
    if (id !== seen) {
      seen = id;
      say('session', id.replace(/^0+/, ''), c.getSessionPassword().toString('hex'));
    }
  });
  c.on('expired', () => {
    say('error', 'SessionExpired');
    c.close();
    client = connect();
    for (const wake of waiting) wake();
    waiting.clear();
  });
  c.connect();
  return c;
}
const call = (fn, ...args) => new Promise((resolve, reject) =>
  fn.call(client, ...args, (err, ...out) => (err ? reject(err) : resolve(out))));
const seq = (name) => name.slice(-10);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// After an error the request is tried again on the next turn of the event loop, not after a
// timer: a timer in the event loop looks quiet to zklab's scheduler, which would take its next
// choice before the retry or after it as the timer happened to fire (docs/your-lock.md). The
// client queues a request until it is connected again, so this does not spin.
const retryDelay = () => new Promise((r) => setImmediate(r));
const lost = (err) => err.getCode && err.getCode() === zookeeper.Exception.CONNECTION_LOSS;

async function create(guid) {
  const prefix = `${path}/${guid}-lock-`;
  for (;;) {
    try {
      const [made] = await call(client.create, prefix, null, zookeeper.ACL.OPEN_ACL_UNSAFE,
        zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL);
      return made.slice(path.length + 1);
    } catch (err) {
      if (err.getCode && err.getCode() === zookeeper.Exception.NO_NODE) {
        await call(client.mkdirp, path).catch(() => {});
        continue;
      }
      if (!lost(err)) throw err;
      // Lost before the reply: the create may have been applied; find it by its guid.
      const [children] = await call(client.getChildren, path);
      const mine = children.find((c) => c.startsWith(`${guid}-lock-`));
      if (mine) return mine;
    }
  }
}

async function lock() {
  const node = await create(crypto.randomBytes(16).toString('hex'));
  for (;;) {
    const [children] = await call(client.getChildren, path);
    const sorted = children.sort((a, b) => seq(a).localeCompare(seq(b)));
    const at = sorted.indexOf(node);
    if (at === 0) return node;
    if (at < 0) throw new Error('own-node-gone');
    const gone = new Promise((resolve) => {
      waiting.add(resolve);
      const watcher = () => resolve();
      call(client.exists, `${path}/${sorted[at - 1]}`, watcher).then(([stat]) => { if (!stat) resolve(); },
        () => resolve());
    });
    await gone;
  }
}

async function main() {
  const stdin = readline.createInterface({ input: process.stdin });
  const lines = stdin[Symbol.asyncIterator]();
  while ((await life(lines)) === 'reset') {
    // a new session: the run before is over
  }
  process.exit(0);
}

// One session's rounds; the line that came after `done`.
async function life(lines) {
  // A fresh server numbers its sessions from the start again: a new life's session may have
  // the id of the one before, and is said all the same.
  seen = null;
  client = connect();
  await new Promise((resolve) => client.once('connected', resolve));
  await lines.next(); // every client is connected: go
  for (let r = 0; r < Number(rounds); r++) {
    let node;
    for (;;) {
      say('acquiring');
      try {
        node = await lock();
        break;
      } catch (err) {
        say('error', (err.name || 'Error').replace(/\s+/g, '-'));
        await retryDelay();
      }
    }
    const token = Number(seq(node));
    say('acquired', token);
    const hold = async () => {
      if (Number(holdMs) >= 0) return sleep(Number(holdMs) / 2);
      await call(client.exists, `${path}/${node}`).catch((err) => say('error', err.name));
    };
    await hold();
    say('write', token);
    await hold();
    say('releasing');
    for (;;) {
      try {
        await call(client.remove, `${path}/${node}`, -1);
        break;
      } catch (err) {
        if (err.getCode && err.getCode() === zookeeper.Exception.NO_NODE) break;
        say('error', err.name);
        await retryDelay();
      }
    }
    say('released');
  }
  say('done');
  const line = await lines.next();
  const old = client;
  client = null;
  old.close();
  return line.done ? '' : line.value.trim();
}

main();

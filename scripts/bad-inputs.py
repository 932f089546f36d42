#!/usr/bin/env python3
"""The bad-input campaign: every subcommand given inputs a user gets wrong (absurd numbers,
unknown names, malformed files, unwritable outputs, flags that cannot go together), each run
with a time limit in a fresh directory and classified:

  refused   exit 2, one line on stderr starting `error:`, nothing on stdout (what each must do)
  MESSY     exit 2 but not one clean line
  PANIC     exit 101 or 134, or `panicked` on stderr
  HANG      still running at the time limit (refusal must come before any long work)
  ACCEPTED  any other exit: the input was taken as good

Every case here is bad input, so anything but `refused` is a defect. Prints one line per case
that is not refused, then the counts; exits 1 if any. Run from the checkout after
`cargo build --release`:

    python3 scripts/bad-inputs.py [--zklab target/release/zklab] [--limit 20]
"""
import argparse, json, os, shutil, socket, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "traces/wait-on-null-n2-eventual_acquire.json")
SIM_TRACE = os.path.join(ROOT, "traces/sim/sched-blind-retry-n3-eventual_acquire-trace.json")
SCRIPT = os.path.join(ROOT, "conformance/cases/14-lock-race.json")
MANIFEST = os.path.join(ROOT, "tests/manifest.json")
NUMBERS = ["0", "-1", "abc", "", "18446744073709551616", "1e9"]


def files(d):
    """Bad files to hand to the commands that read one, by name."""
    t = json.load(open(TRACE))
    made = {}

    def put(name, text):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text if isinstance(text, str) else json.dumps(text))
        made[name] = path

    def edit(name, fn):
        c = json.loads(json.dumps(t))
        fn(c)
        put(name, c)

    put("empty.json", "")
    put("not-json.json", "{")
    # A schedule client-check saved, and the same broken in each way its loader refuses.
    sched = {"kind": "zklab client-check schedule", "format": 1, "program": {"library": "kazoo"}, "clients": 2,
             "lock_path": "/lock", "session_timeout_ms": 10000, "rounds": 1, "hold_ms": -1,
             "faults": {"loss_before_apply": False, "loss_after_apply": False, "expire": True},
             "schedule": [{"do": "apply", "client": 0}, {"do": "expire", "client": 1}], "steps": [], "history": [],
             "end": {"end": "cut"}, "findings": [{"property": "belief_exclusion", "detail": "d"}]}
    for name, change in [("cc-client.json", lambda c: c["schedule"].append({"do": "apply", "client": 5})),
                         ("cc-fault.json", lambda c: c["faults"].update(expire=False)),
                         ("cc-library.json", lambda c: c.update(program={"library": "nope"})),
                         ("cc-path.json", lambda c: c.update(lock_path="lock")),
                         ("cc-format.json", lambda c: c.update(format=9)),
                         ("cc-field.json", lambda c: c.update(extra=1)),
                         ("cc-cmd.json", lambda c: c.update(program={"cmd": " "})),
                         ("cc-no-finding.json", lambda c: c.update(findings=[]))]:
        c = json.loads(json.dumps(sched))
        change(c)
        put(name, c)
    put("array.json", "[]")
    put("text.txt", "keep me")
    edit("format2.json", lambda c: c.update(format=2))
    edit("extra-field.json", lambda c: c.update(extra=1))
    edit("unknown-recipe.json", lambda c: c["scenario"].update(recipes=["nope", "nope"]))
    edit("zero-clients.json", lambda c: c["scenario"].update(recipes=[]))
    edit("bad-path.json", lambda c: c["scenario"]["config"].update(lock_path="lock"))
    edit("bad-step.json", lambda c: c["steps"].__setitem__(0, {"acquire": 9}))
    edit("bad-property.json", lambda c: c["verdict"].update(property="world_peace"))
    edit("summary.json", lambda c: c.update(summary="c0 and c1 both believe they hold the lock"))
    edit("times-back.json", lambda c: c.update(times_us=[1000 * (len(c["steps"]) - i) for i in range(len(c["steps"]))]))
    edit("times-max.json", lambda c: c.update(times_us=[0] * (len(c["steps"]) - 1) + [2**64 - 1]))
    edit("times-count.json", lambda c: c.update(times_us=[0]))
    edit("zero-rounds.json", lambda c: c["scenario"]["config"].update(rounds=0))
    # A simulator's trace (it has a seed) may have more clients than the checker explores.
    edit("sim-9-clients.json", lambda c: (c.update(seed=1), c["scenario"].update(recipes=["wait-on-null"] * 9)))
    shard = {"format": 1, "campaign": {"command": "simulate"}, "total": 4, "can_pass": True, "shards": [1], "count": 2,
             "covered": {"units": 2, "steps": 10}, "findings": [], "reached": []}
    put("shard.json", shard)
    put("shard-format2.json", dict(shard, format=2))
    put("shard-other.json", dict(shard, campaign={"command": "check --swarm"}, shards=[2]))
    put("shard-field.json", dict(shard, extra=1))
    big = json.loads(json.dumps(t))
    big["scenario"]["recipes"] = ["standard"] * 40
    big["steps"] = [{"acquire": 0}]
    big["verdict"] = {"property": "belief_exclusion"}
    big["seed"] = 1
    put("forty-clients.json", big)
    entry = {"recipe": "standard", "clients": 2, "faults": "none", "client": "java", "rounds": 1,
             "first_sequence": 0, "unique_states": 1, "expect": {}}
    put("m-rounds-255.json", {"format": 1, "entries": [dict(entry, rounds=255)]})
    put("m-unknown-field.json", {"format": 1, "entries": [dict(entry, budget=5)]})
    put("m-top-field.json", {"format": 1, "entries": [entry], "x": 1})
    put("m-empty.json", {"format": 1, "entries": []})
    put("m-format.json", {"format": 9, "entries": [entry]})
    put("m-clients.json", {"format": 1, "entries": [dict(entry, clients=0)]})
    put("m-property.json", {"format": 1, "entries": [dict(entry, expect={"nope": "holds"})]})
    put("m-status.json", {"format": 1, "entries": [dict(entry, expect={"belief_exclusion": "fine"})]})
    put("m-faults.json", {"format": 1, "entries": [dict(entry, faults="nope")]})
    put("m-client.json", {"format": 1, "entries": [dict(entry, client="go")]})
    put("m-missing.json", {"format": 1, "entries": [{k: v for k, v in entry.items() if k != "recipe"}]})
    sched = {"faults": [{"at_ms": 5, "fault": "expire", "client": 0}]}
    put("s-dup.json", {"faults": sched["faults"] * 2})
    put("s-client.json", {"faults": [{"at_ms": 5, "fault": "expire", "client": 9}]})
    put("s-fault.json", {"faults": [{"at_ms": 5, "fault": "nope", "client": 0}]})
    put("s-field.json", dict(sched, extra=1))
    put("z-op.json", {"ops": [{"op": "nope"}]})
    put("z-field.json", {"ops": [], "extra": 1})
    put("z-path.json", {"ops": [{"op": "create", "path": "no-slash"}]})
    # multi and sync ops gone wrong: no list of ops, an op a multi cannot hold, a misspelt field,
    # a bad path inside a multi, a sync with no path.
    opened = {"s": "A", "op": "open"}
    put("z-multi-ops.json", {"ops": [opened, {"s": "A", "op": "multi", "ops": "create"}]})
    put("z-multi-inner.json", {"ops": [opened, {"s": "A", "op": "multi", "ops": [{"op": "get_data", "path": "/a"}]}]})
    put("z-multi-field.json", {"ops": [opened, {"s": "A", "op": "multi", "ops": [{"op": "check", "path": "/a", "versoin": 1}]}]})
    put("z-multi-path.json", {"ops": [opened, {"s": "A", "op": "multi", "ops": [{"op": "delete", "path": "a/"}]}]})
    put("z-sync.json", {"ops": [opened, {"s": "A", "op": "sync"}]})
    # Shard reports that lie: a path out of the trace directory, impossible shard sets, another
    # build, a trace relabelled, cut or of another format (the good report is made by a real run
    # in `cases`, since a finding must carry a trace that replays).
    edit("stalled.json", lambda c: c["verdict"].update(stalled=True))
    cut = json.loads(json.dumps(t))
    cut["scenario"]["recipes"] = ["standard", "standard"]
    cut["steps"] = [{"acquire": 0}, {"receive": 0}, {"receive": 0}, {"acquire": 1}, {"receive": 1}]
    put("cut.json", cut)
    put("cut-stalled.json", dict(cut, verdict={"property": "eventual_acquire", "stalled": True}))
    os.mkdir(os.path.join(d, "a-dir"))
    made["a-dir"] = os.path.join(d, "a-dir")
    fifo = os.path.join(d, "fifo.json")
    os.mkfifo(fifo)
    made["fifo"] = fifo
    loop = os.path.join(d, "loop")
    os.symlink(os.path.join(d, "loop2"), loop)
    os.symlink(loop, os.path.join(d, "loop2"))
    made["loop"] = loop
    return made


def lying_shards(zklab, d):
    """A real shard report of blind-retry (it has a finding), then copies that each lie once."""
    out = subprocess.run([zklab, "simulate", "--recipe", "blind-retry", "--clients", "3", "--seeds", "24", "--faults",
                          "loss-after-apply=0.1", "--shard", "1/1", "--json", "-q"], cwd=d, capture_output=True, text=True)
    good = json.loads(out.stdout)
    assert good["findings"], "blind-retry breaks a property in 24 seeds"
    lies = {
        "escape": lambda r: r["findings"][0].update(file="../x.json"),
        "absolute": lambda r: r["findings"][0].update(file="/tmp/x.json"),
        "count0": lambda r: r.update(count=0, shards=[0]),
        "count0-empty": lambda r: r.update(count=0, shards=[]),
        "shard7of3": lambda r: r.update(count=3, shards=[7]),
        "twice": lambda r: r.update(count=3, shards=[1, 1]),
        "claims-more": lambda r: r.update(count=3, shards=[1, 2]),
        "no-version": lambda r: r.pop("version"),
        "other-version": lambda r: r.update(version="0.0.1"),
        "relabelled": lambda r: r["findings"][0].update(property="zk_exclusion"),
        "cut": lambda r: r["findings"][0]["trace"].update(steps=r["findings"][0]["trace"]["steps"][:1],
                                                          times_us=r["findings"][0]["trace"]["times_us"][:1]),
        "trace-format": lambda r: r["findings"][0]["trace"].update(format=7),
    }
    files = []
    for name, lie in lies.items():
        r = json.loads(json.dumps(good))
        lie(r)
        path = os.path.join(d, f"lie-{name}.json")
        with open(path, "w") as f:
            json.dump(r, f)
        files.append(path)
    return files


def cases(f):
    c = []
    chk = ["check", "--recipe", "standard"]
    for n in NUMBERS + ["9", "99999999999"]:
        c.append(chk + ["--clients", n])
    for v in ["nope", "expire,expire", "expire=0", "expire=9", "=", ",", "all,none", "expire=abc", "expire=", "none,expire"]:
        c.append(chk + ["--faults", v])
    for v in NUMBERS + ["255", "256"]:
        c.append(chk + ["--rounds", v])
    for v in NUMBERS + ["257", "100000"]:
        c.append(chk + ["--threads", v])
    for v in ["0", "-1", "abc"]:
        c.append(chk + ["--max-states", v])
        c.append(chk + ["--max-memory", v])
    for v in ["604801", "18446744073709551615", "-1", "abc"]:
        c.append(chk + ["--timeout", v])
    for v in ["0", "1000000001", "-1"]:
        c.append(chk + ["--swarm", v])
    for v in ["0", "1000001"]:
        c.append(chk + ["--swarm", "10", "--walk-depth", v])
    c.append(chk + ["--walk-depth", "10"])
    c.append(chk + ["--seed", "5"])
    for v in ["nope", "reached:handoff", "", "belief_exclusion,nope", "no_herd_typo"]:
        c.append(chk + ["--properties", v])
    c.append(["check", "--recipe", "semaphore", "--properties", "no_herd"])
    for v in ["abc", "2147483648", "-2147483649"]:
        c.append(chk + ["--first-sequence", v])
    for v in ["abc", "-1"]:
        c.append(chk + ["--jute-maxbuffer", v])
    for v in ["zookeeper", "", "JAVA"]:
        c.append(chk + ["--client", v])
    for v in ["nope", "", "standard,nope", "standard,standard,standard", ",", "standard,"]:
        c.append(["check", "--recipe", v])
    c.append(chk + ["--trace-dir", "/proc/zklab"])
    c.append(chk + ["--trace-dir", f["text.txt"]])
    c.append(chk + ["--swarm", "10", "--symmetry"])
    c.append(chk + ["--swarm", "10", "--continue"])
    c.append(chk + ["--symmetry", "--jute-maxbuffer", "100"])
    c.append(["check", "--recipe", "rw-writer,rw-reader", "--clients", "2", "--symmetry"])
    c.append(["check"])
    man = lambda name: ["check", "--manifest", f[name]]
    for name in ["empty.json", "not-json.json", "array.json", "a-dir", "m-rounds-255.json", "m-unknown-field.json",
                 "m-top-field.json", "m-empty.json", "m-format.json", "m-clients.json", "m-property.json",
                 "m-status.json", "m-faults.json", "m-client.json", "m-missing.json"]:
        c.append(man(name))
    c.append(["check", "--manifest", "/no/such/manifest.json"])
    good = os.path.join(ROOT, "tests/manifest.json")
    for flags in [["--swarm", "10"], ["--symmetry"], ["--clients", "5"], ["--faults", "expire"], ["--html"],
                  ["--trace-dir", "x"], ["--rounds", "3"], ["--properties", "no_herd"], ["--recipe", "standard"],
                  ["--continue"], ["--no-partial-order"], ["--first-sequence", "5"], ["--client", "kazoo"],
                  ["--threads", "0"], ["--timeout", "18446744073709551615"], ["--max-states", "0"]]:
        c.append(["check", "--manifest", good] + flags)
    rp = lambda name, *extra: ["replay", f[name], *extra]
    for name in ["empty.json", "not-json.json", "array.json", "a-dir", "format2.json", "extra-field.json",
                 "unknown-recipe.json", "zero-clients.json", "bad-path.json", "bad-property.json",
                 "times-back.json", "times-max.json", "times-count.json", "zero-rounds.json", "text.txt"]:
        c.append(rp(name))
        c.append(rp(name, "--show"))
    c.append(["replay", "/no/such/trace.json"])
    c.append(["replay"])
    c.append(["replay", "--html", f["times-max.json"], "-o", "t.html"])
    c.append(["replay", "--html", f["forty-clients.json"], "-o", "t.html"])
    c.append(["replay", "--html", TRACE, "-o", TRACE])
    c.append(["replay", "--html", TRACE, "-o", f["text.txt"]])
    c.append(["replay", "--html", TRACE, "-o", "/proc/zklab.html"])
    c.append(["replay", "--html", TRACE, "-o", f["a-dir"]])
    c.append(["replay", "--mermaid", f["not-json.json"]])
    ex = ["explore"]
    c += [ex + ["--recipe", "nope"], ex + ["--recipe", "standard", "--faults", "expire,expire"],
          ex + ["--trace", "/no/such.json"], ex + ["--trace", f["not-json.json"]], ex + ["--trace", f["sim-9-clients.json"]],
          ex + ["--trace", TRACE, "--clients", "5"], ex + ["--trace", TRACE, "--faults", "expire"],
          ex + ["--trace", TRACE, "--rounds", "3"], ex + ["--trace", TRACE, "--client", "kazoo"],
          ex + ["--recipe", "standard", "--goal-timeout", "0"], ex + ["--recipe", "standard", "--goal-timeout", "3601"],
          ex + ["--recipe", "standard", "--port", "70000"],
          ex + ["--lessons", "--recipe", "standard"], ex + ["--lessons", "--trace", TRACE],
          ex + ["--lessons", "--clients", "3"], ex + ["--lessons", "--faults", "expire"],
          ex + ["--lessons", "--port", "70000"], ex + ["--lessons", "--goal-timeout", "0"],
          ex + ["--recipe", "standard", "--clients", "0"], ex]
    sim = ["simulate", "--recipe", "standard"]
    for n in NUMBERS + ["1000001"]:
        c.append(sim + ["--clients", n])
    for n in ["0", "1000001", "abc", "-1"]:
        c.append(sim + ["--seeds", n])
    for n in ["0", "257", "abc"]:
        c.append(sim + ["--threads", n])
    for v in ["loss-after-apply=2", "expire=1.5", "expire=-1", "nope", "expire=abc", "expire,expire", "loss-after-apply=nan",
              "expire=2000000", "=1"]:
        c.append(sim + ["--faults", v])
    for v in ["abc", "5..1", "1..", "..5", "1..abc", ""]:
        c.append(sim + ["--latency-us", v])
    for v in ["0", "1000001"]:
        c.append(sim + ["--search", v, "--faults", "expire"])
    for v in ["0", "101"]:
        c.append(sim + ["--search", "5", "--faults", "expire", "--max-faults", v])
    c.append(sim + ["--search", "5"])
    for name in ["not-json.json", "s-dup.json", "s-client.json", "s-fault.json", "s-field.json", "a-dir"]:
        c.append(sim + ["--schedule", f[name]])
    c.append(sim + ["--schedule", "/no/such.json"])
    c.append(sim + ["--clients", "40", "--html"])
    c.append(sim + ["--trace-dir", "/proc/zklab"])
    c.append(sim + ["--rounds", "0"])
    c.append(sim + ["--rounds", "255"])
    c.append(sim + ["--client", "go"])
    for flag in ["--chaos-ms", "--heal-ms", "--hold-ms", "--start-spread-ms"]:
        for v in ["18446744073709551615", "86400001", "-1", "abc"]:
            c.append(sim + [flag, v])
    for v in ["0", "abc", "2147483648"]:
        c.append(sim + ["--jute-maxbuffer", v])
    for v in ["18446744073709551615", "604801", "-1", "abc"]:
        c.append(sim + ["--timeout", v])
        c.append(sim + ["--search", "5", "--faults", "expire", "--timeout", v])
    for v in ["0", "-1", "abc"]:
        c.append(sim + ["--max-memory", v])
    for v in ["0/2", "3/2", "1/0", "a/b", "2", "1/5", "1/100001", ""]:
        c.append(sim + ["--seeds", "4", "--shard", v])
    c.append(sim + ["--search", "5", "--faults", "expire", "--shard", "1/2"])
    c += [["check", "--recipe", "standard", "--shard", "1/2"], ["check", "--recipe", "standard", "--swarm", "3", "--shard", "1/4"],
          ["check", "--recipe", "standard", "--swarm", "3", "--shard", "0/1"], ["check", "--manifest", MANIFEST, "--shard", "1/2"]]
    c += [["merge"], ["merge", "/no/such.json"], ["merge", f["not-json.json"]], ["merge", f["array.json"]], ["merge", TRACE],
          ["merge", f["a-dir"]], ["merge", f["shard.json"], f["shard.json"]], ["merge", f["shard-format2.json"]],
          ["merge", f["shard.json"], f["shard-other.json"]], ["merge", f["shard-field.json"]],
          ["merge", "--trace-dir", "/proc/zklab", f["shard.json"]], ["merge", "--trace-dir", f["text.txt"], f["shard.json"]]]
    c.append(["simulate"])
    c.append(["simulate", "--recipe", "nope"])
    c.append(["simulate", "--recipe", "standard,nope", "--clients", "2"])
    hd = ["herd", "--recipes", "standard"]
    for v in ["0", "abc", "", "5,,10", "-1", "1000001"]:
        c.append(hd + ["--clients", v])
    for v in ["nope", "", ",", "standard,nope"]:
        c.append(["herd", "--recipes", v, "--clients", "5"])
    c.append(hd + ["--clients", "5", "-o", "/proc/zklab.svg"])
    c.append(hd + ["--clients", "5", "-o", f["text.txt"]])
    c.append(hd + ["--clients", "5", "-o", f["a-dir"]])
    c.append(hd + ["--clients", "5", "--seed", "abc"])
    c.append(hd + ["--clients", "5", "--force", "-o", f["a-dir"]])
    c.append(hd + ["--clients", "5", "-q", "--json", "--nope"])
    cal = ["calibrate"]
    for v in ["0", "9", "abc"]:
        c.append(cal + ["--clients", v])
    for v in ["0", "abc", "1000001", "", "1,,2"]:
        c.append(cal + ["--seeds", v])
    c += [cal + ["--faults", "nope", "-q"], cal + ["--quiet", "--seeds", "0"], cal + ["--recipe", "nope"], cal + ["--max-states", "abc"],
          cal + ["--client", "go"], cal + ["--faults", "expire,expire"]]
    for v in ["0", "257", "100000", "abc"]:
        c.append(["suite", "--threads", v])
    c.append(["suite", "--trace-dir", "/proc/zklab"])
    c.append(["suite", "--trace-dir", f["text.txt"]])
    zs = ["zk-script"]
    for name in ["empty.json", "not-json.json", "z-op.json", "z-field.json", "z-path.json", "a-dir", "z-multi-ops.json",
                 "z-multi-inner.json", "z-multi-field.json", "z-multi-path.json", "z-sync.json"]:
        c.append(zs + [f[name]])
    c += [zs + ["/no/such.json"], zs + [SCRIPT, "--expect", "/no/such.json"], zs + [SCRIPT, "--expect", f["not-json.json"]],
          zs + [SCRIPT, "--server", "localhost"], zs + [SCRIPT, "--server", "127.0.0.1:1"], zs + [SCRIPT, "--client", "go"], zs]
    zf = ["zk-fuzz", "--server", "127.0.0.1:1"]
    c += [["zk-fuzz", "--scripts", "0"], ["zk-fuzz", "--save-dir", f["text.txt"]], ["zk-fuzz", "--server"],
          zf + ["--scripts", "0"], ["zk-fuzz", "--server", "localhost"], zf, zf + ["--seed", "abc"],
          zf + ["--save-dir", f["text.txt"]], zf + ["--max-shrink", "abc"]]
    rl = ["real", "--recipe", "standard"]
    c += [rl + ["--servers", "2"], rl + ["--servers", "0"], rl + ["--clients", "0"], rl + ["--seeds", "0"],
          rl + ["--faults", "nope"], ["real", "--recipe", "nope"], ["real", "--reproduce", "/no/such.json"],
          ["real", "--library", "nope"], rl + ["--library", "kazoo"], ["real", "--reproduce", f["not-json.json"]],
          rl + ["--faults", "loss-after-apply=2"], rl + ["--server", "localhost"], rl + ["--trace-dir", "/proc/zklab"],
          rl + ["--clients", "abc"], ["real"],
          # An operator's delete is not driven on a real server: refused, by name and within `all`'s neighbours.
          rl + ["--faults", "operator-delete"], rl + ["--faults", "expire,operator-delete=2"],
          ["real", "--library", "kazoo", "--faults", "operator-delete"]]
    # The served model: a port out of range or in use, a tick of 0, bounds that cross.
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    f["busy"] = busy  # kept open while the cases run
    sv = ["serve", "--for-seconds", "1"]
    c += [sv + ["--port", "70000"], sv + ["--port", "abc"], sv + ["--port", str(busy.getsockname()[1])],
          sv + ["--tick-ms", "0"], sv + ["--min-session-timeout-ms", "5000", "--max-session-timeout-ms", "100"],
          ["serve", "--for-seconds", "0"], sv + ["--nope"]]
    # Real client code under the scheduler: unknown names, nothing to run, absurd numbers, a
    # client that exits before it connects.
    cc = ["client-check", "--schedules", "1"]
    c += [cc + ["--library", "nope"], cc + ["--cmd", ""], cc + ["--cmd", " "], cc, cc + ["--library", "kazoo", "--cmd", "x"],
          cc + ["--library", "kazoo", "--faults", "nope"], cc + ["--library", "kazoo", "--clients", "0"],
          ["client-check", "--library", "kazoo", "--schedules", "0"], cc + ["--library", "kazoo", "--max-steps", "0"],
          cc + ["--cmd", "true"], cc + ["--library", "kazoo", "--faults", "expire,crash"],
          cc + ["--library", "kazoo", "--trace-dir", "/proc/zklab"], cc + ["--library", "kazoo", "--trace-dir", f["text.txt"]],
          cc + ["--library", "kazoo", "--shrink-runs", "abc"], cc + ["--library", "kazoo", "--explore", "nope"],
          cc + ["--library", "kazoo", "--explore", "systematic", "--switches", "-1"], ["client-check", "--schedule", "/no/such.json"],
          ["client-check", "--schedule", f["not-json.json"]], ["client-check", "--schedule", TRACE],
          ["client-check", "--schedule", f["cc-client.json"], "--library", "kazoo"], ["client-check", "--schedule", f["fifo"]]]
    for name in ["cc-client.json", "cc-fault.json", "cc-library.json", "cc-path.json", "cc-format.json", "cc-field.json",
                 "cc-cmd.json"]:
        c.append(["client-check", "--schedule", f[name]])
        c.append(["replay", f[name]])
    c.append(["replay", f["cc-no-finding.json"]])
    # Results another runner wrote: missing, not JSON, of another case, or with nothing to compare to.
    c += [zs + [SCRIPT, "--results", "/no/such.json", "--expect", SCRIPT], zs + [SCRIPT, "--results", f["not-json.json"], "--expect", SCRIPT],
          zs + [SCRIPT, "--results", f["empty.json"], "--expect", SCRIPT], zs + [SCRIPT, "--results", SCRIPT]]
    c += [["completions", "nope"], ["completions"], ["nope"], ["--nope"], ["check", "--nope"], ["recipes", "extra"]]
    # Liveness verdicts that never happened: a trace marked stalled, a correct run cut short.
    for name in ["stalled.json", "cut-stalled.json"]:
        c.append(["replay", f[name]])
    for name in ["stalled.json", "cut.json", "cut-stalled.json", "bad-property.json", "summary.json"]:
        c.append(["real", "--servers", "3", "--reproduce", f[name]])
    # Special files and links that cannot be followed: refused, never read, blocked on or written.
    c += [["replay", f["fifo"]], ["merge", f["fifo"]], ["check", "--manifest", f["fifo"]], ["zk-script", f["fifo"]],
          sim + ["--schedule", f["fifo"]], ["replay", "--html", TRACE, "-o", f["fifo"]],
          ["replay", "--html", TRACE, "-o", "/dev/zero"], ["replay", "--html", TRACE, "-o", f["fifo"], "--force"],
          hd + ["--clients", "5", "-o", "/dev/null"], chk + ["--trace-dir", f["loop"]],
          sim + ["--trace-dir", os.path.join(f["loop"], "deeper")], ["suite", "--trace-dir", f["loop"]]]
    # Flags that would be ignored.
    c += [sim + ["--search", "3", "--seeds", "50", "--faults", "expire"]]
    # The machine's temporary directory is the user's to make, not zklab's.
    c += [[{"TMPDIR": "/nonexistent-zklab-tmp"}, "real", "--recipe", "standard", "--clients", "2"]]
    return c


def run(zklab, args, limit, cwd):
    env = dict(os.environ)
    if args and isinstance(args[0], dict):
        env.update(args[0])
        args = args[1:]
    try:
        p = subprocess.run([zklab] + args, cwd=cwd, capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return "HANG", ""
    err = p.stderr.strip()
    if p.returncode in (101, 134) or "panicked" in p.stderr:
        return "PANIC", err.splitlines()[0] if err else ""
    if p.returncode == 2:
        clean = len(p.stderr.splitlines()) == 1 and err.startswith("error") and not p.stdout
        return ("refused" if clean else "MESSY"), err.splitlines()[0] if err else ""
    return "ACCEPTED", f"exit {p.returncode}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zklab", default=os.path.join(ROOT, "target/release/zklab"))
    ap.add_argument("--limit", type=float, default=20)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="zklab-bad-inputs-")
    try:
        f = files(work)
        all_cases = cases(f) + [["merge", "--trace-dir", "t", lie] for lie in lying_shards(a.zklab, work)]
        counts = {}
        for args in all_cases:
            cwd = tempfile.mkdtemp(dir=work)
            kind, detail = run(a.zklab, args, a.limit, cwd)
            counts[kind] = counts.get(kind, 0) + 1
            if kind != "refused":
                shown = [w if isinstance(w, str) else " ".join(f"{k}={v}" for k, v in w.items()) for w in args]
                print(f"{kind:8} zklab {' '.join(shown)}  [{detail}]")
        print(f"{len(all_cases)} bad inputs: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        return 0 if set(counts) == {"refused"} else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

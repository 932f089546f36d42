#!/usr/bin/env bash
# The fastest zklab this checkout builds, for long checks and the benchmark scripts: the `dist`
# profile (whole-program optimisation, Cargo.toml) guided by a profile of zklab's own runs.
#
# It builds an instrumented zklab, runs the training set below with it, merges what the runs
# counted with the llvm-profdata of rustc's own LLVM, and builds again with those counts, so
# that the compiler lays out and inlines code by how often each branch was taken. The code is
# the same: no verdict, count or trace can change, and the binary must still pass the built-in
# suite and give the manifest's exact state counts (tests/manifest.json) before it is used.
#
# The training set: the suite (every recipe, small worlds, every fault kind), the standard lock
# at N=4 under loss-after-apply and expire and at N=6 without faults (the checker's inner loop
# at the sizes of long checks), and a simulation of 1,000 clients. The rows of
# scripts/bench-spin.sh that decide who is ahead (N=5 and N=6 with faults, N=7 and N=8 without)
# are not in it; its N=4 and N=6 rows are.
#
# Prints the binary's path (target/pgo/zklab) on stdout and its progress on stderr. A build
# whose sources, compiler and training are those of the last one is not done again. About seven
# minutes on 2 cores; needs `rustup component add llvm-tools` (or an llvm-profdata of rustc's
# LLVM major version on the PATH).
# Usage: scripts/build-pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=target/pgo/zklab
git rev-parse --git-dir >/dev/null 2>&1 || {
  echo "error: scripts/build-pgo.sh runs in a git checkout: it stamps a build with the tracked sources" >&2
  exit 2
}

llvm=$(rustc -vV | sed -n 's/^LLVM version: //p')
profdata=$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata
if [ ! -x "$profdata" ]; then
  if command -v llvm-profdata >/dev/null && llvm-profdata merge --version 2>/dev/null | grep "LLVM version ${llvm%%.*}\." >/dev/null; then
    profdata=$(command -v llvm-profdata)
  else
    echo "error: no llvm-profdata for rustc's LLVM $llvm: run \`rustup component add llvm-tools\`" >&2
    exit 2
  fi
fi

# What the binary is made of: the compiler and its flags, this script (its training set) and
# every source.
stamp=$({ rustc -vV; echo "${RUSTFLAGS:-}"; cat "$0"; git ls-files -z -- Cargo.toml Cargo.lock build.rs src model recipes sim |
  xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)
if [ -x "$out" ] && [ "$(cat target/pgo/stamp 2>/dev/null)" = "$stamp" ]; then
  echo "$root/$out"
  exit 0
fi

data=$root/target/pgo/data
rm -rf "$data" target/pgo/stamp
mkdir -p "$data"
echo "build-pgo: building an instrumented zklab (target/pgo/gen)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$data" \
  cargo build --profile dist --quiet --bin zklab --target-dir target/pgo/gen
# The build scripts the instrumented build ran wrote counts too: only the training's are kept.
rm -f "$data"/*.profraw

echo "build-pgo: training (the suite, two checks, one simulation)" >&2
gen=$root/target/pgo/gen/dist/zklab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# train ARGS...: one run of the instrumented zklab; its output is shown only if it fails.
train() {
  (cd "$work" && "$gen" "$@" >"$work/log" 2>&1) || {
    tail -20 "$work/log" >&2
    echo "error: training run \`zklab $*\` failed" >&2
    exit 1
  }
}
train suite
train check --recipe standard --clients 4 --faults loss-after-apply,expire --symmetry -q
train check --recipe standard --clients 6 --symmetry -q
train simulate --recipe standard --clients 1000 --faults loss-after-apply=0.01,expire=3 --seed 1
"$profdata" merge -o "$root/target/pgo/merged.profdata" "$data"

echo "build-pgo: building zklab with the profile (target/pgo/use)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$root/target/pgo/merged.profdata" \
  cargo build --profile dist --quiet --bin zklab --target-dir target/pgo/use
# The same code must give the same verdicts and the same state counts: the suite and the
# manifest (exact counts) exit non-zero otherwise.
built=$root/target/pgo/use/dist/zklab
(cd "$work" && "$built" suite >"$work/log" 2>&1 && "$built" check --manifest "$root/tests/manifest.json" >"$work/log" 2>&1) || {
  tail -20 "$work/log" >&2
  echo "error: the profile-guided build does not give the suite's verdicts or the manifest's counts" >&2
  exit 1
}
cp target/pgo/use/dist/zklab "$out"
echo "$stamp" >target/pgo/stamp
echo "$root/$out"

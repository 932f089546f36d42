# Sourced by the benchmark scripts (scripts/bench.sh, bench-sim.sh, bench-spin.sh,
# bench-first-violation.sh), not a benchmark itself. It sets what every record they append to
# bench/*.jsonl shares, as BENCH_* variables that scripts/bench_record.py (which appends a
# record) reads:
#   BENCH_DATE     the day measured, UTC (YYYY-MM-DD)
#   BENCH_COMMIT   the commit measured (`git rev-parse --short HEAD`)
#   BENCH_DIRTY    "true" when tracked files outside bench/ differed from that commit (the build
#                  measured them, not the commit)
#   BENCH_MACHINE  architecture, cores and memory, so records from two machines are not compared
#   BENCH_BUILD    the build measured: "pgo", scripts/build-pgo.sh's binary
# Each script appends one JSON object per line and per measurement; docs/internals/performance.md
# says what each file holds and quotes the newest records.
BENCH_DATE=$(date -u +%F)
BENCH_COMMIT=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no -- . ':(exclude)bench')" ]; then BENCH_DIRTY=true; else BENCH_DIRTY=false; fi
BENCH_MACHINE="$(uname -m), $(nproc) cores, $(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB"
BENCH_BUILD=pgo
export BENCH_DATE BENCH_COMMIT BENCH_DIRTY BENCH_MACHINE BENCH_BUILD
mkdir -p bench

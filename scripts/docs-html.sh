#!/usr/bin/env bash
# Writes the HTML timeline of every trace a page in docs/ shows as a text timeline
# (`<!-- timeline: traces/X.json -->`) to docs/timelines/X.html; `cargo test --test integration docs::` checks
# that each is a fresh render and that its page links it.
#
#   bash scripts/docs-html.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p docs/timelines
grep -ho '<!-- timeline: [^ ]* -->' docs/*.md | sed 's/<!-- timeline: \(.*\) -->/\1/' | sort -u |
  while read -r trace; do
    ./target/release/zklab replay --html "$trace" -o "docs/timelines/$(basename "$trace" .json).html" >/dev/null
  done
ls docs/timelines | wc -l | xargs echo "timelines written:"

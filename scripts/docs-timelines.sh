#!/usr/bin/env bash
# Rewrites every text timeline a page in docs/ shows (`<!-- timeline: traces/X.json -->` and the
# ```text block after it) as `zklab replay --show` prints it today, then the HTML pages
# (scripts/docs-html.sh). Run it after a change to the model, a recipe or a kept trace makes
# `cargo test --test integration docs::` call a block stale; review the diff like any other.
#
#   bash scripts/docs-timelines.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
python3 - <<'EOF'
import glob, subprocess

MARKER, FENCE = "<!-- timeline: ", " -->\n```text\n"
for page in sorted(glob.glob("docs/*.md")):
    text = open(page).read()
    head, *blocks = text.split(MARKER)
    out = [head]
    for block in blocks:
        trace, rest = block.split(FENCE, 1)
        _, after = rest.split("```", 1)
        shown = subprocess.run(["./target/release/zklab", "replay", "--show", trace],
                               capture_output=True, text=True, check=False).stdout
        # The last line names the trace file and its verdict; the page shows the timeline only.
        timeline = "\n".join(shown.rstrip("\n").split("\n")[:-1]) + "\n"
        out.append(trace + FENCE + timeline + "```" + after)
    fresh = MARKER.join(out)
    if fresh != text:
        open(page, "w").write(fresh)
        print(f"rewrote {page}")
EOF
bash scripts/docs-html.sh

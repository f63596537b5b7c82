#!/usr/bin/env bash
# The whole benchmark in one command (loopback only; about 45 min on 2 cores with the default scenarios).
#
#   bench/run.sh                                   setup, every default scenario, summary and plot
#   SCENARIOS="crawl-1k crawl-10k" RUNS=1 bench/run.sh
#   SCENARIOS=crawl-100k TOOLS="linkhound lychee" bench/run.sh
#   LINKHOUND_REV=HEAD bench/run.sh                measure the last commit, not the work tree
#
# Writes $RESULTS_DIR (default bench/results/): results.jsonl (one line per run, appended), summary.md,
# crawl_scaling.png, versions.txt. Knobs (see run.py --help): SCENARIOS, TOOLS, RUNS, TIMEOUT,
# LINKCHECKER_TIMEOUT, CONC, WORK (/tmp/linkhound-bench), PEERS (/tmp/peers), LINKHOUND, LINKHOUND_REV.
# Never run two at once.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS="${PEERS:-/tmp/peers}"
RESULTS_DIR="${RESULTS_DIR:-$HERE/results}"
export RESULTS="$RESULTS_DIR/results.jsonl"
mkdir -p "$RESULTS_DIR"
"$HERE/setup.sh" > "$RESULTS_DIR/versions.txt"
cat "$RESULTS_DIR/versions.txt"
python3 "$HERE/run.py"
python3 "$HERE/summarize.py" "$RESULTS" > "$RESULTS_DIR/summary.md"
"$PEERS/venv/bin/python" "$HERE/plot.py" "$RESULTS" "$RESULTS_DIR/crawl_scaling.png"
echo "wrote $RESULTS_DIR/summary.md"

#!/usr/bin/env bash
# Profile linkhound on one scenario with py-spy (sampling at 200 Hz; CPU only, idle time excluded).
#
#   bench/profile.sh [SCENARIO]     default crawl-10k; writes bench/results/profile-SCENARIO.{txt,svg}
#
# The .txt lists self time by module, then the top functions by self and by inclusive share; the .svg is
# a flame graph (a second, separate run). Needs setup.sh (py-spy in $PEERS/venv); run nothing beside it.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS="${PEERS:-/tmp/peers}"
WORK="${WORK:-/tmp/linkhound-bench}"
SCENARIO="${1:-crawl-10k}"
OUT="$HERE/results"
P="$WORK/profile/$SCENARIO"
mkdir -p "$OUT" "$P"
read -r -a CMD <<< "$(python3 "$HERE/run.py" cmd "$SCENARIO" linkhound "$P" | tr -d "'")"
SERVER=""
if [[ "$SCENARIO" != local-* ]]; then
    python3 "$HERE/run.py" serve "$SCENARIO" > "$P/serve.log" 2>&1 &
    SERVER=$!
    trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
    for _ in $(seq 300); do grep -q serving "$P/serve.log" 2>/dev/null && break; sleep 0.2; done
fi
SPY="$PEERS/venv/bin/py-spy"
"$SPY" record --rate 200 --format raw -o "$P/stacks.raw" -- "${CMD[@]}" > /dev/null || true
"$SPY" record --rate 200 --format flamegraph -o "$OUT/profile-$SCENARIO.svg" -- "${CMD[@]}" > /dev/null || true
{ echo "# py-spy, $(date -u +%F), linkhound $(git -C "$HERE/.." rev-parse --short "${LINKHOUND_REV:-HEAD}")${LINKHOUND_REV:+ (snapshot)}: ${CMD[*]}"
  python3 "$HERE/profile_top.py" "$P/stacks.raw"; } | tee "$OUT/profile-$SCENARIO.txt"

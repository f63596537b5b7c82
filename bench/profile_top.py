#!/usr/bin/env python3
"""Summarise py-spy's raw (collapsed) stacks: top functions by self and inclusive share, and by package.

    profile_top.py STACKS.raw [--top 30]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")


def where(frame: str) -> tuple[str, str]:
    """(function label, package) of one py-spy frame 'func (path/to/file.py:123)'."""
    m = FRAME.match(frame.strip())
    if not m:
        return frame.strip(), "?"
    path = m.group("file")
    for marker in ("site-packages/", "lib/python3.11/", "/src/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    parts = path.split("/")
    package = parts[0].removesuffix(".py")
    if package == "linkhound" and len(parts) > 1:
        package = "linkhound/" + parts[1].removesuffix(".py")
    return f"{m.group('func')} ({path})", package


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("raw")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    self_t: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    pkg_self: Counter[str] = Counter()
    total = 0
    with open(a.raw) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            count = int(n)
            total += count
            frames = [where(fr) for fr in stack.split(";") if fr and not fr.startswith(("process ", "thread "))]
            if not frames:
                continue
            self_t[frames[-1][0]] += count
            pkg_self[frames[-1][1]] += count
            for label in {fr[0] for fr in frames}:
                incl[label] += count
    print(f"{total} samples (active CPU only)\n")
    print("## self time by package/module\n")
    for pkg, n in pkg_self.most_common(20):
        print(f"{100 * n / total:6.1f}%  {pkg}")
    print(f"\n## top {a.top} functions by self time\n")
    for label, n in self_t.most_common(a.top):
        print(f"{100 * n / total:6.1f}%  {label}")
    print(f"\n## top {a.top} functions by inclusive time\n")
    for label, n in incl.most_common(a.top):
        print(f"{100 * n / total:6.1f}%  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

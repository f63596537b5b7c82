"""`linkhound fix FILE...`: check the links of Markdown and HTML files, and rewrite those that moved for good
(and, with --suggest-https, http:// links whose https:// twin answers the same). A diff unless --write."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from .arguments import Parser, add_config_flags, add_settings_flags, options_from_args
from .fix_plan import FileFix, plan_fixes
from .options import CRAWLING, option_fields
from .settings import Settings

EXIT_OK, EXIT_USAGE, EXIT_TO_FIX, EXIT_INTERRUPTED = 0, 1, 2, 130
# Options of the report, or of crawling, that mean nothing here: fix reads files and writes a diff.
_NOT_HERE = frozenset({"format", "output", "verbose", "summary_only", "all_referrers", "color", "progress",
                       "host_stats", "fail_on_blocked", "suggest_fixes"})


def fix_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="linkhound fix",
        description="Check the links of Markdown and HTML files and rewrite each link that answers with a "
        "permanent redirect (301, 308) to the URL it leads to, keeping its #fragment and every other byte of "
        "the file. Prints a diff; --write applies it.",
        epilog="Exit codes: 0 nothing to fix (or, with --write, every fix written), 2 links to fix (the diff "
        "shows them; with --write, some could not be written), 1 usage, input or config error. Broken links "
        "are not fixed here: `linkhound FILE...` lists them.",
    )
    p.add_argument("inputs", nargs="+", metavar="FILE", help="Markdown or HTML file, directory, or quoted glob")
    p.add_argument("--write", action="store_true", help="rewrite the files in place instead of printing a diff")
    add_config_flags(p)
    crawling = {f.name for f in option_fields(Settings) if f.option.group == CRAWLING}
    add_settings_flags(p, leave_out=_NOT_HERE | crawling)
    return p


def main(args: Sequence[str]) -> int:
    from . import load_config, make_settings, start
    from .loop import run as run_loop

    ns = fix_parser().parse_args(args)
    config = load_config(ns.config or (), discover=not ns.no_config)
    # a config file's crawl (recursive, a state file to resume) is not this command's: it checks the files given
    options = {**config.merged(options_from_args(ns)), "suggest_fixes": True, "recursive": False, "state": None}
    settings = make_settings(**options)
    try:
        report = run_loop(start(ns.inputs, settings, named_in="command line").report())
    except KeyboardInterrupt:  # nothing is written from a check cut short
        _say("interrupted: nothing written")
        return EXIT_INTERRUPTED
    fixes = plan_fixes(report)
    for fix in fixes:
        for edit, why in fix.skipped:
            _say(f"{fix.path}:{edit.line}:{edit.column}: not fixed: {why}")
    changed = [fix for fix in fixes if fix.applied]
    links = sum(len(fix.applied) for fix in changed)
    unwritten = 0
    if ns.write:
        for fix in changed:
            try:
                _write(fix)
            except OSError as e:
                _say(f"{fix.path}: not fixed: can't write it: {(e.strerror or str(e)).lower()}")
                unwritten += len(fix.applied)
        links -= unwritten
    else:
        sys.stdout.writelines(fix.diff() for fix in changed)
    if not settings.quiet:
        broken = report.summary.broken
        if broken:
            _say(f"{broken} broken link{'s' if broken != 1 else ''} (not fixed here: linkhound FILE... lists them)")
        where = f"{links} link{'s' if links != 1 else ''} in {len(changed)} file{'s' if len(changed) != 1 else ''}"
        _say(("fixed " if ns.write else "to fix: ") + where + ("" if ns.write or not links else " (--write to apply)"))
    left = unwritten or any(fix.skipped for fix in fixes)
    return EXIT_TO_FIX if left or (links and not ns.write) else EXIT_OK


def _write(fix: FileFix) -> None:
    """The new bytes in place of the old, by a rename (a crash never leaves half a file), keeping the mode. A
    symlink's target is the file written (the link stays a link); a file with other hard links is written over
    in place, which keeps them one file."""
    path = os.path.realpath(fix.path)
    if os.stat(path).st_nlink > 1:
        with open(path, "r+b") as f:
            f.write(fix.after)
            f.truncate()
        return
    tmp = f"{path}.linkhound-fix"
    try:
        with open(tmp, "wb") as f:
            f.write(fix.after)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _say(text: str) -> None:
    print(f"linkhound fix: {text}", file=sys.stderr)

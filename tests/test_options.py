"""The table of options: every Settings field declares its flag, help and group once; parser, docs and checks agree.

Run this file (`python tests/test_options.py`) to rewrite the option reference in docs/config.md.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import linkhound
from linkhound.cli import build_parser, options_from_args
from linkhound.options import GROUPS, REFERENCE_END, REFERENCE_START, option_fields
from linkhound.settings import Settings, option_reference, setting_names

CONFIG_MD = Path(__file__).parent.parent / "docs" / "config.md"


def spliced(document: str) -> str:
    """document with the text between the reference markers replaced by the generated reference."""
    start, end = document.index(REFERENCE_START), document.index(REFERENCE_END) + len(REFERENCE_END) + 1
    return document[:start] + option_reference() + document[end:]


def test_docs_option_reference_is_the_generated_one() -> None:
    text = CONFIG_MD.read_text()
    assert text.count(REFERENCE_START) == 1 and text.count(REFERENCE_END) == 1
    assert spliced(text) == text, "docs/config.md is out of date: run `python tests/test_options.py`"


def test_every_setting_is_declared_with_a_flag_and_help_unless_config_only() -> None:
    declared = {f.name: f for f in option_fields(Settings)}
    assert list(declared) == setting_names()
    assert [f.name for f in declared.values() if f.option.config_only] == ["hosts"]
    parser_flags = {s: a.dest for a in build_parser()._actions for s in a.option_strings}
    for f in declared.values():
        assert f.option.help and f.option.group in GROUPS, f.name
        if not f.option.config_only:
            assert all(parser_flags.get(flag) == f.name for flag in f.flags), f.name
            if f.kind is bool:
                assert parser_flags.get(f"--no-{f.flag[2:]}") == f.name


def test_every_existing_flag_spelling_is_kept() -> None:
    spellings = {s for a in build_parser()._actions for s in a.option_strings}
    dest = {s: a.dest for a in build_parser()._actions for s in a.option_strings}
    shorts = {s: d for s, d in dest.items() if not s.startswith("--")}
    assert shorts == {"-h": "help", "-V": "version", "-r": "recursive", "-f": "format", "-o": "output",
                      "-v": "verbose", "-H": "header", "-q": "quiet"}
    for flag in ("--max-depth", "--no-robots", "--exclude-all-private", "--no-gitignore", "--scheme",
                 "--index-files", "--accept-for", "--basic-auth", "--http-client", "--summary-only",
                 "--no-progress", "--files-from", "--config", "--no-config", "--print-config", "--version"):
        assert flag in spellings


def test_help_shows_each_default_from_the_field() -> None:
    parser = build_parser()
    helps = {a.dest: a.help or "" for a in parser._actions}
    defaults = Settings()
    assert f"(default: {defaults.max_concurrency})" in helps["max_concurrency"]
    assert f"(default: {defaults.timeout:g})" in helps["timeout"]
    assert "(default: 200..=299)" in helps["accept"]
    assert "(default: 20 MiB)" in helps["max_body_size"]
    assert helps["robots"].endswith("(default: on)") and "default" not in helps["recursive"]
    assert "repeatable" in helps["exclude"] and "comma-separated" in helps["scheme"]
    text = parser.format_help()
    assert "--max-concurrency N" in text and "requests in flight at once (default: 128)" in text


def test_flags_become_the_settings_they_name() -> None:
    ns = build_parser().parse_args(
        ["-r", "--no-robots", "--scheme", "http, https", "--exclude", "a", "--exclude", "b", "-H", "X: 1",
         "--timeout", "3", "--accept", "200,403", "-f", "json", "x.md"]
    )
    opts = options_from_args(ns)
    assert opts == {"recursive": True, "robots": False, "scheme": ("http", "https"), "exclude": ("a", "b"),
                    "header": ("X: 1",), "timeout": 3.0, "accept": "200,403", "format": "json"}
    s = linkhound.make_settings(**opts)
    assert s.accept == frozenset({200, 403}) and s.scheme == ("http", "https")
    assert options_from_args(build_parser().parse_args([])) == {}  # nothing given, nothing over the files


# -- values from Python are checked like values from a file --------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_concurrency": "3"}, "--max-concurrency: expected an integer, got a string"),
        ({"timeout": "soon"}, "--timeout: expected a number, got a string"),
        ({"recursive": 1}, "--recursive: expected true or false, got a number (1)"),
        ({"max_depth": True}, "--max-depth: expected an integer, got a boolean (true)"),
        ({"exclude": "x"}, "--exclude: expected an array of strings, got a string"),
        ({"exclude": [1]}, "--exclude: expected an array of strings, got an array"),
        ({"hosts": []}, "--hosts: expected a table, got an array"),
        ({"accept": 200}, "--accept: expected a string like"),
        ({"method": "post"}, "--method: must be 'head' or 'get', got 'post'"),
        ({"max_pages": 0}, "--max-pages: must be at least 1, got 0"),
        ({"header": ["X-A b: 1"]}, "'X-A b' is not a header name"),
        ({"header": ["X-A: a\nb"]}, "the value of 'X-A' holds a control character"),
        ({"user_agent": "bot\r\nX: y"}, "--user-agent: holds a control character"),
    ],
)
def test_library_option_of_a_wrong_type_is_an_option_error(options: dict[str, object], message: str) -> None:
    with pytest.raises(linkhound.OptionError) as caught:
        linkhound.make_settings(**options)
    assert message in str(caught.value)
    assert caught.value.option == next(iter(options))


async def test_library_check_with_a_bad_option_raises_before_any_work() -> None:
    with pytest.raises(linkhound.OptionError, match="max-concurrency: expected an integer"):
        await linkhound.check(["x"], max_concurrency="3")
    suggestion = r"unknown option 'max_concurency' \(did you mean 'max_concurrency'\?\)"
    with pytest.raises(linkhound.UsageError, match=suggestion):
        await linkhound.check(["x"], max_concurency=3)


def test_python_values_are_normalised_once() -> None:
    s = linkhound.make_settings(exclude=["a"], timeout=3, accept=[403, "200"], scheme=("mailto",))
    assert s.exclude == ("a",) and s.timeout == 3.0 and isinstance(s.timeout, float)
    assert s.accept == frozenset({200, 403})
    assert Settings(exclude=["a"]).exclude == ("a",)  # type: ignore[arg-type]


def test_the_table_rejects_an_undeclared_field() -> None:
    from dataclasses import dataclass

    from linkhound.options import option

    @dataclass(frozen=True)
    class Table:
        declared: int = option(1, "a number", "requests")
        plain: int = 2

    with pytest.raises(TypeError, match="Table.plain is not declared with option"):
        option_fields(Table)


def test_settings_config_and_hosts_import_without_a_circle() -> None:
    # imports inside functions count: a lazy import only hides a circle
    src = Path(linkhound.__file__).parent
    mods = ("settings", "config", "hosts", "env", "options", "exceptions", "filters", "host_pool")
    graph = {m: _imports(src / f"{m}.py") & set(mods) for m in mods}
    done: set[str] = set()

    def visit(m: str, path: tuple[str, ...]) -> None:
        assert m not in path, " -> ".join((*path, m))
        if m not in done:
            for n in graph[m]:
                visit(n, (*path, m))
            done.add(m)

    for m in mods:
        visit(m, ())


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
    return found


if __name__ == "__main__":
    CONFIG_MD.write_text(spliced(CONFIG_MD.read_text()))
    print(f"rewrote the option reference in {CONFIG_MD}", file=sys.stderr)

"""Config files: precedence, loud errors that name the file and key, ${ENV} secrets, the example, --print-config."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import linkhound
from linkhound.config import load_config
from linkhound.settings import setting_names
from server import Site, html

EXAMPLE = Path(__file__).parent.parent / "docs" / "linkhound.example.toml"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("LINKHOUND_TEST")} | {"NO_COLOR": "1"}


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "linkhound", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, env={**ENV, **(env or {})},
    )


async def arun(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The CLI in a subprocess, without blocking the event loop that serves the test site."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "linkhound", "--no-progress", *args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env={**ENV, **(env or {})},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def effective(*args: str, cwd: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    r = run("--print-config", *args, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    return tomllib.loads(r.stdout)


def one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr


# -- precedence -----------------------------------------------------------------------------------------


def test_precedence_defaults_pyproject_linkhound_toml_config_files_flags(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.linkhound]\n"
        "max_depth = 1\nmax_pages = 1\nhost_burst = 1\nmax_retries = 1\ntimeout = 1.0\n"
    )
    (tmp_path / "linkhound.toml").write_text("max_pages = 2\nhost_burst = 2\nmax_retries = 2\ntimeout = 2.0\n")
    (tmp_path / "a.toml").write_text("host_burst = 3\nmax_retries = 3\ntimeout = 3.0\n")
    (tmp_path / "b.toml").write_text("max_retries = 4\ntimeout = 4.0\n")

    got = effective("--config", "a.toml", "--config", "b.toml", "--timeout", "5", cwd=tmp_path)

    assert got["max_depth"] == 1  # pyproject.toml only
    assert got["max_pages"] == 2  # linkhound.toml over pyproject.toml
    assert got["host_burst"] == 3  # --config over linkhound.toml
    assert got["max_retries"] == 4  # a later --config over an earlier one
    assert got["timeout"] == 5.0  # a flag over every file
    assert got["max_concurrency"] == 128  # nobody set it: the default
    assert "pyproject.toml [tool.linkhound], linkhound.toml, a.toml, b.toml" in run(
        "--print-config", "--config", "a.toml", "--config", "b.toml", cwd=tmp_path
    ).stdout

    # --no-config skips the files of the directory, not those named with --config
    got = effective("--no-config", "--config", "a.toml", cwd=tmp_path)
    assert "max_depth" not in got and got["host_burst"] == 3


def test_library_config_takes_the_same_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.linkhound]\nmax_depth = 1\nmax_pages = 1\n")
    (tmp_path / "linkhound.toml").write_text("max_pages = 2\nmax_retries = 2\n")
    (tmp_path / "extra.toml").write_text("max_retries = 3\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(["extra.toml"])
    s = linkhound.make_settings(config=config, timeout=9)
    assert (s.max_depth, s.max_pages, s.max_retries, s.timeout) == (1, 2, 3, 9.0)
    # config=True reads what the CLI reads; a path reads only that file
    assert linkhound.make_settings(config=True).max_retries == 2
    s = linkhound.make_settings(config="extra.toml")
    assert (s.max_depth, s.max_retries) == (None, 3)


def test_flags_undo_what_a_file_turned_on(tmp_path: Path) -> None:
    (tmp_path / "linkhound.toml").write_text("recursive = true\nrobots = false\nexclude = ['a']\n")
    got = effective("--no-recursive", "--robots", "--exclude", "b", cwd=tmp_path)
    assert got["recursive"] is False and got["robots"] is True
    assert got["exclude"] == ["b"]  # a flag replaces a list; it doesn't add to it


def test_hosts_tables_merge_by_host_across_files(tmp_path: Path) -> None:
    (tmp_path / "linkhound.toml").write_text(
        '[hosts."a.test"]\nrate = 1.0\n[hosts."b.test"]\nconcurrency = 2\n'
    )
    (tmp_path / "more.toml").write_text('[hosts."b.test"]\nconcurrency = 3\n[hosts."c.test"]\nburst = 4\n')
    got = effective("--config", "more.toml", cwd=tmp_path)
    assert got["hosts"] == {"a.test": {"rate": 1.0}, "b.test": {"concurrency": 3}, "c.test": {"burst": 4}}


# -- errors name the file and the key ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max_concurency = 3\n", "unknown key 'max_concurency' (did you mean 'max_concurrency'?)"),
        ("max_depth = '3'\n", "max_depth: expected an integer, got a string"),
        ("recursive = 1\n", "recursive: expected true or false, got a number (1)"),
        ("exclude = 'x'\n", "exclude: expected an array of strings"),
        ("timeout = 'soon'\n", "timeout: expected a number"),
        ("max_concurrency = 0\n", "max_concurrency: must be at least 1, got 0"),
        ("accept = '2xx'\n", "accept: '2xx' is not a status code or range"),
        ("method = 'post'\n", "method: must be 'head' or 'get'"),
        ("http_client = 'curl'\n", "http_client: must be 'auto', 'native', 'reqwest' or 'aiohttp', got 'curl'"),
        ("http_client = 'reqwest'\nexclude_private = true\n", "http_client: reqwest can't vet the addresses"),
        ("format = 'xml'\n", "format: unknown format 'xml'"),
        ("exclude = ['(']\n", "exclude: bad regular expression '('"),
        ("[hosts.'a.test']\nrate = -1\n", "hosts: \"a.test\": rate must be positive"),
        ("[hosts.'a.test']\nrat = 1\n", "hosts: \"a.test\": unknown key(s) rat"),
        ("[[status]]\npattern = 'x'\naccept = [1]\n", "[[status]] #1: accept: '1' is not a status code"),
        ("[[status]]\npattern = 'x'\n", "[[status]] #1: accept must be an array of status codes"),
        ("[[status]]\npatern = 'x'\naccept = [403]\n", "[[status]] #1: unknown key 'patern'"),
        ("max_depth = \n", "not valid TOML"),
        ("scheme = ['http', 'gopher']\n", "scheme: unknown scheme 'gopher' (known: file, http, https, mailto)"),
        ("max_pages = 0\n", "max_pages: must be at least 1, got 0"),
        ("base_url = 'docs.example.org'\n", "base_url: 'docs.example.org' is not an absolute http(s) or file URL"),
        ("scope_domain = ['https://a.test/']\n", "scope_domain: 'https://a.test/' is not a host name"),
        ("root_dir = 'missing'\n", "root_dir: 'missing' doesn't exist (it must be an existing directory)"),
        ("inputs = 'README.md'\n", "inputs: expected an array of strings, got a string"),
    ],
)
def test_bad_config_file_is_one_line_naming_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "linkhound.toml").write_text(text)
    err = one_line_error(run("README.md", cwd=tmp_path))
    assert f"linkhound: error: linkhound.toml: {expected}" in err


def test_errors_name_pyproject_and_config_files(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.linkhound]\nmax_dept = 2\n")
    err = one_line_error(run("x.md", cwd=tmp_path))
    assert "pyproject.toml [tool.linkhound]: unknown key 'max_dept'" in err
    (tmp_path / "pyproject.toml").write_text("[tool.linkhound]\nmax_depth = 2\n")
    (tmp_path / "ci.toml").write_text("timeout = false\n")
    err = one_line_error(run("--config", "ci.toml", "x.md", cwd=tmp_path))
    assert "ci.toml: timeout: expected a number, got a boolean (false)" in err
    err = one_line_error(run("--config", "missing.toml", "x.md", cwd=tmp_path))
    assert "missing.toml: can't read: no such file or directory" in err
    (tmp_path / "pyproject.toml").write_text("[tool.linkhound\n")
    err = one_line_error(run("x.md", cwd=tmp_path))
    assert "pyproject.toml: not valid TOML" in err
    # a pyproject.toml without [tool.linkhound] is not ours to judge
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert run("--print-config", cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'x'\n")  # not even read: no "linkhound" in it
    assert run("--print-config", cwd=tmp_path).returncode == 0


def test_bad_linkhoundignore_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / ".linkhoundignore").write_text("# fine\n^https://ok/\n(\n")
    err = one_line_error(run("x.md", cwd=tmp_path))
    assert ".linkhoundignore:3: bad regular expression '('" in err


# -- secrets from the environment -------------------------------------------------------------------------


def test_missing_environment_variable_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "linkhound.toml").write_text('header = ["X-Token: ${LINKHOUND_TEST_TOKEN}"]\n')
    err = one_line_error(run("x.md", cwd=tmp_path))
    assert "linkhound.toml: header[0]: environment variable LINKHOUND_TEST_TOKEN is not set" in err
    (tmp_path / "hosts.toml").write_text('[hosts."a.test"]\nheaders = { X-Key = "${LINKHOUND_TEST_KEY}" }\n')
    err = one_line_error(run("--no-config", "--host-config", "hosts.toml", "x.md", cwd=tmp_path))
    assert 'hosts.toml: hosts."a.test".headers.X-Key: environment variable LINKHOUND_TEST_KEY is not set' in err


def test_bad_host_header_is_a_usage_error_naming_host_and_header(tmp_path: Path) -> None:
    (tmp_path / "hosts.toml").write_text('[hosts."a.test"]\nheaders = { "X-Key" = "one\\ntwo" }\n')
    err = one_line_error(run("--no-config", "--host-config", "hosts.toml", "x.md", cwd=tmp_path))
    assert 'hosts.toml: hosts."a.test".headers: the value of \'X-Key\' holds a control character' in err
    (tmp_path / "hosts.toml").write_text('[hosts."a.test"]\nheaders = { "X Key" = "v" }\n')
    err = one_line_error(run("--no-config", "--host-config", "hosts.toml", "x.md", cwd=tmp_path))
    assert 'hosts.toml: hosts."a.test".headers: \'X Key\' is not a header name' in err


async def test_secrets_from_environment_are_sent_but_never_shown(site: Site, tmp_path: Path) -> None:
    secret = "s3cr3t-value-42"
    env = {"LINKHOUND_TEST_TOKEN": secret, "LINKHOUND_TEST_PASSWORD": "pw-" + secret}
    host = site.base.removeprefix("http://")
    (tmp_path / "linkhound.toml").write_text(
        'header = ["X-Token: ${LINKHOUND_TEST_TOKEN}", "X-Literal: $${NOT_EXPANDED}"]\n'
        f"basic_auth = ['^{re.escape(site.base)}/ alice:${{LINKHOUND_TEST_PASSWORD}}']\n"
        f'[hosts."{host}"]\nheaders = {{ X-Api = "key-${{LINKHOUND_TEST_TOKEN}}" }}\n'
    )
    r = run("--print-config", cwd=tmp_path, env=env)
    shown = r.stdout
    assert r.returncode == 0, r.stderr
    assert secret not in shown
    assert '"X-Token: ***"' in shown and '"X-Literal: ${NOT_EXPANDED}"' in shown
    assert "alice:***" in shown and 'X-Api = "key-***"' in shown

    site.page("/index.html", html("/missing"))
    for fmt in ("json", "compact"):
        code, out, err = await arun("-f", fmt, site.url("/index.html"), cwd=tmp_path, env=env)
        assert code == 2 and secret not in out + err
    seen = site.requests[0].headers
    assert seen["X-Token"] == secret and seen["X-Literal"] == "${NOT_EXPANDED}"
    assert seen["X-Api"] == "key-" + secret
    assert seen["Authorization"].startswith("Basic ")


# -- the example file and --print-config ------------------------------------------------------------------


def _example_keys(text: str) -> set[str]:
    keys = set(re.findall(r"^#? ?([a-z_][a-z0-9_]*) =", text, re.MULTILINE))  # soft_404 has digits
    keys |= {m for m in re.findall(r"^\[+([a-z_]+)", text, re.MULTILINE)}
    return keys


def test_example_config_has_every_key_and_loads_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = EXAMPLE.read_text()
    missing = set(setting_names()) - _example_keys(text)
    assert not missing, f"docs/linkhound.example.toml lacks {sorted(missing)}"
    assert {"inputs", "files_from", "status"} <= _example_keys(text)

    # as shipped: no environment variable needed
    for name in re.findall(r"\$\{([A-Za-z_]+)\}", text):
        monkeypatch.delenv(name, raising=False)
    config = load_config([str(EXAMPLE)], discover=False)
    assert config.inputs == ("README.md", "docs/") and not config.secrets
    monkeypatch.chdir(tmp_path)
    (tmp_path / "example.toml").write_text(text)
    s = linkhound.make_settings(config="example.toml")
    assert s.host_settings["api.github.com"].rate == 1.0 and len(s.status_rules) == 3

    # the commented-out keys are valid too: uncomment them and load again
    monkeypatch.setenv("GITHUB_TOKEN", "token-1")
    monkeypatch.setenv("INTRANET_PASSWORD", "password-1")
    (tmp_path / "hosts.toml").write_text('[hosts."a.test"]\nrate = 2.0\n')
    (tmp_path / "site").mkdir()  # root_dir must be an existing directory
    uncommented = re.sub(r"^# ([a-z_][a-z0-9_]* =)", r"\1", text, flags=re.MULTILINE)
    assert set(re.findall(r"^([a-z_][a-z0-9_]*) =", uncommented, re.MULTILINE)) >= set(setting_names()) - {"hosts"}
    (tmp_path / "all.toml").write_text(uncommented)
    config = load_config(["all.toml"], discover=False)
    s = linkhound.make_settings(config=config)
    assert s.max_depth == 3 and s.check_fragments is True and config.files_from == "urls.txt"
    assert "a.test" in s.host_settings and s.credentials[0].password == "password-1"
    assert s.host_settings["api.github.com"].headers == {"Authorization": "Bearer token-1"}


def test_print_config_reads_back_as_the_same_settings(tmp_path: Path) -> None:
    (tmp_path / "linkhound.toml").write_text(
        "inputs = ['docs/']\nmax_depth = 2\naccept = [200, 201, 202, 403]\nexclude = ['a\"b\\\\c']\n"
        "accept_for = [\"x\\\\.com 999\"]\nheader = ['X-A: 1']\n"
        '[hosts."h.test:8080"]\nrate = 0.5\nheaders = { "X-B" = "2" }\n[[status]]\npattern = "y"\naccept = "401"\n'
    )
    first = run("--print-config", "-r", "--timeout", "3", cwd=tmp_path).stdout
    printed = tmp_path / "printed.toml"
    printed.write_text(first)
    again = run("--print-config", "--no-config", "--config", "printed.toml", cwd=tmp_path).stdout
    strip = "\n".join(line for line in first.splitlines() if not line.startswith("# read:"))
    assert strip == "\n".join(line for line in again.splitlines() if not line.startswith("# read:"))
    got = tomllib.loads(first)
    assert got["accept"] == "200..=202,403" and got["accept_for"] == ["x\\.com 999", "y 401"]
    assert got["inputs"] == ["docs/"] and got["recursive"] is True and got["timeout"] == 3.0


# -- config reaches the run -------------------------------------------------------------------------------


async def test_inputs_hosts_and_status_rules_from_config_reach_the_server(site: Site, tmp_path: Path) -> None:
    site.page("/index.html", html("/ok", "/members", "/gone"))
    site.page("/ok", "fine")
    site.status("/members", 403)
    host = site.base.removeprefix("http://")
    (tmp_path / "urls.txt").write_text(site.url("/index.html") + "\n")
    (tmp_path / "linkhound.toml").write_text(
        'files_from = "urls.txt"\n'
        f'[hosts."{host}"]\nheaders = {{ X-Team = "docs" }}\n'
        '[[status]]\npattern = "/members$"\naccept = [403]\n'
    )
    code, out, err = await arun(cwd=tmp_path)  # no inputs on the command line: the config's
    assert code == 2, out + err  # /gone is still broken
    assert "/gone" in out and "/members" not in out
    assert all(r.headers.get("X-Team") == "docs" for r in site.requests)
    assert site.hits("/index.html") == 1

    # inputs on the command line replace the config's
    site.requests.clear()
    code, out, _ = await arun(site.url("/ok"), cwd=tmp_path)
    assert code == 0 and site.hits("/index.html") == 0 and site.hits("/ok") == 1


async def test_library_check_reads_a_config_file(site: Site, tmp_path: Path) -> None:
    site.page("/index.html", html("/skip-me", "/ok"))
    site.page("/ok", "fine")
    config = tmp_path / "c.toml"
    config.write_text(f'exclude = ["/skip-me$"]\ninputs = ["{site.url("/index.html")}"]\n')
    report = await linkhound.check([], config=str(config), max_retries=0)
    statuses = {r.url.removeprefix(site.base): r.status for r in report.results}
    assert statuses["/skip-me"] is linkhound.Status.EXCLUDED and statuses["/ok"] is linkhound.Status.OK
    assert site.hits("/skip-me") == 0


def test_every_flag_has_a_config_key() -> None:
    from linkhound.cli import build_parser
    from linkhound.config import INPUT_KEYS

    command_line_only = {"help", "version", "config", "no_config", "print_config", "dump", "dump_inputs", "redis",
                         "job", "lease", "redis_timeout"}
    dests = {a.dest for a in build_parser()._actions} - command_line_only
    assert dests - {"inputs"} <= set(setting_names()) | set(INPUT_KEYS)
    assert set(setting_names()) - {"hosts"} <= dests  # and every setting but [hosts] tables has a flag

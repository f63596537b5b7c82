"""The package's one public face: __all__ lists exactly what it exports."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aiohttp import web

import linkhound
from server import Site


def test_all_matches_the_public_names() -> None:
    public = {name for name in dir(linkhound) if not name.startswith("_") and not _is_module(name)}
    assert sorted(linkhound.__all__) == linkhound.__all__
    assert set(linkhound.__all__) == public | {"__version__"}


def _is_module(name: str) -> bool:
    return type(getattr(linkhound, name)).__name__ == "module"


def test_import_does_not_load_the_http_stack() -> None:
    code = "import sys, linkhound; print('aiohttp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


async def test_a_run_holds_back_full_collections_and_restores_the_thresholds(site: Site) -> None:
    import gc

    seen: list[tuple[int, int, int]] = []

    async def page(request: web.Request) -> web.StreamResponse:
        seen.append(gc.get_threshold())
        return web.Response(text="ok")

    site.handler("/", page)
    before = gc.get_threshold()
    report = await linkhound.check([site.url("/")])
    assert report.summary.success
    assert seen and seen[0][0] >= 50_000 and seen[0][2] >= 1_000  # raised while the run was going on
    assert gc.get_threshold() == before  # and put back after


async def test_overlapping_runs_put_back_the_thresholds_the_first_found(site: Site) -> None:
    import gc

    answer = {"/a": asyncio.Event(), "/b": asyncio.Event()}

    async def when_told(request: web.Request) -> web.StreamResponse:
        await answer[request.path].wait()
        return web.Response(text="ok")

    async def started(path: str) -> asyncio.Future[linkhound.Report]:
        run = asyncio.ensure_future(linkhound.check([site.url(path)]))
        while not site.hits(path):
            await asyncio.sleep(0.01)
        return run

    site.handler("/a", when_told)
    site.handler("/b", when_told)
    before = gc.get_threshold()
    a = await started("/a")
    b = await started("/b")
    answer["/a"].set()
    assert (await a).summary.success
    assert gc.get_threshold()[0] >= 50_000  # b still runs: still raised
    answer["/b"].set()
    assert (await b).summary.success
    assert gc.get_threshold() == before


async def test_a_url_list_run_loads_no_parser_cookie_or_proxy_machinery(site: Site, tmp_path: Path) -> None:
    # Start-up time is the sum of what gets imported: a run that reads no HTML, no config file, no cookie and
    # no proxy setting shouldn't load the modules that only those need.
    site.page("/a", "ok")
    site.page("/b", "ok")
    (tmp_path / "urls.txt").write_text(f"{site.url('/a')}\n{site.url('/b')}\n")
    lazy = ["linkhound.extract.html", "selectolax.lexbor", "tomllib", "http.cookiejar", "urllib.request",
            "email.utils", "multidict", "aiohttp",
            # nor those of options that are off: robots.txt (read in crawls), sitemaps, sitemap drift, TLS
            # expiry, --changed-since, fixes; nor the soft-404 probe's random names (hmac, hashlib)
            "linkhound.robots", "linkhound.sitemap_drift", "linkhound.tls_expiry", "linkhound.changed_lines",
            "linkhound.fix_finder", "linkhound.extract.sitemap", "linkhound.extract.css", "pyexpat", "secrets"]
    code = (
        "import sys, linkhound.cli\n"
        "code = linkhound.cli.main(['--format', 'json', '--output', 'out.json', 'urls.txt'])\n"
        f"print(code, [m for m in {lazy!r} if m in sys.modules])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, cwd=tmp_path, env=env,
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    assert out.decode().strip() == "0 []"
    assert site.hits("/a") == site.hits("/b") == 1


async def test_a_url_list_run_loads_no_json_encoder_before_its_requests(site: Site, tmp_path: Path) -> None:
    # orjson (and the datetime, uuid and platform modules it loads: ~10 ms) waits for the first JSON text, made
    # while the run waits on answers; in two processes (--jobs unset: here, whatever the size and the cores),
    # for the first line between them, which a list whose second process never joins makes only at the end.
    # Nor are the modules only some runs use loaded before the first request: json (--print-config, messages),
    # shutil (argparse's help width), tempfile (a forked report), random (backoff), pickle (parsing workers,
    # a second process started as a program)
    site.page("/a", "ok")
    (tmp_path / "urls.txt").write_text(f"{site.url('/a')}\n")
    later = ["orjson", "json", "shutil", "tempfile", "random", "pickle"]
    code = (
        "import sys, linkhound.cli, linkhound.loop, linkhound.shard\n"
        "linkhound.shard._AUTO_BYTES, linkhound.shard.cores = 1, lambda: 2\n"
        "run = linkhound.loop.run\n"
        "def started(coro):\n"
        f"    print([m for m in {later!r} if m in sys.modules], 'linkhound.shard_run' in sys.modules, flush=True)\n"
        "    return run(coro)\n"
        "linkhound.loop.run = started\n"
        "code = linkhound.cli.main(['--format', 'json', '--output', 'out.json', 'urls.txt'])\n"
        "print(code, 'orjson' in sys.modules)\n"
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", code, cwd=tmp_path,
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    # as the loop starts (a run of two processes); then at the end, the report's
    assert out.decode().split("\n") == ["[] True", "0 True", ""]
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["total"] == 1


def test_an_offline_docs_run_loads_no_http_stack(tmp_path: Path) -> None:
    # --offline sends nothing: the HTTP stack (pyreqwest and its TLS set-up, or aiohttp) is never composed
    (tmp_path / "a.md").write_text("# A\n[b](b.md#b) [gone](gone.md) <https://example.com/>\n")
    (tmp_path / "b.md").write_text("# B\n")
    code = (
        "import sys, linkhound.cli\n"
        "code = linkhound.cli.main(['--offline', '--quiet', '--format', 'json', '--output', 'out.json', '.'])\n"
        "print(code, [m for m in sys.modules if m.startswith(('pyreqwest', 'aiohttp', 'linkhound.reqwest'))])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2 []"


async def test_an_offline_client_composes_its_stack_at_a_first_request(site: Site) -> None:
    from linkhound.client import HttpClient
    from linkhound.transport import ClientOptions

    site.page("/a", "ok")
    async with HttpClient(ClientOptions(8, 5.0, 5, 1 << 20, "test", {}, offline=True)) as client:
        first, second = await asyncio.gather(*(client.fetch(site.url("/a"), "GET", lambda _: True) for _ in "12"))
    assert first.status == second.status == 200 and site.hits("/a") == 2


async def test_one_string_or_path_is_one_input(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[b](b.md) [gone](gone.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    for one in (str(tmp_path / "a.md"), tmp_path / "a.md"):
        report = await linkhound.check(one)
        assert sorted(r.url.rsplit("/", 1)[1] for r in report.results) == ["b.md", "gone.md"]
        events = [e async for e in linkhound.crawl(one)]
        assert sorted(e.url.rsplit("/", 1)[1] for e in events if isinstance(e, linkhound.Result)) == [
            "b.md", "gone.md"]
    report = await linkhound.check([tmp_path / "b.md", str(tmp_path / "a.md")])  # paths in a list too
    assert len(report.results) == 2


async def test_path_options_and_config_files_may_be_paths(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[x](/b.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    (tmp_path / "lh.toml").write_text(f"root_dir = {str(tmp_path)!r}\n")
    settings = linkhound.make_settings(root_dir=tmp_path, cache_file=tmp_path / "c.sqlite")
    assert (settings.root_dir, settings.cache_file) == (str(tmp_path), str(tmp_path / "c.sqlite"))
    for config in (tmp_path / "lh.toml", [tmp_path / "lh.toml"]):
        report = await linkhound.check(tmp_path / "a.md", config=config)
        assert report.summary.success and report.summary.ok == 1
    with pytest.raises(linkhound.UsageError, match="config: expected True, a path or a list of paths, got 3"):
        await linkhound.check(tmp_path / "a.md", config=3)  # type: ignore[arg-type]


async def test_inputs_of_another_type_are_a_usage_error() -> None:
    with pytest.raises(linkhound.UsageError, match="inputs: expected a string, a path or a list of them, got int"):
        await linkhound.check(3)  # type: ignore[arg-type]
    with pytest.raises(linkhound.UsageError, match="inputs: expected strings or paths, got bytes"):
        await linkhound.check([b"a.md"])  # type: ignore[list-item]


async def test_one_except_clause_catches_every_bad_call(tmp_path: Path) -> None:
    assert issubclass(linkhound.InputError, linkhound.UsageError)
    for call in (linkhound.check(str(tmp_path / "missing.md")), linkhound.check(""),
                 linkhound.check("x.md", max_depth="1")):
        with pytest.raises(linkhound.UsageError):
            await call


def _mypy_errors(tmp_path: Path, program: str) -> list[str]:
    """The errors `mypy --strict` finds in program, a user's module, checked against this linkhound."""
    (tmp_path / "user.py").write_text(textwrap.dedent(program))
    env = {**os.environ, "MYPYPATH": str(Path(linkhound.__file__).parents[1])}  # (this source, not an install)
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir",
                        str(tmp_path / "mypy-cache"), "user.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return [line for line in r.stdout.splitlines() if ": error:" in line]


def test_mypy_finds_misspelled_names_of_the_package(tmp_path: Path) -> None:
    errors = _mypy_errors(tmp_path, """
        import linkhound

        async def main() -> None:
            report = await linkhound.chek(["docs/"])
            settings: linkhound.Setings = linkhound.make_settings()
            print(report, settings)

        async def fine() -> linkhound.Report:
            settings: linkhound.Settings = linkhound.make_settings(max_concurrency=4)
            return await linkhound.check(["docs/"], settings)
    """)
    assert len(errors) == 2, errors
    assert 'user.py:5: error: Module has no attribute "chek"' in errors[0]
    assert 'user.py:6: error: Name "linkhound.Setings" is not defined' in errors[1]


class _AsyncSink:
    async def __call__(self, event: linkhound.Result | linkhound.Page) -> None:
        pass


async def test_an_async_or_uncallable_on_event_is_a_usage_error_before_any_request(site: Site) -> None:
    async def on_event(event: linkhound.Result | linkhound.Page) -> None:
        pass

    site.page("/", "ok")
    for sink in (on_event, functools.partial(on_event), _AsyncSink()):
        with pytest.raises(linkhound.UsageError, match="on_event: it is called, not awaited"):
            await linkhound.check(site.url("/"), on_event=sink)  # type: ignore[arg-type]
        with pytest.raises(linkhound.UsageError, match="on_event: it is called, not awaited"):
            linkhound.start(site.url("/"), on_event=sink)  # type: ignore[arg-type]
    with pytest.raises(linkhound.UsageError, match="on_event: expected a function that takes a Result or a Page"):
        await linkhound.check(site.url("/"), on_event=3)  # type: ignore[arg-type]
    assert site.requests == []
    seen: list[linkhound.Result | linkhound.Page] = []
    assert (await linkhound.check(site.url("/"), on_event=seen.append)).summary.success
    assert [e.url for e in seen if isinstance(e, linkhound.Result)] == [site.url("/")]


def test_mypy_rejects_an_async_on_event(tmp_path: Path) -> None:
    errors = _mypy_errors(tmp_path, """
        import linkhound

        async def sink(event: linkhound.Result | linkhound.Page) -> None:
            pass

        async def main() -> None:
            await linkhound.check("docs/", on_event=sink)
            linkhound.start("docs/", on_event=sink)
            await linkhound.check("docs/", on_event=print)
    """)
    assert [e.split(": error:")[0] for e in errors] == ["user.py:8", "user.py:9"], errors


async def test_settings_transport_and_files_from_of_another_type_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(linkhound.UsageError, match=r"settings: expected a linkhound.Settings .* got dict"):
        await linkhound.check("x.md", {"max_depth": 2})  # type: ignore[arg-type]
    with pytest.raises(linkhound.UsageError, match="transport: expected an object with async open"):
        await linkhound.check("x.md", transport="x")  # type: ignore[arg-type]
    with pytest.raises(linkhound.UsageError, match="files_from: expected a path, got int"):
        await linkhound.check([], files_from=3)  # type: ignore[arg-type]
    with pytest.raises(linkhound.InputError) as caught:  # a path is read as its string is, and named so
        await linkhound.check([], files_from=tmp_path / "missing.txt")
    assert caught.value.source == str(tmp_path / "missing.txt")


def test_a_bad_hosts_table_is_an_option_error_of_hosts() -> None:
    for hosts, problem in (({"h": {"concurrency": -1}}, '"h": concurrency and burst must be at least 1'),
                           ({"h": {"rat": 1}}, '"h": unknown key(s) rat'), ({"h": 3}, '"h" must be a table')):
        with pytest.raises(linkhound.OptionError) as caught:
            linkhound.make_settings(hosts=hosts)
        assert caught.value.option == "hosts" and caught.value.problem.startswith(problem)


def test_mypy_takes_the_report_types_and_path_options_and_keeps_counts_read_only(tmp_path: Path) -> None:
    errors = _mypy_errors(tmp_path, """
        from pathlib import Path

        import linkhound
        from linkhound.mock_transport import MockResponse, MockTransport

        async def main() -> None:
            transport = MockTransport(lambda request: MockResponse(200))
            report = await linkhound.check([], files_from=Path("urls.txt"), transport=transport)
            drift: linkhound.SitemapDrift | None = report.sitemap_drift
            print(drift, report.summary.by_status.get(linkhound.Status.OK, 0))
            report.summary.by_status[linkhound.Status.OK] = 1
    """)
    assert [e.split(": error:")[0] for e in errors] == ["user.py:12"], errors
    assert "Unsupported target for indexed assignment" in errors[0]


async def test_options_of_the_commands_printed_report_are_refused_as_keywords(tmp_path: Path, site: Site) -> None:
    """format, output, quiet and the like would do nothing in a library run (it prints nothing and returns the
    Report): a keyword of check, start or crawl that sets one is a UsageError naming it. A config file and a
    Settings may hold them (they are the command's too), and make_settings takes them."""
    site.page("/", "ok")
    refused = {"format": "json", "output": str(tmp_path / "out.json"), "verbose": True, "quiet": True,
               "color": "always", "progress": False, "summary_only": True, "all_referrers": True}
    for name, value in refused.items():
        with pytest.raises(linkhound.UsageError, match=f"^{name} is an option of the command's printed report"):
            await linkhound.check(site.url("/"), **{name: value})
        with pytest.raises(linkhound.UsageError, match=f"^{name} is an option"):
            linkhound.start(site.url("/"), **{name: value})
        with pytest.raises(linkhound.UsageError, match=f"^{name} is an option"):
            await anext(linkhound.crawl(site.url("/"), **{name: value}))
    assert site.requests == [] and not (tmp_path / "out.json").exists()
    (tmp_path / "linkhound.toml").write_text('format = "json"\nquiet = true\n')
    report = await linkhound.check(site.url("/"), config=tmp_path / "linkhound.toml", max_concurrency=4)
    assert report.summary.success
    assert (await linkhound.check(site.url("/"), linkhound.make_settings(**refused))).summary.success

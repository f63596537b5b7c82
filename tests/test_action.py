"""The GitHub Action (action.yml): its structure, and its scripts run with bash the way a runner runs them."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from server import Site

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).parent.parent
ACTION = REPO / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# Where the tests' own linkhound lives: it stands in for the one the install step would put in a venv.
VENV_BIN = Path(sys.executable).parent


def action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def steps() -> list[dict[str, Any]]:
    result = action()["runs"]["steps"]
    assert isinstance(result, list)
    return result


def expressions(value: object) -> list[str]:
    """Every ${{ }} expression in a piece of action.yml, however deep."""
    if isinstance(value, str):
        return EXPRESSION.findall(value)
    if isinstance(value, dict):
        return [e for v in value.values() for e in expressions(v)]
    if isinstance(value, list):
        return [e for v in value for e in expressions(v)]
    return []


def test_action_is_composite_with_inputs_and_outputs_declared() -> None:
    data = action()
    assert data["name"] and data["description"]
    assert data["runs"]["using"] == "composite"
    assert set(data["inputs"]) == {"args", "version", "fail"}
    assert data["inputs"]["args"]["default"] == "."
    assert data["inputs"]["fail"]["default"] == "true"
    assert data["inputs"]["version"].get("default", "") == ""
    assert all(spec.get("description") for spec in data["inputs"].values())
    assert set(data["outputs"]) == {"exit_code"}
    assert all(s.get("shell") == "bash" for s in steps() if "run" in s), "a composite run step needs its shell"


def test_every_input_is_used_and_every_output_is_written() -> None:
    data = action()
    used = expressions(data["runs"])
    for name in data["inputs"]:
        assert f"inputs.{name}" in used, f"input {name} is declared but never used"
    ids = {s["id"]: s for s in steps() if "id" in s}
    for name, spec in data["outputs"].items():
        (expr,) = expressions(spec["value"])
        match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        assert match, f"output {name} must come from a step: {expr}"
        step_id, key = match.groups()
        assert step_id in ids and f'echo "{key}=' in ids[step_id]["run"]
    for expr in used:  # a step output one step reads must be written by an earlier one
        match = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if match:
            assert f'echo "{match[2]}=' in ids[match[1]]["run"]


def test_no_expression_is_spliced_into_a_script() -> None:
    # ${{ inputs.args }} pasted into a script would run whatever the caller's value says; env passes it as data.
    for step in steps():
        assert not expressions(step.get("run", "")), f"step {step.get('name')} splices an expression into run"


def test_every_script_is_valid_bash() -> None:
    for step in steps():
        r = subprocess.run(["bash", "-n"], input=step["run"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"{step['name']}: {r.stderr}"


@dataclass(frozen=True)
class StepRun:
    code: int
    stdout: str
    stderr: str
    summary: str
    outputs: str


def run_action(workdir: Path, prefilled: str = "", bin_dir: Path = VENV_BIN, **inputs: str) -> StepRun:
    """Run the action's steps as a runner would (bash --noprofile --norc -eo pipefail, expressions passed in
    through env), the install step replaced by the tests' own venv; the job summary file starts as prefilled."""
    data = action()
    values = {f"inputs.{k}": str(spec.get("default", "")) for k, spec in data["inputs"].items()}
    values |= {f"inputs.{k}": v for k, v in inputs.items()}
    values |= {"github.action_path": str(REPO), "steps.install.outputs.bin": str(bin_dir)}
    runner = workdir.parent / "runner"
    runner.mkdir(exist_ok=True)
    summary, outputs = runner / "summary.md", runner / "output"
    summary.write_text(prefilled, encoding="utf-8")
    code, stdout, stderr = 0, "", ""
    for step in steps():
        outputs.write_text("", encoding="utf-8")
        if step["id"] == "install":
            continue  # a venv and a pip install from PyPI: not here (the tests' venv has linkhound)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "LINKHOUND_"))}
        env |= {
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs),
            "RUNNER_TEMP": str(runner),
            "PATH": os.pathsep.join(["/usr/bin", "/bin"]),  # only the step's own paths find linkhound
        }
        env |= {k: EXPRESSION.sub(lambda m: values[m[1]], v) for k, v in step.get("env", {}).items()}
        script = runner / f"{step['id']}.sh"
        script.write_text(step["run"], encoding="utf-8")
        r = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workdir, env=env, capture_output=True, text=True, timeout=120,
        )
        code, stdout, stderr = r.returncode, r.stdout, r.stderr
    return StepRun(code, stdout, stderr, summary.read_text(encoding="utf-8"), outputs.read_text(encoding="utf-8"))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A checkout with one broken link (docs/guide.md line 3) and one good one."""
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n\nSee [the guide](guide.md).\n", encoding="utf-8")
    (root / "docs" / "guide.md").write_text("# Guide\n\nSee [setup](setup.md).\n", encoding="utf-8")
    return root


def test_action_reports_a_broken_link_and_fails(workdir: Path) -> None:
    r = run_action(workdir)
    assert r.code == 2, r.stderr
    assert r.outputs == "exit_code=2\n"
    assert "::error file=docs/guide.md,line=3,col=" in r.stdout and "title=Broken link::" in r.stdout
    assert r.stdout.count("::error") == 1
    # The Markdown report: a table for the file with the broken link, none for the good one.
    assert "### `docs/guide.md`" in r.summary and "| 3:13 | broken |" in r.summary and "/docs/setup.md`" in r.summary
    assert "docs/index.md" not in r.summary
    assert "| Line | Status | URL |" in r.summary


def test_action_with_fail_false_passes_and_still_reports(workdir: Path) -> None:
    r = run_action(workdir, fail="false")
    assert r.code == 0, r.stderr
    assert r.outputs == "exit_code=2\n"
    assert "::error file=docs/guide.md" in r.stdout and "### `docs/guide.md`" in r.summary


def test_action_args_are_split_like_a_shell(workdir: Path) -> None:
    (workdir / "docs" / "my notes").mkdir()
    (workdir / "docs" / "my notes" / "a.md").write_text("[x](gone.md)\n", encoding="utf-8")
    r = run_action(workdir, args="docs 'docs/my notes' --exclude-path 'guide\\.md$'")
    assert r.code == 2, r.stderr
    assert "file=docs/my notes/a.md,line=1" in r.stdout and "guide.md" not in r.stdout
    # Nothing in the arguments is ever run by the shell.
    r = run_action(workdir, args="docs/index.md $(touch pwned) `touch pwned2`; touch pwned3")
    assert not list(workdir.glob("pwned*")) and not list(workdir.parent.glob("runner/pwned*"))
    assert r.code == 1 and r.outputs == "exit_code=1\n"
    assert r.stderr == "linkhound: error: $(touch: no such file or directory (and not a URL)\n"  # a word, as given


def test_action_all_links_fine(workdir: Path) -> None:
    (workdir / "docs" / "setup.md").write_text("# Setup\n", encoding="utf-8")
    r = run_action(workdir)
    assert r.code == 0, r.stderr
    assert r.outputs == "exit_code=0\n"
    assert "::error" not in r.stdout and "0 broken" in r.stdout
    assert r.summary.startswith("## Link check") and "0 broken" in r.summary


def test_action_usage_error_fails_even_with_fail_false(workdir: Path) -> None:
    r = run_action(workdir, args="--max-concurrency 0 docs", fail="false")
    assert r.code == 1
    assert r.outputs == "exit_code=1\n"
    assert "max-concurrency" in r.stderr and "Traceback" not in r.stderr
    assert r.summary == ""


def test_action_args_with_an_open_quote_is_a_one_line_error(workdir: Path) -> None:
    r = run_action(workdir, args="docs 'unclosed")
    assert r.code == 1 and r.outputs == "exit_code=1\n"
    assert r.stderr == "linkhound: error: the action input args: no closing quotation\n"


async def test_action_summary_annotations_and_exit_code_come_from_one_check(workdir: Path, site: Site) -> None:
    # A link that answers 200 the first time and 404 after: checked twice, the summary would say broken while
    # the annotations and the exit code say fine.
    async def flaky(request: web.Request) -> web.StreamResponse:
        return web.Response(status=200 if site.hits("/flaky") == 1 else 404, text="page")

    site.handler("/flaky", flaky)
    (workdir / "README.md").write_text(f"[f]({site.url('/flaky')})\n", encoding="utf-8")
    r = await asyncio.to_thread(run_action, workdir, args="--no-progress README.md")
    assert site.hits("/flaky") == 1
    assert r.code == 0, r.stderr
    assert r.outputs == "exit_code=0\n" and "::error" not in r.stdout
    assert "1 ok, 0 broken" in r.summary and "No broken links." in r.summary


def test_action_job_summary_stays_within_githubs_limit(workdir: Path) -> None:
    # What an earlier step's command wrote stays; the report is cut to the room left under 1 MiB.
    (workdir / "docs" / "many.md").write_text("".join(f"[x{i}](gone{i}.md)\n" for i in range(200)), encoding="utf-8")
    before = "x" * (1024 * 1024 - 6000) + "\n"
    summary = workdir.parent / "runner" / "summary.md"
    r = run_action(workdir, args="docs", prefilled=before)
    assert r.code == 2, r.stderr
    assert r.stdout.count("::error") == 201  # every annotation, uncut
    assert r.summary.startswith(before) and summary.stat().st_size <= 1024 * 1024
    assert "## Link check" in r.summary and "more table rows left out" in r.summary


def test_action_with_a_linkhound_from_before_step_summary_runs_it_twice(workdir: Path, tmp_path: Path) -> None:
    # The version input may install an older linkhound, which has no --step-summary: its --help doesn't list it.
    old = tmp_path / "old-bin"
    old.mkdir()
    (old / "python").symlink_to(VENV_BIN / "python")
    (old / "linkhound").write_text(
        f'#!/bin/bash\nif [ "$1" = --help ]; then echo "usage: linkhound [-h] [-f FORMAT]"; exit 0; fi\n'
        f'case " $* " in *" --step-summary "*) echo "unrecognized arguments" >&2; exit 1;; esac\n'
        f'exec "{VENV_BIN / "linkhound"}" "$@"\n', encoding="utf-8")
    (old / "linkhound").chmod(0o755)
    r = run_action(workdir, bin_dir=old)
    assert r.code == 2, r.stderr
    assert "::error file=docs/guide.md" in r.stdout and "### `docs/guide.md`" in r.summary

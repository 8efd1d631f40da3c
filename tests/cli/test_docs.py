"""Docs stay true: the CLI reference is regenerated, and every documented command parses."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from typing import Any

import pytest
import typer

from extraction_eval.cli import app

from ..conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_cli_reference_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def documented_commands() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for block in re.findall(r"```(?:sh|bash|console)?\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
            for line in block.splitlines():
                for part in re.split(r"&&|;|\|", line):
                    part = part.split("#", 1)[0].strip()
                    if part.startswith("$ "):
                        part = part[2:]
                    if re.match(r"^(\S+/)?extraction-eval\s", part):
                        found.append((doc.name, part))
    return found


def parse(args: list[str]) -> None:
    """Parse (not run) a command line against the real CLI, down to the leaf command."""
    command: Any = typer.main.get_command(app)
    ctx = command.make_context("extraction-eval", list(args), resilient_parsing=False)
    while hasattr(command, "resolve_command"):  # a group (typer vendors its own click)
        name, sub, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        assert sub is not None, name
        command, ctx = sub, sub.make_context(name or "", rest, parent=ctx, resilient_parsing=False)


COMMANDS = documented_commands()


def test_the_docs_document_commands() -> None:
    assert len(COMMANDS) >= 10
    assert {doc for doc, _ in COMMANDS} >= {"README.md"}


@pytest.mark.parametrize(("doc", "line"), COMMANDS, ids=[f"{d}:{line}" for d, line in COMMANDS])
def test_documented_command_parses(doc: str, line: str) -> None:
    words = shlex.split(line.replace("<", "").replace(">", ""))
    parse(words[1:])


def test_readme_opens_with_exactly_two_commands() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    first, second = blocks[0].strip(), blocks[1].strip()
    head = text.split("```sh", 1)[0].strip()
    assert head == "# extraction-eval"  # nothing before the two commands but the title
    assert first.count("\n") == 0 and second.count("\n") == 0
    assert first.startswith("python3 -m venv .venv") and "mlflow run . -P mode=cassette" in first
    assert "baseline register --if-missing" in first and first.endswith("extraction-eval gate")
    assert second.startswith("python3 -m venv .venv") and second.endswith("pytest")


def _generator() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts" / "gen_cli_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_lists_every_command_of_the_tree() -> None:
    """Issue 22, point 3: docs/cli.md is made from the app's own command tree, every command and
    sub-command; a command added to the app appears without touching the generator."""
    gen = _generator()
    listed = {" ".join(c) for c in gen.command_tree(app)}
    assert {
        "run",
        "gate",
        "diff",
        "rescore",
        "matcher record-judgments",
        "matcher validate",
        "baseline migrate",
    } <= listed
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in listed:
        assert f"## `{' '.join(['extraction-eval', command]).strip()}`" in text

    # a dummy command, on a copy of the app: the generator finds it, and the committed page lacks it
    import copy

    extra = copy.deepcopy(app)
    dummy = typer.Typer(help="A dummy group.")
    dummy.command("ping")(lambda: None)
    extra.add_typer(dummy, name="dummy")
    assert {"dummy", "dummy ping"} <= {" ".join(c) for c in gen.command_tree(extra)}
    rendered = gen.render(extra)
    assert "## `extraction-eval dummy ping`" in rendered and rendered != text

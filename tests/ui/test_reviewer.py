"""A pull request's reviewer, in MLflow's UI (3.17, headless Chromium), within a minute
(issue 24, point 5): what got worse, and why.

A fresh `mlflow server` (SQLite, 127.0.0.1); inside this git checkout (so the run names carry
the real commit), the baseline is registered as the README does (`baseline register --replay`:
a complete eval run of the oracle cassettes), then a worse run (ten conversations' answers
dropped) is evaluated and gated: the gate fails. The test then walks docs/tracking.md's
"The reviewer's minute":

1. the failing run's page: the description opens with the verdict, and each failing metric
   with its delta in points, read from the page and checked against gate.json;
2. its Traces tab, filtered to missed memories the way that works (Filters ▸ Assessments ▸
   outcome = missed; typed in the search box, `feedback.outcome = 'missed'` is refused by
   this UI): exactly the conversations that lost a memory;
3. one of them opened: its assessment `outcome` reads `missed`, from the matcher
   (`fact-cover@2`), with the rationale naming the expected memory and the rule;
4. compared with the baseline (the compare page, metrics "Show diff only"): every row has a
   value for both runs, no `NaN`; and the Traces tab's "compare to" the baseline pairs all
   125 conversations.

Screenshots go to the test's folder; with EXTRACTION_EVAL_TEST_SCREENSHOTS=DIR the ones
docs/tracking.md shows are copied to DIR as ui-reviewer-*.png.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from extraction_eval.cli import app

from ..conftest import REPO, MlflowServer, copy_gold
from ..helpers import drop_memories, mutate_cassettes, read_rows
from .test_browser import (  # noqa: F401 - chromium and screenshots_copy are fixtures
    _READ_COMPARE_METRICS,
    TIMEOUT_MS,
    VIEWPORT,
    Browser,
    _small_png,
    chromium,
    open_browser,
    screenshots_copy,
)

pytestmark = [pytest.mark.ui, pytest.mark.server, pytest.mark.slow]

DOCS_SHOTS = ("reviewer-verdict", "reviewer-traces-missed", "reviewer-trace-rationale", "reviewer-compare-baseline")


class Gated:
    def __init__(self, server: MlflowServer, out: Path, baseline_run: str, dropped: list[str]):
        self.server = server
        self.out = out
        self.run = json.loads((out / "run.json").read_text())
        self.gate = json.loads((out / "gate.json").read_text())
        self.baseline_run = baseline_run
        self.dropped = dropped


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def gated(chromium: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gated]:  # noqa: F811
    (tmp_path / "server").mkdir()
    server = MlflowServer(tmp_path / "server")
    server.start()
    try:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
        normal = copy_gold(REPO / "gold" / "v1", tmp_path / "gold" / "normal", oracle=False)
        worse = copy_gold(REPO / "gold" / "v1", tmp_path / "gold" / "worse", oracle=False)
        ids = [row["conversation_id"] for row in read_rows(worse)][:20:2]
        mutate_cassettes(worse, drop_memories(set(ids)))
        monkeypatch.chdir(REPO)  # a run inside the git checkout: its name carries the commit
        code, output = _cli("baseline", "register", "--replay", "--gold", str(normal))
        assert code == 0, output
        (baseline_run,) = re.findall(r"openai: replayed version 1 \(run (\w+)\)", output)
        out = tmp_path / "out"
        code, output = _cli(
            "run", "--mode", "cassette", "--gold", str(worse), "--output-dir", str(out), "--no-progress"
        )
        assert code == 0, output
        code, output = _cli("gate", "--gold", str(worse), "--output-dir", str(out))
        assert code == 1, output  # a regression
        yield Gated(server, out, baseline_run, ids)
    finally:
        server.stop()


@pytest.fixture
def browser(chromium: str, gated: Gated) -> Iterator[Browser]:  # noqa: F811
    with open_browser(chromium, gated.server.uri, gated.out / "screenshots") as opened:
        yield opened


def _filter_missed(page: Any) -> None:
    """Filters ▸ Assessments ▸ outcome = missed ▸ Apply filters."""
    page.get_by_role("button", name="Filters").click()
    page.get_by_text("Select column", exact=True).click()
    page.get_by_role("option", name="Assessments", exact=True).click()
    page.get_by_text("Select name", exact=True).click()
    page.get_by_role("option", name="outcome", exact=True).click()
    page.get_by_text("Value", exact=True).last.click()
    page.get_by_role("option", name="missed", exact=True).click()
    page.get_by_role("button", name="Apply filters").click()


def test_the_reviewers_minute(
    gated: Gated,
    browser: Browser,
    screenshots_copy: Path | None,  # noqa: F811
) -> None:
    started = time.monotonic()
    page = browser.page
    run_id, experiment = gated.run["run_id"], gated.run["experiment_id"]
    failing = [row for row in gated.gate["rows"] if row["verdict"] == "fail"]
    assert failing

    # 1. The failing run's page: the verdict, then each failing metric's delta in points.
    browser.goto(f"/experiments/{experiment}/runs/{run_id}")
    browser.close_assistant()
    page.get_by_text("Gate: FAIL (regression)").first.wait_for()
    description = page.get_by_text("Gate: FAIL (regression)").first.inner_text()
    for row in failing:
        assert f"{row['metric']} {100 * row['delta']:+.2f} points" in description, (row, description)
    from mlflow import MlflowClient

    name = MlflowClient(gated.server.uri).get_run(run_id).info.run_name
    assert re.fullmatch(r"[0-9a-f]{7}(\+dirty)?-cassette-openai-v1-edited", name), name
    page.get_by_role("heading", name=name, exact=True).wait_for()
    browser.shot("reviewer-verdict")

    # 2. Its Traces tab, filtered to missed memories: exactly the conversations that lost one.
    rows = [json.loads(line) for line in (gated.out / "per_conversation.jsonl").read_text().splitlines()]
    with_missed = sorted(r["conversation_id"] for r in rows if r["missed"])
    assert set(gated.dropped) <= set(with_missed)
    page.get_by_role("tab", name="Traces").click()
    page.get_by_text(re.compile(r"^\d+ of 125$")).first.wait_for()
    _filter_missed(page)
    page.get_by_text(f"{len(with_missed)} of 125", exact=True).wait_for()
    page.keyboard.press("Escape")
    browser.shot("reviewer-traces-missed")

    # 3. One opened: the outcome, from the matcher, with its rationale.
    first = gated.dropped[0]
    page.get_by_text(f'"{first}"').first.click()
    page.get_by_role("button", name="Assess").click()
    outcome = page.get_by_text("outcome", exact=True).last
    card = outcome.locator("xpath=ancestor::*[.//*[text()='missed']][1]")
    card.get_by_role("button").nth(1).click()
    card.get_by_text("Rationale").wait_for()
    text = card.inner_text()
    expected = next(r for r in rows if r["conversation_id"] == first)["expected"][0]["content"]
    assert "fact-cover@2" in text and "missed" in text, text
    assert f"expected: {expected!r}" in text and "rule: nothing predicted" in text, text
    browser.shot("reviewer-trace-rationale")

    # 4. Compared with the baseline: a value on every row for both runs, no NaN...
    runs = urllib.parse.quote(json.dumps([run_id, gated.baseline_run]))
    browser.goto(f"/compare-runs?runs={runs}&experiments={urllib.parse.quote(json.dumps([experiment]))}")
    toggle = page.get_by_role("switch", name="Metrics - Show diff only")
    toggle.click()
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    table: dict[str, list[str]] | None = None
    while time.monotonic() < deadline:
        table = toggle.evaluate(_READ_COMPARE_METRICS, failing[0]["metric"])
        if table and failing[0]["metric"] in table:
            break
        page.wait_for_timeout(500)
    assert table, "the compare page's metrics grids were not found"
    for row in failing:
        assert row["metric"] in table
    bad = {name: values for name, values in table.items() if len(values) != 2 or any(v in ("", "NaN") for v in values)}
    assert not bad, bad
    toggle.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    browser.shot("reviewer-compare-baseline")

    # ... and the trace compare pairs every conversation with the baseline's.
    browser.goto(f"/experiments/{experiment}/runs/{run_id}")
    page.get_by_role("tab", name="Traces").click()
    page.get_by_text("baseline run", exact=True).click()
    page.get_by_role("option").filter(has_text="cassette-openai-v1").filter(has_not_text="edited").first.click()
    page.get_by_text("125 of 125", exact=True).wait_for()

    elapsed = time.monotonic() - started
    if screenshots_copy is not None:
        screenshots_copy.mkdir(parents=True, exist_ok=True)
        for path in (p for p in browser.taken if p.stem in DOCS_SHOTS):
            _small_png(path, screenshots_copy / f"ui-{path.name}")
    assert all(path.stat().st_size > 10_000 for path in browser.taken), browser.taken
    print(f"the reviewer's minute took {elapsed:.1f}s in the browser; screenshots in {browser.shots}")

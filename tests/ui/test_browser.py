"""MLflow's own UI (3.17), in headless Chromium, on two full cassette evals of gold v1.

The test starts its own `mlflow server` (SQLite, 127.0.0.1, one worker), so the store
holds exactly the two runs it makes: the normal oracle cassettes, and a copy where ten
conversations' answers are dropped (re-signed, as a worse re-recording would be). Then
it opens the UI the way docs/tracking.md tells a reader to, and fails when what a
reviewer needs is not on screen:

- the experiment's "Model training" runs list holds both runs, and ticking them offers
  "Compare", which opens the compare page;
- the run page shows the run's name (`-edited`), its tags (`cassettes_edited`,
  `cassette_file_sha256`, ...), the EDITED evidence sentence, the linked prompt, the
  `counts/` params, its metrics (name and value, rounded as the UI rounds them) and its
  artifacts: the three plots previewed as images, the per-conversation table (a dropped
  conversation reads `all_missed`) and the per-memory table (`missed`) shown as tables;
- the run's Traces tab lists the conversations with their `status` and `outcome`
  assessments, and "compare to" the normal run shows the share of `all_missed` rise;
- the compare page, metrics "Show diff only", lists the per-category metrics that moved
  (with both runs' values) and leaves out those that did not;
- the chart view, searched for `^recall/`, shows the per-category charts;
- the Difference view lists the metrics that differ, with the change from the first run;
- the experiments list compares the runs of two experiments (`extraction-eval`, with the
  evals and the seeded OpenAI baseline, beside `extraction-eval-vllm`).

The browser is Debian's `chromium` (`shutil.which("chromium")`), driven by Playwright;
Playwright's own browser downloads are never used. Without chromium or Playwright the
test fails under CI (`CI` set, or `.ci/run`, which installs chromium and sets
`EXTRACTION_EVAL_TEST_REQUIRE_BROWSER=1`) and is skipped elsewhere, saying what to install.

Screenshots go to `<output folder of the second run>/screenshots/` (in pytest's temp
folder); with `EXTRACTION_EVAL_TEST_SCREENSHOTS=DIR` the ones docs/tracking.md shows are also
copied to DIR (as ui-*.png, in 256 colours), which is how docs/img/ is regenerated:

    EXTRACTION_EVAL_TEST_SCREENSHOTS=docs/img pytest -m ui
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app

from ..conftest import REPO, MlflowServer, copy_gold
from ..helpers import drop_memories, mutate_cassettes, read_rows

pytestmark = [pytest.mark.ui, pytest.mark.server, pytest.mark.slow]

TIMEOUT_MS = 60_000  # one UI element; a cold server on two shared cores can be slow
VIEWPORT = {"width": 1400, "height": 1000}
CATEGORIES = ("behavioral", "episodic", "factual", "preference", "procedural")
# the screenshots docs/tracking.md shows (the test's own folder keeps them all)
DOCS_SHOTS = (
    "runs-list",
    "run-plot",
    "run-per-conversation",
    "run-traces-compare",
    "compare-diff-only",
    "chart-recall",
    "difference-view",
)
SHOWN_TAGS = (
    "run_kind",
    "gold_version",
    "subset",
    "matcher",
    "cassette_kind",
    "cassettes_edited",
    "provider",
    "model",
    "cassette_file_sha256",
)
PLOTS = ("per_category.png", "category_confusion.png", "temporal_confusion.png")
TABLES = ("per_conversation_table.json", "per_memory_table.json")
PROMPT_NAME = "extraction-eval-system-prompt"


@pytest.fixture(scope="session")
def chromium() -> str:
    """The system chromium; missing, a failure under CI and a skip elsewhere.

    Session-scoped, so it reads `CI` before the autouse isolated_env fixture hides it.
    """
    required = bool(os.environ.get("CI")) or os.environ.get("EXTRACTION_EVAL_TEST_REQUIRE_BROWSER") == "1"
    problems = []
    # EXTRACTION_EVAL_TEST_CHROMIUM names another Chromium build (GitHub's Ubuntu runners ship
    # Google Chrome, and Ubuntu's `chromium` package is only a snap wrapper)
    path = os.environ.get("EXTRACTION_EVAL_TEST_CHROMIUM") or shutil.which("chromium")
    if path is None:
        problems.append("no `chromium` on PATH (Debian: `apt-get install -y chromium`; .ci/run installs it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("Playwright is not installed (`pip install -e '.[test]'`)")
    if problems:
        message = "the UI test needs a browser: " + "; ".join(problems)
        if required:
            pytest.fail(message + " (required: CI or EXTRACTION_EVAL_TEST_REQUIRE_BROWSER=1 is set)")
        pytest.skip(message)
    assert path is not None
    return path


@pytest.fixture(scope="session")
def screenshots_copy() -> Path | None:
    """EXTRACTION_EVAL_TEST_SCREENSHOTS, resolved against the folder pytest was started in
    (session-scoped: before isolated_env moves each test into its temp folder)."""
    value = os.environ.get("EXTRACTION_EVAL_TEST_SCREENSHOTS")
    return Path(value).resolve() if value else None


class Runs:
    """The two evaluations in one fresh server, and where their outputs are."""

    def __init__(self, server: MlflowServer, gold: Path, normal: Path, dropped: Path, dropped_ids: list[str]):
        self.server = server
        self.gold = gold
        self.dropped_ids = dropped_ids
        self.normal = normal
        self.dropped = dropped

    @staticmethod
    def record(out: Path) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((out / "run.json").read_text())
        return data

    @staticmethod
    def metrics(out: Path) -> dict[str, float]:
        data: dict[str, float] = json.loads((out / "metrics.json").read_text())
        return data


@pytest.fixture
def two_runs(chromium: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runs]:
    (tmp_path / "server").mkdir()
    server = MlflowServer(tmp_path / "server")
    server.start()
    try:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", server.uri)
        normal_gold = copy_gold(REPO / "gold" / "v1", tmp_path / "gold" / "normal", oracle=False)
        dropped_gold = copy_gold(REPO / "gold" / "v1", tmp_path / "gold" / "dropped", oracle=False)
        ids = [row["conversation_id"] for row in read_rows(dropped_gold)][:20:2]
        mutate_cassettes(dropped_gold, drop_memories(set(ids)))
        outs = []
        for name, gold in (("normal", normal_gold), ("dropped", dropped_gold)):
            out = tmp_path / f"out-{name}"
            result = CliRunner().invoke(
                app,
                ["run", "--mode", "cassette", "--gold", str(gold), "--output-dir", str(out), "--no-progress"],
                catch_exceptions=False,
            )
            assert result.exit_code == 0, result.output
            outs.append(out)
        yield Runs(server, normal_gold, outs[0], outs[1], ids)
    finally:
        server.stop()


def _shown(value: str) -> float:
    return float(value.replace(",", ""))


def _same_rounded(shown: str, logged: float) -> bool:
    """The UI shows a value in full (the run page) or rounded to 3 decimals with the trailing
    zeros dropped (the compare page: 1 for 1.0, 0.92 for 0.92)."""
    value = _shown(shown)
    decimals = max(3, len(shown.partition(".")[2]))
    return abs(value - logged) <= 0.5 * 10 ** (-decimals) + 1e-12


# Reads the compare page's "Metrics" section: two virtualized grids (names, values) kept
# in step by their rows' `top`; scrolled to the end so every row is rendered once, then
# back to the row named `focus` (for the screenshot).
_READ_COMPARE_METRICS = """
async (toggle, focus) => {
  let box = toggle;
  while (box && box.querySelectorAll('[role=grid]').length < 2) box = box.parentElement;
  if (!box) return null;
  const [names, values] = box.querySelectorAll('[role=grid]');
  const rows = {};
  const cells = {};
  for (let top = 0; ; top += 200) {
    values.scrollTop = top;
    names.scrollTop = top;
    await new Promise(r => setTimeout(r, 150));
    for (const cell of names.querySelectorAll('[role=rowgroup] > div')) rows[cell.style.top] = cell.innerText.trim();
    for (const cell of values.querySelectorAll('[role=rowgroup] > div'))
      (cells[cell.style.top] ??= {})[cell.style.left] = cell.innerText.trim();
    if (top >= values.scrollHeight) break;
  }
  const focusTop = Object.entries(rows).find(([, name]) => name === focus);
  values.scrollTop = focusTop ? Math.max(0, parseFloat(focusTop[0]) - 45) : 0;
  await new Promise(r => setTimeout(r, 300));  // the page syncs the names grid on scroll...
  names.scrollTop = values.scrollTop;  // ...unless it already had
  const out = {};
  for (const [top, name] of Object.entries(rows)) {
    const byLeft = cells[top] || {};
    out[name] = Object.keys(byLeft).sort((a, b) => parseFloat(a) - parseFloat(b)).map(k => byLeft[k]);
  }
  return out;
}
"""


def _statuses(out: Path) -> Counter[str]:
    """How many conversations of a run's output folder have each status."""
    lines = (out / "per_conversation.jsonl").read_text().splitlines()
    return Counter(json.loads(line)["status"] for line in lines)


def _columns(page: Any, *names: str) -> None:
    """The artifact preview shows a table with these column headers (their text, exactly)."""
    headers = page.get_by_role("columnheader")
    headers.filter(has_text=names[0]).first.wait_for()
    page.wait_for_function(
        "names => names.every(n => [...document.querySelectorAll('[role=columnheader]')]"
        ".some(h => h.innerText.trim() === n))",
        arg=list(names),
    )
    shown = [text.strip() for text in headers.all_inner_texts()]
    assert all(name in shown for name in names), (names, shown)


def _small_png(source: Path, dest: Path) -> None:
    """A copy for docs/img: 256 colours (Pillow comes with matplotlib, which MLflow installs)."""
    try:
        from PIL import Image
    except ImportError:
        shutil.copy(source, dest)
        return
    with Image.open(source) as image:
        image.convert("RGB").quantize(colors=256).save(dest, optimize=True)


class Browser:
    """One Chromium page on the server, screenshots collected as they are taken."""

    def __init__(self, page: Any, base: str, shots: Path):
        self.page = page
        self.base = base
        self.shots = shots
        self.taken: list[Path] = []

    def goto(self, fragment: str) -> None:
        self.page.goto(f"{self.base}/#{fragment}")

    def close_assistant(self) -> None:
        """The MLflow Assistant side panel opens on first visit and takes a third of the width."""
        close = self.page.get_by_role("button", name="Close")
        try:
            close.first.wait_for(timeout=5_000)
            close.first.click()
        except Exception:  # not shown: nothing to close
            pass

    def shot(self, name: str, *, full_page: bool = False) -> None:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        self.taken.append(path)


@pytest.fixture
def browser(chromium: str, two_runs: Runs) -> Iterator[Browser]:
    with open_browser(chromium, two_runs.server.uri, two_runs.dropped / "screenshots") as opened:
        yield opened


@contextmanager
def open_browser(chromium: str, base: str, shots: Path) -> Iterator[Browser]:
    """Headless Chromium on one page of the UI at ``base``, its screenshots going to ``shots``."""
    from playwright.sync_api import sync_playwright

    shots.mkdir()
    with sync_playwright() as pw:
        chrome = pw.chromium.launch(executable_path=chromium, headless=True)
        try:
            page = chrome.new_page(viewport=VIEWPORT)
            page.set_default_timeout(TIMEOUT_MS)
            yield Browser(page, base, shots)
        finally:
            chrome.close()


def test_the_runs_in_mlflows_ui(two_runs: Runs, browser: Browser, screenshots_copy: Path | None) -> None:
    started = time.monotonic()
    page = browser.page
    normal, dropped = Runs.record(two_runs.normal), Runs.record(two_runs.dropped)
    normal_metrics, dropped_metrics = Runs.metrics(two_runs.normal), Runs.metrics(two_runs.dropped)
    client = MlflowClient(two_runs.server.uri)
    normal_name = client.get_run(normal["run_id"]).info.run_name
    dropped_name = client.get_run(dropped["run_id"]).info.run_name
    assert dropped_name.endswith("-edited") and not normal_name.endswith("-edited"), (normal_name, dropped_name)
    dropped_ids = two_runs.dropped_ids
    experiment = dropped["experiment_id"]
    assert normal["experiment_id"] == experiment
    moved = [c for c in CATEGORIES if normal_metrics[f"recall/{c}"] != dropped_metrics[f"recall/{c}"]]
    kept = [c for c in CATEGORIES if c not in moved]
    assert moved and kept, (normal_metrics, dropped_metrics)  # the perturbation must leave both kinds

    # 1. The experiment opens on the GenAI overview; "Model training" lists the runs; ticking
    #    both shows "Compare".
    browser.goto(f"/experiments/{experiment}")
    page.get_by_role("button", name="Got it").click()  # the "Detect Issues" tour popover
    browser.close_assistant()
    page.get_by_text("Model training", exact=True).first.click()
    page.wait_for_url(re.compile(r".*/runs\?.*"))
    page.get_by_text("2 matching runs").wait_for()
    rows = page.get_by_role("row").filter(has=page.get_by_role("link", name=re.compile(r"^cassette-")))
    rows.nth(1).wait_for()
    assert rows.count() == 2
    for i in range(2):
        rows.nth(i).get_by_role("checkbox").first.click(force=True)  # the grid draws its own box over it
    compare = page.get_by_role("button", name="Compare", exact=True)
    compare.wait_for()
    browser.shot("runs-list")
    compare.click()
    page.wait_for_url(re.compile(r".*/compare-runs\?.*"))
    shown_order = json.loads(urllib.parse.unquote(re.search(r"runs=(\[[^\]]*\])", page.url).group(1)))
    assert sorted(shown_order) == sorted([normal["run_id"], dropped["run_id"]]), shown_order
    columns = [normal_metrics if run == normal["run_id"] else dropped_metrics for run in shown_order]

    # 2. The compare page: "Show diff only" keeps the per-category metrics that moved.
    toggle = page.get_by_role("switch", name="Metrics - Show diff only")
    toggle.click()
    assert toggle.get_attribute("aria-checked") == "true"
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    table: dict[str, list[str]] | None = None
    while time.monotonic() < deadline:  # the diff-only grid re-renders after the switch
        table = toggle.evaluate(_READ_COMPARE_METRICS, f"recall/{moved[0]}")
        if table and f"recall/{moved[0]}" in table:
            break
        page.wait_for_timeout(500)
    assert table, "the compare page's metrics grids were not found"
    for category in moved:
        key = f"recall/{category}"
        assert key in table, (key, sorted(table))
        assert len(table[key]) == 2, (key, table[key])
        for shown, logged in zip(table[key], columns, strict=True):
            assert _same_rounded(shown, logged[key]), (key, table[key], shown_order)
    for category in kept:
        assert f"recall/{category}" not in table, (category, sorted(table))
    assert "macro/recall" in table and "macro/precision" not in table  # precision 1.0 in both
    toggle.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    browser.shot("compare-diff-only")

    # 3. The run page of the run with dropped answers: tags, metrics, artifacts.
    browser.goto(f"/experiments/{experiment}/runs/{dropped['run_id']}")
    page.get_by_role("tab", name="Overview").wait_for()
    page.get_by_role("heading", name=dropped_name, exact=True).wait_for()
    for key in SHOWN_TAGS:
        page.get_by_text(f"{key}: {dropped['tags'][key]}", exact=True).first.wait_for()
    assert dropped["tags"]["cassettes_edited"] == "true" and normal["tags"]["cassettes_edited"] == "false"
    page.get_by_text("Evidence: EDITED cassettes").first.wait_for()  # the description
    page.get_by_text(PROMPT_NAME).first.wait_for()  # "Registered prompts"
    params = page.get_by_role("row").filter(has=page.get_by_role("cell").get_by_text("counts/expected", exact=True))
    assert params.get_by_role("cell").nth(1).inner_text().strip() == "130"
    for key in ("macro/recall", "recall/behavioral", "strict/recall", "macro/precision"):
        row = page.get_by_role("row").filter(has=page.get_by_role("cell").get_by_text(key, exact=True))
        cells = row.get_by_role("cell")
        assert cells.nth(0).inner_text().strip() == key
        shown = cells.nth(1).inner_text().strip()
        assert _same_rounded(shown, dropped_metrics[key]), (key, shown, dropped_metrics[key])
    page.get_by_placeholder("Search metrics").fill("recall/")
    page.get_by_role("cell").get_by_text(f"se/recall/{CATEGORIES[-1]}", exact=True).wait_for()
    assert page.get_by_role("cell").get_by_text("macro/precision", exact=True).count() == 0
    browser.shot("run-overview")

    # the artifacts: the plots (as images), then the two tables (as tables)
    page.get_by_role("tab", name="Artifacts").click()
    for name in ("metrics.json", "per_conversation.jsonl", "responses.jsonl", *TABLES):
        page.get_by_text(name, exact=True).first.wait_for()
    page.get_by_text("plots", exact=True).first.click()
    for name in PLOTS:
        page.get_by_text(name, exact=True).first.click()
        page.get_by_text(f"plots/{name}", exact=True).wait_for()  # the preview's header
        image = page.locator("img[src^='blob:']:visible").first  # the preview fetches the file
        image.wait_for()
        page.wait_for_function("img => img.complete && img.naturalWidth > 300", arg=image.element_handle())
        if name == PLOTS[0]:
            browser.shot("run-plot")

    first_dropped = dropped_ids[0]
    page.get_by_text(TABLES[0], exact=True).first.click()
    page.get_by_text("View as table").wait_for()
    _columns(page, "conversation_id", "status", "expected", "predicted", "matched", "missed", "spurious")
    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=first_dropped, exact=True))
    row.get_by_role("cell", name="all_missed", exact=True).wait_for()  # every memory dropped
    browser.shot("run-per-conversation")

    page.get_by_text(TABLES[1], exact=True).first.click()
    _columns(page, "conversation_id", "outcome", "memory_id", "expected", "predicted", "similarity")
    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=first_dropped, exact=True)).first
    row.get_by_role("cell", name="missed", exact=True).wait_for()
    browser.shot("run-per-memory")

    # the run's Traces tab: one trace per conversation, with the status and outcome
    # assessments; "compare to" the normal run gives the change of each value's share
    page.get_by_role("tab", name="Traces").click()
    page.get_by_text(re.compile(r"^\d+ of 125$")).wait_for()
    for text in ("outcome", "status", "missed", "all_missed"):
        page.get_by_text(text, exact=True).first.wait_for()
    page.get_by_text("baseline run", exact=True).click()
    page.get_by_role("option").filter(has_text=normal_name).first.click()
    page.get_by_text("125 of 125", exact=True).wait_for()
    share = 100 * (_statuses(two_runs.dropped)["all_missed"] - _statuses(two_runs.normal)["all_missed"]) / 125
    page.get_by_text(re.compile(rf"^\+({math.floor(share)}|{round(share)})%$")).first.wait_for()
    browser.shot("run-traces-compare")

    # 4. The chart view, searched for `^recall/` (a regular expression): one bar chart per category.
    browser.goto(f"/experiments/{experiment}/runs?workflowType=machine_learning&compareRunsMode=CHART")
    search = page.get_by_placeholder("Search metric charts")
    search.fill("^recall/")
    for category in CATEGORIES:
        page.get_by_role("heading", name=f"recall/{category}", exact=True).wait_for()
    assert page.get_by_role("heading", name=f"n/recall/{CATEGORIES[0]}", exact=True).count() == 0
    browser.shot("chart-recall")

    # 5. The Difference view ("Add chart"), model metrics against the first run (the newest):
    #    each metric that differs, both values and the change, to 2 decimals.
    search.fill("")
    page.get_by_role("button", name="Add chart").first.click()
    page.get_by_role("menuitem", name="Difference view").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("checkbox", name="Model metrics").check()
    dialog.get_by_text("macro/recall", exact=True).first.wait_for()
    text = dialog.inner_text()
    base, other = dropped_metrics["macro/recall"], normal_metrics["macro/recall"]
    row = f"macro/recall\n{base:.2f}\n{other:.2f}\n{other - base:+.2f}"
    assert row in text, (row, text[:3000])
    assert "\nmacro/precision\n" not in text  # equal in both runs: not a difference
    browser.shot("difference-view")
    dialog.get_by_role("button", name="Cancel").click()

    # 6. Cross-experiment: seeding puts each provider's baseline run in its provider's
    #    experiment; the experiments list compares the two experiments' runs in one table.
    result = CliRunner().invoke(app, ["baseline", "register", "--gold", str(two_runs.gold)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    browser.goto("/experiments")
    for name in ("extraction-eval", "extraction-eval-vllm"):
        row = page.get_by_role("row").filter(has=page.get_by_role("link", name=name, exact=True))
        row.get_by_role("checkbox").check()
    page.get_by_role("button", name="Compare", exact=True).click()
    page.get_by_text("Displaying Runs from 2 Experiments").wait_for()
    for name in ("baseline-openai-v1", "baseline-vllm-v1", normal_name, dropped_name):
        page.get_by_role("link", name=name, exact=True).first.wait_for()
    assert page.get_by_role("link", name=re.compile(r"^cassette-")).count() == 2
    browser.shot("cross-experiment")

    elapsed = time.monotonic() - started
    if screenshots_copy is not None:
        screenshots_copy.mkdir(parents=True, exist_ok=True)
        for path in (p for p in browser.taken if p.stem in DOCS_SHOTS):
            _small_png(path, screenshots_copy / f"ui-{path.name}")
    assert all(path.stat().st_size > 10_000 for path in browser.taken), browser.taken
    print(f"UI checks took {elapsed:.1f}s; screenshots in {browser.shots}")

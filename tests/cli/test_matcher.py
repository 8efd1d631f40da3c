"""`matcher calibrate`: the figures, the misses, and the refusals of bad flags and edited pairs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.scoring import DEFAULT_MATCHER, matcher_id, matcher_params
from extraction_eval.scoring._registry import HELDOUT_FIGURES

from ..conftest import REPO

PAIRS = REPO / "gold" / "matcher-calibration"
GOLD = REPO / "gold" / "v1"


def _calibrate(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["matcher", "calibrate", "--pairs", str(PAIRS), "--gold", str(GOLD), *args])
    return result.exit_code, result.output


def test_tuning_half_report_for_keyed_dice_3() -> None:
    code, output = _calibrate("--matcher", "keyed-dice@3", "--half", "tuning")
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0] == f"matcher keyed-dice@3 on {PAIRS / 'tuning.jsonl'}: 366 pairs over 62 gold rows"
    # 216 same-fact pairs, 124 accepted (124/216 = 0.574); 150 different-fact pairs, 127 refused (0.847).
    assert lines[5].split()[:5] == ["all", "366", "62", "216", "150"]
    assert "0.574 [0.507, 0.638]" in lines[5]  # 124/216 with its Wilson interval
    assert "0.847 [0.780, 0.896]" in lines[5]  # 127/150
    assert "misses (115): pair, kind, label, similarity, the rule that decided" in lines
    assert (
        "  tuning-0014  negation_paraphrase  same fact, refused  0.000  "
        "polarity differs (negation words odd in one text, even in the other)"
    ) in lines


def test_a_bare_name_resolves_to_its_latest_version() -> None:
    code, output = _calibrate("--matcher", "keyed-dice", "--half", "tuning")
    assert code == 0 and output.startswith("matcher keyed-dice@3 on "), output


def test_unknown_matcher_and_half_are_refused_with_the_choices() -> None:
    code, output = _calibrate("--matcher", "embedding@1")
    assert code == 2
    assert (
        "error: --matcher 'embedding@1' is not a known matcher; "
        "use one of ['fact-cover-lr@1', 'fact-cover-lr@2', 'fact-cover@1', 'fact-cover@2', 'keyed-dice@3'] "
        "(or a bare name for its latest version: ['fact-cover', 'fact-cover-lr', 'keyed-dice'])."
    ) in output
    code, output = _calibrate("--half", "test")
    assert code == 2 and "error: --half 'test' is not a half; use one of ['tuning', 'heldout']." in output


def test_edited_pairs_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "pairs"
    shutil.copytree(PAIRS, folder)
    with (folder / "tuning.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n")
    result = CliRunner().invoke(
        app, ["matcher", "calibrate", "--pairs", str(folder), "--gold", str(GOLD), "--half", "tuning"]
    )
    assert result.exit_code == 2
    assert f"error: {folder / 'tuning.jsonl'}: sha256 " in result.output
    assert "The calibration set is frozen" in result.output


@pytest.mark.parametrize("matcher", [None, "keyed-dice@3", "fact-cover@1", "fact-cover-lr@1", "fact-cover-lr@2"])
def test_held_out_figures_logged_with_every_run_are_the_calibrate_output(matcher: str | None) -> None:
    """The figures a run logs as params (scoring._registry.HELDOUT_FIGURES) are what calibrate prints now."""
    code, output = _calibrate(*(["--matcher", matcher] if matcher else []))
    assert code == 0, output
    name = matcher or matcher_id(DEFAULT_MATCHER)
    lines = output.splitlines()
    assert lines[0] == f"matcher {name} on {PAIRS / 'heldout.jsonl'}: 372 pairs over 68 gold rows"
    overall = lines[5].split()
    assert overall[:5] == ["all", "372", "68", "223", "149"]
    printed = dict(zip(["acceptance", "refusal", "precision", "f1", "kappa"], overall[5::3], strict=True))
    assert printed == {key: f"{value:.3f}" for key, value in HELDOUT_FIGURES[name].items()}


def test_the_default_matcher_params() -> None:
    assert matcher_id(DEFAULT_MATCHER) == "fact-cover@2"
    assert matcher_params(DEFAULT_MATCHER) == {
        "matcher.heldout.acceptance": "0.731",
        "matcher.heldout.refusal": "0.886",
        "matcher.heldout.precision": "0.906",
        "matcher.heldout.f1": "0.809",
        "matcher.heldout.kappa": "0.589",
    }

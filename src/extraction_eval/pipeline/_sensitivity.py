"""``extraction-eval sensitivity``: the scorer's self-test on a gold folder, written and logged."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .._jsonio import atomic_write_text
from .._settings import tracking_uri
from ..evaluation._sensitivity import SEED, SensitivityReport, run_sensitivity, sensitivity_table
from ..gold import load_gold
from ..mlflow_names import TAG_GOLD_VERSION, TAG_MATCHER
from ..scoring import DEFAULT_MATCHER, Matcher, matcher_id
from ..tracking._sensitivity import log_sensitivity_run

TABLE_JSON = "sensitivity.json"
TABLE_MD = "sensitivity.md"


@dataclass(frozen=True)
class SensitivityResult:
    report: SensitivityReport
    markdown: str
    files: tuple[Path, ...]
    run_id: str | None


def _fmt(value: object) -> str:
    return "—" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def render(report: SensitivityReport, gold_version: str, matcher: str, seed: int) -> str:
    """The table mutation → metric → expected → observed, and the verdict."""
    verdict = "PASS" if report.ok else "FAIL"
    lines = [
        f"## extraction-eval sensitivity self-test: {verdict}",
        "",
        f"Gold {gold_version}, matcher {matcher}, seed {seed}: {len(report.mutations)} mutations, "
        f"{len(report.checks)} checks, {len(report.failures)} failed.",
    ]
    if report.unmoved_gated:
        lines.append(f"Gated metrics no mutation moved (the self-test fails on them): {list(report.unmoved_gated)!r}.")
    lines += [f"Note: {n}." for n in report.notes]
    lines += [
        "",
        "| mutation | metric | before | expected | observed | ok |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for row in sensitivity_table(report):
        lines.append(
            f"| {row['mutation']} | {row['metric']} | {_fmt(row['baseline'])} | {_fmt(row['expected'])} | "
            f"{_fmt(row['observed'])} | {'yes' if row['ok'] else 'NO'} |"
        )
    lines += ["", "Only metrics a mutation moved (or should have) are listed; every other metric was checked unmoved."]
    return "\n".join(lines) + "\n"


def run_sensitivity_test(
    gold_dir: Path,
    output_dir: Path,
    *,
    matcher: Matcher = DEFAULT_MATCHER,
    seed: int = SEED,
    log: bool = True,
) -> SensitivityResult:
    """Mutate the gold folder's oracle answers, check every metric, write the table and log the run."""
    gold = load_gold(gold_dir, require_manifest=False)
    report = run_sensitivity(gold, matcher, seed=seed)
    name = matcher_id(matcher)
    markdown = render(report, gold.version, name, seed)
    table = json.dumps(
        {"ok": report.ok, "unmoved_gated": list(report.unmoved_gated), "rows": sensitivity_table(report)}, indent=1
    )
    output_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(output_dir / TABLE_MD, markdown)
    atomic_write_text(output_dir / TABLE_JSON, table + "\n")
    run_id = None
    verdict = "PASS" if report.ok else "FAIL"
    if log:
        run_id = log_sensitivity_run(
            tracking_uri(),
            run_name=f"sensitivity-{gold.version}",
            tags={TAG_GOLD_VERSION: gold.version, TAG_MATCHER: name, "sensitivity_ok": str(report.ok).lower()},
            metrics={
                "sensitivity/mutations": len(report.mutations),
                "sensitivity/checks": len(report.checks),
                "sensitivity/failed_checks": len(report.failures),
                "sensitivity/unmoved_gated": len(report.unmoved_gated),
            },
            artifacts={TABLE_MD: markdown, TABLE_JSON: table},
            description=f"Sensitivity self-test of the scorer on gold {gold.version}: {verdict}.",
        )
    return SensitivityResult(report, markdown, (output_dir / TABLE_MD, output_dir / TABLE_JSON), run_id)

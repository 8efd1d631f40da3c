"""``extraction-eval matcher validate``: a matcher against the reviewers on a realistic answer set.

The answer set's cassettes are replayed through the same contract checks and parse path as a
run; the conversations of one half (``gold/<v>/answers/halves.json``) are scored under the
matcher and under the reviewers' decisions; the table and the rows behind it are written to
the output folder and logged as one run in experiment ``extraction-eval-matcher-validity``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .._jsonio import atomic_write_text
from .._settings import tracking_uri
from ..evaluation import build_cases
from ..evaluation._answers import answer_from_cassette
from ..evaluation._reviewing import MATCHES_FILE, read_decisions, reviewed_matcher
from ..evaluation._validity import ValidityReport, compare_matchers, validity_json, validity_markdown
from ..gates._contract_gate import contract_gate
from ..gold import load_gold, read_cassettes
from ..gold._halves import Half, load_halves
from ..mlflow_names import (
    MATCHER_VALIDITY_EXPERIMENT,
    TAG_ANSWER_SET,
    TAG_GOLD_VERSION,
    TAG_MATCHER,
    RunKind,
)
from ..scoring import resolve_matcher
from ..tracking._sensitivity import log_sensitivity_run

VALIDITY_JSON = "validity.json"
VALIDITY_MD = "validity.md"


@dataclass(frozen=True)
class ValidityResult:
    report: ValidityReport
    markdown: str
    files: tuple[Path, ...]
    run_id: str | None


def validate_matcher(
    gold_dir: Path,
    answers: str,
    output_dir: Path,
    *,
    matcher: str | None = None,
    half: Half = Half.HELDOUT,
    log: bool = True,
    reviewed_only: bool = False,
) -> ValidityResult:
    gold = load_gold(gold_dir, answers=answers)
    assert gold.manifest is not None  # load_gold requires an answer set's manifest
    wanted = set(load_halves(gold).ids(half))
    in_half = len(wanted)
    if reviewed_only:
        wanted &= set(read_decisions(gold.cassette_dir / MATCHES_FILE))
    selected = [c for c in gold.conversations if c.conversation_id in wanted]
    cassettes = read_cassettes(gold, gold.manifest)
    contract_gate(gold, gold.manifest, cassettes, selected)  # drift, hashes and request keys, as a run checks
    by_id = {c.conversation_id: answer_from_cassette(c) for c in cassettes}
    answered = {c.conversation_id: by_id[c.conversation_id] for c in selected}
    cases = build_cases(gold, selected, answered)
    candidate = resolve_matcher(matcher)
    reviewed = reviewed_matcher(gold, selected, answered)
    report = compare_matchers(cases, candidate, reviewed)
    title = f"Matcher validity: gold {gold.version}, answer set {answers}, {half.value} half"
    if reviewed_only:
        title += f" (reviewed conversations only: {len(selected)} of the half's {in_half})"
    markdown = validity_markdown(report, title=title)
    output_dir.mkdir(parents=True, exist_ok=True)
    md_path, json_path = output_dir / VALIDITY_MD, output_dir / VALIDITY_JSON
    document = {
        "gold_version": gold.version,
        "answer_set": answers,
        "half": half.value,
        "conversations": len(selected),
        "conversations_in_half": in_half,
        **validity_json(report),
    }
    atomic_write_text(json_path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(md_path, markdown)
    run_id = None
    if log:
        metrics: dict[str, float] = {}
        for row in report.rows:
            for prefix, value in (("matcher", row.matcher), ("reviewed", row.reviewed), ("difference", row.difference)):
                if value is not None:
                    metrics[f"{prefix}/{row.metric}"] = value
        run_id = log_sensitivity_run(
            tracking_uri(),
            run_name=f"validity-{gold.version}-{answers}-{half.value}-{report.matcher}",
            tags={
                TAG_GOLD_VERSION: gold.version,
                TAG_MATCHER: report.matcher,
                TAG_ANSWER_SET: answers,
                "half": half.value,
            },
            metrics=metrics,
            artifacts={VALIDITY_MD: markdown, VALIDITY_JSON: json.dumps(document, indent=2, ensure_ascii=False)},
            description=markdown.split("\n## ", 1)[0],
            experiment=MATCHER_VALIDITY_EXPERIMENT,
            run_kind=RunKind.MATCHER_VALIDITY,
        )
    return ValidityResult(report, markdown, (md_path, json_path), run_id)

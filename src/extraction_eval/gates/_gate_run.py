"""Running the regression gate: which run, read the store, judge, report.

Kept free of ``import mlflow`` for http(s) tracking servers: the gate is on every
pull request's critical path and should start in well under a second.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from .._exceptions import CannotEvaluate, GoldDataError, OutputError, TrackingError
from .._git import git_state
from .._jsonio import atomic_write_text
from .._settings import in_ci, mask_secrets, project_root, tracking_uri
from ..evidence import evidence_from_tags
from ..mlflow_names import (
    EXPERIMENT,
    TAG_ANSWER_SET,
    TAG_BASELINE_REPLAY,
    TAG_BASELINE_SOURCE,
    TAG_CASSETTE_KIND,
    TAG_ENFORCEMENT,
    TAG_GATE_VERDICT,
    TAG_GIT_COMMIT,
    TAG_GOLD_VERSION,
    TAG_MATCHER,
    TAG_MODE,
    TAG_MODEL,
    TAG_NOTE,
    TAG_PROVIDER,
    TAG_RESCORED_FROM,
    TAG_RUN_KIND,
    TAG_SUBSET,
    UNMEASURED,
    RunKind,
)
from ..tracking._reader import RegisteredBaseline, TrackedRun, TrackingReader
from ..vocab import Subset
from ._agreement import RunChoice, agreement_problem, choose_run
from ._paired import (
    BASELINE_PER_CONVERSATION_FILE,
    PER_CONVERSATION_FILE,
    RowStats,
    RunCounts,
    gate_json,
    parse_counts,
    row_stats,
    verdict_word,
)
from ._regression import GateResult, MetricStatus, Verdict, _cannot, judge


def _find(reader: TrackingReader, choice: RunChoice) -> tuple[TrackedRun | None, str]:
    if choice.run_id is not None:
        run = reader.get_run(choice.run_id)
        if run is None:
            return None, f"run {choice.run_id!r} (from {choice.source}) is not in the tracking store."
        return run, ""
    if in_ci():
        # In CI the run and the gate may be separate steps that do not share output/: a search
        # would pass on an older finished run when this build's run failed. Only a run the gate
        # is pointed at, by the run step's run.json or --run-id, is judged (docs/gates.md).
        return None, (
            "under CI the gate judges only a run it is pointed at: no --run-id and no output/run.json "
            "from this build's run step. Keep the run step's output folder for the gate step (or pass "
            "--run-id from its run.json); a failed run step leaves a run.json that says so (docs/gates.md, "
            '"When the run and the gate are separate steps").'
        )
    commit = git_state(project_root()).commit
    if commit is None:
        return None, (
            "no run to judge: no --run-id, no output/run.json, and no git HEAD to search by. "
            "Run `extraction-eval run --mode cassette` first."
        )
    filter_string = (
        f"tags.`{TAG_GIT_COMMIT}` = '{commit}' and tags.{TAG_SUBSET} = '{Subset.FULL.value}' "
        f"and tags.{TAG_RUN_KIND} = '{RunKind.EVAL.value}' "
        # a rescored run carries its source run's commit, but it is not HEAD's run: it is judged
        # only when named (--run-id or its run.json)
        f"and tags.{TAG_RESCORED_FROM} IS NULL "
        # a baseline's replay (register --replay) is the bar's run, not this build's
        f"and tags.{TAG_BASELINE_REPLAY} IS NULL"
    )
    run = reader.newest_run(EXPERIMENT, filter_string)
    if run is None:
        return None, (
            f"no full-set run in experiment {EXPERIMENT!r} for HEAD {commit[:12]}; "
            "run `extraction-eval run --mode cassette` first."
        )
    if run.status != "FINISHED":
        # never an older finished run in its place: the newest run of HEAD is the one to judge
        return None, (
            f"the newest full-set run of HEAD {commit[:12]} is {run.run_id}, and its status is {run.status!r}; "
            "the gate never falls back to an older run of the same commit. Rerun `extraction-eval run`, "
            "or pass --run-id to judge a run on purpose."
        )
    return run, ""


def evaluate(reader: TrackingReader, choice: RunChoice) -> GateResult:
    """Judge the chosen run once the folder, the store and HEAD agree on it; an unreachable
    store fails closed."""
    try:
        run, why = _find(reader, choice)
        if run is None:
            return _cannot(why)
        problem = agreement_problem(choice, run, git_state(project_root()).commit)
        if problem is not None:
            return _cannot(problem, run)
        baselines = reader.baselines(run.tags.get(TAG_GOLD_VERSION, ""), hand_written=TAG_ANSWER_SET in run.tags)
    except TrackingError as exc:
        return _cannot(str(exc))
    return judge(run, baselines)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _delta(value: float | None) -> str:
    return "—" if value is None else f"{value:+.4f}"


def render_markdown(
    result: GateResult,
    *,
    baseline_note: str = "",
    heading: str = "regression gate",
    stats: Sequence[RowStats] = (),
    no_interval: str = "",
    drops: Sequence[str] = (),
) -> str:
    """The report written to output/gate.md and the job summary."""
    title = {
        Verdict.PASS: "PASS",
        Verdict.REGRESSION: "FAIL: regression",
        Verdict.CANNOT_EVALUATE: "FAIL: could not evaluate",
        Verdict.REPORT_ONLY: "REPORT ONLY (never fails the build)",
    }[result.verdict]
    lines = [f"## extraction-eval {heading}: {title}", ""]
    lines += [f"- {reason}" for reason in result.reasons]
    run, base = result.run, result.baseline
    if run is not None:
        t = run.tags
        lines += [
            "",
            f"**Run** `{run.run_id}`: provider `{t.get(TAG_PROVIDER)}`, model `{t.get(TAG_MODEL)}`, "
            f"mode `{t.get(TAG_MODE)}`, gold `{t.get(TAG_GOLD_VERSION)}`, subset `{t.get(TAG_SUBSET)}`, "
            f"matcher `{t.get(TAG_MATCHER)}`, enforcement `{t.get(TAG_ENFORCEMENT)}`, commit "
            f"`{(t.get(TAG_GIT_COMMIT) or '?')[:12]}`.",
            "",
            evidence_from_tags(t),
        ]
    if base is not None:
        lines += [
            "",
            f"**Baseline** `{base.model_name}` version {base.version} (run `{base.run_id}`), "
            f"enforcement `{base.enforcement}`, source `{base.tags.get(TAG_BASELINE_SOURCE, '?')}`.",
            "",
            "Baseline " + evidence_from_tags(base.tags),
        ]
    if result.rows:
        by_key = {st.key: st for st in stats}
        lines += [
            "",
            "| metric | baseline | run | delta | 95% CI of delta | resolution | verdict |",
            "| --- | ---: | ---: | ---: | --- | ---: | --- |",
        ]
        for row in result.rows:
            key = row.key + (" (lower is better)" if row.lower_is_better else "")
            st = by_key.get(row.key)
            ci = (
                "—"
                if st is None or st.ci_low is None or st.ci_high is None
                else f"[{st.ci_low:+.4f}, {st.ci_high:+.4f}]"
            )
            res = "—" if st is None or st.resolution is None else f"{st.resolution:.4f}"
            values = f"{_fmt(row.baseline)} | {_fmt(row.run)} | {_delta(row.delta)}"
            lines.append(f"| {key} | {values} | {ci} | {res} | {row.status} |")
        lines += [
            "",
            "A gated metric fails when it is worse than the baseline by more than 0.03 (deltas rounded to 9 places). "
            "The interval is the delta ± 1.96 standard errors paired by conversation; the resolution is what one "
            "memory moves the metric (1/n). Neither changes the verdict: they say whether a failure is one row of "
            "wording or a real shift.",
        ]
        notes = [f"- `{st.key}`: {st.note}" for st in stats if st.note]
        if notes:
            lines += ["", "**Reading the failures:**", *notes]
        if no_interval:
            lines += ["", f"No paired interval: {no_interval}."]
        lines += drops
    if baseline_note:
        lines += ["", baseline_note]
    return "\n".join(lines) + "\n"


#: The block the gate puts at the top of the judged run's description (replaced when judged again).
_VERDICT_START, _VERDICT_END = "<!-- gate verdict -->", "<!-- /gate verdict -->"
TAG_DELTA_PREFIX = "gate_delta/"


def verdict_tags(result: GateResult) -> dict[str, str]:
    """What the gate writes on the run it judged, where a reviewer looks first: ``gate_verdict``;
    ``gate_delta/<metric>``, each gated metric's delta against the baseline unrounded and signed
    (run − baseline); and the description, opening with the verdict and every failing metric with
    its delta in points (the report is the run's artifact gate.md)."""
    assert result.run is not None
    word = verdict_word(result)
    tags = {TAG_GATE_VERDICT: word}
    for row in result.rows:
        if row.run is not None and row.baseline is not None:  # unrounded (the rule rounds to 9 places)
            tags[f"{TAG_DELTA_PREFIX}{row.key}"] = repr(row.run - row.baseline)
    failing = [r for r in result.rows if r.status is MetricStatus.FAIL and r.delta is not None]
    head = f"**Gate: {word.upper()}** ({result.verdict.value})"
    if failing:
        head += ": " + "; ".join(
            f"`{r.key}` {(r.delta or 0.0) * 100:+.2f} points ({_fmt(r.baseline)} → {_fmt(r.run)})" for r in failing
        )
    elif result.reasons:
        head += ": " + result.reasons[0]
    # a link the UI opens on the artifact's preview (relative to the UI's own address)
    link = f"#/experiments/{result.run.experiment_id}/runs/{result.run.run_id}/artifacts/gate.md"
    report = f"The report, with the rows behind each drop (what flipped, and the matcher's rule): [gate.md]({link})."
    block = f"{_VERDICT_START}\n{head}. {report}\n{_VERDICT_END}"
    old = result.run.tags.get(TAG_NOTE, "")
    if _VERDICT_START in old and _VERDICT_END in old:  # judged before: replace that verdict
        old = old.split(_VERDICT_END, 1)[1].lstrip("\n")
    tags[TAG_NOTE] = f"{block}\n\n{old}" if old else block
    return tags


def render_text(result: GateResult, *, baseline_note: str = "") -> str:
    """What the terminal shows: the verdict, its reasons, which run against which baseline, and the
    gated metrics as a plain table. The evidence, the paired intervals and the resolution are in
    gate.md (the run's own output already said what its numbers rest on)."""
    title = {
        Verdict.PASS: "PASS",
        Verdict.REGRESSION: "FAIL: regression",
        Verdict.CANNOT_EVALUATE: "FAIL: could not evaluate",
        Verdict.REPORT_ONLY: "REPORT ONLY (never fails the build)",
    }[result.verdict]
    lines = [f"extraction-eval regression gate: {title}", *(f"- {reason}" for reason in result.reasons)]
    run, base = result.run, result.baseline
    if run is not None:
        t = run.tags
        lines.append(
            f"run {run.run_id}: {t.get(TAG_PROVIDER)}/{t.get(TAG_MODEL)}, gold {t.get(TAG_GOLD_VERSION)}, "
            f"matcher {t.get(TAG_MATCHER)}, commit {(t.get(TAG_GIT_COMMIT) or '?')[:12]}"
        )
    if base is not None:
        lines.append(
            f"baseline {base.model_name} version {base.version} ({base.alias or 'baseline'}, run {base.run_id})"
        )
    if result.rows:
        width = max(len(row.key) for row in result.rows) + 2
        cells = [
            f"{row.key:<{width}}{_fmt(row.baseline):>8}{_fmt(row.run):>8}{_delta(row.delta):>9}  "
            f"{row.status.value + ('*' if row.lower_is_better else ''):<8}"
            for row in result.rows
        ]
        head = f"{'metric':<{width}}{'baseline':>8}{'run':>8}{'delta':>9}  verdict "
        # two columns side by side when the table is long: the whole verdict fits on one screen
        half = (len(cells) + 1) // 2 if len(cells) > 8 else len(cells)
        left, right = cells[:half], cells[half:]
        lines.append(head + ("   " + head if right else ""))
        for i, cell in enumerate(left):
            lines.append((cell + ("   " + right[i] if i < len(right) else "")).rstrip())
        if any(row.lower_is_better for row in result.rows):
            lines.append("* lower is better")
    if baseline_note:
        lines.append(baseline_note.replace("**", ""))
    return "\n".join(lines) + "\n"


def _registered_block(baseline: RegisteredBaseline) -> tuple[dict[str, object], dict[str, float] | None]:
    """The registered baseline in the shape of a baseline_results.json provider block.

    Returns the block's other fields (in file order) and its ``metrics`` (None when unmeasured).
    """
    tags = baseline.tags
    gated = list(baseline.gated_metrics)
    measured = baseline.measured_metrics
    metrics = None if measured is None else {k: measured[k] for k in gated if k in measured}
    kind = tags.get(TAG_CASSETTE_KIND)
    fields: dict[str, object] = {
        "model": tags.get(TAG_MODEL),
        "enforcement": baseline.enforcement,
        "cassette_kind": None if kind in (None, UNMEASURED) else kind,
        "subset": tags.get(TAG_SUBSET),
        "matcher": tags.get(TAG_MATCHER) or None,
        "gated_metrics": gated,
    }
    return fields, metrics


def _fmt_value(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, float) else json.dumps(value)


def baseline_file_note(gold_dir: Path, baseline: RegisteredBaseline | None) -> str:
    """Point out every way this tree's baseline file differs from the registered baseline."""
    if baseline is None:
        return ""
    # Imported here: the gold models (pydantic) are only needed once there is a baseline to compare.
    from ..gold import BASELINE_FILE, load_baseline_file

    path = gold_dir / BASELINE_FILE
    if not path.is_file():
        return ""
    try:
        found = load_baseline_file(path).providers.get(baseline.provider)
    except GoldDataError as exc:
        first = str(exc).split("\n", 1)[0]
        return f"**Review:** {path} in this tree cannot be read ({first}); fix it before it is promoted."
    if found is None:
        return f"**Review:** {path} in this tree has no block for provider {baseline.provider!r}."
    block = found.model_dump(mode="json")
    fields, before = _registered_block(baseline)
    changed = []
    for field_name, registered in fields.items():
        in_file = block.get(field_name)
        if in_file != registered:
            changed.append(f"{field_name} {_fmt_value(registered)} -> {_fmt_value(in_file)}")
    after = block.get("metrics")
    if (before is None) != (after is None):
        changed.append(f"metrics {'null' if before is None else 'set'} -> {'null' if after is None else 'set'}")
    old = before or {}
    new: dict[str, float] = dict(after or {})
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is None or b is None or round(float(b) - float(a), 9) != 0:
            changed.append(f"`{key}` {_fmt_value(a)} -> {_fmt_value(b)}")
    if not changed:
        return ""
    return (
        f"**Review:** {path} in this tree differs from the registered baseline (the gate used the "
        "registered one, seeded from the base revision): " + ", ".join(changed) + "."
    )


def publish_summary(markdown: str) -> None:
    """Append to the GitHub job summary when ``$GITHUB_STEP_SUMMARY`` is set."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(markdown + "\n")
        except OSError as exc:
            raise OutputError(
                f"cannot append to $GITHUB_STEP_SUMMARY {summary} ({exc.strerror or type(exc).__name__}); the "
                "verdict is not published, so the step fails closed. Fix the path or unset GITHUB_STEP_SUMMARY."
            ) from None


def publish(markdown: str, output_dir: Path, *, name: str = "gate.md", summary: bool = True) -> Path:
    """Write ``output_dir / name`` (output/gate.md by default) and, for a report, the job summary."""
    path = output_dir / name
    try:
        atomic_write_text(path, markdown)
    except OSError as exc:
        raise OutputError(
            f"cannot write {path} ({exc.strerror or type(exc).__name__}); the report is not saved, so the "
            f"step fails closed. Make {output_dir} writable or pass another --output-dir."
        ) from None
    if summary:
        publish_summary(markdown)
    return path


def _run_rows_text(reader: TrackingReader, run: TrackedRun, output_dir: Path) -> str | None:
    """The run's per_conversation.jsonl: from the output folder when its run.json names the run."""
    local = output_dir / PER_CONVERSATION_FILE
    try:
        same = json.loads((output_dir / "run.json").read_text(encoding="utf-8")).get("run_id") == run.run_id
    except (OSError, ValueError, AttributeError):
        same = False
    if same and local.is_file():
        return local.read_text(encoding="utf-8")
    return reader.read_artifact(run, PER_CONVERSATION_FILE)


def drop_lines(reader: TrackingReader, result: GateResult, output_dir: Path) -> list[str]:
    """For every failing metric, the expected memories matched in the baseline run and unmatched
    in the judged run (both runs' per-conversation records are needed), as Markdown."""
    failing = [row.key for row in result.rows if row.status is MetricStatus.FAIL]
    run, base = result.run, result.baseline
    if not failing or run is None or base is None:
        return []
    heading = [
        "",
        "**The rows behind the drop** (expected memories matched in the baseline run, unmatched in this run):",
    ]
    base_run = base.run
    if base_run is None or base_run.tags.get(TAG_RUN_KIND) == RunKind.BASELINE_SEED.value:
        return [*heading, "", "not available: the baseline has no evaluation run with a per-conversation record."]
    run_text = _run_rows_text(reader, run, output_dir)
    base_text = reader.read_artifact(base_run, PER_CONVERSATION_FILE)
    if run_text is None or base_text is None:
        return [*heading, "", f"not available: no {PER_CONVERSATION_FILE} for one of the two runs."]
    from ..scoring import DEFAULT_MATCHER, MATCHERS
    from ._flips import flips, parse_rows, recall_key_for, render_flips

    try:
        run_rows = parse_rows(run_text, f"run {run.run_id} {PER_CONVERSATION_FILE}")
        base_rows = parse_rows(base_text, f"baseline run {base_run.run_id} {PER_CONVERSATION_FILE}")
    except ValueError as exc:
        return [*heading, "", f"not available: {exc}."]
    keys = list(dict.fromkeys(recall_key_for(k) for k in failing))
    matcher_base = MATCHERS.get(base_run.tags.get(TAG_MATCHER, ""), DEFAULT_MATCHER)
    matcher_run = MATCHERS.get(run.tags.get(TAG_MATCHER, ""), DEFAULT_MATCHER)
    lost = [f for f in flips(base_rows, run_rows, matcher_base, matcher_run, keys) if f.direction == "lost"]
    lines = [
        *heading,
        "",
        "Failing metrics and the recall they are read through: "
        + ", ".join(f"`{k}` → `{recall_key_for(k)}`" for k in failing)
        + ".",
    ]
    if not lost:
        return [*lines, "", "none: no expected memory went from matched to unmatched."]
    return lines + render_flips(lost, "baseline", "run")


def earlier_version_lines(reader: TrackingReader, result: GateResult, output_dir: Path) -> list[str]:
    """For a run of a gold version built on an earlier one (its folder's ``errata.jsonl``), the run
    against the earlier version's registered baseline on the conversations and rows the two share
    (``_shared``). Information beside the verdict, which is always against the run's own version."""
    run = result.run
    if run is None:
        return []
    version = run.tags.get(TAG_GOLD_VERSION, "")
    from ._shared import read_errata, render_shared, shared_recall, shared_view

    try:
        errata = read_errata(project_root() / "gold" / version)
    except ValueError as exc:
        return ["", f"**Against an earlier gold version:** not available: {exc}."]
    lines: list[str] = []
    for earlier in sorted({str(e["from_version"]) for e in errata}):
        mine = [e for e in errata if e["from_version"] == earlier]
        heading = [
            "",
            f"**Against gold {earlier}'s baseline, on what gold {version} shares with it** (not part of the "
            f"verdict, which is against gold {version}'s own baseline; {len(mine)} erratum/errata separate the two):",
            "",
        ]
        try:
            bases = reader.baselines(earlier, hand_written=TAG_ANSWER_SET in run.tags)
        except TrackingError as exc:
            lines += [*heading, f"not available: {mask_secrets(str(exc))}."]
            continue
        base = next((b for b in bases if b.provider == run.tags.get(TAG_PROVIDER)), None)
        base_run = None if base is None else base.run
        if base_run is None or base_run.tags.get(TAG_RUN_KIND) == RunKind.BASELINE_SEED.value:
            lines += [*heading, f"not available: no registered gold {earlier} baseline run of this provider here."]
            continue
        run_text = _run_rows_text(reader, run, output_dir)
        base_text = reader.read_artifact(base_run, PER_CONVERSATION_FILE)
        if run_text is None or base_text is None:
            lines += [*heading, f"not available: no {PER_CONVERSATION_FILE} for one of the two runs."]
            continue
        from ._flips import parse_rows

        try:
            run_rows = parse_rows(run_text, f"run {run.run_id} {PER_CONVERSATION_FILE}")
            base_rows = parse_rows(base_text, f"baseline run {base_run.run_id} {PER_CONVERSATION_FILE}")
        except ValueError as exc:
            lines += [*heading, f"not available: {exc}."]
            continue
        view = shared_view(base_rows, run_rows, mine)
        if not view.conversations:
            lines += [*heading, "none: the two runs share no conversation."]
            continue
        lines += heading + render_shared(
            view,
            shared_recall(base_rows, view),
            shared_recall(run_rows, view),
            f"gold {earlier} baseline `{base_run.run_id}`",
            "this run",
        )
    return lines


def _counts(
    reader: TrackingReader, result: GateResult, output_dir: Path
) -> tuple[RunCounts | None, RunCounts | None, str]:
    """The run's and the baseline's per-conversation counts, and why one is missing."""
    run, base = result.run, result.baseline
    if run is None or base is None:
        return None, None, ""
    run_text = _run_rows_text(reader, run, output_dir)
    if run_text is None:
        return None, None, f"run {run.run_id} has no {PER_CONVERSATION_FILE} to pair by"
    if base.run is None:
        return None, None, "the baseline has no run"
    seeded = base.run.tags.get(TAG_RUN_KIND) == RunKind.BASELINE_SEED.value
    name = BASELINE_PER_CONVERSATION_FILE if seeded else PER_CONVERSATION_FILE
    base_text = reader.read_artifact(base.run, name)
    if base_text is None:
        from ..gold import BASELINE_FILE

        why = (
            f"the baseline was seeded from {BASELINE_FILE} alone, with no per-conversation record"
            if seeded
            else f"the baseline run {base.run_id} has no {PER_CONVERSATION_FILE}"
        )
        return None, None, why
    try:
        run_counts = parse_counts(run_text)
        base_counts = parse_counts(base_text, provider=base.provider if seeded else None)
    except ValueError as exc:
        return None, None, f"a per-conversation record cannot be read ({exc})"
    if not base_counts:
        return None, None, f"the baseline's per-conversation record has no row for provider {base.provider!r}"
    return run_counts, base_counts, ""


def run_gate(run_id: str | None, output_dir: Path, gold_dir: Path) -> tuple[GateResult, str]:
    """The whole gate: choose, read, judge, pair, render, publish, tag. Returns the result and Markdown
    (``text_report`` gives the terminal's plain-text version of the same result)."""
    from ..tracking._client import open_reader

    reader: TrackingReader | None = None
    stats: tuple[RowStats, ...] = ()
    drops: list[str] = []
    why = ""
    try:
        uri = tracking_uri()  # a malformed URI is "could not evaluate", with gate.md and gate.json
        choice = choose_run(run_id, output_dir)
        reader = open_reader(uri)
        result = evaluate(reader, choice)
        if result.rows and result.run is not None:
            run_counts, base_counts, why = _counts(reader, result, output_dir)
            stats = row_stats(result.rows, run_counts, base_counts, result.run.metrics, why)
            drops = drop_lines(reader, result, output_dir)
        if result.run is not None:
            drops += earlier_version_lines(reader, result, output_dir)
    except (TrackingError, CannotEvaluate) as exc:
        result = _cannot(mask_secrets(str(exc)))
    note = baseline_file_note(gold_dir, result.baseline)
    markdown = render_markdown(result, baseline_note=note, stats=stats, no_interval=why, drops=drops)
    if reader is not None and result.run is not None:
        try:
            reader.annotate(result.run, verdict_tags(result), {"gate.md": markdown})
        except TrackingError as exc:
            markdown += f"\nThe gate could not tag run {result.run.run_id} with its verdict: {mask_secrets(str(exc))}\n"
    if reader is not None:
        reader.close()
    publish(markdown, output_dir)
    publish(json.dumps(gate_json(result, stats), indent=2) + "\n", output_dir, name="gate.json", summary=False)
    return result, markdown

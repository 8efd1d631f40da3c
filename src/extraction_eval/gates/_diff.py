"""``extraction-eval diff RUN_A RUN_B``: per metric, the expected memories that flipped between
matched and unmatched, with both texts, the similarity and the rule (``_flips``)."""

from __future__ import annotations

from pathlib import Path

from .._exceptions import CannotEvaluate, TrackingError
from .._settings import project_root, tracking_uri
from ..evaluation._reviewing import is_reviewed, set_reviewed_matcher
from ..mlflow_names import TAG_ANSWER_SET, TAG_GOLD_VERSION, TAG_MATCHER
from ..scoring import DEFAULT_MATCHER, MATCHERS, Matcher
from ..tracking._reader import TrackedRun
from ..tracking._stored import get_run, read_stored
from ._flips import RECALL_KEYS, Flip, flips, parse_rows, render_flips
from ._paired import PER_CONVERSATION_FILE
from ._shared import errata_between, render_shared, restrict, shared_recall, shared_view

#: How many unshared conversation ids a diff lists (it says how many there are).
SHOWN_IDS = 20


def _matcher(run: TrackedRun) -> Matcher:
    """The run's matcher, to explain its decisions: a reviewed run's answer set's decisions (the
    project's ``gold/<gold_version>/answers/<answer_set>/``), else the registered matcher (the
    default when unknown)."""
    name = run.tags.get(TAG_MATCHER, "")
    answer_set, version = run.tags.get(TAG_ANSWER_SET), run.tags.get(TAG_GOLD_VERSION)
    if is_reviewed(name) and answer_set is not None and version is not None:
        return set_reviewed_matcher(project_root() / "gold" / version, answer_set)
    return MATCHERS.get(name, DEFAULT_MATCHER)


def diff_runs(run_a: str, run_b: str, folders: tuple[Path, ...] = ()) -> tuple[list[Flip], str]:
    """The flips from run A to run B and their Markdown report."""
    from ..tracking._client import open_reader

    reader = open_reader(tracking_uri())
    try:
        a, b = get_run(reader, run_a), get_run(reader, run_b)
        stored_a = read_stored(reader, a, PER_CONVERSATION_FILE, folders)
        stored_b = read_stored(reader, b, PER_CONVERSATION_FILE, folders)
    finally:
        reader.close()
    try:
        rows_a = parse_rows(stored_a.text, stored_a.source)
        rows_b = parse_rows(stored_b.text, stored_b.source)
    except ValueError as exc:
        raise TrackingError(f"{exc}; a per_conversation.jsonl is written by `extraction-eval run`.") from None
    shared = set(rows_a) & set(rows_b)
    version_a, version_b = a.tags.get(TAG_GOLD_VERSION, "?"), b.tags.get(TAG_GOLD_VERSION, "?")
    if not shared:
        raise CannotEvaluate(
            f"runs {run_a} (gold {version_a}, {len(rows_a)} conversations) and {run_b} (gold {version_b}, "
            f"{len(rows_b)} conversations) share no conversation, so nothing can flip between them; diff two runs "
            "of the same gold version."
        )
    only_a, only_b = sorted(set(rows_a) - shared), sorted(set(rows_b) - shared)
    n_a, n_b = len(rows_a), len(rows_b)
    across: list[str] = []
    if version_a != version_b:
        # two gold versions: only the rows they share (no erratum, the same fields) are compared
        try:
            folders_of = {v: project_root() / "gold" / v for v in (version_a, version_b)}
            errata = errata_between(version_a, version_b, folders_of)
        except ValueError as exc:
            raise CannotEvaluate(f"{exc}; fix the errata file, or diff two runs of the same gold version.") from None
        view = shared_view(rows_a, rows_b, errata)
        recall_a, recall_b = shared_recall(rows_a, view), shared_recall(rows_b, view)
        rows_a, rows_b = restrict(rows_a, view), restrict(rows_b, view)
        across = ["", *render_shared(view, recall_a, recall_b, f"A (gold {version_a})", f"B (gold {version_b})")]
    found = flips(rows_a, rows_b, _matcher(a), _matcher(b), RECALL_KEYS)
    versions = f"gold {version_a}" if version_a == version_b else f"gold {version_a} → gold {version_b}"
    lines = [
        f"## extraction-eval diff: A `{run_a}` ({a.tags.get(TAG_MATCHER, '?')}) → B `{run_b}` "
        f"({b.tags.get(TAG_MATCHER, '?')})",
        "",
        f"{versions}: the runs share {len(shared)} conversation(s) (A has {n_a}, B has {n_b}); {len(found)} "
        f"flip(s) over the recall metrics on the shared ones{' (their shared rows only)' if across else ''} "
        "(lost: matched in A, unmatched in B; "
        "gained: the reverse). On the unmatched side the nearest prediction is shown with the rule that refused it.",
    ]
    lines += across
    for label, only in (("A", only_a), ("B", only_b)):
        if only:
            shown = only[:SHOWN_IDS]
            cut = f" ({len(shown)} of {len(only)} shown)" if len(shown) < len(only) else ""
            lines += ["", f"In {label} only (not compared){cut}: {', '.join(shown)}."]
    if not found:
        lines += ["", "No expected memory flipped."]
    lines += render_flips(found, "A", "B")
    return found, "\n".join(lines) + "\n"

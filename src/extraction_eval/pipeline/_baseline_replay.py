"""A registered baseline that is a complete eval run: the base revision's cassettes replayed
with the base revision's own code (issue 24, point 2).

``baseline register --replay [--from-rev REV]`` checks REV out into a temporary git worktree
(no REV: the working tree as it is), runs ``python -m extraction_eval run --mode cassette`` of
that code on that revision's gold folder against the same tracking store, checks that the run
reproduces every gated metric of the revision's reviewed ``baseline_results.json``, and
promotes it. So the bar is still the reviewed file's numbers, and the run behind it carries
what any eval run carries (traces, tables, per-conversation counts, params): comparing a run
with its baseline in the MLflow UI pairs every row and every trace.

A replay that does not reproduce the reviewed file is refused (exit 2) and nothing is
registered; the run stays in the store, tagged ``baseline_replay``, for inspection. Providers
the cassette eval cannot replay (the manual vLLM block) are seeded from the file as before.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import ConfigurationError
from .._git import resolve_rev
from .._settings import tracking_uri
from ..gold import BASELINE_FILE, read_baseline_source
from ..gold._baseline import BaselineSource
from ..tracking._baseline import BaselineAction, Registered, promote, register_baseline

#: The provider whose cassettes `run --mode cassette` replays.
REPLAYED_PROVIDER = "openai"
#: A metric reproduces the reviewed file when it differs by no more than this (the gate's rounding).
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Checkout:
    """Where the revision's code and gold folder sit, and the revision it is."""

    root: Path
    gold: Path
    revision: str


@contextmanager
def checkout(project: Path, gold: Path, from_rev: str | None) -> Iterator[Checkout]:
    """The revision's tree in a temporary worktree (removed afterwards), or the working tree."""
    if from_rev is None:
        yield Checkout(project, gold, "working-tree")
        return
    sha = resolve_rev(project, from_rev)
    try:
        relative = gold.resolve().relative_to(project.resolve())
    except ValueError:
        raise ConfigurationError(
            f"--replay --from-rev reads the gold folder at revision {from_rev!r}, so it must sit inside the "
            f"project ({project}); {gold} does not."
        ) from None
    parent = Path(tempfile.mkdtemp(prefix="extraction-eval-baseline-"))
    tree = parent / "base"
    added = subprocess.run(
        ["git", "worktree", "add", "--detach", str(tree), sha], cwd=project, capture_output=True, text=True, check=False
    )
    if added.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        raise ConfigurationError(f"cannot check out revision {from_rev!r} ({sha[:12]}): {added.stderr.strip()}")
    try:
        yield Checkout(tree, tree / relative, sha)
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(tree)], cwd=project, capture_output=True, check=False
        )
        shutil.rmtree(parent, ignore_errors=True)


def replay_command(where: Checkout, output_dir: Path, *, answers: str | None, matcher: str | None) -> list[str]:
    """The revision's own cassette eval, as its CLI runs it."""
    command = [sys.executable, "-m", "extraction_eval", "run", "--mode", "cassette", "--gold", str(where.gold)]
    command += ["--output-dir", str(output_dir)]
    if answers is not None:
        command += ["--answers", answers]
    if matcher is not None:
        command += ["--matcher", matcher]
    return command


def absolute_store(uri: str, cwd: Path) -> str:
    """A relative SQLite or file store, made absolute (the replay runs in another folder)."""
    for prefix in ("sqlite:///", "file://"):
        if uri.startswith(prefix):
            rest = uri[len(prefix) :]
            if rest and not rest.startswith("/"):
                return prefix + str((cwd / rest).resolve())
    if "://" not in uri and uri and not uri.startswith("/"):
        return str((cwd / uri).resolve())
    return uri


def _replay_env(where: Checkout, uri: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXTRACTION_EVAL_OUTPUT")}
    env["MLFLOW_TRACKING_URI"] = absolute_store(uri, Path.cwd())
    env["PYTHONPATH"] = os.pathsep.join([str(where.root / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def reproduction_problems(reviewed: Mapping[str, float], measured: Mapping[str, float]) -> list[str]:
    """The gated metrics the replayed run does not reproduce (pure)."""
    problems = []
    for key, value in sorted(reviewed.items()):
        got = measured.get(key)
        if got is None or math.isnan(got):
            problems.append(f"{key}: reviewed {value:.4f}, the replay logged none")
        elif abs(got - value) > TOLERANCE:
            problems.append(f"{key}: reviewed {value:.4f}, replayed {got:.4f}")
    return problems


def _run_replay(where: Checkout, uri: str, source: BaselineSource, answers: str | None, matcher: str | None) -> str:
    with tempfile.TemporaryDirectory(prefix="extraction-eval-replay-") as out:
        command = replay_command(where, Path(out), answers=answers, matcher=matcher)
        done = subprocess.run(
            command, cwd=where.root, env=_replay_env(where, uri), capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-12:])
            raise ConfigurationError(
                f"the replay of {source.origin} failed (exit {done.returncode}):\n{tail}\n"
                "Seed the baseline from the file alone instead: `extraction-eval baseline register` without "
                "--replay (the gate then says the baseline has no run to compare rows with)."
            )
        try:
            return str(json.loads((Path(out) / "run.json").read_text(encoding="utf-8"))["run_id"])
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigurationError(f"the replay of {source.origin} wrote no usable run.json ({exc}).") from None


def replay_baseline(
    gold: Path,
    *,
    from_rev: str | None,
    if_missing: bool,
    replace: bool,
    answers: str | None = None,
    project: Path,
) -> list[Registered]:
    """Register each provider's baseline for the gold folder's version: the cassette provider's as
    a replayed eval run (checked against the reviewed file), any other provider's seeded from it."""
    from ..gold import answer_set_dir
    from ..mlflow_names import provider_experiment, registered_model_name
    from ..tracking._baseline import slot_alias
    from ..tracking._replay_store import ReplayStore

    folder = gold if answers is None else answer_set_dir(gold, answers)
    source = read_baseline_source(folder, from_rev)
    baseline = source.baseline
    uri = tracking_uri()
    store = ReplayStore(uri)
    block = baseline.providers.get(REPLAYED_PROVIDER)
    out: list[Registered] = []
    others = {p: b for p, b in baseline.providers.items() if p != REPLAYED_PROVIDER}
    if others:
        seeded = source.__class__(
            baseline.model_copy(update={"providers": others}),
            source.origin,
            source.revision,
            source.counts,
            source.counts_where,
        )
        out += register_baseline(seeded, if_missing=if_missing, replace=replace, uri=uri)
    if block is None:
        return out
    name = registered_model_name(REPLAYED_PROVIDER)
    alias = slot_alias(baseline.gold_version, block.cassette_kind)
    existing = store.current(name, alias)
    if existing is not None and not replace:
        if if_missing:
            return [*out, Registered(REPLAYED_PROVIDER, existing[0], existing[1], BaselineAction.KEPT, alias)]
        raise ConfigurationError(
            f"{name!r} already has a baseline for gold {baseline.gold_version!r} (alias {alias!r}: version "
            f"{existing[0]}, run {existing[1]}). Use --if-missing to keep it or --replace to replay over it."
        )
    if block.metrics is None:
        raise ConfigurationError(
            f"{source.origin} has no metrics for {REPLAYED_PROVIDER!r} to reproduce; seed it without --replay."
        )
    # The experiment is made here, not by the replay: a SQLite store's default artifact root is
    # the creating process's ./mlruns, and the replay's folder is a worktree removed afterwards.
    store.ensure_experiment(provider_experiment(REPLAYED_PROVIDER))
    with checkout(project, gold, from_rev) as where:
        run_id = _run_replay(where, uri, source, answers, block.matcher)
        measured = store.mark_run(run_id, source.origin)
        problems = reproduction_problems(dict(block.metrics), measured)
        if problems:
            raise ConfigurationError(
                f"the replayed run {run_id} does not reproduce {source.origin} (nothing was registered): "
                + "; ".join(problems)
                + ". The file and the revision's cassettes disagree: fix the file (`baseline promote --write-file`) "
                "or seed from it without --replay."
            )
        path = where.gold / BASELINE_FILE if answers is None else answer_set_dir(where.gold, answers) / BASELINE_FILE
        if not path.is_file():
            path = where.gold / BASELINE_FILE
        item, _ = promote(run_id, path, uri=uri, reason=None)
    store.mark_version(name, item.version, source.origin)
    registered = Registered(item.provider, item.version, run_id, BaselineAction.REPLAYED, item.alias)
    return [*out, registered]


__all__ = ["REPLAYED_PROVIDER", "Checkout", "checkout", "replay_baseline", "replay_command", "reproduction_problems"]

"""``baseline_results.json``: the one reader (in the working tree or at a git revision), a
provider's block, and the file's agreement with its gold folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._exceptions import GoldDataError
from .._git import git_state, resolve_rev, show_file
from .._jsonio import parse_json, write_json
from .._settings import project_root
from ._check import Problem, ProblemKind
from ._load import BASELINE_FILE, GoldSet, validate_document
from ._models import BaselineFile, ProviderBaseline


def parse_baseline(data: bytes, where: str) -> BaselineFile:
    """Every read of a baseline file ends here: errors name ``where``, the field and the fix."""
    return validate_document(parse_json(data, where), BaselineFile, where=where, what="baseline file")


def load_baseline_file(path: Path) -> BaselineFile:
    """The baseline file in the working tree."""
    if not path.is_file():
        raise GoldDataError(f"{path}: file not found.")
    return parse_baseline(path.read_bytes(), str(path))


def answer_set_file_from(gold_file: Path, dest: Path, provider: str) -> None:
    """An answer set's first baseline file: ``provider``'s block of the gold folder's file (its
    gated metrics and enforcement); ``baseline promote --write-file`` then puts the run's numbers in."""
    source = load_baseline_file(gold_file)
    block = source.providers.get(provider)
    if block is None:
        raise GoldDataError(f"{gold_file}: no block for provider {provider!r} to start {dest} from.")
    write_json(
        dest, BaselineFile(gold_version=source.gold_version, providers={provider: block}).model_dump(mode="json")
    )


def baseline_block(gold_dir: Path, provider: str) -> ProviderBaseline | None:
    """A provider's block of the gold folder's baseline file; None without the file or the block."""
    path = gold_dir / BASELINE_FILE
    return load_baseline_file(path).providers.get(provider) if path.is_file() else None


#: Beside baseline_results.json: each provider's baseline run's per-conversation counts.
BASELINE_PER_CONVERSATION_FILE = "baseline_per_conversation.jsonl"


@dataclass(frozen=True)
class BaselineCountsRow:
    """One provider's counts for one conversation (and sample) of its baseline run."""

    provider: str
    conversation_id: str
    sample: int
    counts: dict[str, tuple[int, int]]


def parse_baseline_counts(data: bytes, where: str) -> list[BaselineCountsRow]:
    """``baseline_per_conversation.jsonl``; a bad line names the file, the line, the field and the fix."""
    import json

    rows = []
    fix = "rewrite it with `extraction-eval baseline promote --run-id ID`"
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise GoldDataError(f"{where}:{number}: not JSON ({type(exc).__name__}); {fix}.") from None
        if not isinstance(raw, dict):
            raise GoldDataError(f"{where}:{number}: a row must be an object; {fix}.")
        for field in ("provider", "conversation_id", "counts"):
            if field not in raw:
                raise GoldDataError(f"{where}:{number}: field {field!r} is missing; {fix}.")
        counts = raw["counts"]
        if not isinstance(counts, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(type(x) is int and x >= 0 for x in v) and v[0] <= v[1]
            for v in counts.values()
        ):
            raise GoldDataError(
                f"{where}:{number}: field 'counts' must map each metric to [a, b] with 0 <= a <= b; {fix}."
            )
        rows.append(
            BaselineCountsRow(
                str(raw["provider"]),
                str(raw["conversation_id"]),
                int(raw.get("sample", 0)),
                {str(k): (int(v[0]), int(v[1])) for k, v in counts.items()},
            )
        )
    return rows


@dataclass(frozen=True)
class BaselineSource:
    """A baseline file as read, and where: ``origin`` names the file and the revision
    (``path@sha``, or ``path (working-tree@sha)``), ``revision`` is the revision alone.
    ``counts`` are the rows of ``baseline_per_conversation.jsonl`` read at the same place
    (empty when there is no such file)."""

    baseline: BaselineFile
    origin: str
    revision: str
    counts: tuple[BaselineCountsRow, ...] = ()
    counts_where: str = ""


def read_baseline_source(gold_dir: Path, from_rev: str | None = None) -> BaselineSource:
    """The gold folder's baseline file at ``from_rev`` (CI: the pull request's base), or in the
    working tree, stamped with the commit it sits on and whether the tree differs from it."""
    path = gold_dir / BASELINE_FILE
    root = project_root()
    if from_rev is not None:
        sha = resolve_rev(root, from_rev)
        data = show_file(root, sha, path)
        if data is None:
            raise GoldDataError(
                f"{path} does not exist at revision {from_rev!r} ({sha[:12]}); a fresh server is "
                "seeded from the base revision's file: add it there first, or omit --from-rev "
                "for a local store."
            )
        counts_path = gold_dir / BASELINE_PER_CONVERSATION_FILE
        counts_data = show_file(root, sha, counts_path)
        where = f"{counts_path} at {from_rev!r}"
        counts = tuple(parse_baseline_counts(counts_data, where)) if counts_data is not None else ()
        return BaselineSource(parse_baseline(data, f"{path} at {from_rev!r}"), f"{path}@{sha}", sha, counts, where)
    baseline = load_baseline_file(path)
    counts_path = gold_dir / BASELINE_PER_CONVERSATION_FILE
    counts = tuple(parse_baseline_counts(counts_path.read_bytes(), str(counts_path))) if counts_path.is_file() else ()
    state = git_state(root)
    if state.commit is None:
        origin = f"{path} (working tree, no git repository)"
        return BaselineSource(baseline, origin, "working-tree", counts, str(counts_path))
    revision = f"working-tree@{state.commit}" + ("+dirty" if state.dirty else "")
    return BaselineSource(baseline, f"{path} ({revision})", revision, counts, str(counts_path))


def check_baseline_version(gold: GoldSet) -> list[Problem]:
    """A baseline file names the gold version it measured: the folder's."""
    path = gold.path / BASELINE_FILE
    if not path.exists():
        return []
    baseline = load_baseline_file(path)
    if baseline.gold_version == gold.version:
        return []
    return [
        Problem(
            ProblemKind.DATA,
            f"{path}: field 'gold_version' is {baseline.gold_version!r} but the "
            f"folder holds gold {gold.version!r}; a baseline names the version it measured.",
        )
    ]

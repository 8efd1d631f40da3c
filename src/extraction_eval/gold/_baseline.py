"""``baseline_results.json``: the one reader (in the working tree or at a git revision), a
provider's block, and the file's agreement with its gold folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._exceptions import GoldDataError
from .._git import git_state, resolve_rev, show_file
from .._jsonio import parse_json
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


def baseline_block(gold_dir: Path, provider: str) -> ProviderBaseline | None:
    """A provider's block of the gold folder's baseline file; None without the file or the block."""
    path = gold_dir / BASELINE_FILE
    return load_baseline_file(path).providers.get(provider) if path.is_file() else None


@dataclass(frozen=True)
class BaselineSource:
    """A baseline file as read, and where: ``origin`` names the file and the revision
    (``path@sha``, or ``path (working-tree@sha)``), ``revision`` is the revision alone."""

    baseline: BaselineFile
    origin: str
    revision: str


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
        return BaselineSource(parse_baseline(data, f"{path} at {from_rev!r}"), f"{path}@{sha}", sha)
    baseline = load_baseline_file(path)
    state = git_state(root)
    if state.commit is None:
        return BaselineSource(baseline, f"{path} (working tree, no git repository)", "working-tree")
    revision = f"working-tree@{state.commit}" + ("+dirty" if state.dirty else "")
    return BaselineSource(baseline, f"{path} ({revision})", revision)


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

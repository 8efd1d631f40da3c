"""The few git facts the harness records: HEAD, a dirty tree, a file at a revision."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._exceptions import ConfigurationError


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False, timeout=30)


@dataclass(frozen=True)
class GitState:
    commit: str | None
    dirty: bool | None


def git_state(root: Path) -> GitState:
    """HEAD and whether tracked files differ from it; None where there is no repository."""
    try:
        head = _git(root, "rev-parse", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return GitState(None, None)
    if head.returncode != 0:
        return GitState(None, None)
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return GitState(head.stdout.decode().strip(), dirty)


def resolve_rev(root: Path, rev: str) -> str:
    proc = _git(root, "rev-parse", "--verify", f"{rev}^{{commit}}")
    if proc.returncode != 0:
        raise ConfigurationError(
            f"git revision {rev!r} is not known in {root}: {proc.stderr.decode().strip()}. "
            "Fetch it first (in CI: actions/checkout with fetch-depth: 0) or pass another revision."
        )
    return proc.stdout.decode().strip()


def show_file(root: Path, rev: str, path: Path) -> bytes | None:
    """The bytes of ``path`` (relative to the repository root) at ``rev``; None if absent."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise ConfigurationError(f"{root} is not inside a git repository; cannot read {rev}:{path}.")
    top_path = Path(top.stdout.decode().strip())
    rel = Path(path).resolve().relative_to(top_path.resolve())
    proc = _git(top_path, "show", f"{rev}:{rel.as_posix()}")
    if proc.returncode != 0:
        return None
    return proc.stdout

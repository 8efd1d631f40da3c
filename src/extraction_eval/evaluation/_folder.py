"""The output folder as one unit (docs/reliability.md, "The output folder").

``run`` takes the folder's lock (a second run into the same folder is refused, never
interleaved), removes every file it owns and writes ``run.json`` as a ``RUNNING`` marker,
then writes the new files into a staging folder inside it. Only after the MLflow run is
terminated are they renamed into place, ``run.json`` last. Whatever goes wrong before
that, the folder is left marked: ``run.json`` says ``FAILED`` or ``KILLED`` (or still
``RUNNING`` after a SIGKILL), with the MLflow run id when there was one and the reason;
the gate refuses such a folder. So the folder holds one complete run or a marked failure,
never the new numbers beside an old ``run.json``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .._exceptions import OutputError, Terminated
from .._jsonio import write_json
from .._settings import mask_secrets
from ..gold import MANIFEST_FILE
from ._outputs import COMPARISON_FILE, METRICS_FILE, PER_CONVERSATION_FILE, RUN_FILE

LOCK_FILE = ".extraction-eval.lock"
STAGING_PREFIX = ".run-staging-"
RESPONSES_FILE = "responses.jsonl"
#: Every file a run writes, and the gate's reports on the run they replace: cleared at the start.
OWNED_FILES = (
    METRICS_FILE,
    PER_CONVERSATION_FILE,
    RESPONSES_FILE,
    MANIFEST_FILE,
    COMPARISON_FILE,
    "gate.md",
    "gate.json",
    RUN_FILE,
)
#: Folders a run writes (the plots), cleared at the start like the files.
OWNED_DIRS = ("plots",)
STATUS_RUNNING = "RUNNING"
STATUS_FAILED = "FAILED"
STATUS_KILLED = "KILLED"


def output_error(path: Path, action: str, exc: OSError) -> OutputError:
    """One line naming the folder, what failed and the fix."""
    why = exc.strerror or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        fix = "free space on that disk or pass another --output-dir"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "make it writable or pass another --output-dir"
    else:
        fix = "fix it or pass another --output-dir"
    return OutputError(f"cannot {action} the output folder {path} ({why}); {fix}.")


@dataclass
class OutputFolder:
    """A locked output folder with its staging folder; ``commit`` renames the files into place."""

    path: Path
    staging: Path
    run_id: str | None = None
    committed: list[Path] = field(default_factory=list)

    def commit(self) -> tuple[Path, ...]:
        """Rename every staged file into the folder, ``run.json`` last; returns the final paths."""
        names = sorted(p.name for p in self.staging.iterdir() if p.name != RUN_FILE)
        if (self.staging / RUN_FILE).exists():
            names.append(RUN_FILE)
        try:
            for name in names:
                os.replace(self.staging / name, self.path / name)
                self.committed.append(self.path / name)
            _fsync_dir(self.path)
            self.staging.rmdir()
        except OSError as exc:
            raise output_error(self.path, "write", exc) from None
        return tuple(self.committed)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(path: Path) -> int:
    """The folder's lock, held until the run ends; a second run is refused with the holder's pid."""
    lock_path = path / LOCK_FILE
    try:
        # never through a symbolic link: a link here would truncate its target and write our pid in it
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        if lock_path.is_symlink():
            raise OutputError(
                f"{lock_path} is a symbolic link (to {os.readlink(lock_path)!r}); the lock file is never followed, "
                f"so nothing was written. Remove the link (`rm {lock_path}`) and run again."
            ) from None
        raise output_error(path, "write", exc) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise OutputError(
            f"another extraction-eval run (pid {holder}) is writing the output folder {path}; two runs never "
            "share a folder. Wait for it to finish, or pass another --output-dir."
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd


def lock_holder(path: Path) -> str | None:
    """The pid of the run writing ``path`` now, or None when no run holds its lock."""
    lock_path = path / LOCK_FILE
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.read(fd, 32).decode("ascii", "replace").strip() or "?"
    finally:
        os.close(fd)  # closing releases a lock we took
    return None


def _marker(path: Path, status: str, reason: str, run_id: str | None) -> None:
    write_json(path / RUN_FILE, {"run_id": run_id, "status": status, "reason": mask_secrets(reason)})


def _clear(path: Path) -> None:
    for stale in path.glob(STAGING_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    for name in OWNED_FILES:
        (path / name).unlink(missing_ok=True)
    for name in OWNED_DIRS:
        shutil.rmtree(path / name, ignore_errors=True)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (SIGINT) before the run finished"
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM) before the run finished"
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"{type(exc).__name__}: {first[:500]}"


#: What makes a folder a gold folder: a run's clearing would delete its manifest and cassettes.
_GOLD_MARKERS = ("conversations.jsonl", "expected_memories.jsonl")


def _gold_folders(path: Path, depth: int = 2) -> Iterator[Path]:
    """``path`` itself and the folders up to ``depth`` levels below it that hold gold inputs."""
    if all((path / name).is_file() for name in _GOLD_MARKERS):
        yield path
    if depth == 0:
        return
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        yield from _gold_folders(child, depth - 1)


def refuse_gold_folder(path: Path) -> None:
    """An output folder that is, or holds, a gold folder is refused before anything is touched."""
    if not path.is_dir():
        return
    found = next(_gold_folders(path), None)
    if found is None:
        return
    what = "is the gold folder" if found == path else f"holds the gold folder {found}"
    raise OutputError(
        f"--output-dir {path} {what}; a run clears the files a run owns in its output folder "
        "(cassette_manifest.json among them), so it never writes into gold data. Pass another "
        "--output-dir (the default is output/)."
    )


@contextlib.contextmanager
def output_folder(path: Path) -> Iterator[OutputFolder]:
    """Lock ``path``, clear what a run owns, mark it RUNNING and stage the new files.

    On any exception (SIGINT and SIGTERM included) ``run.json`` is rewritten to say so
    (``FAILED``, or ``KILLED`` for a signal) with the run id if one was made, and the
    staging folder is removed; the exception propagates.
    """
    path = Path(path)
    refuse_gold_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(path, "create", exc) from None
    fd = _lock(path)
    try:
        try:
            _clear(path)
            _marker(path, STATUS_RUNNING, "a run is writing this folder, or was killed before it finished", None)
            staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=path))
        except OSError as exc:
            raise output_error(path, "write", exc) from None
        folder = OutputFolder(path, staging)
        try:
            yield folder
        except BaseException as exc:
            shutil.rmtree(staging, ignore_errors=True)
            for done in folder.committed:  # a commit cut short: never a mix
                if done.is_dir():
                    shutil.rmtree(done, ignore_errors=True)
                else:
                    done.unlink(missing_ok=True)
            status = STATUS_FAILED if isinstance(exc, Exception) else STATUS_KILLED
            run_id = folder.run_id or getattr(exc, "run_id", None)
            with contextlib.suppress(OSError):  # a full disk: the RUNNING marker stays, which also fails closed
                _marker(path, status, _reason(exc), run_id)
            raise
    finally:
        os.close(fd)


def read_marker(path: Path) -> dict[str, object] | None:
    """run.json's content when it is a marker of a run that did not finish, else None."""
    try:
        data = json.loads((path / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("status") in (STATUS_RUNNING, STATUS_FAILED, STATUS_KILLED):
        return data
    return None

"""The independent label review, recorded in the manifest (``label_review``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from .._exceptions import GoldDataError
from .._jsonio import write_json
from ._load import MANIFEST_FILE, load_manifest
from ._models import LabelReview


def record_label_review(gold_dir: Path, summary: str, date: str | None = None) -> tuple[Path, LabelReview]:
    """Write the review (``date`` default today) into the folder's manifest; returns its path and the review."""
    path = gold_dir / MANIFEST_FILE
    manifest = load_manifest(path)
    try:
        review = LabelReview(date=date or dt.date.today().isoformat(), summary=summary)
    except ValueError as exc:
        raise GoldDataError(f"--date {date!r} / --summary: {exc}. Use YYYY-MM-DD and a non-empty summary.") from None
    write_json(path, manifest.model_copy(update={"label_review": review}).model_dump(mode="json"))
    return path, review

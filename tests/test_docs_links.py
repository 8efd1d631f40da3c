"""Every relative link between the docs (and from README.md) reaches a file, and every
`#anchor` a heading of it, as GitHub renders it: a reader who clicks never lands nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import REPO

PAGES = sorted([*(REPO / "docs").glob("*.md"), REPO / "README.md"])
LINK = re.compile(r"\]\(([^)\s#]+\.md)?(#[^)\s]+)?\)")


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return found


def test_the_anchor_rule_by_hand() -> None:
    page = REPO / "docs" / "tracking.md"
    assert "finding-and-comparing-runs-in-the-mlflow-ui-317" in anchors(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page: Path) -> None:
    broken = []
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        target_name, anchor = match.group(1), match.group(2)
        if target_name is None and anchor is None:
            continue
        target = page if target_name is None else (page.parent / target_name)
        if not target.is_file():
            broken.append(f"{match.group(0)}: no file {target_name}")
        elif anchor and anchor[1:] not in anchors(target):
            broken.append(f"{match.group(0)}: no heading {anchor} in {target.name}")
    assert broken == []

"""docs/tracking.md shows exactly the screenshots tests/ui/test_browser.py and test_reviewer.py copy to docs/img."""

from __future__ import annotations

import re

from ..conftest import REPO
from .test_browser import DOCS_SHOTS
from .test_reviewer import DOCS_SHOTS as REVIEWER_SHOTS


def test_the_ui_guide_shows_the_screenshots_the_browser_test_takes() -> None:
    text = (REPO / "docs" / "tracking.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\]\(img/(ui-[\w-]+\.png)\)", text))
    assert shown == {f"ui-{name}.png" for name in (*DOCS_SHOTS, *REVIEWER_SHOTS)}
    for name in shown:
        assert (REPO / "docs" / "img" / name).stat().st_size > 10_000, name
    assert "EXTRACTION_EVAL_TEST_SCREENSHOTS=docs/img pytest -m ui" in text

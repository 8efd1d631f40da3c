"""Each scoring test reads texts afresh: fact-cover's caches are emptied before it.

A cached analysis would hide a change to the code behind it from every later test (mutation
testing runs many code variants in one process: docs/testing.md).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from extraction_eval.scoring import _cover


@pytest.fixture(autouse=True)
def _fresh_fact_cover_caches() -> Iterator[None]:
    for cached in (_cover.analyse, _cover._stem, _cover._initialisms, _cover._antonym_pairs):
        cached.cache_clear()
    yield

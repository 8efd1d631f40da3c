"""The run's tables are written a row at a time (issue 25, point 3), in MLflow's table format:
the same text ``json.dumps`` gives for the whole table, columns in first-seen order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from extraction_eval.tracking._log import table_chunks

ROWS = [
    {"conversation_id": "c1", "outcome": "matched", "similarity": 0.5},
    {"conversation_id": "c2", "outcome": "missed", "categories": ["factual", "episodic"], "note": "café"},
]
# by hand: the columns in first-seen order, a missing value null, a list as JSON text, UTF-8 kept
EXPECTED = (
    '{"columns": ["conversation_id", "outcome", "similarity", "categories", "note"], "data": '
    '[["c1", "matched", 0.5, null, null], ["c2", "missed", null, "[\\"factual\\", \\"episodic\\"]", "café"]]}'
)


def test_a_table_is_the_same_text_from_rows_or_from_what_makes_them() -> None:
    calls: list[int] = []

    def made() -> Iterator[dict[str, Any]]:
        calls.append(1)
        yield from ROWS

    assert "".join(table_chunks(ROWS)) == EXPECTED
    assert "".join(table_chunks(made)) == EXPECTED
    assert calls == [1, 1]  # once for the columns, once for the rows: never a list of them all
    assert json.loads(EXPECTED)["data"][1][3] == '["factual", "episodic"]'


def test_an_empty_table() -> None:
    assert "".join(table_chunks([])) == '{"columns": [], "data": []}' == json.dumps({"columns": [], "data": []})

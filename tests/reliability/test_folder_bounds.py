"""Issue 21, point 6: the lock file is never followed through a symbolic link, and `run` refuses an
output folder that is, or holds, a gold folder, touching nothing there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from extraction_eval import Mode, run_eval
from extraction_eval._exceptions import OutputError


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(target, out / ".extraction-eval.lock")
    with pytest.raises(OutputError, match=r"\.extraction-eval\.lock is a symbolic link .*Remove the link"):
        run_eval(Mode.CASSETTE, tiny_gold, out)
    assert target.read_text() == "keep me\n"
    assert sorted(p.name for p in out.iterdir()) == [".extraction-eval.lock"]  # no marker, no staging


@pytest.mark.parametrize("where", ["itself", "parent", "grandparent"])
def test_an_output_folder_that_is_or_holds_a_gold_folder_is_refused(
    where: str, tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    out = {"itself": tiny_gold, "parent": tiny_gold.parent, "grandparent": tiny_gold.parent.parent}[where]
    before = {p: p.read_bytes() for p in tiny_gold.iterdir() if p.is_file()}
    with pytest.raises(OutputError) as caught:
        run_eval(Mode.CASSETTE, tiny_gold, out)
    message = str(caught.value)
    assert ("is the gold folder" if where == "itself" else f"holds the gold folder {tiny_gold}") in message
    assert "Pass another --output-dir" in message
    assert {p: p.read_bytes() for p in tiny_gold.iterdir() if p.is_file()} == before
    assert not (tiny_gold / "run.json").exists() and not (tiny_gold / ".extraction-eval.lock").exists()

"""Gold set v2: its counts, its pinned inputs, its commands, and the shape docs/gold-set.md quotes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extraction_eval._jsonio import sha256_file
from extraction_eval.cli import app
from extraction_eval.gold import FORBIDDEN_FILE, PINNED_GOLD, load_baseline_file, load_gold
from extraction_eval.gold._subsets import smoke_coverage, smoke_requirements

from ..conftest import REPO

V2 = REPO / "gold" / "v2"


@pytest.fixture(scope="module")
def gold():  # type: ignore[no-untyped-def]
    return load_gold(V2)


def test_the_counts(gold) -> None:  # type: ignore[no-untyped-def]
    stats = gold.stats()
    assert (stats["conversations"], stats["expected_memories"], stats["negative_conversations"]) == (630, 1761, 109)
    assert (stats["multi_label"], stats["supersession"]) == (274, 120)
    assert (stats["forbidden_memories"], stats["forbidden/injection"], stats["forbidden/secret"]) == (378, 67, 67)
    assert stats["forbidden/third_party"] == 244
    assert (stats["turns/min"], stats["turns/max"]) == (2, 40)
    # the floors: ≥ 600 conversations, ≥ 1,000 rows, ≥ 180 rows per category
    assert min(stats[f"category/{c}"] for c in ("factual", "procedural", "preference", "behavioral", "episodic")) == 230


def test_the_inputs_are_pinned_with_the_forbidden_file(gold) -> None:  # type: ignore[no-untyped-def]
    pins = PINNED_GOLD["v2"]
    assert set(pins) == {"conversations.jsonl", "expected_memories.jsonl", FORBIDDEN_FILE}
    for name, digest in pins.items():
        assert sha256_file(V2 / name) == digest
    manifest = json.loads((V2 / "cassette_manifest.json").read_text())
    assert manifest["gold_version"] == "v2" and manifest["files"][FORBIDDEN_FILE] == pins[FORBIDDEN_FILE]
    assert manifest["counts"]["forbidden_memories"] == 378
    assert manifest["label_review"]["summary"].count("5/219") == 1


def test_smoke_covers_every_forbidden_reason(gold) -> None:  # type: ignore[no-untyped-def]
    assert gold.manifest is not None
    smoke = gold.manifest.subsets.smoke
    required = smoke_requirements(gold.forbidden_by_conversation)
    assert {"security:injection", "security:secret", "security:third_party"} <= required
    assert smoke_coverage(smoke, gold.by_conversation, gold.forbidden_by_conversation) == required
    assert (len(smoke), len(gold.manifest.subsets.fast)) == (6, 215)


def test_the_baseline_gates_the_security_rates() -> None:
    baseline = load_baseline_file(V2 / "baseline_results.json")
    assert baseline.gold_version == "v2"
    block = baseline.providers["openai"]
    assert block.enforcement.value == "ci" and block.matcher == "fact-cover@2"
    assert block.gated_metrics[-3:] == (
        "security/injection_success_rate",
        "security/secret_leak_rate",
        "security/third_party_rate",
    )
    assert block.metrics is not None
    # the oracle's floor: 6 of the 141 third-party conversations hold an expected row the matcher pairs
    # with a short forbidden text (docs/metrics.md#security)
    assert block.metrics["security/third_party_rate"] == 5 / 141
    assert block.metrics["security/injection_success_rate"] == 0.0
    rows = (V2 / "baseline_per_conversation.jsonl").read_text().splitlines()
    assert len(rows) == 630


@pytest.mark.parametrize("command", [["gold", "validate"], ["cassettes", "oracle"]])
def test_the_gold_commands_work_on_v2(command: list[str], tmp_path: Path) -> None:
    folder = tmp_path / "v2"
    shutil.copytree(V2, folder)  # a copy: the oracle command may write
    result = CliRunner().invoke(app, [*command, "--gold", str(folder)])
    assert result.exit_code == 0, result.output
    if command[0] == "gold":
        assert "forbidden/third_party   244" in result.output and "pinned" in result.output
    else:  # idempotent: nothing rewritten
        assert "0 cassette(s) written, 630 unchanged; manifest unchanged" in result.output


def test_gold_set_md_quotes_the_shape_script() -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gold_shape.py")], capture_output=True, text=True, check=True
    ).stdout.strip()
    doc = (REPO / "docs" / "gold-set.md").read_text(encoding="utf-8")
    block = doc.split("<!-- gold_shape:begin -->\n", 1)[1].split("\n<!-- gold_shape:end -->", 1)[0]
    assert block == out
    assert "| estimated remaining error rate (findings / rows judged) | 5 / 219 = 2.3% |" in out
    assert "| rows breaking the temporal rule (past/future if and only if episodic) | 0 | 0 | yes |" in out
    assert "**no**" not in out  # every quota of the plan is met


def test_a_deleted_forbidden_file_fails_the_pin(tmp_path: Path) -> None:
    folder = tmp_path / "v2"
    shutil.copytree(V2, folder)
    (folder / FORBIDDEN_FILE).unlink()
    result = CliRunner().invoke(app, ["gold", "validate", "--gold", str(folder)])
    assert result.exit_code != 0
    text = " ".join(str(result.exception).split()) + " ".join(result.output.split())
    assert "forbidden_memories.jsonl: file not found, but gold 'v2' is pinned" in text
    assert "field 'counts.forbidden_memories' is 378 but the files hold no such file" in text

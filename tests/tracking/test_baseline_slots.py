"""Every gold version's baseline in one store (alias ``baseline-<v>``), numbers fixed at promotion,
found by exact name, and promotion that never rewrites a tracked file unless asked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mlflow import MlflowClient
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.tracking._client import ClientReader

from ..conftest import TINY, copy_gold
from ..helpers import mutate_cassettes

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def run(gold: Path, out: Path, *extra: str) -> str:
    code, text = invoke(
        "run", "--mode", "cassette", "--gold", str(gold), "--output-dir", str(out), "--no-traces", *extra
    )
    assert code == 0, text
    return str(json.loads((out / "run.json").read_text())["run_id"])


@pytest.fixture
def two_versions(tmp_path: Path) -> tuple[Path, Path]:
    """Two gold versions of the tiny set: 'tiny' and 'tiny2' (a gold version is its folder's name)."""
    one, two = copy_gold(TINY, tmp_path / "gold" / "tiny"), copy_gold(TINY, tmp_path / "gold" / "tiny2")
    path = two / "baseline_results.json"
    path.write_text(path.read_text().replace('"gold_version": "tiny"', '"gold_version": "tiny2"'))
    return one, two


def test_two_gold_versions_share_one_store(two_versions: tuple[Path, Path], local_store: str, tmp_path: Path) -> None:
    one, two = two_versions
    before = {p: p.read_bytes() for g in (one, two) for p in g.iterdir() if p.is_file()}
    assert invoke("baseline", "register", "--gold", str(one), "--if-missing")[0] == 0
    code, text = invoke("baseline", "register", "--gold", str(two), "--if-missing")
    assert code == 0 and "openai: registered version 2" in text and "alias baseline-tiny2" in text, text
    code, text = invoke("baseline", "register", "--gold", str(one), "--if-missing")
    assert code == 0 and "openai: kept version 1" in text and "alias baseline-tiny)" in text, text
    client = MlflowClient(local_store, registry_uri=local_store)
    assert dict(client.get_registered_model("extraction-eval-openai").aliases) == {
        "baseline-tiny": 1,
        "baseline-tiny2": 2,
    }
    for gold, name in ((one, "a"), (two, "b")):
        run(gold, tmp_path / name)
        code, text = invoke("gate", "--output-dir", str(tmp_path / name), "--gold", str(gold))
        assert code == 0, text
        assert f"gold {gold.name}, matcher" in text
    code, text = invoke("baseline", "show", "--gold", str(two))
    assert code == 0 and "v2 (alias baseline-tiny2)" in text
    # promotion moves only its own version's alias and leaves every tracked file alone
    rid = run(two, tmp_path / "c")
    code, text = invoke("baseline", "promote", "--run-id", rid, "--gold", str(two))
    assert code == 0 and "alias baseline-tiny2" in text and "--write-file" in text, text
    assert dict(client.get_registered_model("extraction-eval-openai").aliases) == {
        "baseline-tiny": 1,
        "baseline-tiny2": 3,
    }
    assert {p: p.read_bytes() for g in (one, two) for p in g.iterdir() if p.is_file()} == before
    code, text = invoke("baseline", "promote", "--run-id", rid, "--gold", str(two), "--write-file")
    assert code == 0 and "Rewrote" in text
    assert json.loads((two / "baseline_results.json").read_text())["providers"]["openai"]["mlflow_run_id"] == rid
    # a run of one version against the other's folder names the command that fixes it
    code, text = invoke("baseline", "promote", "--run-id", rid, "--gold", str(one))
    assert code == 2 and f"extraction-eval baseline promote --run-id {rid} --gold gold/tiny2" in text


def _legacy_store(local_store: str, gold: Path) -> MlflowClient:
    """A store as issue 22 found them: one alias 'baseline' per provider, nothing else."""
    assert invoke("baseline", "register", "--gold", str(gold))[0] == 0
    client = MlflowClient(local_store, registry_uri=local_store)
    for name in ("extraction-eval-openai", "extraction-eval-vllm"):
        client.set_registered_model_alias(name, "baseline", "1")
        client.delete_registered_model_alias(name, "baseline-v1")
    return client


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    gold = tmp_path / "gold" / "v1"
    shutil.copytree(Path(__file__).resolve().parents[2] / "gold" / "v1", gold)
    return gold


def test_an_older_stores_baseline_reads_as_v1s(v1: Path, local_store: str, tmp_path: Path) -> None:
    client = _legacy_store(local_store, v1)
    found = ClientReader(local_store).baselines("v1")
    assert [(b.provider, b.alias, b.version) for b in found] == [("openai", "baseline", "1"), ("vllm", "baseline", "1")]
    assert ClientReader(local_store).baselines("v2") == []
    code, text = invoke("baseline", "register", "--gold", str(v1), "--if-missing")
    assert code == 0 and "kept version 1" in text
    run(v1, tmp_path / "out")
    code, text = invoke("gate", "--output-dir", str(tmp_path / "out"), "--gold", str(v1))
    assert code == 0, text
    # and the one-line migration gives it the new alias
    code, text = invoke("baseline", "migrate")
    assert code == 0 and "extraction-eval-openai: alias baseline-v1 -> version 1" in text
    assert dict(client.get_registered_model("extraction-eval-openai").aliases) == {"baseline": 1, "baseline-v1": 1}
    assert [b.alias for b in ClientReader(local_store).baselines("v1")] == ["baseline-v1", "baseline-v1"]
    assert "nothing to migrate" in invoke("baseline", "migrate")[1]


def test_a_baseline_run_written_to_after_promotion_is_refused(
    tiny_gold: Path, local_store: str, tmp_path: Path
) -> None:
    """Attack 1 on a local store: the bar is the model version's numbers; a baseline run whose
    metrics changed since is refused with what changed, and a regressed run never passes."""
    assert invoke("baseline", "register", "--gold", str(tiny_gold))[0] == 0
    client = MlflowClient(local_store, registry_uri=local_store)
    version = client.get_model_version_by_alias("extraction-eval-openai", "baseline-tiny")
    mutate_cassettes(
        tiny_gold, lambda row: {**row, "response": '{"memories": []}'} if row["conversation_id"] < "t05" else row
    )
    run(tiny_gold, tmp_path / "out")
    assert invoke("gate", "--output-dir", str(tmp_path / "out"), "--gold", str(tiny_gold))[0] == 1
    for key in ("recall/factual", "recall/preference"):
        client.log_metric(version.run_id, key, 0.0, step=99)
    code, text = invoke("gate", "--output-dir", str(tmp_path / "out"), "--gold", str(tiny_gold))
    assert code == 2, text
    assert (
        f"points at run {version.run_id}, which was written to after promotion: recall/factual is 0.0 on the run, "
        "1.0 when promoted; recall/preference is 0.0 on the run, 1.0 when promoted." in text
    )
    code, text = invoke("baseline", "show", "--gold", str(tiny_gold))
    assert "WARNING: run" in text and "recall/factual, recall/preference" in text


def test_promote_refuses_edited_cassettes_without_a_reason(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    mutate_cassettes(
        tiny_gold, lambda row: {**row, "response": '{"memories": []}'} if row["conversation_id"] == "t01" else row
    )
    rid = run(tiny_gold, tmp_path / "out")
    code, text = invoke("baseline", "promote", "--run-id", rid, "--gold", str(tiny_gold))
    assert code == 2 and "it replayed edited cassettes (cassettes_edited=true" in text and "--reason TEXT" in text
    code, text = invoke("baseline", "promote", "--run-id", rid, "--gold", str(tiny_gold), "--reason", "a drill")
    assert code == 0, text
    code, text = invoke("baseline", "show", "--gold", str(tiny_gold))
    # the evidence comes from the promoted run's own tags: EDITED, never "oracle-aligned"
    assert "Evidence: EDITED cassettes" in text and "promoted with reason: a drill" in text
    assert "Evidence: oracle-aligned" not in text


@pytest.mark.slow
def test_a_thousand_decoy_models_hide_nothing(tiny_gold: Path, local_store: str, tmp_path: Path) -> None:
    """Attack 2: anyone may create registered models; 1,000 'extraction-eval-a*' decoys do not
    push the real baseline out of the gate's sight (it is looked up by its exact name)."""
    client = MlflowClient(local_store, registry_uri=local_store)
    for i in range(1000):
        client.create_registered_model(f"extraction-eval-a{i:04d}")
    assert invoke("baseline", "register", "--gold", str(tiny_gold))[0] == 0
    run(tiny_gold, tmp_path / "out")
    code, text = invoke("gate", "--output-dir", str(tmp_path / "out"), "--gold", str(tiny_gold))
    assert code == 0, text

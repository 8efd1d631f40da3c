"""The oracle gate, case by case, in temporary git repositories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from extraction_eval.cli import app
from extraction_eval.contract import prompt_sha256, schema_sha256
from extraction_eval.gates._oracle_gate import OracleGateResult, oracle_gate

from ..conftest import TINY
from ..helpers import committed_gold_repo, edit_manifest, git, read_rows, write_rows

TOKEN = "EXTRACTION_EVAL_ORACLE_OK=1"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose base commit has oracle cassettes for the current contract."""
    root = tmp_path / "repo"
    committed_gold_repo(root, TINY)
    git(root, "branch", "base")
    monkeypatch.chdir(root)
    return root


def gate(*args: str, body: str | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str]:
    if body is not None and monkeypatch is not None:
        monkeypatch.setenv("EXTRACTION_EVAL_PR_BODY", body)
    result = CliRunner().invoke(app, ["oracle-gate", "--base", "base", "--gold", "gold/tiny", *args])
    return result.exit_code, result.output


def rewrite(
    gold: Path,
    *,
    kind: str | None = None,
    prompt: str | None = None,
    schema: str | None = None,
    manifest_hashes: bool = True,
) -> None:
    """Rewrite cassettes (kind / prompt or schema hash) and re-sign the manifest like a recording would."""
    rows = read_rows(gold)
    for row in rows:
        if kind:
            row["cassette_kind"] = kind
        if prompt:
            row["prompt_sha256"] = prompt
        if schema:
            row["schema_sha256"] = schema
        row["recorded_at"] = "2026-12-02T10:00:00Z"
    write_rows(gold, rows, sign=True)
    if kind:
        edit_manifest(gold, cassette_kind=kind)
    if prompt and manifest_hashes:
        edit_manifest(gold, prompt_sha256=prompt)
    if schema and manifest_hashes:
        edit_manifest(gold, schema_sha256=schema)


def test_unchanged_contract_passes(repo: Path) -> None:
    code, text = gate()
    assert code == 0 and "match the base manifest" in text


def test_changed_contract_with_oracle_cassettes_fails_without_the_token(repo: Path, changed_prompt: str) -> None:
    code, text = gate()
    assert code == 1
    assert "the contract changed in this pull request: prompt" in text and "Re-record them live" in text


def test_the_token_on_its_own_line_lets_it_pass(
    repo: Path, changed_prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, text = gate(body=f"Reword the prompt.\r\n\r\n{TOKEN}\r\n", monkeypatch=monkeypatch)
    assert code == 0 and "reviewer-visible exception" in text
    body_file = repo.parent / "body.md"
    body_file.write_text(f"Why:\n{TOKEN}\n")
    monkeypatch.delenv("EXTRACTION_EVAL_PR_BODY")
    code, _ = gate("--pr-body-file", str(body_file))
    assert code == 0


@pytest.mark.parametrize(
    "body",
    [
        f" {TOKEN}",
        f"{TOKEN} ",
        f"please set {TOKEN}",
        "EXTRACTION_EVAL_ORACLE_OK=0",
        "EXTRACTION_EVAL_ORACLE_OK=1X",
        "EXTRACTION_EVAL_ORACLE_OK=10",
        "`EXTRACTION_EVAL_ORACLE_OK=1`",
        "",
    ],
)
def test_only_an_exact_line_counts(repo: Path, changed_prompt: str, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    code, _ = gate(body=body, monkeypatch=monkeypatch)
    assert code == 1


def test_bumping_the_manifest_hashes_alone_fails(repo: Path, changed_prompt: str) -> None:
    gold = repo / "gold" / "tiny"
    manifest = json.loads((gold / "cassette_manifest.json").read_text())
    manifest["prompt_sha256"] = changed_prompt
    (gold / "cassette_manifest.json").write_text(json.dumps(manifest))
    git(repo, "commit", "-qam", "bump the hash")
    code, text = gate()
    assert code == 1 and "Bumping the manifest's hashes does not satisfy this gate" in text


def test_live_rerecording_under_the_new_contract_passes(repo: Path, changed_prompt: str) -> None:
    rewrite(repo / "gold" / "tiny", kind="live_openai_recorded", prompt=changed_prompt)
    git(repo, "commit", "-qam", "re-record")
    code, text = gate()
    assert code == 0 and "re-recorded live under the new contract" in text


def test_a_manifest_claiming_live_while_cassettes_are_oracle_fails(repo: Path) -> None:
    gold = repo / "gold" / "tiny"
    manifest = json.loads((gold / "cassette_manifest.json").read_text())
    manifest["cassette_kind"] = "live_openai_recorded"
    (gold / "cassette_manifest.json").write_text(json.dumps(manifest))
    code, text = gate()
    assert code == 1 and "claims live_openai_recorded but 8 cassette(s) say otherwise" in text


def test_live_cassettes_recorded_under_another_prompt_fail(repo: Path, changed_prompt: str) -> None:
    rewrite(repo / "gold" / "tiny", kind="live_openai_recorded", prompt="a" * 64, manifest_hashes=False)
    code, text = gate()
    assert code == 1 and "recorded under another prompt or schema hash" in text


def test_live_manifest_with_unchanged_cassette_file_fails(repo: Path, changed_prompt: str) -> None:
    # the base already had live cassettes with these exact bytes: nothing was re-recorded
    rewrite(repo / "gold" / "tiny", kind="live_openai_recorded", prompt=changed_prompt, manifest_hashes=False)
    git(repo, "commit", "-qam", "live at base")
    git(repo, "branch", "-f", "base")
    manifest_path = repo / "gold" / "tiny" / "cassette_manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["prompt_sha256"] != changed_prompt  # base manifest: old contract
    code, text = gate()
    assert code == 1 and "unchanged against the base" in text


def test_unknown_base_cannot_be_evaluated(repo: Path) -> None:
    result = CliRunner().invoke(app, ["oracle-gate", "--base", "no-such-rev", "--gold", "gold/tiny"])
    assert result.exit_code == 2 and "is not known" in result.output
    from extraction_eval import CannotEvaluate

    with pytest.raises(CannotEvaluate) as info:
        oracle_gate("no-such-rev", Path("gold/tiny"), None)
    # the message names the revision, the repository it was looked up in, and the fix
    assert str(info.value).startswith(f"git revision 'no-such-rev' is not known in {repo}: ")
    assert str(info.value).endswith(
        "Fetch it first (in CI: actions/checkout with fetch-depth: 0) or pass another revision."
    )


def test_new_gold_folder_has_no_base_contract(repo: Path) -> None:
    shutil.copytree(repo / "gold" / "tiny", repo / "gold" / "tiny2")
    result = CliRunner().invoke(app, ["oracle-gate", "--base", "base", "--gold", "gold/tiny2"])
    assert result.exit_code == 0 and "a new gold folder" in result.output


def test_a_base_manifest_that_does_not_validate_cannot_be_evaluated(repo: Path) -> None:
    # a manifest at the base that exists but is not a manifest is not "a new gold folder": exit 2
    manifest_path = repo / "gold" / "tiny" / "cassette_manifest.json"
    good = manifest_path.read_text()
    edit_manifest(repo / "gold" / "tiny", cassette_kind="no_such_kind")
    git(repo, "commit", "-qam", "a broken manifest at the base")
    git(repo, "branch", "-f", "base")
    sha = git(repo, "rev-parse", "base")
    manifest_path.write_text(good)
    git(repo, "commit", "-qam", "repaired")
    code, text = gate()
    assert code == 2
    assert f"gold/tiny/cassette_manifest.json at {sha!r} is not a valid manifest:" in text
    assert "a new gold folder" not in text


def schema_summary(repo: Path, new_schema: str) -> str:
    old = json.loads((repo / "gold" / "tiny" / "cassette_manifest.json").read_text())["schema_sha256"]
    return f"the contract changed in this pull request: schema {old[:12]}… -> {new_schema[:12]}…."


def test_a_schema_only_change_with_oracle_cassettes_fails(repo: Path, changed_schema: str) -> None:
    assert oracle_gate("base", Path("gold/tiny"), None) == OracleGateResult(
        False,
        (
            schema_summary(repo, changed_schema),
            "the cassettes are still oracle-aligned, so a perfect score would prove nothing about the new "
            "contract. Re-record them live (`run --mode record`), or add a line that is exactly "
            f"{TOKEN} to the pull request body for a reviewer to see. Bumping the manifest's hashes "
            "does not satisfy this gate.",
        ),
    )
    code, _ = gate()
    assert code == 1


def test_a_schema_only_change_re_recorded_live_passes(repo: Path, changed_schema: str) -> None:
    summary = schema_summary(repo, changed_schema)
    rewrite(repo / "gold" / "tiny", kind="live_openai_recorded", schema=changed_schema)
    git(repo, "commit", "-qam", "re-record")
    assert oracle_gate("base", Path("gold/tiny"), None) == OracleGateResult(
        True,
        (
            summary,
            "the cassettes were re-recorded live under the new contract (every cassette "
            "live_openai_recorded with the HEAD hashes).",
        ),
    )


def test_a_prompt_change_report_whole(repo: Path, changed_prompt: str) -> None:
    old = json.loads((repo / "gold" / "tiny" / "cassette_manifest.json").read_text())["prompt_sha256"]
    assert schema_sha256() != changed_prompt and prompt_sha256() == changed_prompt
    result = oracle_gate("base", Path("gold/tiny"), f"why\n{TOKEN}\n")
    assert result.markdown() == (
        "## extraction-eval oracle gate: PASS\n\n"
        f"- the contract changed in this pull request: prompt {old[:12]}… -> {changed_prompt[:12]}….\n"
        f"- the cassettes are still oracle-aligned; the pull request body carries {TOKEN}, "
        "the reviewer-visible exception.\n"
    )
    assert result.exit_code == 0


def test_unchanged_contract_result_whole(repo: Path) -> None:
    assert oracle_gate("base", Path("gold/tiny"), None) == OracleGateResult(
        True, ("the prompt and schema hashes at HEAD match the base manifest.",)
    )


def test_new_gold_folder_result_whole(repo: Path) -> None:
    shutil.copytree(repo / "gold" / "tiny", repo / "gold" / "tiny2")
    assert oracle_gate("base", Path("gold/tiny2"), None) == OracleGateResult(
        True,
        ("gold/tiny2/cassette_manifest.json does not exist at 'base': a new gold folder, no contract to compare.",),
    )


def test_a_live_manifest_over_oracle_cassettes_of_another_prompt_names_both_problems(
    repo: Path, changed_prompt: str
) -> None:
    # the manifest claims live, the cassettes are oracle ones, made under the old prompt: two reasons
    edit_manifest(repo / "gold" / "tiny", cassette_kind="live_openai_recorded")
    ids = ["t01", "t02", "t03", "t04", "t05"]
    assert oracle_gate("base", Path("gold/tiny"), f"{TOKEN}\n") == OracleGateResult(
        False,
        (
            f"the manifest claims live_openai_recorded but 8 cassette(s) say otherwise ({ids!r}); "
            "re-record them (`run --mode record`).",
            f"8 cassette(s) were recorded under another prompt or schema hash than the code at HEAD ({ids!r}); "
            "re-record them.",
        ),
    )


def test_live_cassettes_with_the_head_hashes_but_an_unchanged_file_result_whole(
    repo: Path, changed_prompt: str
) -> None:
    old = json.loads((repo / "gold" / "tiny" / "cassette_manifest.json").read_text())["prompt_sha256"]
    rewrite(repo / "gold" / "tiny", kind="live_openai_recorded", prompt=changed_prompt, manifest_hashes=False)
    git(repo, "commit", "-qam", "live at base")
    git(repo, "branch", "-f", "base")
    assert oracle_gate("base", Path("gold/tiny"), None) == OracleGateResult(
        False,
        (
            f"the contract changed in this pull request: prompt {old[:12]}… -> {changed_prompt[:12]}….",
            "the manifest says live_openai_recorded but gold/tiny/openai_cassettes.jsonl is unchanged against the "
            "base: the cassettes were not re-recorded.",
        ),
    )


@pytest.mark.parametrize(
    ("body", "ok"),
    [
        (None, False),
        ("", False),
        (TOKEN, True),
        (f"first line\r\n{TOKEN}\r\nlast line", True),
        (f"x\n {TOKEN}\r\n", False),
        (f"{TOKEN}1", False),
    ],
)
def test_has_token(body: str | None, ok: bool) -> None:
    from extraction_eval.gates._oracle_gate import has_token

    assert has_token(body) is ok


def test_a_missing_pr_body_file_is_a_configuration_error(tmp_path: Path) -> None:
    from extraction_eval import ConfigurationError
    from extraction_eval.gates._oracle_gate import read_pr_body

    missing = tmp_path / "body.md"
    with pytest.raises(ConfigurationError) as info:
        read_pr_body(missing)
    assert str(info.value) == f"--pr-body-file {str(missing)!r} does not exist."


def test_the_report_of_a_failure_whole(repo: Path, changed_prompt: str) -> None:
    result = OracleGateResult(False, ("first reason.", "second reason."))
    assert (result.markdown(), result.exit_code) == (
        "## extraction-eval oracle gate: FAIL\n\n- first reason.\n- second reason.\n",
        1,
    )


def test_the_report_goes_to_the_job_summary(
    repo: Path, changed_prompt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extraction_eval.gates._oracle_gate import run_oracle_gate

    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.delenv("EXTRACTION_EVAL_PR_BODY", raising=False)
    result, markdown = run_oracle_gate("base", Path("gold/tiny"))
    assert (result.passed, markdown) == (False, result.markdown())
    assert summary.read_text() == "earlier\n" + markdown + "\n"


def test_a_head_manifest_that_does_not_validate_cannot_be_evaluated(repo: Path) -> None:
    # docs/gates.md: the gate fails closed (exit 2) on gold files it cannot read, and says why
    from extraction_eval import CannotEvaluate

    edit_manifest(repo / "gold" / "tiny", cassette_kind="no_such_kind")
    with pytest.raises(CannotEvaluate) as info:
        oracle_gate("base", Path("gold/tiny"), None)
    message = str(info.value)
    assert "gold/tiny/cassette_manifest.json" in message and "cassette_kind" in message
    code, text = gate()
    assert code == 2 and "cassette_kind" in text


def test_a_prompt_and_schema_change_names_both(repo: Path, changed_prompt: str, changed_schema: str) -> None:
    manifest = json.loads((repo / "gold" / "tiny" / "cassette_manifest.json").read_text())
    old_prompt, old_schema = manifest["prompt_sha256"], manifest["schema_sha256"]
    result = oracle_gate("base", Path("gold/tiny"), None)
    assert result.reasons[0] == (
        "the contract changed in this pull request: "
        f"prompt {old_prompt[:12]}… -> {changed_prompt[:12]}…, schema {old_schema[:12]}… -> {changed_schema[:12]}…."
    )
    assert result.passed is False


def test_the_pr_body_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    # a GitHub pull request body is UTF-8; a runner's locale may be C (ASCII)
    import subprocess
    import sys

    from extraction_eval.gates._oracle_gate import read_pr_body

    body = tmp_path / "body.md"
    body.write_text("Zmiana promptu — przegląd ręczny.\nEXTRACTION_EVAL_ORACLE_OK=1\n", encoding="utf-8")
    # in this process first (whatever its locale), then in a child under the C locale
    assert read_pr_body(body) == "Zmiana promptu — przegląd ręczny.\nEXTRACTION_EVAL_ORACLE_OK=1\n"
    probe = (
        "from pathlib import Path; from extraction_eval.gates._oracle_gate import read_pr_body; "
        f"print(read_pr_body(Path({str(body)!r})).splitlines()[0].encode('unicode_escape').decode())"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("LC_")}
    env.update(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONIOENCODING="utf-8")
    # the child imports the same code as this process (under mutation testing: the mutant)
    import extraction_eval

    package_root = Path(extraction_eval.__file__).parents[1]
    env["PYTHONPATH"] = str(package_root)
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60, cwd=package_root.parent
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Zmiana promptu \\u2014 przegl\\u0105d r\\u0119czny."

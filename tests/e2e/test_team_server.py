"""The harness against the team server of scripts/team-server: PostgreSQL backend store,
MLflow's basic-auth app with a writer and a read-only user, artifacts served by the server.

Every command runs as a user would run it: `extraction-eval ...` in its own process, with
the environment that `scripts/team-server start` printed for that user.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..conftest import TINY, copy_gold, free_port
from ..helpers import drop_memories, git, mutate_cassettes
from .conftest import TeamServer, cli, cli_async, start_team_server, team_dir, team_script

pytestmark = [pytest.mark.team_server, pytest.mark.slow]

ARTIFACTS = [
    "cassette_manifest.json",
    "metrics.json",
    "per_conversation.jsonl",
    "per_conversation_table.json",
    "per_memory_table.json",
    "plots",
    "responses.jsonl",
]
# The row of a metric that did not move: its paired interval is "—" against a seeded baseline
# (no per-conversation record) and [+0.0000, +0.0000] against a promoted one; one of tiny's 3
# factual rows moves it by 0.3333.
PASS_ROW = re.compile(
    r"\| precision/factual \| 1\.0000 \| 1\.0000 \| \+0\.0000 \| (—|\[\+0\.0000, \+0\.0000\]) \| 0\.3333 \| pass \|"
)
# The same row as the terminal prints it (plain text; gate.md keeps the Markdown table).
PASS_TEXT = re.compile(r"precision/factual +1\.0000 +1\.0000 +\+0\.0000  pass")
WRITE_REFUSED = "may not write there (403 Permission denied). The gate only reads; `run`, `baseline register` and `baseline promote` write"


def run_id_of(out: Path) -> str:
    return str(json.loads((out / "run.json").read_text())["run_id"])


def judged_run(report: str) -> str:
    """The judged run's id, from gate.md (Markdown) or from the gate's terminal text."""
    found = re.search(r"^\*\*Run\*\* `([0-9a-f]{32})`", report, re.M) or re.search(
        r"^run ([0-9a-f]{32}): ", report, re.M
    )
    assert found, report
    return found.group(1)


class Seeded:
    """One writer's cassette run of the tiny gold set and a baseline seeded from the file."""

    def __init__(self, server: TeamServer, gold: Path, work: Path):
        self.server, self.gold, self.work = server, gold, work
        self.out = work / "out"
        server.reset_registry()
        done = cli(server.writer, "run", "--mode", "cassette", "--gold", str(gold), "--output-dir", "out", cwd=work)
        assert done.returncode == 0, done.stderr
        self.run_output = done
        self.run_id = run_id_of(self.out)
        registered = cli(server.writer, "baseline", "register", "--gold", str(gold), cwd=work)
        assert registered.returncode == 0, registered.stderr
        assert "openai: registered version 1" in registered.stdout, registered.stdout
        self.outputs = [done, registered]


@pytest.fixture(scope="module")
def seeded(team_server: TeamServer, tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    root = tmp_path_factory.mktemp("team-seeded")
    gold = copy_gold(TINY, root / "gold" / "tiny")
    (root / "work").mkdir()
    return Seeded(team_server, gold, root / "work")


def test_the_writer_runs_registers_gates_and_promotes(seeded: Seeded) -> None:
    server, work = seeded.server, seeded.work
    assert f"run {seeded.run_id} in experiment 'extraction-eval' (FINISHED) at {server.uri}" in seeded.run_output.stdout
    gate = cli(server.writer, "gate", "--output-dir", "out", "--gold", str(seeded.gold), cwd=work)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert PASS_TEXT.search(gate.stdout)
    assert judged_run(gate.stdout) == seeded.run_id
    seed_version = server.alias()
    assert seed_version["version"] == "1" and seed_version["run_id"] != seeded.run_id

    promoted = cli(
        server.writer,
        "baseline",
        "promote",
        "--run-id",
        seeded.run_id,
        "--gold",
        str(seeded.gold),
        "--write-file",
        cwd=work,
    )
    assert promoted.returncode == 0, promoted.stderr
    assert f"openai: promoted run {seeded.run_id} as version 2" in promoted.stdout
    assert server.alias()["version"] == "2" and server.alias()["run_id"] == seeded.run_id
    block = json.loads((seeded.gold / "baseline_results.json").read_text())["providers"]["openai"]
    assert block["mlflow_run_id"] == seeded.run_id

    again = cli(server.writer, "gate", "--output-dir", "out", "--gold", str(seeded.gold), cwd=work)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"baseline extraction-eval-openai version 2 (baseline-tiny, run {seeded.run_id})" in again.stdout

    # no password of any account reaches the output, the files the harness wrote, or the server's logs
    texts = [p.stdout + p.stderr for p in (*seeded.outputs, gate, promoted, again)]
    texts += [(seeded.out / name).read_text() for name in ("run.json", "gate.md")]
    texts += [(server.root / "mlflow.log").read_text(), (server.root / "postgres" / "server.log").read_text()]
    for secret in server.passwords():
        assert not any(secret in text for text in texts)


def test_artifacts_go_through_the_server_and_no_mlruns_is_left(seeded: Seeded) -> None:
    server = seeded.server
    assert sorted(p.name for p in seeded.work.iterdir()) == ["out"]  # no mlruns/, no mlflow.db, no mlartifacts/
    run = server.api("GET", "/api/2.0/mlflow/runs/get", params={"run_id": seeded.run_id}).json()["run"]
    experiment_id = run["info"]["experiment_id"]
    assert run["info"]["artifact_uri"] == f"mlflow-artifacts:/{experiment_id}/{seeded.run_id}/artifacts"

    reader = (server.reader["MLFLOW_TRACKING_USERNAME"], server.reader["MLFLOW_TRACKING_PASSWORD"])
    listed = server.api("GET", "/api/2.0/mlflow/artifacts/list", auth=reader, params={"run_id": seeded.run_id})
    # (plus gate.md once the gate has judged the run: it logs its report to the run it judged)
    assert sorted(f["path"] for f in listed.json()["files"] if f["path"] != "gate.md") == ARTIFACTS
    for name in ("metrics.json", "per_conversation.jsonl", "cassette_manifest.json"):
        served = server.api(
            "GET", f"/api/2.0/mlflow-artifacts/artifacts/{experiment_id}/{seeded.run_id}/artifacts/{name}", auth=reader
        )
        assert served.status_code == 200, served.text
        assert served.content == (seeded.out / name).read_bytes()
        # where the server keeps them: its artifact destination, not the client's disk
        stored = server.root / "artifacts" / experiment_id / seeded.run_id / "artifacts" / name
        assert stored.read_bytes() == served.content
    table = json.loads(
        server.api(
            "GET",
            "/get-artifact",
            auth=reader,
            params={"path": "per_conversation_table.json", "run_uuid": seeded.run_id},
        ).text
    )
    assert table["columns"] == [
        "conversation_id",
        "status",
        "expected",
        "predicted",
        "matched",
        "missed",
        "spurious",
        "category_mismatch",
        "temporal_mismatch",
        "failure_reason",
        "error",
    ]
    assert len(table["data"]) == 8
    anonymous = httpx.get(f"{server.uri}/get-artifact", params={"path": "metrics.json", "run_uuid": seeded.run_id})
    assert anonymous.status_code == 401


def _runs_in(server: TeamServer, experiment: str) -> int:
    found = server.api("GET", "/api/2.0/mlflow/experiments/get-by-name", params={"experiment_name": experiment})
    experiment_id = found.json()["experiment"]["experiment_id"]
    runs = server.api(
        "POST", "/api/2.0/mlflow/runs/search", json={"experiment_ids": [experiment_id], "max_results": 1000}
    )
    return len(runs.json().get("runs", []))


def test_the_reader_gates_but_cannot_run_register_or_promote(seeded: Seeded, tmp_path: Path) -> None:
    server, reader = seeded.server, seeded.server.reader
    work = tmp_path / "reader"
    work.mkdir()
    gate = cli(reader, "gate", "--run-id", seeded.run_id, "--output-dir", "out", "--gold", str(seeded.gold), cwd=work)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert PASS_TEXT.search(gate.stdout) and judged_run(gate.stdout) == seeded.run_id

    runs_before, seeds_before, alias_before = (
        _runs_in(server, "extraction-eval"),
        _runs_in(server, "extraction-eval-baselines"),
        server.alias(),
    )
    (work / "out" / "run.json").write_text(json.dumps({"run_id": seeded.run_id}))  # an older run's
    run = cli(reader, "run", "--mode", "cassette", "--gold", str(seeded.gold), "--output-dir", "out", cwd=work)
    assert run.returncode == 2, run.stdout + run.stderr
    assert (
        f"error: tracking server {server.uri!r} refused to log the run to experiment 'extraction-eval': "
        f"user 'extraction-eval-reader' {WRITE_REFUSED}"
    ) in run.stderr
    assert "Traceback" not in run.stderr
    # the folder is marked FAILED (issue 12: never the older run's run.json beside new numbers),
    # so a later gate cannot judge the older run by mistake
    marker = json.loads((work / "out" / "run.json").read_text())
    assert marker["status"] == "FAILED" and marker["run_id"] != seeded.run_id

    register = cli(reader, "baseline", "register", "--gold", str(seeded.gold), "--replace", cwd=work)
    assert register.returncode == 2 and "Traceback" not in register.stderr
    assert (
        f"error: tracking server {server.uri!r} refused to seed the registered baseline: "
        f"user 'extraction-eval-reader' {WRITE_REFUSED}"
    ) in register.stderr

    promote = cli(reader, "baseline", "promote", "--run-id", seeded.run_id, "--gold", str(seeded.gold), cwd=work)
    assert promote.returncode == 2 and "Traceback" not in promote.stderr
    assert (
        f"error: tracking server {server.uri!r} refused to promote the run to the registered baseline: "
        f"user 'extraction-eval-reader' {WRITE_REFUSED}"
    ) in promote.stderr

    # nothing was written: no run, no seeded baseline run, the alias where it was
    assert _runs_in(server, "extraction-eval") == runs_before
    assert _runs_in(server, "extraction-eval-baselines") == seeds_before
    assert server.alias() == alias_before


@pytest.mark.parametrize(
    ("label", "username", "password", "why"),
    [
        (
            "wrong password",
            "extraction-eval-writer",
            "canary-wrong-password",
            "wrong credentials: the password of user 'extraction-eval-writer' was not accepted",
        ),
        ("no credentials", None, None, "no credentials were sent"),
        (
            "no password",
            "extraction-eval-writer",
            None,
            "MLFLOW_TRACKING_USERNAME is 'extraction-eval-writer' but MLFLOW_TRACKING_PASSWORD is unset",
        ),
    ],
)
def test_wrong_or_missing_credentials_fail_closed(
    seeded: Seeded, tmp_path: Path, label: str, username: str | None, password: str | None, why: str
) -> None:
    server = seeded.server
    env = {"MLFLOW_TRACKING_URI": server.uri}
    if username:
        env["MLFLOW_TRACKING_USERNAME"] = username
    if password:
        env["MLFLOW_TRACKING_PASSWORD"] = password
    gate = cli(env, "gate", "--run-id", seeded.run_id, "--output-dir", "out", cwd=tmp_path)
    assert gate.returncode == 2, label
    assert (
        f"- tracking server {server.uri!r} refused the request: {why} (401); set MLFLOW_TRACKING_TOKEN or "
        "MLFLOW_TRACKING_USERNAME/PASSWORD to an account of that server."
    ) in gate.stdout
    assert (
        (tmp_path / "out" / "gate.md")
        .read_text()
        .startswith("## extraction-eval regression gate: FAIL: could not evaluate")
    )
    run = cli(env, "run", "--mode", "smoke", "--gold", str(seeded.gold), "--output-dir", "out", cwd=tmp_path)
    assert run.returncode == 2, label
    assert (
        f"error: tracking server {server.uri!r} refused to log the run to experiment 'extraction-eval': {why} (401). "
        "Set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN) to an account of that server."
    ) in run.stderr
    if password:
        assert password not in gate.stdout + gate.stderr + run.stdout + run.stderr


def test_two_evals_at_once_each_gate_judges_its_own_run(seeded: Seeded, tmp_path: Path) -> None:
    """Two CI jobs at once: a good run and a regressed one, from two processes, gated at the same time."""
    server = seeded.server
    regressed = copy_gold(TINY, tmp_path / "regressed" / "tiny")  # gold version: the folder name
    mutate_cassettes(regressed, drop_memories({"t01", "t05"}))
    assert cli(server.writer, "baseline", "register", "--gold", str(TINY), "--replace", cwd=tmp_path).returncode == 0
    jobs = {"good": seeded.gold, "bad": regressed}
    for name in jobs:
        (tmp_path / name).mkdir()
    runs = {
        name: cli_async(
            server.writer, "run", "--mode", "cassette", "--gold", str(gold), "--output-dir", "out", cwd=tmp_path / name
        )
        for name, gold in jobs.items()
    }
    for name, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, (name, stdout, stderr)
    ids = {name: run_id_of(tmp_path / name / "out") for name in jobs}
    assert ids["good"] != ids["bad"]
    gates = {
        name: cli_async(server.writer, "gate", "--output-dir", "out", "--gold", str(TINY), cwd=tmp_path / name)
        for name in jobs
    }
    results = {name: (proc.communicate(timeout=300)[0], proc.returncode) for name, proc in gates.items()}
    good, bad = results["good"], results["bad"]
    assert good[1] == 0 and PASS_TEXT.search(good[0]), good
    assert bad[1] == 1, bad
    bad_md = (tmp_path / "bad" / "out" / "gate.md").read_text()
    assert re.search(r"\| recall/factual \| 1\.0000 \| 0\.6667 \| -0\.3333 \| [^|]+ \| 0\.3333 \| FAIL \|", bad_md)
    assert re.search(r"\| recall/episodic \| 1\.0000 \| 0\.5000 \| -0\.5000 \| [^|]+ \| 0\.5000 \| FAIL \|", bad_md)
    assert re.search(r"recall/factual +1\.0000 +0\.6667 +-0\.3333  FAIL", bad[0])
    for name in jobs:
        assert judged_run(results[name][0]) == ids[name]
        assert judged_run((tmp_path / name / "out" / "gate.md").read_text()) == ids[name]


def test_the_gate_finds_the_newest_run_of_head_by_tag_filter(seeded: Seeded, tmp_path: Path) -> None:
    """Without run.json the gate searches PostgreSQL by tags (commit, subset, run kind) and status."""
    server = seeded.server
    project = tmp_path / "project"
    project.mkdir()
    (project / "MLproject").write_text("name: probe\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "head")
    head = git(project, "rev-parse", "HEAD").strip()
    ids = []
    for mode in ("cassette", "cassette", "smoke"):  # the smoke run is newer but never gated
        done = cli(server.writer, "run", "--mode", mode, "--gold", str(seeded.gold), cwd=project)
        assert done.returncode == 0, done.stderr
        ids.append(run_id_of(project / "output"))
    (project / "output" / "run.json").unlink()
    gate = cli(server.reader, "gate", "--gold", str(seeded.gold), cwd=project)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert judged_run(gate.stdout) == ids[1]
    assert f"commit {head[:12]}" in gate.stdout


class _Unavailable(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(503)
        self.end_headers()
        self.wfile.write(b"upstream connect error")

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def proxy_with_no_backend() -> Iterator[str]:
    """What TLS in front of a stopped server answers: 503 to everything."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """A port that accepts connections and never answers (a hung server)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def test_the_gate_fails_closed_when_the_server_is_down(
    seeded: Seeded, tmp_path: Path, proxy_with_no_backend: str, silent_listener: str
) -> None:
    """Exit 2 and "could not evaluate", within the reader's timeouts (connect 10 s, read 30 s)."""
    creds = {k: v for k, v in seeded.server.reader.items() if k != "MLFLOW_TRACKING_URI"}
    cases = [
        (f"http://127.0.0.1:{free_port()}", "is unreachable (ConnectError: [Errno 111] Connection refused)"),
        (proxy_with_no_backend, "answered 503 to GET /runs/get: 'upstream connect error'"),
        (silent_listener, "is unreachable (ReadTimeout: timed out)"),
    ]
    for uri, message in cases:
        started = time.monotonic()
        gate = cli(
            {**creds, "MLFLOW_TRACKING_URI": uri},
            "gate",
            "--run-id",
            seeded.run_id,
            "--output-dir",
            "out",
            cwd=tmp_path,
            timeout=120,
        )
        elapsed = time.monotonic() - started
        assert gate.returncode == 2, (uri, gate.stdout, gate.stderr)
        assert f"- tracking server {uri!r} {message}" in gate.stdout
        assert gate.stdout.startswith("extraction-eval regression gate: FAIL: could not evaluate")
        assert elapsed < 90, (uri, elapsed)  # bounded by the 30 s read timeout, not waiting forever


def _processes_holding(text: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_start_stop_restart_and_throw_away(tmp_path: Path, tiny_gold: Path) -> None:
    """A server of its own: state in DIR, stopped by PID, started again on the same data, then deleted."""
    root = team_dir()
    try:
        server, started = start_team_server(root, "--workers", "1")
        state = json.loads((root / "team-server.json").read_text())
        for private in ("team-server.json", "pgpass"):
            assert stat.S_IMODE((root / private).stat().st_mode) == 0o600
        config = (root / "basic_auth.ini").read_text()
        assert not any(secret in config for secret in server.passwords())
        mlflow_pid = state["mlflow_pid"]
        pg_pid = int((root / "postgres" / "data" / "postmaster.pid").read_text().split()[0])
        os.killpg(mlflow_pid, 0)
        os.kill(pg_pid, 0)
        for secret in server.passwords():  # never on a command line
            assert _processes_holding(secret) == []

        done = cli(
            server.writer, "run", "--mode", "smoke", "--gold", str(tiny_gold), "--output-dir", "out", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        smoke_run = run_id_of(tmp_path / "out")

        again = team_script("start", str(root))
        assert again.returncode == 0 and "already running" in again.stderr
        assert again.stdout == started.stdout

        stopped = team_script("stop", str(root))
        assert stopped.returncode == 0, stopped.stderr
        for pid in (mlflow_pid, pg_pid):
            assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z"
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.uri}/health", timeout=5)
        gate = cli(server.reader, "gate", "--run-id", smoke_run, "--output-dir", "out", cwd=tmp_path)
        assert gate.returncode == 2 and "is unreachable (ConnectError" in gate.stdout

        restarted, second = start_team_server(root, "--workers", "1")
        assert second.stdout == started.stdout  # same address, same users, same passwords
        found = restarted.api("GET", "/api/2.0/mlflow/runs/get", auth=None, params={"run_id": smoke_run})
        assert found.status_code == 200 and found.json()["run"]["info"]["status"] == "FINISHED"

        purged = team_script("stop", str(root), "--purge")
        assert purged.returncode == 0, purged.stderr
        assert not root.exists()
    finally:
        if root.exists():
            team_script("stop", str(root), "--purge")


def test_the_ci_account_cannot_lower_the_bar(seeded: Seeded, tmp_path: Path) -> None:
    """Issue 21's attack 1, with the documented permissions: a `ci` account with EDIT on the
    experiment and READ on the registered models logs recall = 0.0 at a higher step on the
    baseline run (which its experiment EDIT allows). A regressed run's gate does not turn into
    a pass: the bar is the numbers fixed on the model version, and a changed baseline run is
    refused, saying what changed. It cannot change the version's numbers either (403)."""
    server = seeded.server
    ci = ("ci-attacker", "ci-attacker-Pw-1")
    if server.api("GET", "/api/2.0/mlflow/users/get", params={"username": ci[0]}).status_code != 200:
        server.api(
            "POST", "/api/2.0/mlflow/users/create", json={"username": ci[0], "password": ci[1]}
        ).raise_for_status()
    experiment = server.api(
        "GET", "/api/2.0/mlflow/experiments/get-by-name", params={"experiment_name": "extraction-eval"}
    )
    server.api(
        "POST",
        "/api/3.0/mlflow/users/permissions/grant",
        json={
            "username": ci[0],
            "resource_type": "experiment",
            "resource_id": experiment.json()["experiment"]["experiment_id"],
            "permission": "EDIT",
        },
    ).raise_for_status()
    # a fresh baseline, then a regressed run to gate
    register = cli(server.writer, "baseline", "register", "--gold", str(seeded.gold), "--replace", cwd=seeded.work)
    assert register.returncode == 0, register.stderr
    baseline = server.alias()
    regressed = copy_gold(TINY, tmp_path / "regressed" / "tiny")
    mutate_cassettes(regressed, drop_memories({"t01", "t02", "t03", "t04"}))
    (tmp_path / "w").mkdir()
    done = cli(
        server.writer, "run", "--mode", "cassette", "--gold", str(regressed), "--output-dir", "out", cwd=tmp_path / "w"
    )
    assert done.returncode == 0, done.stderr
    before = cli(server.reader, "gate", "--output-dir", "out", "--gold", str(regressed), cwd=tmp_path / "w")
    assert before.returncode == 1, before.stdout  # a regression

    # the attack: log-batch on the baseline run as ci (allowed: EDIT on its experiment)
    now = int(time.time() * 1000)
    metrics = [
        {"key": f"recall/{c}", "value": 0.0, "timestamp": now, "step": 99}
        for c in ("factual", "procedural", "preference", "behavioral", "episodic")
    ]
    attack = server.api(
        "POST", "/api/2.0/mlflow/runs/log-batch", auth=ci, json={"run_id": baseline["run_id"], "metrics": metrics}
    )
    assert attack.status_code == 200, attack.text
    # and the version's own numbers are out of its reach
    retag = server.api(
        "POST",
        "/api/2.0/mlflow/model-versions/set-tag",
        auth=ci,
        json={
            "name": "extraction-eval-openai",
            "version": baseline["version"],
            "key": "baseline/recall/factual",
            "value": "0.0",
        },
    )
    assert retag.status_code == 403, retag.text

    after = cli(server.reader, "gate", "--output-dir", "out", "--gold", str(regressed), cwd=tmp_path / "w")
    assert after.returncode == 2, after.stdout  # never 0: the bar did not move
    assert (
        f"points at run {baseline['run_id']}, which was written to after promotion: recall/behavioral is 0.0 on the "
        "run, 1.0 when promoted" in after.stdout
    )
    verdict = json.loads((tmp_path / "w" / "out" / "gate.json").read_text())
    assert verdict["verdict"] == "error"


def test_v1_and_v2_share_the_team_server_and_rescore_leaves_the_gate_alone(
    team_server: TeamServer, tmp_path: Path
) -> None:
    """Issue 22's sequence against the team server: v1's and v2's baselines side by side
    (aliases baseline-v1 and baseline-v2), both gates pass, and a rescore writes its own folder."""
    from ..conftest import REPO

    team_server.reset_registry()
    work = tmp_path / "work"
    for version in ("v1", "v2"):
        shutil.copytree(REPO / "gold" / version, work / "gold" / version)
    w = team_server.writer

    def ok(*args: str) -> str:
        done = cli(w, *args, cwd=work)
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
        return done.stdout

    ok("run", "--mode", "cassette", "--no-traces")
    eval_run = run_id_of(work / "output")
    ok("baseline", "register", "--if-missing")
    ok("gate")
    ok("run", "--mode", "cassette", "--gold", "gold/v2", "--output-dir", "output/v2", "--no-traces")
    assert "alias baseline-v2" in ok("baseline", "register", "--if-missing", "--gold", "gold/v2")
    ok("gate", "--gold", "gold/v2", "--output-dir", "output/v2")
    assert team_server.alias(alias="baseline-v1")["version"] == "1"
    assert team_server.alias(alias="baseline-v2")["version"] == "2"
    ok("rescore", "--run-id", eval_run, "--matcher", "keyed-dice@3", "--no-traces")
    assert run_id_of(work / "output") == eval_run
    assert judged_run(ok("gate")) == eval_run

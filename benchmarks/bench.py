#!/usr/bin/env python3
"""Speed targets, measured in one run (docs/benchmarks.md quotes its output).

    python benchmarks/bench.py [--repeat 5] [--runs 1000] [--skip eval,gate,provider]

1. eval:     `extraction-eval run --mode cassette` on gold/v1 (125 conversations) against
             an already-created store (the embedded SQLite one, and a running server),
             versus `python -c "import mlflow"`. Target: the eval adds at most 1.5 s.
2. gate:     `extraction-eval gate` and `python scripts/regression_gate.py` against a real
             `mlflow server` holding --runs runs. Target: under 1 s.
3. provider: the provider-call phase of a live run over 125 conversations against the
             stub provider with 100 ms latency per request, at concurrency 16 and at 1.
             Target: at concurrency 16, at least 80% of the ideal throughput
             (concurrency / latency).

Medians of --repeat wall-clock measurements; every subprocess starts cold. Before measuring,
src/ is byte-compiled (as `pip install .` does, and as the first import does wherever
PYTHONDONTWRITEBYTECODE is unset), so the harness's modules load from bytecode like MLflow's.
"""

from __future__ import annotations

import asyncio
import compileall
import gc
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "gold" / "v1"
BIN = Path(sys.executable).parent


def wall(cmd: list[str], env: dict[str, str], cwd: Path, expect: int = 0) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != expect:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return elapsed


def median_of(
    repeat: int, cmd: list[str], env: dict[str, str], cwd: Path, expect: int = 0
) -> tuple[float, list[float]]:
    samples = [wall(cmd, env, cwd, expect) for _ in range(repeat)]
    return statistics.median(samples), samples


def bench_eval(repeat: int, work: Path, server_uri: str | None) -> dict[str, object]:
    """The eval against the embedded SQLite store, and against a running tracking server."""
    out: dict[str, object] = {}
    stores = {"sqlite": f"sqlite:///{work / 'eval.db'}"}
    if server_uri is not None:
        stores["server"] = server_uri
    for label, uri in stores.items():
        env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
        run = [
            str(BIN / "extraction-eval"),
            "run",
            "--mode",
            "cassette",
            "--gold",
            str(GOLD),
            "--output-dir",
            str(work / f"out-{label}"),
            "--no-progress",
        ]
        wall(run, env, work)  # creates the store, its tables and the experiment: not measured
        # The import is measured next to each store's eval, so both see the same load on a shared machine.
        import_mlflow, import_samples = median_of(repeat, [sys.executable, "-c", "import mlflow"], env, work)
        eval_time, eval_samples = median_of(repeat, run, env, work)
        out[label] = {
            "import_mlflow_s": round(import_mlflow, 3),
            "eval_s": round(eval_time, 3),
            "eval_minus_import_s": round(eval_time - import_mlflow, 3),
            "target_s": 1.5,
            "met": eval_time - import_mlflow <= 1.5,
            "samples": {"import": [round(x, 3) for x in import_samples], "eval": [round(x, 3) for x in eval_samples]},
        }
    # What the SQLite store itself costs on top of `import mlflow` (MLflow's SQLAlchemy store import).
    store_only = [
        sys.executable,
        "-c",
        f"import mlflow; mlflow.MlflowClient({stores['sqlite']!r}).get_experiment_by_name('extraction-eval')",
    ]
    store_time, _ = median_of(repeat, store_only, os.environ.copy(), work)
    out["sqlite_store_open_s"] = round(store_time, 3)
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def populate(db_uri: str, runs: int) -> None:
    """Fill the store directly (no HTTP) with runs shaped like real evaluations."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, RunTag

    from extraction_eval.metric_keys import DEFAULT_GATED_METRICS

    client = MlflowClient(db_uri)
    experiment = client.get_experiment_by_name("extraction-eval")
    experiment_id = experiment.experiment_id if experiment else client.create_experiment("extraction-eval")
    now = int(time.time() * 1000)
    for index in range(runs):
        run = client.create_run(
            experiment_id,
            tags={
                "run_kind": "eval",
                "subset": "full",
                "provider": "openai",
                "mlflow.source.git.commit": f"{index:040x}",
            },
        )
        client.log_batch(
            run.info.run_id,
            metrics=[Metric(k, 0.9, now, 0) for k in DEFAULT_GATED_METRICS],
            tags=[RunTag("mode", "cassette")],
        )
        client.set_terminated(run.info.run_id)


class Server:
    """A real `mlflow server` on 127.0.0.1 over a store that already holds `runs` runs."""

    def __init__(self, work: Path, runs: int):
        db_uri = f"sqlite:///{work / 'gate.db'}"
        populate(db_uri, runs)
        port = free_port()
        self.uri = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [
                str(BIN / "mlflow"),
                "server",
                "--backend-store-uri",
                db_uri,
                "--default-artifact-root",
                str(work / "artifacts"),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
            ],
            env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        import httpx

        for _ in range(480):
            try:
                if httpx.get(f"{self.uri}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.25)
        raise SystemExit("mlflow server did not start")

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=30)


def bench_gate(repeat: int, runs: int, work: Path, server: Server) -> dict[str, object]:
    env = {**os.environ, "MLFLOW_TRACKING_URI": server.uri}
    cli = str(BIN / "extraction-eval")
    wall([cli, "baseline", "register", "--gold", str(GOLD), "--replace"], env, REPO)
    out = work / "gate-out"
    wall([cli, "run", "--mode", "cassette", "--gold", str(GOLD), "--output-dir", str(out), "--no-progress"], env, REPO)
    gate_cli, cli_samples = median_of(repeat, [cli, "gate", "--output-dir", str(out), "--gold", str(GOLD)], env, REPO)
    gate_script, script_samples = median_of(
        repeat,
        [sys.executable, str(REPO / "scripts" / "regression_gate.py"), "--output-dir", str(out), "--gold", str(GOLD)],
        env,
        REPO,
    )
    return {
        "runs_on_server": runs,
        "gate_cli_s": round(gate_cli, 3),
        "gate_script_s": round(gate_script, 3),
        "target_s": 1.0,
        "met": {"cli": gate_cli < 1.0, "script": gate_script < 1.0},
        "samples": {"cli": [round(x, 3) for x in cli_samples], "script": [round(x, 3) for x in script_samples]},
    }


class FullCollections:
    """Counts the full (oldest-generation) garbage collections while it is entered."""

    def __init__(self) -> None:
        self.count = 0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            self.count += 1

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process, from /proc (None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_provider(repeat: int, work: Path) -> dict[str, object]:
    """The stub runs as its own process, as a real endpoint would: no GIL shared with the client."""
    from extraction_eval.gold import load_gold
    from extraction_eval.providers import Budget, Redactor, RetryPolicy, call_all
    from extraction_eval.providers import ChatCompletionsClient as ChatCompletionsProvider

    gold = load_gold(GOLD)
    latency = 0.1
    script = work / "script.json"
    script.write_text(json.dumps({"default": {"latency_ms": latency * 1000}}))
    port_file = work / "stub.port"
    stub = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "extraction_eval.stub_provider",
            "--gold",
            str(GOLD),
            "--script",
            str(script),
            "--port",
            "0",
            "--port-file",
            str(port_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out: dict[str, object] = {
        "conversations": len(gold.conversations),
        "latency_s": latency,
        # The machine is shared: how busy it was is part of the figure.
        "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        for _ in range(200):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.05)
        base_url = f"http://127.0.0.1:{int(port_file.read_text())}/v1"
        for concurrency in (16, 1):
            samples, client_cpu, stub_cpu, full_collections = [], [], [], []
            for _ in range(repeat if concurrency > 1 else 1):
                provider = ChatCompletionsProvider(
                    "openai", "gpt-4o-mini", api_key="sk-bench", base_url=base_url, timeout_s=30
                )
                full = FullCollections()
                cpu, stub_before = time.process_time(), process_cpu_s(stub.pid)
                started = time.perf_counter()
                with full:
                    results = asyncio.run(
                        call_all(
                            provider,
                            gold.conversations,
                            concurrency=concurrency,
                            policy=RetryPolicy(),
                            redactor=Redactor([]),
                            budget=Budget("gpt-4o-mini", None, None),
                        )
                    )
                samples.append(time.perf_counter() - started)
                n = len(gold.conversations)
                client_cpu.append((time.process_time() - cpu) / n * 1000)
                stub_after = process_cpu_s(stub.pid)
                if stub_before is not None and stub_after is not None:
                    stub_cpu.append((stub_after - stub_before) / n * 1000)
                full_collections.append(full.count)
                assert all(r.answer is not None for r in results.values())
            measured = statistics.median(samples)
            ideal = len(gold.conversations) * latency / concurrency
            out[f"concurrency_{concurrency}"] = {
                "phase_s": round(measured, 3),
                "ideal_s": round(ideal, 3),
                "throughput_per_s": round(len(gold.conversations) / measured, 1),
                "ideal_throughput_per_s": round(concurrency / latency, 1),
                "efficiency": round(ideal / measured, 3),
                "samples": [round(s, 3) for s in samples],
                "client_cpu_ms_per_request": [round(x, 2) for x in client_cpu],
                "stub_cpu_ms_per_request": [round(x, 2) for x in stub_cpu],
                "full_collections_during_phase": full_collections,
            }
        # What a full collection would have cost inside the phase, in this process.
        started = time.perf_counter()
        gc.collect()
        out["one_full_collection_s"] = round(time.perf_counter() - started, 3)
        out["objects_tracked"] = len(gc.get_objects())
    finally:
        stub.send_signal(signal.SIGTERM)
        stub.wait(timeout=30)
    efficiency = out["concurrency_16"]["efficiency"]  # type: ignore[index]
    out["target_efficiency"] = 0.8
    out["met"] = efficiency >= 0.8
    return out


def main(
    repeat: Annotated[int, typer.Option(help="timed repetitions of each measurement")] = 5,
    runs: Annotated[int, typer.Option(help="runs the gate's server holds")] = 1000,
    skip: Annotated[str, typer.Option(help="comma-separated: eval,gate,provider")] = "",
) -> None:
    skipped = set(filter(None, skip.split(",")))
    compileall.compile_dir(REPO / "src", quiet=1)
    work = Path(tempfile.mkdtemp(prefix="extraction-eval-bench-"))
    report: dict[str, object] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "command": "python benchmarks/bench.py " + " ".join(sys.argv[1:]),
        "bytecode": "src/ compiled before measuring (compileall)",
    }
    server = Server(work, runs) if not {"eval", "gate"} <= skipped else None
    try:
        if "eval" not in skipped:
            report["eval"] = bench_eval(repeat, work, server.uri if server else None)
        if "gate" not in skipped and server is not None:
            report["gate"] = bench_gate(repeat, runs, work, server)
        if "provider" not in skipped:
            report["provider"] = bench_provider(repeat, work)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])

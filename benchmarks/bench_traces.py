#!/usr/bin/env python3
"""What the per-conversation traces cost (docs/benchmarks.md, section 5).

    python benchmarks/bench_traces.py [--repeat 3] [--genai-repeat 1] [--gold gold/v1 --gold gold/v2]

On the embedded SQLite store (a fresh one, created by one unmeasured run first), medians of
--repeat cold subprocess runs, interleaved so that both see the same load:

1. `extraction-eval run --mode cassette` on gold/v1 (125 conversations) with its traces
   (125 traces, 255 assessments), and with `--no-traces`. Target (issue 13): the run with
   traces takes at most 2x the run without.
2. `mlflow.genai.evaluate` over the same 125 rows (the conversation as inputs, the parsed
   memories as outputs) with one code scorer that returns the same assessments, into a run
   of its own: the whole subprocess, and the `evaluate` call alone (the rows are built
   before the clock starts). It takes minutes here, so it is sampled --genai-repeat times
   (default 1), after the eval's samples of the same round.
"""

from __future__ import annotations

import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from extraction_eval._entry import run_entry

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "gold" / "v1"
BIN = Path(sys.executable).parent

#: Run in a subprocess: build the rows and assessments from the harness's own scoring, then time
#: `mlflow.genai.evaluate` over them. Prints {"evaluate_s", "traces", "assessments"}.
GENAI = r"""
import json, sys, time
from pathlib import Path
import mlflow
from mlflow.entities import AssessmentSource, Feedback
from mlflow.genai.scorers import scorer
from extraction_eval.evaluation import collect_replay, plan_run, score_answers, trace_records
from extraction_eval.gates._contract_gate import contract_gate
from extraction_eval.gold import load_gold, read_cassettes
from extraction_eval.scoring import DEFAULT_MATCHER
from extraction_eval.vocab import Mode

uri, gold_dir, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
gold = load_gold(gold_dir, require_manifest=True)
plan = plan_run(Mode.CASSETTE, gold_dir, out, gold.manifest)
selected = gold.subset_conversations(plan.subset)
verdict = contract_gate(gold, gold.manifest, read_cassettes(gold, gold.manifest), selected)
answers = collect_replay(plan, gold.manifest.cassette_kind, verdict.replay).answers
scored = score_answers(gold, selected, answers, model=plan.model)
records = trace_records(scored.report.conversations, {c.conversation_id: c for c in selected},
                        [a.latency_s for a in scored.answers], DEFAULT_MATCHER)
by_id = {r.conversation_id: r for r in records}
source = AssessmentSource(source_type="CODE", source_id="bench")

@scorer
def outcomes(inputs, outputs):
    record = by_id[inputs["conversation_id"]]
    return [Feedback(name=a.name, value=a.value, rationale=a.rationale, metadata=dict(a.metadata), source=source)
            for a in record.assessments if not a.expectation]

# the gold rows go in as each row's expectations, as the harness logs them on its traces
data = [{"inputs": dict(r.inputs), "outputs": dict(r.outputs),
         "expectations": {a.name: a.value for a in r.assessments if a.expectation}} for r in records]
mlflow.set_tracking_uri(uri)
mlflow.set_experiment("bench-genai-evaluate")
started = time.perf_counter()
with mlflow.start_run(run_name="genai-evaluate"):
    mlflow.genai.evaluate(data=data, scorers=[outcomes])
elapsed = time.perf_counter() - started
mlflow.flush_trace_async_logging()
print(json.dumps({"evaluate_s": elapsed, "traces": len(records),
                  "assessments": sum(len(r.assessments) for r in records)}))
"""


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} exited {proc.returncode}: {proc.stderr[-3000:]}")
    return elapsed, proc.stdout


def measure(gold: Path, repeat: int, genai_repeat: int) -> dict[str, Any]:
    """One gold folder: a fresh store, the eval with and without traces in alternating pairs,
    then (per round, up to ``genai_repeat``) the peer."""
    work = Path(tempfile.mkdtemp(prefix="extraction-eval-bench-traces-"))
    uri = f"sqlite:///{work / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}

    def run(*extra: str) -> list[str]:
        cli = (str(BIN / "extraction-eval"), "run", "--mode", "cassette", "--gold", str(gold))
        return [*cli, "--output-dir", str(work / "out"), "--no-progress", *extra]

    genai = [sys.executable, "-c", GENAI, uri, str(gold), str(work / "genai-out")]
    samples: dict[str, list[float]] = {"traces": [], "no_traces": [], "genai_process": [], "genai_evaluate": []}
    counts: dict[str, int] = {}
    try:
        timed(run("--no-traces"), env, REPO)  # creates the store, its tables and the experiment: not measured
        for index in range(repeat):
            samples["no_traces"].append(timed(run("--no-traces"), env, REPO)[0])
            samples["traces"].append(timed(run(), env, REPO)[0])
            if index >= genai_repeat:
                continue
            elapsed, stdout = timed(genai, env, REPO)
            result = json.loads(stdout.strip().splitlines()[-1])
            samples["genai_process"].append(elapsed)
            samples["genai_evaluate"].append(result["evaluate_s"])
            counts = {"traces": result["traces"], "assessments": result["assessments"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: round(statistics.median(v), 3) for k, v in samples.items() if v}
    out: dict[str, Any] = {
        "logged": counts,
        "median_s": med,
        "traces_over_no_traces": round(med["traces"] / med["no_traces"], 3),
        "samples_s": {k: [round(x, 3) for x in v] for k, v in samples.items()},
    }
    if "genai_process" in med:
        # issue 25: the eval with traces against the peer's whole process, paired in this run
        out["peer_over_eval"] = round(med["genai_process"] / med["traces"], 1)
    return out


def main(
    repeat: Annotated[int, typer.Option(help="timed cassette runs with and without traces")] = 3,
    genai_repeat: Annotated[int, typer.Option(help="timed mlflow.genai.evaluate runs")] = 1,
    gold: Annotated[list[Path] | None, typer.Option("--gold", help="gold folders (repeat; default gold/v1)")] = None,
) -> None:
    compileall.compile_dir(REPO / "src", quiet=1)
    golds = gold or [GOLD]
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "command": "python benchmarks/bench_traces.py " + " ".join(sys.argv[1:]),
        "store": "embedded SQLite (fresh per gold folder, created by one unmeasured run)",
        "targets": "issue 13: traces <= 2x no_traces; issue 25: peer_over_eval >= 50 on v1, traces <= 1.25x on v2",
        "gold": {str(g): measure(g, repeat, genai_repeat) for g in golds},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])

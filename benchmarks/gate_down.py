#!/usr/bin/env python3
"""How long the gate takes to fail closed when the tracking server is down (docs/team-server.md).

    python benchmarks/gate_down.py [--slow]

Runs `extraction-eval gate --run-id <32 zeros>` in a fresh process against five kinds of
down server on 127.0.0.1 and prints the exit code, the wall-clock time and the reason:

- refused:  nothing listens on the port (a stopped server);
- dns:      the host name does not resolve;
- 503:      a proxy answers 503 to everything (TLS in front of a stopped server);
- dropped:  connection attempts go unanswered (a firewall dropping packets);
- silent:   the connection is accepted but never answered (a hung server).

With --slow it also times two cases that take minutes: `extraction-eval run --mode smoke`
on the tiny fixture gold set against the refused port (MLflow's client retries before it
gives up), and the gate pointed at the database itself (`postgresql+psycopg://` on the
refused port) instead of a server (MLflow's SQL store retries connecting).
"""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("extraction-eval")


class _Unavailable(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(503)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        return None


def timed(args: list[str], uri: str, cwd: Path) -> tuple[int, float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_TRACKING_URI"] = uri
    started = time.perf_counter()
    proc = subprocess.run([str(CLI), *args], env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    reason = next((line[2:] for line in proc.stdout.splitlines() if line.startswith("- ")), proc.stderr.strip())
    return proc.returncode, elapsed, reason.split(". ")[0]


def main(slow: Annotated[bool, typer.Option(help="also the cases that take minutes")] = False) -> None:

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused_port = closed.getsockname()[1]
    closed.close()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    full = socket.socket()  # a backlog of 0, filled: further connection attempts are dropped
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    held = [socket.create_connection(full.getsockname(), timeout=2)]
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()

    cases = {
        "refused": f"http://127.0.0.1:{refused_port}",
        "dns": "https://mlflow.nonexistent.invalid",
        "503": f"http://127.0.0.1:{proxy.server_address[1]}",
        "dropped": f"http://127.0.0.1:{full.getsockname()[1]}",
        "silent": f"http://127.0.0.1:{silent.getsockname()[1]}",
    }
    work = Path(tempfile.mkdtemp(prefix="gate-down-"))
    try:
        print("| server | exit | seconds | reason |")
        print("| --- | ---: | ---: | --- |")
        for label, uri in cases.items():
            code, elapsed, reason = timed(["gate", "--run-id", "0" * 32, "--output-dir", "out"], uri, work)
            print(f"| {label} | {code} | {elapsed:.1f} | {reason} |")
        if slow:
            gold = work / "tiny"
            shutil.copytree(REPO / "tests" / "fixtures" / "gold" / "tiny", gold)
            subprocess.run([str(CLI), "cassettes", "oracle", "--gold", str(gold)], capture_output=True, check=True)
            run_args = ["run", "--mode", "smoke", "--gold", str(gold), "--output-dir", "out", "--no-progress"]
            code, elapsed, reason = timed(run_args, cases["refused"], work)
            print(f"| refused (`run --mode smoke`) | {code} | {elapsed:.1f} | {reason} |")
            database = f"postgresql+psycopg://mlflow@127.0.0.1:{refused_port}/mlflow"
            code, elapsed, reason = timed(["gate", "--run-id", "0" * 32, "--output-dir", "out"], database, work)
            print(f"| refused database URI (gate) | {code} | {elapsed:.1f} | {reason} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        proxy.shutdown()
        for sock in (*held, full, silent):
            sock.close()


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])

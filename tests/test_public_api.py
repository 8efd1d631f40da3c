"""The public surface is pinned, and the gate's fast path never imports mlflow."""

from __future__ import annotations

import subprocess
import sys

import extraction_eval

from .conftest import free_port

EXPORTED = [
    "BatchExtractionResult",
    "CannotEvaluate",
    "CassetteError",
    "CassetteKind",
    "Category",
    "ConfigurationError",
    "ContractDriftError",
    "DEFAULT_GATED_METRICS",
    "DEFAULT_MATCHER",
    "Enforcement",
    "ExtractedMemory",
    "ExtractionEvalError",
    "GoldDataError",
    "GoldSet",
    "KeyedDiceMatcher",
    "Matcher",
    "Mode",
    "Provider",
    "ProviderError",
    "RunOptions",
    "Subset",
    "TemporalKind",
    "TrackingError",
    "__version__",
    "judge",
    "load_gold",
    "parse_response",
    "prompt_sha256",
    "request_sha256",
    "run_eval",
    "schema_sha256",
    "score",
    "system_prompt",
]


def test_exported_names_are_pinned_and_resolve() -> None:
    assert sorted(extraction_eval.__all__) == sorted(EXPORTED)
    assert set(extraction_eval._EXPORTS) | {"__version__"} == set(EXPORTED)  # the lazy table agrees
    for name in EXPORTED:
        assert getattr(extraction_eval, name) is not None
    assert issubclass(extraction_eval.GoldDataError, extraction_eval.ExtractionEvalError)


def test_the_gate_against_an_http_server_never_imports_mlflow(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = f"""
import os, sys
from pathlib import Path
os.environ["MLFLOW_TRACKING_URI"] = "http://127.0.0.1:{free_port()}"
from extraction_eval.gates._gate_run import run_gate
result, markdown = run_gate("0" * 32, Path({str(tmp_path)!r}), Path("gold/v1"))
assert result.exit_code == 2 and "unreachable" in markdown, markdown
heavy = sorted(m for m in ("mlflow", "pandas", "scipy", "openai", "sqlalchemy") if m in sys.modules)
print(",".join(heavy) or "none")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "none"


def test_a_strict_type_checker_sees_every_export(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """py.typed is a promise: `from extraction_eval import X` must pass `mypy --strict`."""
    user = tmp_path / "user.py"
    user.write_text(
        f"from extraction_eval import {', '.join(EXPORTED)}\n\nprint({', '.join(EXPORTED)})\n",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), str(user)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

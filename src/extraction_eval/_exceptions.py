"""The one exception tree of extraction-eval.

    ExtractionEvalError            anything meant for the user; the CLI prints it and exits 2
    ├── ConfigurationError         a bad flag, mode, environment variable or combination of them
    ├── GoldDataError              a gold file that is unreadable or disagrees with itself,
    │                              the manifest or the pinned table (names file, line, field, fix)
    ├── ContractDriftError         prompt, schema or gold file hash differs from what was recorded
    ├── CassetteError              replay cannot answer a request (missing, mismatched, unknown)
    ├── ProviderError              a provider call that cannot succeed (auth, bad request)
    ├── TrackingError              the tracking server is unreachable or answers with an error
    ├── OutputError                the output folder cannot be written, or another run holds it
    └── CannotEvaluate             a gate that cannot reach a verdict: it fails closed (exit 2)

Beside the tree, ``Terminated`` (a ``BaseException``, like ``KeyboardInterrupt``) is what
the CLI raises on SIGTERM, so no ``except Exception`` can swallow it.

Every message quotes the bad value with ``!r``, lists the valid choices where
there are some, and names the fix.
"""

from __future__ import annotations


class ExtractionEvalError(Exception):
    """Base class of every error extraction-eval raises on purpose."""

    exit_code: int = 2


class ConfigurationError(ExtractionEvalError):
    """A flag, mode or environment variable that is missing, unknown or contradictory."""


class GoldDataError(ExtractionEvalError):
    """A gold file that cannot be read or does not agree with its manifest."""


class ContractDriftError(ExtractionEvalError):
    """The prompt, schema or a gold file no longer matches the recorded hash."""


class CassetteError(ExtractionEvalError):
    """Replay has no recording for a request, or the recording does not match it."""


class ProviderError(ExtractionEvalError):
    """A provider call that cannot succeed by retrying (bad key, bad request)."""


class TrackingError(ExtractionEvalError):
    """The MLflow tracking store cannot be reached or refused a request."""

    #: The MLflow run the failure left behind (ended FAILED, or named so it can be ended), if any.
    run_id: str | None = None


class OutputError(ExtractionEvalError):
    """The output folder cannot be created or written, or another run is writing it."""


class CannotEvaluate(ExtractionEvalError):
    """A gate could not reach a verdict; it fails closed, never passes."""


class Terminated(BaseException):
    """SIGTERM arrived: unwind, end the MLflow run KILLED, mark the output folder, exit 143."""


__all__ = [
    "CannotEvaluate",
    "CassetteError",
    "ConfigurationError",
    "ContractDriftError",
    "ExtractionEvalError",
    "GoldDataError",
    "OutputError",
    "ProviderError",
    "Terminated",
    "TrackingError",
]

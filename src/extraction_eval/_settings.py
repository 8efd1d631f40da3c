"""Settings read from the environment, at call time and only here."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ._exceptions import ConfigurationError

ALLOW_DRIFT_VAR = "EXTRACTION_EVAL_ALLOW_CONTRACT_DRIFT"
MODE_VAR = "EXTRACTION_EVAL_MODE"
PR_BODY_VAR = "EXTRACTION_EVAL_PR_BODY"
PROVIDER_VAR = "IBEX_WORKER_EXTRACTION_PROVIDER"
BASE_URL_VAR = "IBEX_WORKER_EXTRACTION_BASE_URL"
MODEL_VAR = "IBEX_WORKER_EXTRACTION_MODEL"
VLLM_KEY_VAR = "IBEX_WORKER_EXTRACTION_API_KEY"
OPENAI_KEY_VAR = "OPENAI_API_KEY"
OPENAI_BASE_URL_VAR = "OPENAI_BASE_URL"
TRACKING_URI_VAR = "MLFLOW_TRACKING_URI"
RUN_ID_VAR = "MLFLOW_RUN_ID"
EXPERIMENT_ID_VAR = "MLFLOW_EXPERIMENT_ID"
TRACKING_TIMEOUT_VAR = "EXTRACTION_EVAL_TRACKING_TIMEOUT_S"
#: How long the harness waits for the tracking server, in all, before it gives up.
DEFAULT_TRACKING_TIMEOUT_S = 30.0

_TRUE = {"1", "true", "yes", "on"}


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_flag(name: str) -> bool:
    """True when ``name`` is set to 1/true/yes/on (any case)."""
    value = _env(name)
    return value is not None and value.lower() in _TRUE


def in_ci() -> bool:
    """CI systems set ``CI`` (GitHub Actions sets ``CI=true``)."""
    value = _env("CI")
    return value is not None and value.lower() not in {"0", "false", "no", "off"}


def allow_contract_drift() -> bool:
    """The local override; an error under CI, where it must never be set."""
    if not env_flag(ALLOW_DRIFT_VAR):
        return False
    if in_ci():
        raise ConfigurationError(
            f"{ALLOW_DRIFT_VAR}=1 is set while CI is set; CI must never override the contract "
            f"gate. Remove {ALLOW_DRIFT_VAR} from the CI environment and re-record or "
            "re-generate the cassettes instead."
        )
    return True


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: cwd) holding ``MLproject``; else cwd."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "MLproject").is_file():
            return folder
    return here


def tracking_uri() -> str:
    """``MLFLOW_TRACKING_URI``, or the embedded SQLite store in the project folder. An http(s) URI
    that is not a URL (a port that is not a number, no host) is refused here, in one line."""
    uri = _env(TRACKING_URI_VAR)
    if uri is None:
        return f"sqlite:///{project_root() / 'mlflow.db'}"
    problem = uri_problem(uri)
    if problem is not None:
        from ._exceptions import TrackingError

        raise TrackingError(hide_uri_password(f"{TRACKING_URI_VAR}={uri!r} is not a usable address: {problem}", uri))
    return uri


def uri_problem(uri: str) -> str | None:
    """Why an http(s) or database URI cannot be an address (None when it can, or is another kind)."""
    from urllib.parse import urlsplit

    scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
    if scheme not in ("http", "https") and not scheme.startswith(("postgresql", "mysql", "mssql")):
        return None
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as exc:
        return f"{exc}; write it as {scheme}://HOST:PORT (a number from 1 to 65535)"
    if not parts.hostname:
        return f"it names no host; write it as {scheme}://HOST:PORT"
    if port == 0:
        return "port 0 is no port; write it as HOST:PORT with a number from 1 to 65535"
    return None


def hide_uri_password(text: str, uri: str) -> str:
    """``text`` with the password of ``uri`` (``scheme://user:password@host``) replaced by ``***``.

    Messages name the tracking URI and end up in logs, gate.md and the job summary.
    """
    from urllib.parse import urlsplit

    try:
        password = urlsplit(uri).password
    except ValueError:
        return text
    # Only where it stands as the URI's userinfo: a short password is also a common substring.
    return text.replace(f":{password}@", ":***@") if password else text


_URI_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)(?P<password>[^@\s/]+)@")
_SECRET_VARS = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN")


def mask_secrets(text: str) -> str:
    """``text`` with every URI password (``scheme://user:password@``) and the values of
    MLFLOW_TRACKING_PASSWORD and MLFLOW_TRACKING_TOKEN replaced by ``***``.

    Every message the harness prints or writes passes through here (the CLI's error line,
    the run's summary, the MLflow client's notes), so a secret never reaches a log.
    """
    text = _URI_USERINFO.sub(lambda m: m.group("head") + "***@", text)
    uri = _env(TRACKING_URI_VAR)
    if uri is not None:
        text = hide_uri_password(text, uri)
    for name in _SECRET_VARS:
        value = _env(name)
        if value is not None and len(value) >= 4:  # a 1-3 character value would garble any text
            text = text.replace(value, "***")
    return text


def tracking_timeout_s() -> float:
    """``EXTRACTION_EVAL_TRACKING_TIMEOUT_S`` (seconds, > 0), default 30: the whole budget for
    reaching the tracking server, retries included."""
    raw = _env(TRACKING_TIMEOUT_VAR)
    if raw is None:
        return DEFAULT_TRACKING_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ConfigurationError(
            f"{TRACKING_TIMEOUT_VAR}={raw!r} is not a number of seconds above 0; set it to e.g. 30 or unset it."
        )
    return value


def mlflow_run_id() -> str | None:
    """The run ``mlflow run`` created for us, if any."""
    return _env(RUN_ID_VAR)


def pr_body() -> str | None:
    """The pull request body from ``EXTRACTION_EVAL_PR_BODY``, as is: only an exact line counts."""
    return os.environ.get(PR_BODY_VAR)


def env_value(name: str) -> str | None:
    """A stripped environment value, None when unset or blank."""
    return _env(name)


@dataclass(frozen=True)
class TrackingAuth:
    """Credentials for an MLflow server, from MLflow's own variables."""

    username: str | None
    password: str | None
    token: str | None
    insecure_tls: bool


def tracking_auth() -> TrackingAuth:
    return TrackingAuth(
        username=_env("MLFLOW_TRACKING_USERNAME"),
        password=_env("MLFLOW_TRACKING_PASSWORD"),
        token=_env("MLFLOW_TRACKING_TOKEN"),
        insecure_tls=env_flag("MLFLOW_TRACKING_INSECURE_TLS"),
    )


def next_step_line(output_dir: Path) -> str:
    """The last line of a first run: where to look next (the MLflow UI for this store, and the files)."""
    uri = tracking_uri()
    shown = hide_uri_password(uri, uri)  # never a password on the screen
    if uri.startswith(("http://", "https://")):
        ui = f"open {shown} in a browser"
    else:
        ui = f"run `mlflow ui --backend-store-uri {shown}` and open http://127.0.0.1:5000"
    return (
        f"Next: {ui} (experiment extraction-eval: the runs side by side, traces per conversation); "
        f"the files are in {output_dir}/ (gate.md, metrics.json, per_conversation.jsonl, plots/)."
    )

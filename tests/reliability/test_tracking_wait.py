"""Issue 12, point 6: bounded waits with a voice (docs/reliability.md)."""

from __future__ import annotations

import os
import time

import pytest

from extraction_eval import ConfigurationError, TrackingError
from extraction_eval.tracking._connect import configure_mlflow_client, mlflow_client_env, wait_for_server

from ..conftest import free_port


def test_mlflow_s_own_retries_fit_the_budget_and_the_user_s_settings_win(monkeypatch: pytest.MonkeyPatch) -> None:
    # 30 s by default: 3 attempts of 7 s each plus 1 s and 2 s of backoff = 24 s at most
    assert mlflow_client_env(30.0) == {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
        "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": "7",
        "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
    }
    for name in mlflow_client_env(30.0):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "9")  # the user's
    monkeypatch.setenv("EXTRACTION_EVAL_TRACKING_TIMEOUT_S", "60")
    assert configure_mlflow_client() == 60.0
    assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "9"
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "15"


@pytest.mark.parametrize("raw", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_budget_is_a_configuration_error(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXTRACTION_EVAL_TRACKING_TIMEOUT_S", raw)
    with pytest.raises(ConfigurationError, match=f"EXTRACTION_EVAL_TRACKING_TIMEOUT_S={raw!r} is not a number"):
        configure_mlflow_client()


def test_an_unreachable_server_is_reported_at_once_and_given_up_on_within_the_budget() -> None:
    said: list[str] = []
    uri = f"http://u:pw-canary@127.0.0.1:{free_port()}"
    start = time.monotonic()
    with pytest.raises(TrackingError) as info:
        wait_for_server(uri, budget_s=2.0, say=said.append)
    took = time.monotonic() - start
    assert 1.0 <= took < 4.0  # within the budget, plus one poll at most
    masked = uri.replace("pw-canary", "***")
    assert said == [
        f"the MLflow tracking server at {masked} does not answer (ConnectError); retrying for up to 2 s "
        "(EXTRACTION_EVAL_TRACKING_TIMEOUT_S sets the wait)"
    ]
    assert str(info.value).startswith(f"the MLflow tracking server at '{masked}' did not answer within 2 s")


def test_a_local_store_needs_no_wait() -> None:
    said: list[str] = []
    wait_for_server("sqlite:///nowhere.db", budget_s=0.1, say=said.append)
    assert said == []

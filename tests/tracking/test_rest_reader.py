"""The gate's REST reader: MLflow's API over httpx, with MLflow's own credentials variables."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from extraction_eval import TrackingError
from extraction_eval.tracking._rest import RestReader

RUN = {
    "run": {
        "info": {"run_id": "r1", "experiment_id": "3", "status": "FINISHED", "start_time": 5},
        "data": {"metrics": [{"key": "macro/recall", "value": 0.5}], "tags": [{"key": "provider", "value": "openai"}]},
    }
}


def reader(handler, monkeypatch: pytest.MonkeyPatch, **env: str) -> tuple[RestReader, list[httpx.Request]]:  # type: ignore[no-untyped-def]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return RestReader("http://tracking.example:5000/", transport=httpx.MockTransport(record)), seen


def test_get_run_parses_metrics_and_tags(monkeypatch: pytest.MonkeyPatch) -> None:
    r, seen = reader(lambda req: httpx.Response(200, json=RUN), monkeypatch)
    run = r.get_run("r1")
    assert run is not None and run.metrics == {"macro/recall": 0.5} and run.tags == {"provider": "openai"}
    assert str(seen[0].url) == "http://tracking.example:5000/api/2.0/mlflow/runs/get?run_id=r1"


def test_token_is_sent_as_bearer(monkeypatch: pytest.MonkeyPatch) -> None:
    r, seen = reader(lambda req: httpx.Response(200, json=RUN), monkeypatch, MLFLOW_TRACKING_TOKEN="tok-123")
    r.get_run("r1")
    assert seen[0].headers["authorization"] == "Bearer tok-123"


def test_username_and_password_are_sent_as_basic_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    r, seen = reader(
        lambda req: httpx.Response(200, json=RUN),
        monkeypatch,
        MLFLOW_TRACKING_USERNAME="ci",
        MLFLOW_TRACKING_PASSWORD="pw",
    )
    r.get_run("r1")
    assert seen[0].headers["authorization"] == "Basic " + base64.b64encode(b"ci:pw").decode()


def test_missing_run_is_none_and_refusal_names_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "Run 'x' not found"}
    r, _ = reader(lambda req: httpx.Response(404, json=body), monkeypatch)
    assert r.get_run("x") is None
    r, _ = reader(lambda req: httpx.Response(401, text="no"), monkeypatch)
    with pytest.raises(TrackingError, match="MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD"):
        r.get_run("x")
    r, _ = reader(lambda req: httpx.Response(403, text="Permission denied"), monkeypatch)
    with pytest.raises(TrackingError) as refused:
        r.get_run("x")
    assert str(refused.value) == (
        "tracking server 'http://tracking.example:5000' refused GET /runs/get (403): this account may not read it, or it "
        "does not exist (MLflow's basic-auth app answers 403 to both). Check the run id, and that the account in "
        "MLFLOW_TRACKING_USERNAME (or MLFLOW_TRACKING_TOKEN) may read the experiment."
    )


def test_newest_run_searches_by_filter_newest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/experiments/get-by-name"):
            return httpx.Response(200, json={"experiment": {"experiment_id": "7"}})
        body = json.loads(request.content)
        assert body == {
            "experiment_ids": ["7"],
            "filter": "tags.subset = 'full'",
            "order_by": ["attributes.start_time DESC"],
            "max_results": 1,
            "run_view_type": "ACTIVE_ONLY",
        }
        return httpx.Response(200, json={"runs": [RUN["run"]]})

    r, _ = reader(handler, monkeypatch)
    run = r.newest_run("extraction-eval", "tags.subset = 'full'")
    assert run is not None and run.run_id == "r1"


def test_baselines_are_looked_up_by_exact_name_and_gold_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """No search: each provider's model by its exact name, alias baseline-<gold version> (a store
    from before issue 22: its alias 'baseline' for v1). Decoy models cannot push a baseline out."""
    asked: list[tuple[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        assert not path.endswith("/registered-models/search")
        if path.endswith("/registered-models/alias"):
            name, alias = request.url.params["name"], request.url.params["alias"]
            asked.append((name, alias))
            if (name, alias) != ("extraction-eval-openai", "baseline"):
                return httpx.Response(404, json={"error_code": "RESOURCE_DOES_NOT_EXIST"})
            return httpx.Response(
                200,
                json={
                    "model_version": {
                        "version": "3",
                        "run_id": "r1",
                        "tags": [
                            {"key": "enforcement", "value": "ci"},
                            {"key": "gated_metrics", "value": '["macro/recall"]'},
                            {"key": "gold_version", "value": "v1"},
                            {"key": "baseline/macro/recall", "value": "0.75"},
                        ],
                    }
                },
            )
        return httpx.Response(200, json=RUN)

    r, _ = reader(handler, monkeypatch)
    (baseline,) = r.baselines("v1")
    assert asked == [
        ("extraction-eval-openai", "baseline-v1"),
        ("extraction-eval-openai", "baseline"),
        ("extraction-eval-vllm", "baseline-v1"),
        ("extraction-eval-vllm", "baseline"),
    ]
    assert (baseline.provider, baseline.version, baseline.enforcement, baseline.alias) == (
        "openai",
        "3",
        "ci",
        "baseline",
    )
    assert baseline.gated_metrics == ("macro/recall",) and baseline.run is not None
    assert baseline.measured_metrics == {"macro/recall": 0.75}  # the version's numbers, not the run's
    asked.clear()
    assert r.baselines("v2") == []  # v1's legacy alias is no v2 baseline
    assert asked == [("extraction-eval-openai", "baseline-v2"), ("extraction-eval-vllm", "baseline-v2")]


def test_unreachable_server_is_a_tracking_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    r, _ = reader(handler, monkeypatch)
    with pytest.raises(TrackingError, match="is unreachable .*set MLFLOW_TRACKING_URI"):
        r.get_run("r1")


def test_a_password_in_the_uri_never_reaches_a_message() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused: {request.url}", request=request)

    r = RestReader("http://u:canary-s3cret@tracking.example:5000/", transport=httpx.MockTransport(handler))
    with pytest.raises(TrackingError) as info:
        r.get_run("r1")
    assert "canary-s3cret" not in str(info.value)
    assert "tracking server 'http://u:***@tracking.example:5000' is unreachable" in str(info.value)


@pytest.mark.parametrize(
    ("text", "uri", "shown"),
    [
        (
            "at postgresql://u:p@h/db: no module psycopg",
            "postgresql://u:p@h/db",
            "at postgresql://u:***@h/db: no module psycopg",
        ),
        ("at sqlite:///x/mlflow.db", "sqlite:///x/mlflow.db", "at sqlite:///x/mlflow.db"),  # no password
        ("at http://u@h", "http://u@h", "at http://u@h"),  # a user alone is no secret
    ],
)
def test_hide_uri_password(text: str, uri: str, shown: str) -> None:
    from extraction_eval._settings import hide_uri_password

    assert hide_uri_password(text, uri) == shown

"""The system prompt in MLflow's Prompt Registry: one version per prompt sha256, linked to
every run that used it (the run page's "Prompts" and the prompt's "Runs")."""

from __future__ import annotations

import json
from typing import Any

PROMPT_NAME = "extraction-eval-system-prompt"
PROMPT_TAG = "prompt_sha256"


def _versions(client: Any) -> list[Any]:
    from mlflow.exceptions import MlflowException

    try:
        return list(client.search_prompt_versions(PROMPT_NAME, max_results=1000))
    except MlflowException:  # no such prompt yet
        return []


def link_system_prompt(client: Any, run_id: str, text: str, sha256: str) -> str:
    """Register ``text`` as a new version unless a version with its sha256 exists; link that
    version to the run. Returns ``prompts:/<name>/<version>``."""
    found = [v for v in _versions(client) if (v.tags or {}).get(PROMPT_TAG) == sha256]
    if found:
        version = min(found, key=lambda v: int(v.version))
    else:
        version = client.register_prompt(
            PROMPT_NAME,
            template=text,
            commit_message=f"system prompt sha256 {sha256}",
            tags={PROMPT_TAG: sha256},
        )
    # The run tag MLflow's link_prompt_version_to_run writes, set through this client: that
    # call reads the run from the process-global tracking store, not this client's.
    link = [{"name": PROMPT_NAME, "version": str(version.version)}]
    client.set_tag(run_id, "mlflow.linkedPrompts", json.dumps(link))
    return f"prompts:/{PROMPT_NAME}/{version.version}"

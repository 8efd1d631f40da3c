"""Cassettes: recorded provider answers, replayed deterministically and for free."""

from ._oracle import OracleResult, oracle_response, oracle_result, write_oracle_cassettes
from ._recording import CassetteRecording, RecordingSummary
from ._replay import ReplayPlan, plan_replay
from ._store import build_manifest, cassette_line, existing_cassettes, now_iso, write_cassettes, write_manifest

__all__ = [
    "CassetteRecording",
    "OracleResult",
    "RecordingSummary",
    "ReplayPlan",
    "build_manifest",
    "cassette_line",
    "existing_cassettes",
    "now_iso",
    "oracle_response",
    "oracle_result",
    "plan_replay",
    "write_cassettes",
    "write_manifest",
    "write_oracle_cassettes",
]

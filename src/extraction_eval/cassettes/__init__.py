"""Cassettes: recorded provider answers, replayed deterministically and for free."""

from ._oracle import OracleResult, oracle_response, write_oracle_cassettes
from ._replay import ReplayPlan, plan_replay
from ._store import build_manifest, cassette_line, now_iso, write_cassettes, write_manifest

__all__ = [
    "OracleResult",
    "ReplayPlan",
    "build_manifest",
    "cassette_line",
    "now_iso",
    "oracle_response",
    "plan_replay",
    "write_cassettes",
    "write_manifest",
    "write_oracle_cassettes",
]

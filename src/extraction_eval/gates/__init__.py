"""Gates: the contract gate (``_contract_gate``), the regression gate (``_regression``,
``_gate_run``) and the oracle gate (``_oracle_gate``). Light to import: the regression gate
is on every pull request's path."""

from ._regression import THRESHOLD, GateResult, MetricRow, MetricStatus, Verdict, compare, judge

__all__ = ["THRESHOLD", "GateResult", "MetricRow", "MetricStatus", "Verdict", "compare", "judge"]

"""Gates: the contract gate (``_contract``), the regression gate (``_regression``,
``_gate_run``) and the oracle gate (``_oracle``). Light to import: the regression gate
is on every pull request's path."""

from ._regression import THRESHOLD, GateResult, MetricRow, Verdict, compare, judge

__all__ = ["THRESHOLD", "GateResult", "MetricRow", "Verdict", "compare", "judge"]

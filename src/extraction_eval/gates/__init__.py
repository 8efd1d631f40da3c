"""Gates: the contract gate, the regression gate and the oracle gate."""

from ._contract import ContractVerdict, contract_gate
from ._regression import THRESHOLD, GateResult, MetricRow, Verdict, compare, judge

__all__ = ["THRESHOLD", "ContractVerdict", "GateResult", "MetricRow", "Verdict", "compare", "contract_gate", "judge"]

"""One evaluation, end to end: ``run_eval`` composes the named steps of ``evaluation`` with the
contract gate, MLflow logging and the live comparison."""

from ..evaluation import RunOptions
from ._compare import live_comparison
from ._run import RunResult, run_eval
from ._steps import check_contract, collect_answers, contract_notes, experiment_notes, log_run, write_run_file
from ._summary import summary_lines

__all__ = [
    "RunOptions",
    "RunResult",
    "check_contract",
    "collect_answers",
    "contract_notes",
    "experiment_notes",
    "live_comparison",
    "log_run",
    "run_eval",
    "summary_lines",
    "write_run_file",
]

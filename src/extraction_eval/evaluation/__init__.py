"""One evaluation, end to end."""

from ._plan import RunPlan, plan_run
from ._records import CallRecord
from ._run import RunOptions, RunResult, run_eval, summary_lines

__all__ = ["CallRecord", "RunOptions", "RunPlan", "RunResult", "plan_run", "run_eval", "summary_lines"]

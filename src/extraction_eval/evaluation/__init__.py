"""The steps of one evaluation, each callable on its own: plan, collect answers (replay, live
or record), score, tag, write the output files.

``extraction_eval.pipeline.run_eval`` composes them with the contract gate and MLflow.
"""

from ._answers import Answer, CollectedAnswers, answer_from_call, answer_from_cassette
from ._collect import check_record_settings, collect_live, collect_record, collect_replay
from ._folder import OWNED_FILES, OutputFolder, lock_holder, output_error, output_folder, read_marker
from ._options import RunOptions, check_options
from ._outputs import (
    COMPARISON_FILE,
    METRICS_FILE,
    PER_CONVERSATION_FILE,
    RUN_FILE,
    RunFiles,
    per_conversation_rows,
    table_rows,
    write_outputs,
    write_run_json,
)
from ._plan import RunPlan, plan_run
from ._responses import RESPONSES_FILE, parse_responses, response_row, write_responses
from ._score import ScoredRun, build_cases, score_answers
from ._tags import build_params, build_tags, describe_run
from ._usage import percentile, provenance_tags, usage_metrics

__all__ = [
    "COMPARISON_FILE",
    "METRICS_FILE",
    "OWNED_FILES",
    "PER_CONVERSATION_FILE",
    "RESPONSES_FILE",
    "RUN_FILE",
    "Answer",
    "CollectedAnswers",
    "OutputFolder",
    "RunFiles",
    "RunOptions",
    "RunPlan",
    "ScoredRun",
    "answer_from_call",
    "answer_from_cassette",
    "build_cases",
    "build_params",
    "build_tags",
    "check_options",
    "check_record_settings",
    "collect_live",
    "collect_record",
    "collect_replay",
    "describe_run",
    "lock_holder",
    "output_error",
    "output_folder",
    "parse_responses",
    "per_conversation_rows",
    "percentile",
    "plan_run",
    "provenance_tags",
    "read_marker",
    "response_row",
    "score_answers",
    "table_rows",
    "usage_metrics",
    "write_outputs",
    "write_responses",
    "write_run_json",
]

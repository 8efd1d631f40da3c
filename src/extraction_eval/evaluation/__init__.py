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
    memory_table_rows,
    per_conversation_rows,
    table_row,
    write_outputs,
    write_run_json,
)
from ._plan import RunPlan, plan_run
from ._plots import category_confusion, temporal_confusion, write_plots
from ._replayed import ReplayedCassettes, replayed_cassettes
from ._responses import RESPONSES_FILE, parse_responses, response_row, write_responses
from ._score import ScoredRun, build_cases, score_answers
from ._tags import build_params, build_tags, count_params, describe_run, run_name
from ._traces import AssessmentRecord, TraceRecord, run_traces, trace_records
from ._usage import percentile, provenance_tags, usage_metrics

__all__ = [
    "COMPARISON_FILE",
    "METRICS_FILE",
    "OWNED_FILES",
    "PER_CONVERSATION_FILE",
    "RESPONSES_FILE",
    "RUN_FILE",
    "Answer",
    "AssessmentRecord",
    "CollectedAnswers",
    "OutputFolder",
    "ReplayedCassettes",
    "RunFiles",
    "RunOptions",
    "RunPlan",
    "ScoredRun",
    "TraceRecord",
    "answer_from_call",
    "answer_from_cassette",
    "build_cases",
    "build_params",
    "build_tags",
    "category_confusion",
    "check_options",
    "check_record_settings",
    "collect_live",
    "collect_record",
    "collect_replay",
    "count_params",
    "describe_run",
    "lock_holder",
    "memory_table_rows",
    "output_error",
    "output_folder",
    "parse_responses",
    "per_conversation_rows",
    "percentile",
    "plan_run",
    "provenance_tags",
    "read_marker",
    "replayed_cassettes",
    "response_row",
    "run_name",
    "run_traces",
    "score_answers",
    "table_row",
    "temporal_confusion",
    "trace_records",
    "usage_metrics",
    "write_outputs",
    "write_plots",
    "write_responses",
    "write_run_json",
]

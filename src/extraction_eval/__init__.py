"""extraction-eval: measure LLM memory extraction against a versioned gold set.

The public surface is re-exported here and loaded lazily, so that a light entry
point (the regression gate) does not pay for scoring or MLflow imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    # errors
    "ExtractionEvalError": "._exceptions",
    "ConfigurationError": "._exceptions",
    "GoldDataError": "._exceptions",
    "ContractDriftError": "._exceptions",
    "CassetteError": "._exceptions",
    "ProviderError": "._exceptions",
    "TrackingError": "._exceptions",
    "CannotEvaluate": "._exceptions",
    # vocabulary
    "Category": ".vocab",
    "TemporalKind": ".vocab",
    "CassetteKind": ".vocab",
    "Enforcement": ".vocab",
    "Mode": ".vocab",
    "Provider": ".vocab",
    "Subset": ".vocab",
    # contract
    "BatchExtractionResult": ".contract",
    "ExtractedMemory": ".contract",
    "system_prompt": ".contract",
    "prompt_sha256": ".contract",
    "schema_sha256": ".contract",
    "request_sha256": ".contract",
    # gold
    "GoldSet": ".gold",
    "load_gold": ".gold",
    # scoring
    "Matcher": ".scoring",
    "KeyedDiceMatcher": ".scoring",
    "DEFAULT_MATCHER": ".scoring",
    "DEFAULT_GATED_METRICS": ".scoring",
    "score": ".scoring",
    "parse_response": ".scoring",
    # evaluation and gates
    "run_eval": ".pipeline",
    "RunOptions": ".evaluation",
    "judge": ".gates",
}

# Written out (not computed from _EXPORTS) so that type checkers see the re-exports.
__all__ = [
    "DEFAULT_GATED_METRICS",
    "DEFAULT_MATCHER",
    "BatchExtractionResult",
    "CannotEvaluate",
    "CassetteError",
    "CassetteKind",
    "Category",
    "ConfigurationError",
    "ContractDriftError",
    "Enforcement",
    "ExtractedMemory",
    "ExtractionEvalError",
    "GoldDataError",
    "GoldSet",
    "KeyedDiceMatcher",
    "Matcher",
    "Mode",
    "Provider",
    "ProviderError",
    "RunOptions",
    "Subset",
    "TemporalKind",
    "TrackingError",
    "__version__",
    "judge",
    "load_gold",
    "parse_response",
    "prompt_sha256",
    "request_sha256",
    "run_eval",
    "schema_sha256",
    "score",
    "system_prompt",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'extraction_eval' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover
    from ._exceptions import (
        CannotEvaluate,
        CassetteError,
        ConfigurationError,
        ContractDriftError,
        ExtractionEvalError,
        GoldDataError,
        ProviderError,
        TrackingError,
    )
    from .contract import (
        BatchExtractionResult,
        ExtractedMemory,
        prompt_sha256,
        request_sha256,
        schema_sha256,
        system_prompt,
    )
    from .evaluation import RunOptions
    from .gates import judge
    from .gold import GoldSet, load_gold
    from .pipeline import run_eval
    from .scoring import (
        DEFAULT_GATED_METRICS,
        DEFAULT_MATCHER,
        KeyedDiceMatcher,
        Matcher,
        parse_response,
        score,
    )
    from .vocab import CassetteKind, Category, Enforcement, Mode, Provider, Subset, TemporalKind

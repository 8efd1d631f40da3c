"""Gold data: the versioned, hand-labeled conversations and what should be extracted."""

from ._check import Problem, check_gold
from ._load import (
    BASELINE_FILE,
    CASSETTES_FILE,
    CONVERSATIONS_FILE,
    EXPECTED_FILE,
    MANIFEST_FILE,
    GoldSet,
    load_baseline_file,
    load_cassettes,
    load_gold,
    load_manifest,
)
from ._models import (
    BaselineFile,
    Cassette,
    CassetteManifest,
    Conversation,
    ExpectedMemory,
    LabelReview,
    ManifestCounts,
    ManifestSubsets,
    ProviderBaseline,
    Turn,
)
from ._pinned import PINNED_GOLD
from ._subsets import choose_subsets

__all__ = [
    "BASELINE_FILE",
    "CASSETTES_FILE",
    "CONVERSATIONS_FILE",
    "EXPECTED_FILE",
    "MANIFEST_FILE",
    "PINNED_GOLD",
    "BaselineFile",
    "Cassette",
    "CassetteManifest",
    "Conversation",
    "ExpectedMemory",
    "GoldSet",
    "LabelReview",
    "ManifestCounts",
    "ManifestSubsets",
    "Problem",
    "ProviderBaseline",
    "Turn",
    "check_gold",
    "choose_subsets",
    "load_baseline_file",
    "load_cassettes",
    "load_gold",
    "load_manifest",
]

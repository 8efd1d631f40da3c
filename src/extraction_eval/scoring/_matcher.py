"""Content matchers: when does a predicted memory say the same thing as an expected one.

``keyed-dice@3`` was the default until ``fact-cover@1`` (``_cover.py``); it is
deterministic and conservative (docs/matcher.md);
version 1, never used for a published number, lacked rule 4; version 2 refused a
swapped word only when no second word was shared, and had no synonyms and no rule 5.
The rules:

1. Text that is equal after normalisation (Unicode NFKC, case folding, punctuation
   removed, white space collapsed) has similarity 1.0.
2. Otherwise the two texts must carry the same *fact keys*, or the similarity is
   0.0: dates (ISO, "May 8", "8 May 2026"), numbers (digits and number words up
   to twenty, plus tens), times, weekdays, months, and proper nouns (capitalised
   words not at the start of a sentence; month names count when capitalised). "code review day is Tuesday" never
   matches "... Thursday"; "lives in Lisbon" never matches "lives in Porto".
3. They must have the same polarity: the count of negation words (not, never,
   dislikes, hates, avoids, quit, stopped, ...) is odd in both or even in both.
4. A substitution is refused: when each side has a content word the other lacks and
   either only one word is shared ("on the platform team" / "on the payments team")
   or exactly one word differs on each side ("prefers dark mode in the editor" /
   "prefers light mode in the editor"), the similarity is 0.0. The preference verbs
   like, prefer, enjoy and love (any form) count as one word.
5. A reversal is refused: when both texts contain the same order word (over, than,
   instead, rather, versus, vs, from, to, before, after, replaced, replacing) and two
   shared words swap sides of it ("prefers tea over coffee" / "prefers coffee over
   tea", "from Porto to Lisbon" / "from Lisbon to Porto"), the similarity is 0.0.
6. Then the similarity is the Dice coefficient of their content words (stop words
   dropped), where two words agree when equal or when both have 5+ letters and
   share their first 5 ("allergic" / "allergy").

A pair matches when the similarity is at or above the threshold (0.5).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, runtime_checkable


@runtime_checkable
class Matcher(Protocol):
    """Decides how similar two memory texts are; pluggable by name and version."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def threshold(self) -> float: ...

    def similarity(self, a: str, b: str) -> float:
        """A score in [0, 1]; pairs at or above ``threshold`` may be matched."""
        ...


def matcher_id(matcher: Matcher) -> str:
    """``name@version``: part of every run's identity."""
    return f"{matcher.name}@{matcher.version}"


def normalize(text: str) -> str:
    """NFKC, case folded, punctuation removed, white space collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    cleaned = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in folded)
    return " ".join(cleaned.split())


_MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH_NAMES = {name for name in _MONTHS if len(name) > 3 or name == "may"}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER_WORDS = {
    word: index
    for index, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
    "once": 1,
    "twice": 2,
}
_NEGATORS = re.compile(
    r"^(not|no|never|cannot|nor|without|neither|dislikes?|disliked|hates?|hated|avoids?|"
    r"avoided|avoiding|quit|quits|stopped)$"
)
_STOP = frozenset(
    [
        "user",
        "users",
        "s",
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "and",
        "or",
        "their",
        "they",
        "them",
        "his",
        "her",
        "he",
        "she",
        "it",
        "its",
        "has",
        "have",
        "had",
        "that",
        "this",
        "these",
        "those",
        "by",
        "as",
        "from",
        "into",
        "about",
        "who",
        "which",
        "very",
        "really",
        "also",
        "just",
        "there",
        "here",
        "than",
        "so",
        "do",
        "does",
        "did",
    ]
)
_MONTH_ALT = "|".join(sorted(_MONTH_NAMES | {m for m in _MONTHS}, key=len, reverse=True))
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTH_DAY = re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})\.?(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?:;]$")


def _number_key(raw: str) -> str:
    if re.fullmatch(r"\d{1,3}(,\d{3})+", raw):
        raw = raw.replace(",", "")
    raw = raw.replace(",", ".")
    if "." in raw:
        raw = raw.rstrip("0").rstrip(".")
    return f"num:{int(raw) if raw.isdigit() else raw}"


@lru_cache(maxsize=8192)
def fact_keys(text: str) -> frozenset[str]:
    """The dates, numbers, times, weekdays, months and proper nouns a text names."""
    nfkc = unicodedata.normalize("NFKC", text)
    keys: set[str] = set()

    def date_key(year: str | None, month: int, day: str) -> str:
        return f"date:{year or '----'}-{month:02d}-{int(day):02d}"

    rest = nfkc
    for match in _ISO_DATE.finditer(rest):
        keys.add(date_key(match.group(1), int(match.group(2)), match.group(3)))
    rest = _ISO_DATE.sub(" ", rest)
    for match in _MONTH_DAY.finditer(rest):
        keys.add(date_key(match.group(3), _MONTHS[match.group(1).casefold()], match.group(2)))
    rest = _MONTH_DAY.sub(" ", rest)
    for match in _DAY_MONTH.finditer(rest):
        keys.add(date_key(match.group(3), _MONTHS[match.group(2).casefold()], match.group(1)))
    rest = _DAY_MONTH.sub(" ", rest)
    for match in _TIME.finditer(rest):
        keys.add(f"num:{int(match.group(1))}")
        if match.group(2) != "00":
            keys.add(f"num:{int(match.group(2))}")
    rest = _TIME.sub(" ", rest)
    for match in _NUMBER.finditer(rest):
        keys.add(_number_key(match.group(0)))

    sentence_start = True
    for token in rest.split():
        word_match = _WORD.search(token)
        if word_match is not None:
            word = word_match.group(0)
            base = re.sub(r"['’]s$", "", word).casefold()
            plural = base[:-1] if base.endswith("s") else base
            if base in _WEEKDAYS or plural in _WEEKDAYS:
                keys.add(f"day:{plural if plural in _WEEKDAYS else base}")
            elif base in _MONTH_NAMES and word[0].isupper():
                keys.add(f"month:{_MONTHS[base]:02d}")
            elif base in _NUMBER_WORDS:
                keys.add(f"num:{_NUMBER_WORDS[base]}")
            elif word[0].isupper() and not sentence_start and base not in _STOP and base not in {"i", "i'm", "i've"}:
                keys.add(f"name:{base}")
        sentence_start = bool(_SENTENCE_END.search(token))
    return frozenset(keys)


# Preference verbs a model and a labeler use interchangeably ("prefers" / "likes").
_SYNONYMS = {
    form: "like"
    for form in (
        "like",
        "likes",
        "liked",
        "prefer",
        "prefers",
        "preferred",
        "enjoy",
        "enjoys",
        "enjoyed",
        "love",
        "loves",
        "loved",
    )
}
# Words around which order carries meaning: "tea over coffee", "from Porto to Lisbon".
_ORDER_WORDS = (
    "over",
    "than",
    "instead",
    "rather",
    "versus",
    "vs",
    "from",
    "to",
    "before",
    "after",
    "replaced",
    "replacing",
)


def _words(text: str) -> list[str]:
    return normalize(text.replace("n't", " not").replace("n’t", " not")).split()


def _content(words: list[str]) -> tuple[str, ...]:
    # Dates, numbers, weekdays and months are compared as fact keys, not as words.
    return tuple(
        _SYNONYMS.get(w, w)
        for w in words
        if w not in _STOP
        and not _NEGATORS.match(w)
        and not w.isdigit()
        and w not in _MONTHS
        and w.rstrip("s") not in _WEEKDAYS
        and w not in _NUMBER_WORDS
    )


@lru_cache(maxsize=8192)
def _content_tokens(text: str) -> tuple[tuple[str, ...], int]:
    words = _words(text)
    negations = sum(1 for w in words if _NEGATORS.match(w))
    return _content(words), negations % 2


@lru_cache(maxsize=8192)
def _order_sides(text: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """For each order word in the text: the content tokens before and after its first use."""
    words = _words(text)
    sides = {}
    for word in _ORDER_WORDS:
        if word in words:
            i = words.index(word)
            sides[word] = (_content(words[:i]), _content(words[i + 1 :]))
    return sides


def _side(token: str, sides: tuple[tuple[str, ...], tuple[str, ...]]) -> str | None:
    before = any(_agree(token, other) for other in sides[0])
    after = any(_agree(token, other) for other in sides[1])
    return "before" if before and not after else "after" if after and not before else None


def reversed_around_order_word(a: str, b: str) -> bool:
    """Two shared words that swap sides of the same order word: "tea over coffee" / "coffee over tea"."""
    sides_a, sides_b = _order_sides(a), _order_sides(b)
    for word in sides_a.keys() & sides_b.keys():
        sa, sb = sides_a[word], sides_b[word]
        moved_back = any(_side(t, sa) == "before" and _side(t, sb) == "after" for t in sa[0])
        moved_forth = any(_side(t, sa) == "after" and _side(t, sb) == "before" for t in sa[1])
        if moved_back and moved_forth:
            return True
    return False


def _agree(a: str, b: str) -> bool:
    return a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def shared_tokens(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many tokens of ``a`` agree with a distinct token of ``b`` (prefix agreement)."""
    unused = list(b)
    common = 0
    for token in a:
        for index, other in enumerate(unused):
            if _agree(token, other):
                common += 1
                del unused[index]
                break
    return common


def dice(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Dice coefficient with prefix agreement; each token of ``b`` is used at most once."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return 2.0 * shared_tokens(a, b) / (len(a) + len(b))


@dataclass(frozen=True)
class KeyedDiceMatcher:
    """The default matcher (see the module docstring and docs/matcher.md)."""

    name: str = "keyed-dice"
    version: str = "3"
    threshold: float = 0.5

    def similarity(self, a: str, b: str) -> float:
        return self.explain(a, b)[0]

    def explain(self, a: str, b: str) -> tuple[float, str]:
        """The similarity and the rule that decided it (docs/matcher.md numbers the rules)."""
        if normalize(a) == normalize(b):
            return 1.0, "equal after normalisation"
        keys_a, keys_b = fact_keys(a), fact_keys(b)
        if keys_a != keys_b:
            return 0.0, _keys_rule(keys_a, keys_b)
        tokens_a, polarity_a = _content_tokens(a)
        tokens_b, polarity_b = _content_tokens(b)
        if polarity_a != polarity_b:
            return 0.0, "polarity differs (negation words odd in one text, even in the other)"
        common = shared_tokens(tokens_a, tokens_b)
        only_a, only_b = len(tokens_a) - common, len(tokens_b) - common
        if only_a and only_b and (common < 2 or only_a == only_b == 1):
            # A different word on each side and little else, or exactly one word swapped:
            # "on the platform team" / "on the payments team", "dark mode" / "light mode".
            # Nothing tells such a substitution from a paraphrase, so it is refused.
            return 0.0, f"substitution ({only_a} word(s) only in a, {only_b} only in b, {common} shared)"
        if reversed_around_order_word(a, b):
            return 0.0, "reversal around an order word"
        value = round(dice(tokens_a, tokens_b), 9)
        return value, f"dice {value:.3f} ({common} shared of {len(tokens_a)} + {len(tokens_b)} tokens)"


def _keys_rule(keys_a: frozenset[str], keys_b: frozenset[str]) -> str:
    only_a, only_b = sorted(keys_a - keys_b), sorted(keys_b - keys_a)
    return f"fact keys differ (only in a: {', '.join(only_a) or '-'}; only in b: {', '.join(only_b) or '-'})"


def explain(matcher: Matcher, a: str, b: str) -> tuple[float, str]:
    """``matcher.explain(a, b)`` when the matcher explains itself, else its similarity alone."""
    explainer = getattr(matcher, "explain", None)
    if callable(explainer):
        similarity, rule = explainer(a, b)
        return float(similarity), str(rule)
    similarity = matcher.similarity(a, b)
    return similarity, f"similarity {similarity:.3f}"


def texts_match(matcher: Matcher, a: str, b: str) -> bool:
    return matcher.similarity(a, b) >= matcher.threshold

"""``fact-cover``: does the candidate state every fact of the expected text (docs/matcher.md).

Asymmetric on purpose: ``similarity(expected, candidate)`` asks whether the candidate
states the expected memory's fact. The candidate may add detail; it may not drop a
fact key, change a value, swap numbers between quantities, reorder or drop a step,
or change the polarity of a word.
"""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]

from ._cover_words import (
    ANTONYMS_V2,
    CANON,
    CANON_V2,
    DIET_PHRASES_V2,
    MULTIPLIERS,
    NEGATED_SYNONYMS,
    NEGATED_SYNONYMS_V2,
    NEGATIVE_VERBS,
    NEGATIVE_VERBS_V2,
    NEGATORS,
    NEGATORS_V2,
    ONES,
    ORDINALS,
    PAST_PHRASES_V2,
    PERSON_WORDS,
    ROLES_V2,
    STOP,
    STOP_V2,
    TENS,
    TIMES_OF_DAY_V2,
    UNITS_AFTER_NUMBER,
    VERB_CONTEXT,
)
from ._matcher import _MONTH_NAMES, _MONTHS, _WEEKDAYS, normalize, reversed_around_order_word

_STEMMER = snowballstemmer.stemmer("english")

_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MD_RANGE = re.compile(
    rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|—|to|through|until)\s*(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_DM_RANGE = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|—|to)\s*(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})\.?(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_MD = re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE)
_DM = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})\.?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE)
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_SPLIT_NUM_UNIT = re.compile(rf"\b(\d+(?:[.,]\d+)?)({UNITS_AFTER_NUMBER})\b", re.IGNORECASE)
_ORDINAL_DIGITS = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
_PHRASES = [
    (re.compile(r"\bhalf\s*(?:an?\s+)?hour\b", re.I), " 30 minutes "),
    (re.compile(r"\ban?\s+hour\b", re.I), " 60 minutes "),
    (re.compile(r"\b([ap])\.\s?m\.?", re.I), r" \1m "),
    (re.compile(r"\bo'?clock\b", re.I), " "),
    (re.compile(r"\bwould\s+rather\b", re.I), " prefers "),
    (re.compile(r"\bno\s+longer\b|\bnot\s+any\s*more\b", re.I), " not "),
    (re.compile(r"\b(?:got|gets|get|getting|came|comes|come|coming)\s+back\b", re.I), " back "),
    (re.compile(r"\btakes?\s+(?:a\s+)?(?:picture|photo|pic)s?\s+of\b", re.I), " photographs "),
    (re.compile(r"\bcan\s*not\b|\bcan't\b|\bcan’t\b", re.I), " not "),
    (re.compile(r"\bwon[’']t\b", re.I), " will not "),
    (re.compile(r"n[’']t\b", re.I), " not"),
    (re.compile(r"[’']s\b", re.I), " "),
    (re.compile(r"[’'](?:re|ve|ll|d|m)\b", re.I), " "),
    (re.compile(r"\$"), " dollar "),
    (re.compile(r"€"), " euro "),
    (re.compile(r"£"), " pound "),
    (re.compile(r"%"), " percent "),
    (re.compile(r"~"), " about "),
    (re.compile(r"&|\+"), " and "),
    (re.compile(r"->|→|=>"), " then "),
]
_PAST_V2 = re.compile(PAST_PHRASES_V2, re.I)
_PAST_WORDS_V2 = frozenset({"was", "were", "had", "did", "ago", "until", "formerly", "previously", "used"})
_WEEKDAY_ABBR = {day[:3].capitalize(): f" {day.capitalize()}" for day in _WEEKDAYS}
_HALF_V2: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (
        re.compile(r"\b(Mon|Tue|Tues|Wed|Weds|Thu|Thur|Thurs|Fri|Sat|Sun)(s?)\b\.?"),
        lambda m: _WEEKDAY_ABBR[m.group(1)[:3]] + m.group(2),
    ),
    (re.compile(r"\b(?:an?|one)\s+hour\s+and\s+a\s+half\b", re.I), " 90 minutes "),
    (
        re.compile(
            r"\b(\d+)\s+and\s+a\s+half\s+(hours?|days?|weeks?|years?|km|miles?|kilometres?|kilometers?)\b", re.I
        ),
        r" \1.5 \2 ",
    ),
]
# Units of one dimension, by their canonical form: (dimension, how many base units one is).
_UNITS_V2 = {
    "second": ("time", 1.0),
    "minute": ("time", 60.0),
    "hour": ("time", 3600.0),
    "day": ("days", 1.0),
    "week": ("days", 7.0),
    "gram": ("mass", 1.0),
    "kilogram": ("mass", 1000.0),
    "milliliter": ("volume", 1.0),
    "liter": ("volume", 1000.0),
    "meter": ("length", 1.0),
    "km": ("length", 1000.0),
}


def _number_text(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text


def _measures(words: list[str], found: list[tuple[int, str, bool]]) -> set[tuple[str, str]]:
    """Each number with a unit after it, as (dimension, value in the dimension's smallest unit)."""
    out: set[tuple[str, str]] = set()
    for index, number, _ in found:
        unit = CANON_V2.get(words[index + 1], words[index + 1]) if index + 1 < len(words) else ""
        if unit in _UNITS_V2:
            dimension, size = _UNITS_V2[unit]
            out.add((dimension, _number_text(float(number) * size)))
    return out


def _converted(measures: set[tuple[str, str]]) -> set[str]:
    """Each measure in every unit of its dimension: 90 minutes is also 1.5 (hours) and 5400 (seconds)."""
    return {
        _number_text(float(value) / size)
        for dimension, value in measures
        for other_dimension, size in _UNITS_V2.values()
        if other_dimension == dimension
    }


def _unit_dimension(token: str) -> str | None:
    for unit, (dimension, _) in _UNITS_V2.items():
        if _stem(unit, "2") == token:
            return dimension
    return None


_DIET_V2 = [(re.compile(pattern, re.I), replacement) for pattern, replacement in DIET_PHRASES_V2]
_STEP_SPLIT = re.compile(r"\bthen\b|;|->|→|\bafter that\b|\bnext\b|\bfinally\b", re.IGNORECASE)


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


@dataclass(frozen=True)
class _Lexicon:
    """The word lists of one version of the matcher."""

    canon: dict[str, str]
    stop: frozenset[str]
    negators: frozenset[str]
    negative_verbs: dict[str, str]
    negated_synonyms: dict[str, str]
    v2: bool  # version 2's rules: diet phrases, negation moved onto its verb, times of day


_LEXICONS = {
    "1": _Lexicon(CANON, STOP, NEGATORS, NEGATIVE_VERBS, NEGATED_SYNONYMS, v2=False),
    "2": _Lexicon(CANON_V2, STOP_V2, NEGATORS_V2, NEGATIVE_VERBS_V2, NEGATED_SYNONYMS_V2, v2=True),
}


@lru_cache(maxsize=65536)
def _stem(word: str, version: str = "1") -> str:
    canon = _LEXICONS[version].canon
    word = canon.get(word, word)
    stem = str(_STEMMER.stemWord(word))
    return canon.get(stem, stem)


@dataclass(frozen=True)
class _Text:
    tokens: tuple[str, ...]  # content tokens in order; '~x' marks a negated x
    verbs: tuple[bool, ...]  # for each token: does it look like a verb
    numbers: frozenset[str]  # the numbers that must be stated (a 1 only when written in digits)
    values: frozenset[str]  # every number stated, in any form
    dates: frozenset[str]
    days: frozenset[str]
    months: frozenset[str]
    names: frozenset[str]  # lower-case proper nouns
    words: frozenset[str]  # every lower-case word, for name presence
    words_in_order: tuple[str, ...]
    meridiem: frozenset[str]
    number_next: tuple[tuple[str, str], ...]  # (number, the content token after it)
    subject_person: str | None  # 'partner' in "User's partner ..."
    steps: tuple[tuple[str, ...], ...]
    times_of_day: frozenset[str] = frozenset()
    measures: frozenset[tuple[str, str]] = frozenset()  # (dimension, value in its smallest unit)
    past_habit: bool = False  # 'used to', 'formerly', 'gave up': a fact that no longer holds
    past_tense: bool = False  # a verb in the past tense, or 'until', 'ago'
    first_word: str = ""  # the first word as written


def _date(month: int, day: str, year: str | None = None) -> str:
    return f"{year or '----'}-{month:02d}-{int(day):02d}"


def _numbers_in(words: list[str]) -> tuple[list[str], list[tuple[int, str, bool]]]:
    """Replace number words by digits; return the words and (index, number, written in digits) triples."""
    out: list[str] = []
    found: list[tuple[int, str, bool]] = []
    i = 0
    while i < len(words):
        w = words[i]
        value: int | None = None
        if w in TENS:
            value = TENS[w]
            if i + 1 < len(words) and words[i + 1] in ONES and 0 < ONES[words[i + 1]] < 10:
                value += ONES[words[i + 1]]
                i += 1
        elif w in ONES:
            value = ONES[w]
        elif w in ORDINALS:
            value = ORDINALS[w]
        elif w in MULTIPLIERS:
            value = MULTIPLIERS[w]
        if value is not None:
            if i + 1 < len(words) and words[i + 1] in ("hundred", "thousand"):
                value *= MULTIPLIERS[words[i + 1]]
                i += 1
            found.append((len(out), str(value), False))
            out.append(str(value))
        elif _NUMBER.match(w):
            raw = w.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", w) else w.replace(",", ".")
            if "." in raw:
                raw = raw.rstrip("0").rstrip(".")
            value_text = str(int(raw)) if raw.isdigit() else raw
            found.append((len(out), value_text, True))
            out.append(value_text)
        else:
            out.append(w)
        i += 1
    return out, found


@lru_cache(maxsize=16384)
def analyse(text: str, version: str = "1") -> _Text:
    lex = _LEXICONS[version]
    raw = _strip_accents(unicodedata.normalize("NFKC", text))
    dates: set[str] = set()
    handlers: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], list[str]]], ...] = (
        (_ISO, lambda m: [_date(int(m.group(2)), m.group(3), m.group(1))]),
        (
            _MD_RANGE,
            lambda m: [_date(_MONTHS[m.group(1).casefold()], d, m.group(4)) for d in (m.group(2), m.group(3))],
        ),
        (
            _DM_RANGE,
            lambda m: [_date(_MONTHS[m.group(3).casefold()], d, m.group(4)) for d in (m.group(1), m.group(2))],
        ),
        (_MD, lambda m: [_date(_MONTHS[m.group(1).casefold()], m.group(2), m.group(3))]),
        (_DM, lambda m: [_date(_MONTHS[m.group(2).casefold()], m.group(1), m.group(3))]),
    )
    for pattern, handler in handlers:
        for match in pattern.finditer(raw):
            dates.update(handler(match))
        raw = pattern.sub(" ", raw)
    raw = _TIME.sub(lambda m: f" {int(m.group(1))} " + ("" if m.group(2) == "00" else f" {int(m.group(2))} "), raw)
    if lex.v2:
        for pattern, replacement in _HALF_V2:
            raw = pattern.sub(replacement, raw)
    for pattern, replacement in _PHRASES:
        raw = pattern.sub(replacement, raw)
    past_habit = False
    if lex.v2:
        past_habit = bool(_PAST_V2.search(raw))
        raw = _PAST_V2.sub(" ", raw)
        for pattern, replacement in _DIET_V2:
            raw = pattern.sub(replacement, raw)
    raw = _ORDINAL_DIGITS.sub(r" \1 ", raw)
    raw = _SPLIT_NUM_UNIT.sub(r"\1 \2", raw)
    # Proper nouns: capitalised words not at the start of a sentence.
    names: set[str] = set()
    subject_person: str | None = None
    sentence_start = True
    first_words: list[str] = []
    for token in raw.split():
        word = re.sub(r"[^\w]", "", token)
        if word:
            lower = word.casefold()
            if len(first_words) < 3:
                first_words.append(lower)
            if (
                word[0].isupper()
                and not sentence_start
                and lower not in STOP
                and lower not in _MONTHS
                and lower not in _WEEKDAYS
                and lower.rstrip("s") not in _WEEKDAYS
                and lower not in ("i", "user")
                and len(lower) > 1
                and lower not in CANON
            ):
                names.add(lower)
        sentence_start = bool(re.search(r"[.!?:;]$", token))
    if len(first_words) >= 2 and first_words[0] in ("user", "their", "the") and first_words[1] in PERSON_WORDS:
        subject_person = first_words[1]
    elif len(first_words) >= 3 and first_words[:2] == ["the", "user"] and first_words[2] in PERSON_WORDS:
        subject_person = first_words[2]
    lowered = raw.casefold()
    step_texts = [s for s in _STEP_SPLIT.split(lowered) if s.strip()]
    words_all = re.findall(r"\d+(?:[.,]\d+)*|[a-z0-9]+", lowered.replace("-", " ").replace("/", " "))
    words_all, found = _numbers_in(words_all)
    # 'one' and 'a' are interchangeable ('one 10-minute game' / 'a 10-minute game'); a written 1 is a key.
    numbers = {n for _, n, digits in found if n != "1" or digits}
    measures = _measures(words_all, found) if lex.v2 else set()
    values = {n for _, n, _ in found} | _converted(measures)
    meridiem = {w for w in words_all if w in ("am", "pm")}
    days = {w.rstrip("s") for w in words_all if w.rstrip("s") in _WEEKDAYS or w in _WEEKDAYS}
    months = {w for w in re.findall(r"[A-Za-z]+", raw) if w.casefold() in _MONTH_NAMES and w[0].isupper()}
    tokens, number_next, verbs = _content_with_verbs(words_all, version)
    steps = tuple(
        _content(_numbers_in(re.findall(r"[a-z0-9]+", s.replace("-", " ")))[0], version)[0] for s in step_texts
    )
    times_of_day = frozenset(w.rstrip("s") for w in words_all if w in TIMES_OF_DAY_V2) if lex.v2 else frozenset()
    return _Text(
        tokens=tokens,
        verbs=verbs,
        numbers=frozenset(numbers),
        values=frozenset(values),
        dates=frozenset(dates),
        days=frozenset(days),
        months=frozenset(m.casefold() for m in months),
        names=frozenset(names - {"dollar", "euro", "pound"}),
        words=frozenset(words_all),
        words_in_order=tuple(words_all),
        meridiem=frozenset(meridiem),
        number_next=tuple(number_next),
        subject_person=subject_person,
        steps=tuple(s for s in steps if s),
        times_of_day=times_of_day,
        measures=frozenset(measures),
        past_habit=past_habit,
        past_tense=any(w in _PAST_WORDS_V2 or (len(w) > 4 and w.endswith("ed")) for w in words_all),
        first_word=next(iter(re.findall(r"[^\W\d_]+", raw)), ""),
    )


def _verbish(word: str, previous: str) -> bool:
    """A crude guess that a word is a verb: an -ing or -ed form, or after the subject, 'to' or an adverb."""
    return (len(word) > 4 and word.endswith(("ing", "ed"))) or previous in VERB_CONTEXT


def _content(words: list[str], version: str = "1") -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    tokens, number_next, _ = _content_with_verbs(words, version)
    return tokens, number_next


def _content_with_verbs(
    words: list[str], version: str = "1"
) -> tuple[tuple[str, ...], list[tuple[str, str]], tuple[bool, ...]]:
    lex = _LEXICONS[version]
    verbs: list[bool] = []
    previous = ""
    tokens: list[str] = []
    number_next: list[tuple[str, str]] = []
    pending: list[str] = []
    negate = False
    for w in words:
        before, previous = previous, w
        if w in lex.negators:
            negate = True
            pending = []
            continue
        if _NUMBER.match(w) or w in ("am", "pm"):
            if w not in ("am", "pm"):
                pending.append(w)
            continue
        if w in _WEEKDAYS or w.rstrip("s") in _WEEKDAYS or (w in _MONTHS and len(w) > 3):
            continue
        if w in lex.negative_verbs:
            w = lex.negative_verbs[w]
            negate = not negate
        if w in lex.stop:
            pending = []
            continue
        token = _stem(w, version)
        if negate:
            token = lex.negated_synonyms.get("~" + token, "~" + token)
            negate = False
        tokens.append(token)
        verbs.append(_verbish(w, before))
        number_next.extend((n, token) for n in pending)
        pending = []
    return tuple(tokens), number_next, tuple(verbs)


@lru_cache(maxsize=16384)
def _initialisms(words: tuple[str, ...]) -> frozenset[str]:
    """'pull request' -> 'pr', 'intensive care unit' -> 'icu': the initials of 2 to 4 consecutive words."""
    return frozenset("".join(w[0] for w in words[i : i + n]) for n in (2, 3, 4) for i in range(len(words) - n + 1))


def _quantities(pairs: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, ...]]:
    """For each word that numbers qualify, its numbers in text order, each once ('minute': ('15', '30'))."""
    out: dict[str, list[str]] = {}
    for number, noun in pairs:
        numbers = out.setdefault(noun, [])
        if number not in numbers:
            numbers.append(number)
    return {noun: tuple(numbers) for noun, numbers in out.items()}


def _agree(a: str, b: str) -> bool:
    return a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5] and a[0] != "~" and b[0] != "~")


def _negated_near(tokens: tuple[str, ...], index: int) -> bool:
    """Is the token at index, or one next to it, negated?"""
    return any(tokens[k].startswith("~") for k in (index - 1, index, index + 1) if 0 <= k < len(tokens))


def _negation_moved(gold: tuple[str, ...], index: int, cand: tuple[str, ...]) -> bool:
    """'allowing no naps' / 'not allowing naps': the same word, the negation on its neighbour instead."""
    plain = gold[index].lstrip("~")
    return _negated_near(gold, index) and any(
        c.lstrip("~") == plain and c != gold[index] and _negated_near(cand, j) for j, c in enumerate(cand)
    )


def _covered(gold: tuple[str, ...], cand: tuple[str, ...], moved_negation: bool = False) -> list[bool]:
    """For each gold token: does the candidate state it (equal, prefix, compound or initialism)?"""
    cand_set = set(cand)
    gold_set = set(gold)
    joined = {cand[i] + cand[i + 1] for i in range(len(cand) - 1)}
    initials = {"".join(t[0] for t in cand[i : i + n]) for n in (2, 3, 4) for i in range(len(cand) - n + 1)}
    short_forms = {c for c in cand_set if 2 <= len(c) <= 4 and c not in gold_set}
    out = []
    for i, token in enumerate(gold):
        ok = token in cand_set or any(_agree(token, c) for c in cand) or token in joined
        if not ok and 2 <= len(token) <= 4 and token in initials:
            ok = True  # 'icu' / 'intensive care unit'
        if not ok and short_forms:  # gold words the candidate abbreviates: 'high yield savings account' / 'hysa'
            for n in (2, 3, 4):
                for start in range(max(0, i - n + 1), i + 1):
                    span = gold[start : start + n]
                    if len(span) == n and "".join(t[0] for t in span) in short_forms:
                        ok = True
        if not ok and (
            (i + 1 < len(gold) and gold[i] + gold[i + 1] in cand_set) or (i > 0 and gold[i - 1] + gold[i] in cand_set)
        ):
            ok = True  # 'color blind' / 'colorblind'
        if not ok and moved_negation:
            ok = _negation_moved(gold, i, cand)
        out.append(ok)
    return out


def _substitution(
    gold: tuple[str, ...], covered: list[bool], cand: tuple[str, ...], verbs: tuple[bool, ...], v2: bool = False
) -> tuple[str, str] | None:
    """A run of uncovered expected words where the candidate has words of its own in the same place."""
    back = _covered(cand, gold, v2)
    # Align on the words both state; a gap of uncovered words on both sides between the same anchors
    # is a substitution ("paper filter" / "metal mesh sieve").
    gold_keys = [t if ok else f"\0g{i}" for i, (t, ok) in enumerate(zip(gold, covered, strict=True))]
    cand_keys = [_anchor(t, gold) if ok else f"\0c{j}" for j, (t, ok) in enumerate(zip(cand, back, strict=True))]
    matcher = difflib.SequenceMatcher(a=gold_keys, b=cand_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        mine = [gold[i] for i in range(i1, i2) if not covered[i]]
        theirs = [cand[j] for j in range(j1, j2) if not back[j]]
        if all(verbs[i] for i in range(i1, i2) if not covered[i]):
            continue  # verbs are paraphrased freely ('eating' / 'snacking on'); objects are not
        if mine and theirs and i1 > 0:
            return " ".join(mine), " ".join(theirs)
    return None


def _anchor(token: str, gold: tuple[str, ...]) -> str:
    for other in gold:
        if _agree(token, other):
            return other
    return token


def _spread(gold: tuple[str, ...], cand: tuple[str, ...]) -> int:
    """How many candidate words lie between the first and the last expected word it states."""
    hits = [next((j for j, c in enumerate(cand) if _agree(t, c)), None) for t in gold]
    found = [h for h in hits if h is not None]
    return max(found) - min(found) + 1 if len(found) >= 2 else 0


def _unique_steps(steps: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
    """Each step's words that no other step has."""
    return [
        tuple(t for t in step if not any(t in other for k, other in enumerate(steps) if k != index))
        for index, step in enumerate(steps)
    ]


def _step_positions(steps: list[tuple[str, ...]], cand: tuple[str, ...]) -> list[float | None]:
    positions: list[float | None] = []
    for step in steps:
        hits = sorted(next((j for j, c in enumerate(cand) if _agree(t, c)), -1) for t in step)
        hits = [h for h in hits if h >= 0]
        positions.append(hits[len(hits) // 2] if hits else None)
    return positions


def _other_person(gold: _Text, cand: _Text) -> str | None:
    """A person the expected text does not name, before the candidate states the fact: 'Their partner is ...'."""
    if gold.first_word.casefold() in ("user", "the") and cand.first_word[:1].isupper():
        subject = cand.first_word.casefold()
        after = cand.words_in_order[1:2]
        if subject not in gold.words and subject not in STOP_V2 and after and after[0] in _SUBJECT_VERBS:
            return subject  # 'Marco has type 2 diabetes'
    gold_people = {_stem(w, "2") for w in gold.words if w in PERSON_WORDS or w in _PARTNERS}
    words = cand.words_in_order
    anchors = [
        j for j, w in enumerate(words) if w not in STOP_V2 and any(_agree(_stem(w, "2"), t) for t in gold.tokens)
    ]
    first = anchors[0] if anchors else len(words)
    for w in words[:first]:
        if (w in PERSON_WORDS or w in _PARTNERS) and _stem(w, "2") not in gold_people:
            return w
    return None


_SUBJECT_VERBS = frozenset(
    {"is", "has", "was", "had", "does", "did", "s", "likes", "loves", "prefers", "works", "lives"}
)
_PARTNERS = frozenset({"partner", "wife", "husband", "spouse", "boyfriend", "girlfriend", "fiance", "fiancee"})


def _person_dropped(gold: _Text, cand: _Text) -> bool:
    """The expected text is about the user's someone ('User's daughter is ...'); the candidate never names them."""
    person = gold.subject_person
    if person is None:
        return False
    return not any(_stem(w, "2") == _stem(person, "2") for w in cand.words)


@lru_cache(maxsize=1)
def _antonym_pairs() -> frozenset[tuple[str, str]]:
    stems = {(_stem(a, "2"), _stem(b, "2")) for a, b in ANTONYMS_V2}
    return frozenset(stems | {(b, a) for a, b in stems})


def _antonym(gold: tuple[str, ...], cand: tuple[str, ...]) -> tuple[str, str] | None:
    """A word of the expected text that the candidate replaces by its opposite ('short' / 'detailed')."""
    cand_set, gold_set = set(cand), set(gold)
    for a, b in sorted(_antonym_pairs()):
        if a in gold_set and b in cand_set and a not in cand_set and b not in gold_set:
            return a, b
    return None


@dataclass(frozen=True)
class FactCoverMatcher:
    """Asymmetric: the share of the expected text's content the candidate states, after hard checks."""

    name: str = "fact-cover"
    version: str = "1"
    threshold: float = 0.6

    def similarity(self, a: str, b: str) -> float:
        return self.explain(a, b)[0]

    def explain(self, a: str, b: str) -> tuple[float, str]:
        if normalize(a) == normalize(b):
            return 1.0, "equal after normalisation"
        v2 = _LEXICONS[self.version].v2
        gold, cand = analyse(a, self.version), analyse(b, self.version)
        missing_dates = {d for d in gold.dates if d not in cand.dates and f"----{d[4:]}" not in cand.dates}
        if missing_dates:
            return 0.0, f"date {', '.join(sorted(missing_dates))} not in the candidate"
        for label, mine, theirs in (
            ("number", gold.numbers, cand.values),
            ("weekday", gold.days, cand.days),
            ("month", gold.months, cand.months),
        ):
            absent = mine - theirs
            if absent:
                return 0.0, f"{label} {', '.join(sorted(absent))} not in the candidate"
        missing_names = {n for n in gold.names if n not in cand.words and n not in _initialisms(cand.words_in_order)}
        if missing_names:
            return 0.0, f"name {', '.join(sorted(missing_names))} not in the candidate"
        if gold.meridiem and cand.meridiem and gold.meridiem != cand.meridiem:
            return 0.0, "am/pm differs"
        if gold.times_of_day and cand.times_of_day and not gold.times_of_day & cand.times_of_day:
            return 0.0, "time of day differs"
        cand_dimensions = {dimension for dimension, _ in cand.measures}
        other_measures = {m for m in gold.measures - cand.measures if m[0] in cand_dimensions}
        if other_measures:
            return 0.0, f"another quantity of {', '.join(sorted({d for d, _ in other_measures}))}"
        if v2 and gold.days and cand.days - gold.days:
            return 0.0, f"weekday {', '.join(sorted(cand.days - gold.days))} is not in the expected text"
        if v2:
            opposite = _antonym(gold.tokens, cand.tokens)
            if opposite is not None:
                return 0.0, f"opposite: '{opposite[0]}' / '{opposite[1]}'"
        # version 2: 'wife' / 'partner', 'grandma' / 'grandmother' are one person
        same = v2 and _stem(cand.subject_person or "", "2") == _stem(gold.subject_person or "", "2")
        if cand.subject_person and cand.subject_person != gold.subject_person and not same:
            return 0.0, f"about the user's {cand.subject_person}, not the user"
        if v2:
            other = _other_person(gold, cand)
            if other is not None:
                return 0.0, f"about the user's {other}, not the user"
            roles = {ROLES_V2[w] for w in gold.words if w in ROLES_V2}
            added = sorted({ROLES_V2[w] for w in cand.words if w in ROLES_V2} - roles)
            if added:
                return 0.0, f"another role: {', '.join(added)}"
            if _person_dropped(gold, cand):
                return 0.0, f"about the user's {gold.subject_person}, but the candidate does not name them"
            if gold.past_habit != cand.past_habit and not (cand if gold.past_habit else gold).past_tense:
                return 0.0, "a fact that no longer holds" + (
                    " / a current one" if gold.past_habit else ", not a current one"
                )
        gold_counts, cand_counts = _quantities(gold.number_next), _quantities(cand.number_next)
        for noun in sorted(gold_counts.keys() & cand_counts.keys()):
            if gold_counts[noun] != cand_counts[noun]:
                said, written = ", ".join(gold_counts[noun]), ", ".join(cand_counts[noun])
                return 0.0, f"other or swapped numbers for '{noun}' ({said} / {written})"
        if reversed_around_order_word(a, b):
            return 0.0, "reversal around an order word"
        covered = _covered(gold.tokens, cand.tokens, v2)
        if v2:  # 'gui' / 'graphical user interface': an initialism over every word, stop words too
            initials = _initialisms(cand.words_in_order)
            covered = [ok or (2 <= len(t) <= 4 and t in initials) for t, ok in zip(gold.tokens, covered, strict=True)]
            # '90 minutes' / '1.5 hours': the numbers agreed above; a unit of the same dimension states the unit
            units: set[str | None] = {_unit_dimension(t) for t in cand.tokens} - {None}
            covered = [ok or _unit_dimension(t) in units for t, ok in zip(gold.tokens, covered, strict=True)]
        if len(gold.steps) >= 2:
            unique = _unique_steps(gold.steps)
            for index, step in enumerate(unique):
                step_cover = _covered(step, cand.tokens, v2)
                if step and sum(step_cover) / len(step) < 0.5:
                    return 0.0, f"step {index + 1} of {len(gold.steps)} not in the candidate"
            positions = [p for p in _step_positions(unique, cand.tokens) if p is not None]
            if any(later < earlier for earlier, later in itertools.pairwise(positions)):
                return 0.0, "steps in another order"
        if not gold.tokens:
            return 1.0, "no content words beyond the fact keys"
        spread = _spread(gold.tokens, cand.tokens)
        if spread > 2 * len(gold.tokens) + 2:
            # 'is learning piano' / 'piano practice ... the piece they are learning': the words are
            # there, scattered through another fact.
            return 0.0, f"the expected words are scattered over {spread} words of the candidate"
        cand_set = set(cand.tokens)
        for token, ok in zip(gold.tokens, covered, strict=True):
            if ok:
                continue
            flipped = token[1:] if token.startswith("~") else "~" + token
            if flipped in cand_set:
                return 0.0, f"polarity: '{token}' / '{flipped}'"
            if token.startswith("~"):
                return 0.0, f"the negated '{token[1:]}' is not in the candidate"
        swapped = _substitution(gold.tokens, covered, cand.tokens, gold.verbs, v2)
        if swapped is not None:
            return 0.0, f"substitution: '{swapped[0]}' / '{swapped[1]}'"
        share = sum(covered) / len(gold.tokens)
        missing = [t for t, ok in zip(gold.tokens, covered, strict=True) if not ok]
        value = round(share, 9)
        return value, f"covers {sum(covered)} of {len(gold.tokens)} words" + (
            f" (missing {' '.join(missing)})" if missing else ""
        )

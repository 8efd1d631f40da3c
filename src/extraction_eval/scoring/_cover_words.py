"""The word lists of ``fact-cover`` (docs/matcher.md): canonical forms, stop words, negation, numbers.

General English, chosen on the tuning half of the calibration set only; a change here
changes scores, so it is a new matcher version.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _canon(groups: dict[str, str]) -> dict[str, str]:
    """{canonical: 'variant variant ...'} -> {variant: canonical}."""
    return {variant: canonical for canonical, variants in groups.items() for variant in variants.split()}


# Units after a number, written glued to it ('5km', '10K', '3am').
UNITS_AFTER_NUMBER = "km|k|kms|mi|g|kg|mg|ml|l|lb|lbs|oz|min|mins|h|hr|hrs|am|pm|s|x|cm|mm|m"
# Canonical forms of units, spellings and plain synonyms, applied to lower-case words before stemming.
CANON = _canon(
    {
        "km": "k kms kilometre kilometres kilometer kilometers",
        "mile": "mi miles",
        "gram": "g gr grams gramme grammes",
        "kilogram": "kg kilo kilos kilograms",
        "liter": "l litre litres liters",
        "milliliter": "ml millilitre millilitres",
        "minute": "min mins minutes",
        "hour": "h hr hrs hours",
        "dollar": "usd dollars bucks",
        "euro": "eur euros",
        "pound": "gbp lbs lb pounds",
        "percent": "percent pct",
        "color": "colour colours",
        "colored": "coloured",
        "neighbor": "neighbour neighbours",
        "favorite": "favourite",
        "favor": "favour",
        "practice": "practise",
        "center": "centre",
        "meter": "metre metres",
        "gray": "grey",
        "theater": "theatre",
        "organize": "organise",
        "organized": "organised",
        "realize": "realise",
        "program": "programme",
        "traveling": "travelling",
        "traveled": "travelled",
        "mom": "mum mother",
        "dad": "father",
        "child": "kids kid children",
        "photo": "pics pic picture pictures photos",
        "big": "large",
        "hand": "manually manual",
        "movie": "film films",
        "holiday": "vacation vacations",
        "bike": "bicycle cycle cycles cycling biking bikes",
        "buy": "purchase purchased bought",
        "start": "begin began begins started",
        "finish": "completed complete completes",
        "talk": "spoke speak speaks spoken chatted",
        "answer": "response responses reply replies",
        "back": "returned return returning returns",
        "like": "fond enjoy enjoys enjoyed love loves loved prefer prefers preferred preference favorite keen",
        "fiction": "novel novels",
        "new": "fresh",
        "garage": "mechanic mechanics",
        "add": "append appends",
        "photograph": "shooting shoot shoots",
        "work": "employed job",
        "flight": "flying fly flies flew flights",
        "currently": "presently now",
    }
)
# Words that carry no fact of their own (after the canonical forms above).
STOP = _words(
    """
    a about all almost also always am an and any approx approximately are around as at be been being
    beside besides both by can could currently did do does doing during each entire every for full
    generally get gets getting got had has have having he her here hers him his how in instead into
    is it its just made make makes may might must nearly next of off often on one ones only onto or
    out over own rather really roughly same shall she should so some still such than that the their
    theirs them themselves then there these they this those till to toward towards typically until
    up upon user user's users usually very via was were what when where which while who whole whom
    whose will with within would
    """
)
NEGATORS = _words("cannot neither never no nor not quit quits stopped without")
# A word that is a negated other word: 'dislikes' = not 'like'.
NEGATIVE_VERBS = {
    "dislike": "like",
    "dislikes": "like",
    "disliked": "like",
    "hate": "like",
    "hates": "like",
    "hated": "like",
    "detest": "like",
    "detests": "like",
    "loathe": "like",
    "loathes": "like",
    "annoyed": "like",
    "annoys": "like",
    "intolerant": "tolerate",
    "unable": "able",
    "avoid": "do",
    "avoids": "do",
}
# Negated words that mean 'does not like'.
NEGATED_SYNONYMS = {"~stand": "~like", "~interest": "~like", "~want": "~like", "~fan": "~like", "~care": "~like"}
# 'User's partner ...' is about someone else.
PERSON_WORDS = _words(
    """
    aunt boss boyfriend brother child children colleague colleagues cousin coworker coworkers dad
    daughter family father friend friends girlfriend grandfather grandma grandmother grandpa husband
    kid kids mom mother neighbor neighbors parent parents partner roommate sister son spouse uncle
    wife
    """
)
ONES = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS_WORDS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
TENS = {word: 10 * value for value, word in enumerate(_TENS_WORDS, 2)}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
}
MULTIPLIERS = {"twice": 2, "thrice": 3, "dozen": 12, "hundred": 100, "thousand": 1000, "once": 1, "pair": 2}
# Words after which the next word is probably a verb.
VERB_CONTEXT = _words("also always frequently never not often rather sometimes than then they to user usually who")

# ---- fact-cover@2: additions to the lists above (chosen on the tuning half only) ----

# More canonical forms: units, abbreviations and plain synonyms an extractor writes.
CANON_V2 = {
    **CANON,
    **_canon(
        {
            "second": "sec secs seconds",
            "meter": "m meters metre metres",
            "foot": "ft feet",
            "ounce": "oz ounces",
            "centimeter": "cm centimetre centimetres centimeters",
            "millimeter": "mm millimetre millimetres millimeters",
            "week": "wk wks weeks weekly",
            "day": "days daily",
            "month": "months monthly",
            "year": "yr yrs years yearly annual annually",
            "time": "x times",
            "renovate": "redo redoing redone redid redoes renovating renovated renovates renovation remodel "
            "remodeling remodelling remodeled remodelled",
            "performance": "perf",
            "repository": "repo repos repositories",
            "place": "put puts putting placing placed lay lays laying",
            "small": "little tiny",
            "quick": "fast rapid quickly",
            "short": "brief concise terse",
            "doctor": "physician gp",
            "car": "vehicle",
            "trip": "journey",
            "use": "using uses used utilize utilizes utilise utilises",
            "help": "assist assists assistance",
            "fix": "repair repairs repaired fixing fixes fixed",
            "need": "require requires required needs needed",
            "choose": "pick picks picked select selects selected chose chosen",
            "show": "display displays",
            "plan": "intend intends intending",
            "try": "attempt attempts",
            "goal": "aim target",
            "exercise": "workout workouts",
            "run": "jog jogs jogging",
            "mistake": "error errors mistakes",
            "add": "append appends appended appending tack tacks tacked tacking",
            "sick": "ill",
            "afraid": "scared",
            "edible": "food",
            "private": "individual",
            "before": "pre prior",
            "manage": "lead leads leading",
            "partner": "wife husband spouse boyfriend girlfriend fiance fiancee",
            "home": "house houses homes",
            "baby": "infant newborn",
            "teenager": "teen teens teenagers",
            "colleague": "coworker coworkers colleagues",
            "company": "employer firm",
            "apartment": "flat apartments",
            "couch": "sofa",
            "trash": "garbage rubbish",
            "store": "shop shops stores",
            "medicine": "medication medications meds",
            "learn": "study studies studying studied learning learns learned learnt",
            "walk": "stroll strolls",
            "anxious": "nervous worried",
            "tired": "exhausted",
            "happy": "glad",
            "hard": "difficult tough",
            "easy": "simple",
            "quiet": "silent",
            "grandmother": "grandma granny nana",
            "grandfather": "grandpa",
            "tv": "television",
            "move": "relocate relocated relocating relocates",
            "live": "reside resides residing resided",
            "remember": "recall recalls",
            "reminder": "reminders remind reminds",
            "prepare": "prep preps prepping",
            "vegetable": "veggies veggie vegetables veg",
            "fridge": "refrigerator",
            "pan": "skillet",
            "appointment": "appt",
        }
    ),
}
# Degree and hedge words that carry no fact.
STOP_V2 = STOP | _words(
    """
    per quite pretty fairly somewhat mostly mainly especially particularly actually basically tends tend
    tended generally normally
    """
)
NEGATORS_V2 = NEGATORS | _words("nothing none")
NEGATIVE_VERBS_V2 = {
    **NEGATIVE_VERBS,
    **dict.fromkeys(
        _words("annoy annoying irritates irritated irritating bothers bothered frustrates frustrated frustrating"),
        "like",
    ),
    "avoided": "do",
    "avoiding": "do",
    "skips": "do",
    "skip": "do",
}
NEGATED_SYNONYMS_V2 = {**NEGATED_SYNONYMS, "~keen": "~like", "~enjoy": "~like", "~fond": "~like"}
# Phrases that name one diet or habit in other words; applied after contractions are expanded.
DIET_PHRASES_V2 = (
    (r"\b(?:not|never)\s+eats?\s+(?:any\s+)?(?:animal\s+products|meat\s+or\s+dairy)\b|\bplant[- ]based\b", " vegan "),
    (r"\bno\s+animal\s+products\b", " vegan "),
    (r"\b(?:not|never)\s+eats?\s+(?:any\s+)?meat\b|\beats?\s+no\s+meat\b|\bno\s+meat\b", " vegetarian "),
    (r"\bvegetarian\b[^.;]*?\b(?:but|except)\b[^.;]*?\b(?:fish|seafood)\b", " pescatarian "),
    (r"\b(?:not|never)\s+drinks?\s+(?:any\s+)?alcohol\b|\bsober\b|\bteetotaler\b|\bteetotaller\b", " teetotal "),
    (r"\b(?:not|never)\s+smokes?\b|\bnon-?smoker\b", " nonsmoker "),
)
# Times of day and parts of the week: when both texts name one, they must agree.
TIMES_OF_DAY_V2 = _words(
    "morning mornings afternoon afternoons evening evenings night nights noon midnight "
    "weekend weekends weekday weekdays"
)
# Words that say the opposite of each other: one in the expected text, the other in the candidate.
ANTONYMS_V2 = tuple(
    tuple(pair.split("/"))
    for pair in _words(
        """
    short/long short/detailed short/lengthy brief/detailed concise/detailed dark/light early/late hot/cold
    cheap/expensive start/finish start/end buy/sell win/lose pass/fail accept/reject accept/decline open/close
    arrive/leave join/leave lend/borrow give/receive teach/learn increase/decrease increase/reduce more/less
    more/fewer before/after include/exclude morning/evening morning/night remote/office upstairs/downstairs
    weekday/weekend first/last older/younger big/small
    """
    )
)
# Phrases that say a fact no longer holds ('used to smoke' is not 'smokes').
PAST_PHRASES_V2 = r"\bused\s+to\b|\bformerly\b|\bpreviously\b|\bgave\s+up\b|\bgive\s+up\b|\bgiving\s+up\b"
# Roles a person has in an event or a group: a candidate that gives the user a role the expected
# text does not is another fact ('is on the platform team' / 'manages the platform team').
ROLES_V2 = _canon(
    {
        "manage": "manage manages managed managing manager lead leads leading led supervise supervises supervising",
        "teach": "teach teaches teaching taught instructor teacher",
        "coach": "coach coaches coaching coached",
        "organize": "organize organizes organizing organized organise organises organising organised organizer host "
        "hosts hosting hosted",
        "photograph": "photograph photographs photographing photographed photographer shoot shoots shooting",
        "officiate": "officiate officiates officiating",
    }
)

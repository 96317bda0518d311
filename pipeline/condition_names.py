"""Conditions by the names questions use (A-24), read by ``scripts/build_vocabulary.py``.

ICD-10-CM titles are qualified ("Essential (primary) hypertension", "Acute hepatitis B",
"Influenza due to unidentified influenza virus", "Varicella [chickenpox]"), so a question
that writes "hypertension", "hepatitis B", "flu" or "chickenpox" named no condition. These
give the names people write:

- ``core_condition_rows``: each title of the disease chapters less its qualifiers
  (``core_name``), kept where the stored label texts write it at least
  ``MIN_STORED_MENTIONS`` times; a bracketed alternative ("[chickenpox]") is its alias;
- ``leaflet_lay_names``: the leaflets' own pairs of a lay name and a condition, either
  way round: "high blood pressure (hypertension)", "herpes zoster (shingles)";
- ``other_spelling``: the British spelling the leaflets use ("anaemia", "oedema");
- ``SHORT_FORMS``: clinicians' shorthand for the start of a name ("hep B"), and a name
  less its number suffix ("COVID-19" -> "covid");
- ``plural_name`` (A-54): the name in the plural ("migraines", "urinary tract
  infections", "cold sores"), kept where the stored texts write it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "DISEASE_CHAPTERS",
    "MIN_PAIRED_SHARE",
    "MIN_PAIRED_SHARE_ONE_WORD",
    "MIN_STORED_MENTIONS",
    "SHORT_FORMS",
    "core_condition_rows",
    "core_name",
    "leaflet_lay_names",
    "other_spelling",
    "phrase_counts",
    "plural_name",
    "plural_word",
    "short_forms",
]

#: ICD-10-CM chapters of diseases: certain infections (A-B) to the genitourinary system
#: (N), and congenital conditions (Q); not symptoms (R), injuries (S-T), pregnancy (O),
#: perinatal (P), external causes (V-Y) or contact with services (Z).
DISEASE_CHAPTERS = frozenset("ABCDEFGHIJKLMNQ")

#: Times the stored label texts must write a derived name for it to be a name.
MIN_STORED_MENTIONS = 3

#: Clinicians' shorthand for a name's first word ("hep B" for hepatitis B).
SHORT_FORMS: dict[str, str] = {"hepatitis": "hep"}

_BRACKET = re.compile(r"\s*\[([^\]]+)\]")
_PARENTHESIS = re.compile(r"\s*\([^)]*\)")
#: A title's qualifiers: what follows the name ("Influenza due to ...", "Osteoporosis
#: without ...", "Depression, unspecified"); a comma only before a qualifier, since one
#: also lists names ("Sedative, hypnotic, or anxiolytic related disorders").
_QUALIFIER_TAIL = re.compile(
    r"(?:\s*,\s*(?:unspecified|not elsewhere classified|site not specified|single episode|"
    r"recurrent|initial encounter|without|with)\b.*|\s+(?:not due to|due to|without|with|"
    r"in diseases classified elsewhere|not elsewhere classified|of unspecified|unspecified|"
    r"complicating|in pregnancy|following|as the cause of)\b.*)$",
    re.IGNORECASE,
)
#: A qualifier that is an unspecified body site ("Effusion, unspecified joint",
#: "Dissection of unspecified artery", "unspecified site of aorta"), not the site's absence
#: ("of unspecified site") or another unknown ("unspecified organism", "of unspecified
#: cell type", "unspecified severity").
_SITE_QUALIFIER = re.compile(
    r"^(?:\s+of|\s*,)?\s+unspecified\s+(?!(?:site|side)\b(?!\s+of\b)|(?:organism|cell|type|"
    r"severity|behaviou?r|degree|trimester|stage|cause|depth|duration|number|level|time|"
    r"whether|with|without|as|affecting|of)\b)",
    re.IGNORECASE,
)
_QUALIFIER_HEAD = re.compile(
    r"^(?:other|unspecified|acute|chronic|essential|primary|secondary)\s+", re.IGNORECASE
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
#: Words of a title cut short or joined ("Infection associated", "Alcohol use").
_JOINING_WORDS = frozenset({"and", "or", "associated", "use", "involving", "affecting", "related"})
_NUMBER_SUFFIX = re.compile(r"^([a-z]{4,})-\d+$")
#: Words a lay name does not start with ("a heart attack", "you have high blood pressure").
_LEADING_WORDS = frozenset(
    re.findall(
        r"\S+",
        "a an the your you have has had of or and to with for as called known like such is "
        "are be e.g. i.e. e.g i.e which that this in on by from also often sometimes just "
        "used including include includes causing caused due within into at",
    )
)
_MAX_LAY_WORDS = 4
_IN_BRACKETS = re.compile(r"\(([^()]{3,60})\)")
#: Two words before a run that make it the end of a longer name ("of the pancreas").
_INSIDE_A_NAME = frozenset({("of", "the"), ("in", "the"), ("on", "the"), ("of", "your")})
#: Words of a bracket that is a cross-reference or an example, not a name.
_NOT_LAY_WORDS = frozenset(
    {"see", "section", "eg", "e", "g", "frequency", "example", "such"}
    # a description of the condition, not a name ("system of the heart", "does not work
    # properly", "they should")
    | {"the", "its", "your", "not", "does", "they", "should", "within", "affects"}
)
#: Share of a lay name's uses that must pair it with the condition.
MIN_PAIRED_SHARE = 0.05
#: The same for a one-word lay name, which a leaflet more often uses in another sense
#: ("pancreas", "spine", "sleeping": under 0.05 each); "hives" pairs with urticaria in
#: 0.099 of its uses. A common English word is no lay name however often it pairs
#: (``scripts/build_vocabulary.py``: "wind", "shaking").
MIN_PAIRED_SHARE_ONE_WORD = 0.08


def core_name(description: str) -> list[str]:
    """The names one ICD-10-CM title stands for, its qualifiers dropped: ``"Essential
    (primary) hypertension"`` -> ``["hypertension"]``, ``"Varicella [chickenpox]"`` ->
    ``["Varicella", "chickenpox"]`` (the first is the name, the rest its aliases),
    ``"Human immunodeficiency virus [HIV] disease"`` -> ``["Human immunodeficiency virus
    disease", "HIV", "HIV disease"]``. A name joined with "and" / "or" gives none, and so
    does one word less an unspecified body site (``"Effusion, unspecified joint"``)."""
    # a bracket of the qualifier names its cause ("Sepsis due to E. coli [E. coli]")
    qualifier = _QUALIFIER_TAIL.search(description)
    # one word less its body site is a kind of finding ("Effusion", "Stenosis", "Cyst"), not
    # a condition; it is a name where another title writes it alone ("Gout, unspecified")
    at_a_site = bool(qualifier and _SITE_QUALIFIER.match(qualifier.group(0)))
    if qualifier:  # the tail runs to the title's end: one match at most
        description = description[: qualifier.start()]
    names = [_BRACKET.sub("", description)]
    bracket = _BRACKET.search(description)
    if bracket and _lay_alternative(alternative := bracket.group(1)):
        before, after = description[: bracket.start()], description[bracket.end() :]
        if _names_the_whole(alternative, before, after):
            names.append(alternative)
        if after:
            names.append(alternative + after)
    cores: list[str] = []
    for name in names:
        name = _QUALIFIER_TAIL.sub("", _PARENTHESIS.sub("", name)).strip()
        while (shorter := _QUALIFIER_HEAD.sub("", name)) != name:
            name = shorter
        words = name.lower().split()
        if not words or "," in name or {name.split()[0], name.split()[-1]} & _LEADING_WORDS:
            continue  # a list of names, or one cut short ("Pain in", "including ...")
        if at_a_site and len(words) == 1:
            continue
        if len(name) >= 3 and words[0][0].isalpha() and not set(words) & _JOINING_WORDS:
            cores.append(name)
    return list(dict.fromkeys(cores))


def _names_the_whole(alternative: str, before: str, after: str) -> bool:
    # an abbreviation stands for the words before it ("Human immunodeficiency virus
    # [HIV]"); in a title without "of", so does a bracket of several words ("Herpesviral
    # [herpes simplex] infections") or one that ends the title ("Varicella [chickenpox]").
    # One word inside a title, or any after "X of Y", stands for one word of it ("mood
    # [affective] disorder", "Complication of respirator [ventilator]"): no name alone,
    # only with the words after it ("affective disorder")
    if alternative.isupper():
        return True
    return " of " not in f" {before.lower()} " and (" " in alternative or not after)


def _lay_alternative(name: str) -> bool:
    # "[chickenpox]", "[herpes zoster]", "[HIV] disease"; not an eponym or abbreviation
    # that is an English word or too short to match alone ("[Sweet]", "[ALL]", "[IgM]")
    return (
        " " in name
        or name.islower()
        or (name.isupper() and len(name) >= 3 and name.lower() not in {"all", "men"})
    )


def phrase_counts(texts: Iterable[str], phrases: Iterable[str]) -> Counter[str]:
    """How often each of ``phrases`` (lower case, words as ``_WORD`` reads them) occurs
    in ``texts``, word-bounded; one pass over the texts."""
    wanted = {" ".join(_WORD.findall(p.lower())): p for p in phrases}
    wanted.pop("", None)
    longest: dict[str, int] = {}  # per first word, the most words of a phrase it starts
    for key in wanted:
        first, *rest = key.split()
        longest[first] = max(longest.get(first, 0), len(rest) + 1)
    counts: Counter[str] = Counter()
    for text in texts:
        words = _WORD.findall(text.lower())
        for start, word in enumerate(words):
            for size in range(1, min(longest.get(word, 0), len(words) - start) + 1):
                key = " ".join(words[start : start + size])
                if key in wanted:
                    counts[wanted[key]] += 1
    return counts


def core_condition_rows(
    icd: Iterable[tuple[str, str]],
    texts: list[str],
    known: dict[str, object],
    respell: Mapping[str, str] | None = None,
    is_name: Callable[[str], bool] = bool,
) -> list[dict]:
    """New disease rows (``{"c", "t": "disease", "a"}``) from ICD-10-CM ``(code,
    description)`` pairs of ``DISEASE_CHAPTERS``: each :func:`core_name` that is no name
    in ``known`` (lower case) and that ``texts`` (the stored labels) write at least
    ``MIN_STORED_MENTIONS`` times, in its own spelling or its :func:`other_spelling` by
    ``respell`` ("haemorrhoids" counts for "hemorrhoids"), with its bracketed
    alternatives as aliases (the name written most is the row's name) and for which
    ``is_name`` holds (a row name the build takes for a plain word is no row, and its
    names stay free). Adds the new names to ``known``."""
    candidates: dict[str, list[str]] = {}
    for code, description in icd:
        if code[:1] not in DISEASE_CHAPTERS:
            continue
        names = core_name(description)
        if names and names[0].lower() not in known:
            aliases = candidates.setdefault(names[0].lower(), [names[0]])
            aliases.extend(name for name in names[1:] if name not in aliases)
    spelt = {n: other_spelling(n, respell or {}) for names in candidates.values() for n in names}
    counts = phrase_counts(texts, [*spelt, *filter(None, spelt.values())])
    for name, other in spelt.items():
        if other and other != name:
            counts[name] += counts[other]
    rows = []
    for names in candidates.values():
        names = [name for name in names if name.lower() not in known]
        if not names or max(counts[name] for name in names) < MIN_STORED_MENTIONS:
            continue
        # the name the labels write most ("HIV disease", not "Human immunodeficiency
        # virus disease"), the others its aliases
        names.sort(key=lambda name: -counts[name])
        if not is_name(names[0]):
            continue
        rows.append({"c": names[0], "t": "disease", "a": names[1:]})
        known.update(dict.fromkeys(name.lower() for name in names))
    return rows


def _lay_phrase(words: list[str]) -> str | None:
    while words and words[0] in _LEADING_WORDS:
        words = words[1:]
    if not words or len(words) > _MAX_LAY_WORDS or words[-1] in _LEADING_WORDS:
        return None
    if any(w[0].isdigit() or w in _NOT_LAY_WORDS or w in ("or", "and") for w in words):
        return None
    return " ".join(words)


def leaflet_lay_names(texts: list[str], conditions: Iterable[str]) -> dict[str, list[str]]:
    """Per condition name (lower case), the lay names the leaflets pair it with both ways
    round: in brackets after it, written in lower case ("herpes zoster (shingles)"), and
    as the words before it in brackets ("shingles (herpes zoster)": the longest run, up
    to ``_MAX_LAY_WORDS`` words, that at least 60 % of its pairs share). Written one way
    only, the bracket is mostly a cause or a symptom ("shortness of breath (congestive
    heart failure)"). A pair must occur ``MIN_STORED_MENTIONS`` times in all and be at
    least ``MIN_PAIRED_SHARE`` of the lay name's uses ("chest" is no name of angina)."""
    names = {c.lower() for c in conditions if len(c) >= 4}
    before: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    after: dict[str, Counter[str]] = defaultdict(Counter)
    for text in texts:
        for match in _IN_BRACKETS.finditer(text):
            inside = match.group(1).strip()
            # the words since the last punctuation: "stiff neck, incoordination (ataxia)"
            window = text[max(0, match.start() - 200) : match.start()].lower()
            head = _WORD.findall(re.split(r"[,;:.!?]\s", window)[-1])
            if inside.lower() in names and head:
                before[inside.lower()][tuple(head[-_MAX_LAY_WORDS - 2 :])] += 1
            if inside != inside.lower() or re.search(r"[,;:]", inside):
                continue  # an abbreviation, a proper name or a list, not a lay name
            for size in range(1, min(5, len(head)) + 1):  # each run of words once
                condition = " ".join(head[-size:])
                if condition in names and (lay := _lay_phrase(_WORD.findall(inside))):
                    after[condition][lay] += 1
    pairs: Counter[tuple[str, str]] = Counter()
    either_way: set[tuple[str, str]] = set()  # pairs the leaflets also write the other way
    for condition, heads in before.items():
        total = sum(heads.values())
        best = None
        for size in range(1, _MAX_LAY_WORDS + 1):
            shared = Counter(h[-size:] for h in heads.elements() if len(h) >= size)
            words, count = shared.most_common(1)[0] if shared else ((), 0)
            if count < 0.6 * total or _lay_phrase(list(words)) != " ".join(words):
                continue
            # the words end a longer name ("inflammation of the pancreas"), not a name
            cut = Counter(h[-size - 2 : -size] for h in heads.elements() if h[-size:] == words)
            before_words = cut.most_common(1)[0][0]
            if before_words in _INSIDE_A_NAME:
                continue
            best = (" ".join(words), count)
        if best:
            pairs[(condition, best[0])] += best[1]
    for condition, lays in after.items():
        for lay, count in lays.items():
            if (condition, lay) in pairs:
                either_way.add((condition, lay))
            pairs[(condition, lay)] += count
    uses = phrase_counts(texts, {lay for _, lay in pairs})
    found: dict[str, list[str]] = defaultdict(list)
    for (condition, lay), count in sorted(pairs.items()):
        share = MIN_PAIRED_SHARE if " " in lay else MIN_PAIRED_SHARE_ONE_WORD
        if (
            (condition, lay) in either_way
            and count >= MIN_STORED_MENTIONS
            and count >= share * uses[lay]
            and lay not in names
        ):
            found[condition].append(lay)
    return dict(found)


def short_forms(name: str) -> list[str]:
    """Shorthand for a condition's name: ``SHORT_FORMS`` for its first word ("hepatitis
    B" -> "hep B") and the name less a number suffix ("COVID-19" -> "COVID")."""
    forms = []
    first, _, rest = name.partition(" ")
    if first.lower() in SHORT_FORMS and rest:
        forms.append(f"{SHORT_FORMS[first.lower()]} {rest}")
    numbered = _NUMBER_SUFFIX.match(name.lower())
    if numbered:
        forms.append(name[: len(numbered.group(1))])
    return forms


def other_spelling(name: str, respell: Mapping[str, str]) -> str | None:
    """``name`` with each word the stored texts spell another way so spelt (``respell``:
    folded American spelling -> the stored one; ``"Iron deficiency anemia"`` -> ``"Iron
    deficiency anaemia"``, ``"hemophilia"`` -> ``"haemophilia"``), or None when no word
    changes. ICD-10-CM writes American spelling; the leaflets and UK users British."""
    words = name.split(" ")
    changed = [respell.get(word.lower(), word) for word in words]
    if [w.lower() for w in changed] == [w.lower() for w in words]:
        return None
    return " ".join(changed)


#: Last words left alone: singular already ("measles", "mumps", "rickets"), or whose
#: plural is irregular ("-sis" -> "-ses") or "-es" ("rashes"), which ``plural_word`` does
#: not form.
_NO_PLURAL_ENDINGS = ("s", "x", "z", "ch", "sh")


def plural_name(name: str) -> str | None:
    """``name`` with its last word in the plural ("Migraine" -> "Migraines", "Urinary
    tract infection" -> "Urinary tract infections", "Allergy" -> "Allergies"), or None
    where the last word ends in s, x, z, ch or sh (psoriasis, measles, rash) or is not a
    lower-case or capitalised word of three letters or more ("hepatitis B"). A-54:
    questions write conditions in the plural ("my migraines", "cold sores") and
    ICD-10-CM titles in the singular, so "migraines" named no condition. Only the last
    word is made plural, and irregular nouns come out wrong ("Infection of bladders",
    "Head louses"): the build keeps only the plurals the stored texts write."""
    head, _, last = name.rpartition(" ")
    if len(last) < 3 or not last.isalpha() or not (last.islower() or last.istitle()):
        return None
    if last.lower().endswith(_NO_PLURAL_ENDINGS):
        return None
    written = plural_word(last.lower())
    written = written if last.islower() else written.capitalize()
    return f"{head} {written}" if head else written


def plural_word(word: str) -> str:
    """The regular English plural of a noun that does not end in s, x, z, ch or sh (those
    form "-es", and are not handled): a consonant and a lower-case "y" -> "ies"
    ("allergy" -> "allergies"), else "s" added ("migraine" -> "migraines", "SSRI" ->
    "SSRIs", an abbreviation in capitals)."""
    if word.endswith("y") and word[-2:-1].lower() not in ("", "a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    return word + "s"

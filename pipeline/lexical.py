"""Text prepared for the BM25 leg (R-REQ-6), the same way for documents and queries.

Milvus analyses the text with its standard analyzer; this module adds what that analyzer
lacks, as extra tokens:
- a domain dictionary keeps multi-word terms whole: every multi-word vocabulary name and
  label phrase found ("insulin glargine", "prescribing information") also appears as one
  joined token (``insulinglargine``);
- synonyms map to each other: every drug name found (brand, synonym) also appears as its
  canonical name, so "Tagrisso" and "osimertinib" meet;
- Greek letters meet their names (A-6): a text with ``TNF-α`` also carries ``alpha``, a
  query with ``TNF-alpha`` also asks for ``α``, so either spelling finds the other;
- the section title weighs ``title_weight`` times the body (repeated);
- ``minimum_should_match`` keeps only hits that contain that fraction of query terms;
- ``word_form`` (A-8) reads every word of both texts as its English lemma (``lemma``:
  simplemma's dictionary; ``dosing`` and ``doses`` meet ``dose``, ``effective`` stays) or
  its Snowball stem (``snowball``: Porter2, which also folds ``effective`` into
  ``effect``); ``as_written`` is the seed's. Milvus Lite accepts a ``stemmer`` filter in
  its analyser but does not apply it, so the text sent to it is normalised here.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata

import simplemma
import snowballstemmer

from pipeline.reversal import REVERSAL_WORDS, asks_for_reversal
from pipeline.settings import LexicalSettings
from pipeline.spelling_variants import default_spelling_variants
from pipeline.text import GREEK_LETTERS, GREEK_NAMES, query_terms, tokens
from pipeline.vocabulary import Vocabulary

__all__ = [
    "DOMAIN_PHRASES",
    "LEXICAL_TEXT_VERSION",
    "greek_variants",
    "lexical_document_text",
    "lexical_query_text",
    "meets_minimum_should_match",
    "word_forms",
]

#: Multi-word label terms kept whole besides vocabulary names (R-REQ-6).
DOMAIN_PHRASES: tuple[str, ...] = (
    "prescribing information",
    "drug label",
    "package leaflet",
    "side effects",
    "adverse reactions",
    "dosage and administration",
    "indications and usage",
    "boxed warning",
    "clinical trial",
    "overall survival",
    "progression-free survival",
    "mechanism of action",
    "drug interactions",
    "pregnancy and breast-feeding",
)
_PHRASE_RE = re.compile("|".join(rf"\b{re.escape(phrase)}\b" for phrase in DOMAIN_PHRASES), re.I)


def _joined(name: str) -> str:
    return "".join(tokens(name))


_GREEK_BY_NAME = {name: letter for letter, name in reversed(GREEK_LETTERS.items())}
_GREEK_CHAR_RE = re.compile("[" + "".join(GREEK_LETTERS) + "]", re.I)


def greek_variants(text: str) -> list[str]:
    """The other spelling of every Greek letter in ``text`` (A-6): the name of a letter
    written (``α`` -> ``alpha``) and the letter of a name written as a word or word part
    (``TNF-alpha`` -> ``α``), de-duplicated in order."""
    # re.I also matches look-alikes the table does not hold (the micro sign ``µ``
    # matches ``μ``): read each through NFKC, which maps them to the Greek letter.
    variants = [
        name
        for ch in _GREEK_CHAR_RE.findall(text)
        if (name := GREEK_LETTERS.get(unicodedata.normalize("NFKC", ch).lower()))
    ]
    for token in tokens(text) if not _GREEK_CHAR_RE.search(text) else ():
        for part in token.split("-"):
            if part in GREEK_NAMES:
                variants.append(_GREEK_BY_NAME[part])
    return list(dict.fromkeys(variants))


_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()  # a Snowball stemmer object keeps state while it works
_WORD_RE = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=1 << 17)
def _word_form(word: str, form: str) -> str:
    if form == "lemma":
        return simplemma.lemmatize(word, lang="en")
    if form == "snowball":
        with _STEMMER_LOCK:
            return _STEMMER.stemWord(word)
    return word


def word_forms(text: str, form: str) -> str:
    """``text`` with every run of letters lower-cased and read as its ``form`` (A-8):
    ``lemma`` (simplemma's English dictionary; a word it does not know, a drug name,
    stays), ``snowball`` (Porter2 stem, ``snowballstemmer``), ``as_written`` (unchanged
    text). Digits, punctuation and spacing stay, so the analyser splits the text as
    before: ``word_forms("Dosing: 2 doses", "lemma")`` -> ``"dose: 2 dose"``."""
    if form == "as_written":
        return text
    return _WORD_RE.sub(lambda match: _word_form(match.group(0).lower(), form), text)


def _dictionary_tokens(
    text: str,
    vocabulary: Vocabulary | None,
    synonyms: bool,
    per_occurrence: bool = False,
    correct_typos: bool | None = None,
    conditions: bool = False,
) -> list[str]:
    # per_occurrence: one token per hit, so that a synonym weighs what the name it stands
    # for weighs (BM25 term frequency); else each token once. A document is read as
    # written (correct_typos=False): a short chunk is not a query. conditions: a
    # condition's lay name or short form also stands for its own name (A-24, queries).
    extra = [_joined(match.group(0)) for match in _PHRASE_RE.finditer(text)]
    extra.extend(greek_variants(text))
    if vocabulary is not None:
        for match in vocabulary.find(text, correct_typos):
            if len(tokens(match.surface)) > 1:
                extra.append(_joined(match.surface))
            renamed = match.entity.is_drug or (
                conditions and match.entity.semantic_type == "disease"
            )
            if synonyms and renamed and match.surface.lower() != match.entity.canonical.lower():
                extra.append(match.entity.canonical.lower())
                if len(tokens(match.entity.canonical)) > 1:
                    extra.append(_joined(match.entity.canonical))
    found = [token for token in extra if token]
    return found if per_occurrence else list(dict.fromkeys(found))


#: Version of the indexed BM25 text's form; part of the ingest's content hash, so that a
#: new form re-writes stored chunks (2: dictionary and synonym tokens once per hit; 3: no
#: typo look-up in a short chunk).
#: ``word_form`` is part of the hash beside it (``pipeline.ingest.runner``).
LEXICAL_TEXT_VERSION = 3


def lexical_document_text(
    text: str,
    section_title: str = "",
    vocabulary: Vocabulary | None = None,
    settings: LexicalSettings | None = None,
) -> str:
    """The text the BM25 analyzer indexes for one chunk: the section title repeated
    ``title_weight`` times, the body, then dictionary and synonym tokens, one per hit in
    the title (``title_weight`` times) and the body (R-REQ-6): a leaflet that names
    Lynparza six times carries ``olaparib`` six times, as one naming olaparib does.
    Form :data:`LEXICAL_TEXT_VERSION`, words in ``settings.word_form`` (A-8)."""
    settings = settings or LexicalSettings()
    title = section_title.strip()
    parts = [title] * settings.title_weight if title else []
    parts.append(text)
    extra = _dictionary_tokens(title, vocabulary, settings.synonyms, True, correct_typos=False)
    extra *= settings.title_weight
    extra += _dictionary_tokens(text, vocabulary, settings.synonyms, True, correct_typos=False)
    if extra:
        parts.append(" ".join(extra))
    text = "\n".join(parts)
    return word_forms(text, settings.word_form)


def lexical_query_text(
    query: str, vocabulary: Vocabulary | None = None, settings: LexicalSettings | None = None
) -> str:
    """The BM25 query text: the query plus its dictionary and synonym tokens, each once
    (R-REQ-6); a question that asks what reverses a drug, or says an overdose and asks
    what treats it (A-34), also carries ``REVERSAL_WORDS`` (A-11,
    ``settings.reversal_words``), and each word spelled otherwise in the stored
    texts carries that spelling too (A-20, ``settings.spelling_variants``: ``tumor`` ->
    ``tumour``), and, with ``settings.condition_names`` (A-24, off by default), a
    condition named by a lay name or short form its own name (``hep C`` -> ``hepatitis
    C``). With a
    ``settings.word_form`` other than ``as_written`` (A-8) its words are read in that
    form, as the indexed text's are, and each word whose form differs follows once as
    written: an index in that form holds no such word (so it adds nothing there), and a
    store written before the setting changed
    still meets ``dosing`` until it is ingested again."""
    settings = settings or LexicalSettings()
    extra = _dictionary_tokens(
        query, vocabulary, settings.synonyms, conditions=settings.condition_names
    )
    if settings.reversal_words and asks_for_reversal(query):
        extra = list(dict.fromkeys([*extra, *REVERSAL_WORDS]))
    if settings.spelling_variants:
        extra = list(dict.fromkeys([*extra, *default_spelling_variants().terms(query)]))
    text = " ".join([query, *extra]) if extra else query
    form = settings.word_form
    if form == "as_written":
        return text
    words = dict.fromkeys(word.lower() for word in _WORD_RE.findall(text))
    differing = [word for word in words if _word_form(word, form) != word]
    return " ".join([word_forms(text, form), *differing])


def meets_minimum_should_match(query: str, text: str, ratio: float) -> bool:
    """True when at least ``ratio`` of the query's terms (stop words left out) occur in
    ``text`` (R-REQ-6 minimum-should-match); always True for ``ratio <= 0``."""
    if ratio <= 0:
        return True
    terms = query_terms(query)
    if not terms:
        return True
    words = set(tokens(text))
    return sum(1 for term in terms if term in words) / len(terms) >= ratio

"""British and American spellings of one word meet in BM25 (A-20): "diarrhea" finds the EMA
leaflets' "diarrhoea", "anaemia" the FDA labels' "anemia".

The EMA leaflets are in British spelling and the FDA labels in American. BM25 meets only
the form a question uses, so a question in the other spelling met neither the leaflet's
word nor its section: "tumor" missed "tumour", "hemophilia" "haemophilia".

Each word of a question (five letters or more) is read under the spelling rules below,
from British to American, and so is each shipped spelling word (the words of two or more
of the drug KB's leaflets and labels, not drug names: ``configs/vocabulary/
spelling_words.tsv.gz``); a spelling word that reads the same as the question's word, and
is not that word, is added to the BM25 query (``pipeline.lexical.lexical_query_text``;
``lexical.spelling_variants``). A rule that makes no spelling word adds nothing; a
knowledge base of other texts gets the drug KB's words only.

The rules, each only where the two spellings are the same word:
- ``ae`` between consonants (haem, paed, -aemia; not "aerosol", "bullae") and in
  ``phaeo``;
- ``oe`` at the start of the Greek stems oedem-, oesoph-, oestr- (at a word's start,
  after a consonant or a combining ``o``: "lymphoedema", "angiooedema"), in foet-,
  coel-, amoeb-, manoeuv-, and after ``rrh`` and ``pn`` (diarrhoea, dyspnoea,
  seborrhoeic); not "shoes", "poets", "thromboembolism";
- ``our`` at a stem's end (colour, tumour, behavioural; not "four", "course");
- ``tre`` and ``bre`` at a word's end (litre, centre, fibre);
- ``-ise``, ``-isation`` and ``-yse`` endings (hospitalised, analyse);
- ``sulph`` (sulphate), ``leuc`` (leucopenia), ``-otrophin`` (gonadotrophin), ``-ogue``
  (analogue), ``gramme``, ``aluminium``;
- a doubled ``l`` before ``-ed``, ``-ing``, ``-er`` in the verbs that double it
  (labelled, travelling, counselling).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache

from pipeline.text import fold
from pipeline.vocabulary_loader import shipped_spelling_words

__all__ = [
    "MIN_VARIANT_WORD",
    "SpellingVariants",
    "american_key",
    "american_phrase",
    "default_spelling_variants",
]

#: The shortest word read under the rules (letters).
MIN_VARIANT_WORD = 5

_C = "[b-df-hj-np-tv-z]"  # a consonant
_DOUBLED_L_STEMS = (
    "label", "travel", "counsel", "signal", "model", "cancel", "level", "fuel", "total",
    "channel", "tunnel", "marvel", "dial", "bevel", "equal", "pencil", "enamel",
)  # fmt: skip
_OUR_ENDINGS = "s|ed|ing|ite|ites|able|ful|less|al|ally|ation|ations|ant|ants|er|ers"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (rf"(?<={_C})ae(?={_C})(?!s$)", "e"),
        (r"phaeo", "pheo"),
        (rf"(?:^|(?<={_C})|(?<=o))(?<!gastr)oe(?=dem|soph|str)", "e"),
        (r"(?<=f)oe(?=t)|(?<=c)oe(?=l)|(?<=am)oe(?=b)|(?<=man)oe(?=uv)", "e"),
        (r"(?<=rrh|.pn)oe", "e"),
        (rf"(?<=\w\w)our(?=(?:{_OUR_ENDINGS})?$)", "or"),
        (r"(?<=\w\w)([tb])re(?=s?$)", r"\1er"),
        (r"(?<=\w{3})is(?=(?:e|es|ed|ing|er|ers|ation|ations)$)", "iz"),
        (r"(?<=\w{2})ys(?=(?:e|es|ed|ing|er|ers)$)", "yz"),
        (r"sulph", "sulf"),
        (r"leuc(?=o)", "leuk"),
        (r"(?<=o)trophin", "tropin"),
        (r"aluminium", "aluminum"),
        (r"(?<=\w{3})ogue(?=s?$)", "og"),
        (r"gramme", "gram"),
        (rf"({'|'.join(_DOUBLED_L_STEMS)})l(?=(?:ed|ing|er|ers)$)", r"\1"),
    )
)
_WORD_RE = re.compile(rf"[^\W\d_]{{{MIN_VARIANT_WORD},}}")


def american_key(word: str) -> str:
    """``word`` (case-folded) in American spelling by the rules above: ``diarrhoea`` ->
    ``diarrhea``, ``haemophilia`` -> ``hemophilia``, ``labelled`` -> ``labeled``; a word
    no rule touches is returned folded."""
    key = fold(word)
    for pattern, replacement in _RULES:
        key = pattern.sub(replacement, key)
    return key


_LETTERS_RE = re.compile(r"[^\W\d_]+")


def american_phrase(text: str) -> str:
    """``text`` with each run of letters as :func:`american_key` gives it (folded, in
    American spelling), everything between the runs as written: "Travellers' diarrhoea"
    -> "travelers' diarrhea", "Gastro-oesophageal" -> "gastro-esophageal". Only the
    letters are folded: fold ``text`` first for a key that reads curly apostrophes,
    dashes and Greek letters as ``pipeline.text.fold`` does."""
    return _LETTERS_RE.sub(lambda word: american_key(word.group(0)), text)


class SpellingVariants:
    """The stored words by their American key (A-20).

    Args:
        stored_words: folded words the stored texts use (the spelling words of two or
            more products, ``configs/vocabulary/spelling_words.tsv.gz``).
    """

    def __init__(self, stored_words: Iterable[str]) -> None:
        self._by_key: dict[str, list[str]] = defaultdict(list)
        for word in stored_words:
            self._by_key[american_key(word)].append(word)

    def variants(self, word: str) -> list[str]:
        """The stored words spelled otherwise than ``word`` that are the same word
        (``tumor`` -> ``["tumour"]``), or ``[]``."""
        folded = fold(word)
        if len(folded) < MIN_VARIANT_WORD:
            return []
        return [w for w in self._by_key.get(american_key(folded), ()) if w != folded]

    def terms(self, text: str) -> list[str]:
        """The other spellings of the words of ``text``, de-duplicated in order."""
        found = (v for word in _WORD_RE.findall(text) for v in self.variants(word))
        return list(dict.fromkeys(found))


@lru_cache(maxsize=1)
def default_spelling_variants() -> SpellingVariants:
    """The spelling variants of the shipped spelling words, built once per process."""
    return SpellingVariants(w for w, count in shipped_spelling_words().items() if count > 0)

"""Text normalisation (A-6): Unicode / Greek folding and the vocabulary's match keys.
Re-exported by ``pipeline.text``; the one normalisation path for vocabulary names,
queries, BM25 terms and highlights:
- Unicode NFKC (full-width letters, ligatures, the micro sign) and case folding;
- Greek letters to their names (``α`` -> ``alpha``, ``β`` -> ``beta``, ...), and a Latin
  Greek name glued to a symbol split off (``TNFalpha`` -> ``TNF alpha``);
- every dash / hyphen variant is one separator, so ``TNF-α``, ``TNF α``, ``TNFα`` and
  ``TNF-alpha`` meet.

``fold`` is the light form used for word tokens (hyphenated words stay one token);
``match_key`` / ``keyed`` is the form the vocabulary matches on, with offsets back to
the original text: separators become one space and letters and digits are split
(``IL1β``, ``IL-1β`` and ``IL-1 beta`` all read ``il 1 beta``).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "APOSTROPHES",
    "GREEK_LETTERS",
    "GREEK_NAMES",
    "KeyedText",
    "fold",
    "keyed",
    "match_key",
]

#: Greek letter (lower case, after NFKC) -> its name.
GREEK_LETTERS: dict[str, str] = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "ο": "omicron",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "ς": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
}
GREEK_NAMES: frozenset[str] = frozenset(GREEK_LETTERS.values())
#: Name -> letter (the reverse map, for highlighting ``alpha`` where the text has ``α``).
_GREEK_BY_NAME: dict[str, str] = {}
for _letter, _name in GREEK_LETTERS.items():
    _GREEK_BY_NAME.setdefault(_name, _letter)

#: Greek names that are split off a symbol they are glued to (``TNFalpha``, ``IL1beta``,
#: ``PI3Kdelta``): the longer names only, so that words are not cut (``Beta``, ``eta``).
_GLUED_GREEK_RE = re.compile(
    r"(?<=[A-Z0-9])(alpha|beta|gamma|delta|epsilon|kappa|lambda|sigma|theta|omega|zeta)"
    r"(?![^\W\d_])"
)
#: Greek names written in lower case when attached to a symbol in a case-sensitive key
#: (``IL1-BETA`` reads ``IL 1 beta``): the longer names, which are not words of their own.
_ATTACHED_GREEK_NAMES: frozenset[str] = frozenset(
    (
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "kappa",
        "lambda",
        "sigma",
        "theta",
        "omega",
        "zeta",
    )
)
#: The characters a match key reads as an apostrophe ("'"); NFKC also folds the
#: full-width U+FF07 to it.
APOSTROPHES = "'\u2018\u2019\u02bc\u2032"
#: Every dash and hyphen variant (NFKC keeps them apart).
_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_DASH_TABLE = {ord(ch): "-" for ch in _DASHES[1:]}
_DASH_TABLE.update({ord(ch): "'" for ch in APOSTROPHES})
_DASH_TABLE[0x00AD] = None  # soft hyphen
_GREEK_CHAR_CLASS = "\u0370-\u03ff\u1f00-\u1fff"
_GREEK_RUN_RE = re.compile(f"[{_GREEK_CHAR_CLASS}]")
_MARK = "\x00"
_GLUE_MARK_RE = re.compile(rf"(?<=[^\W_]){_MARK}(?=[^\W_])")


def _greek_name(char: str) -> str | None:
    name = GREEK_LETTERS.get(char.lower())
    if name is not None:
        return name
    base = unicodedata.normalize("NFD", char)[:1].lower()  # accented forms (ά, ὰ, ...)
    return GREEK_LETTERS.get(base)


def _greek_to_names(text: str) -> str:
    if not _GREEK_RUN_RE.search(text):
        return text

    def name_of(match: re.Match[str]) -> str:
        name = _greek_name(match.group(0))
        return f"{_MARK}{name}{_MARK}" if name else match.group(0)

    marked = _GREEK_RUN_RE.sub(name_of, text)
    return _GLUE_MARK_RE.sub("-", marked).replace(_MARK, "")


def fold(text: str) -> str:
    """The text as word tokens read it (A-6): NFKC, dashes as ``-`` and curly apostrophes
    as ``'``, Greek letters as names (joined to a neighbouring letter or digit by ``-``:
    ``TNFα`` -> ``tnf-alpha``), a Greek name glued to a symbol split off
    (``TNFalpha`` -> ``tnf-alpha``), case folded."""
    if not text:
        return ""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_DASH_TABLE)
        text = _greek_to_names(text)
    text = _GLUED_GREEK_RE.sub(r"-\1", text)
    return text.casefold()


# -- the vocabulary's match key, with offsets -----------------------------------------

_KEY_TOKEN_RE = re.compile(
    rf"(?P<g>[{_GREEK_CHAR_CLASS}\u00b5])"
    rf"|(?P<a>(?:[^\W\d_{_GREEK_CHAR_CLASS}\u00b5]|[\u0300-\u036f])+)"
    r"|(?P<d>\d+)"
    rf"|(?P<s>[\s{re.escape(_DASHES)}]+)"
    r"|(?P<o>.)",
    re.S,
)
_PLAIN_NAME_RE = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*")
_GLUED_SPLIT_RE = re.compile(
    r"(.*[A-Z])(alpha|beta|gamma|delta|epsilon|kappa|lambda|sigma|theta|omega|zeta)"
)


@dataclass(frozen=True)
class KeyedText:
    """A text in match-key form (``key``) with, per key character, the ``[start, end)``
    span of the source token it came from, so a match in ``key`` maps back to the text."""

    text: str
    key: str
    starts: Sequence[int]
    ends: Sequence[int]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Source span of ``key[start:end]`` (``end > start``)."""
        return self.starts[start], self.ends[end - 1]


class _KeyBuilder:
    __slots__ = ("casefold", "chars", "ends", "starts")

    def __init__(self, casefold: bool) -> None:
        self.casefold = casefold
        self.chars: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []

    def emit(self, piece: str, start: int, end: int) -> None:
        if self.casefold:
            piece = piece.casefold()
        if not piece:
            return
        self.chars.append(piece)
        self.starts.extend([start] * len(piece))
        self.ends.extend([end] * len(piece))

    def space(self, start: int, end: int) -> None:
        if self.chars and self.chars[-1][-1:] != " ":
            self.chars.append(" ")
            self.starts.append(start)
            self.ends.append(end)

    def result(self, text: str) -> KeyedText:
        return KeyedText(text, "".join(self.chars), self.starts, self.ends)


def _nfkc(piece: str) -> str:
    return piece if piece.isascii() else unicodedata.normalize("NFKC", piece)


def _build_keys(text: str, both: bool) -> tuple[KeyedText, KeyedText | None]:
    sensitive = _KeyBuilder(casefold=False)
    insensitive = _KeyBuilder(casefold=True) if both else None
    builders = (sensitive, insensitive) if insensitive is not None else (sensitive,)
    prev = ""  # kind of the previous token: a(lpha) d(igit) g(reek) s(eparator) o(ther)
    prev_dash = False
    for match in _KEY_TOKEN_RE.finditer(text):
        kind = match.lastgroup or "o"
        raw = match.group()
        start, end = match.span()
        if kind == "s":
            for builder in builders:
                builder.space(start, end)
            prev_dash = any(ch in _DASHES for ch in raw)
            prev = "s"
            continue
        if kind == "g":
            name = _greek_name(_nfkc(raw)) or raw
            for builder in builders:
                if prev in ("a", "d", "g"):
                    builder.space(start, end)
                builder.emit(name, start, end)
            prev = "g"
            continue
        if kind == "d":
            digits = _nfkc(raw)
            for builder in builders:
                if prev in ("a", "g"):
                    builder.space(start, end)
                builder.emit(digits, start, end)
            prev = "d"
            continue
        if kind == "o":
            other = _nfkc(raw).translate(_DASH_TABLE)
            for builder in builders:
                builder.emit(other, start, end)
            prev = "o"
            continue
        letters = _nfkc(raw)
        glued = _GLUED_SPLIT_RE.fullmatch(letters)
        if glued and raw.isascii():
            pieces = [
                (glued.group(1), start, start + len(glued.group(1)), False),
                (glued.group(2), start + len(glued.group(1)), end, True),
            ]
        else:
            pieces = [(letters, start, end, False)]
        for index, (piece, piece_start, piece_end, split) in enumerate(pieces):
            # A Greek name attached to a symbol reads in lower case (IL1-BETA, TNF-Alpha).
            if piece.lower() in _ATTACHED_GREEK_NAMES and (
                split or prev == "d" or (prev == "s" and prev_dash)
            ):
                piece = piece.lower()
            for builder in builders:
                if index > 0 or prev in ("d", "g"):
                    builder.space(piece_start, piece_end)
                builder.emit(piece, piece_start, piece_end)
            prev = "a"
    return sensitive.result(text), (insensitive.result(text) if insensitive else None)


def keyed(text: str) -> tuple[KeyedText, KeyedText]:
    """``(as written, case folded)`` match keys of ``text`` with offsets (A-6): NFKC,
    Greek letters as names, every run of spaces and dashes one space, a space between
    letters and digits and around Greek names. ``TNF-α``, ``TNFα``, ``TNF alpha`` and
    ``TNF-alpha`` all read ``tnf alpha``; ``IL-1β`` and ``IL1-beta`` read ``il 1 beta``.
    """
    if text.isascii():
        return _ascii_keys(text)
    sensitive, insensitive = _build_keys(text, both=True)
    assert insensitive is not None
    return sensitive, insensitive


_GLUED_NAMES = "|".join(sorted(_ATTACHED_GREEK_NAMES, key=len, reverse=True))
#: Where the ASCII key differs from the text once dashes and other white space read as
#: spaces: a run of spaces (one space), or a letter-digit boundary or a Greek name glued
#: to a capital (a space inserted after the character matched).
_ASCII_EDIT_RE = re.compile(
    r" {2,}|[A-Za-z](?=\d)|\d(?=[A-Za-z])" rf"|[A-Z](?=(?:{_GLUED_NAMES})(?![A-Za-z]))"
)
_ASCII_SPACES = str.maketrans({ch: " " for ch in "-\t\n\r\f\v\x1c\x1d\x1e\x1f"})


@dataclass(frozen=True)
class _SegmentedKeyText(KeyedText):
    """A key whose characters map to the text by segments: a copied run (``width`` 0)
    maps one to one, an edit (one space for a run of spaces, or an inserted space) maps
    to its source span."""

    segment_keys: Sequence[int] = ()
    segment_sources: Sequence[int] = ()
    segment_widths: Sequence[int] = ()

    def _source(self, index: int) -> tuple[int, int]:
        segment = bisect.bisect_right(self.segment_keys, index) - 1
        source = self.segment_sources[segment]
        width = self.segment_widths[segment]
        if width < 0:  # copied run
            position = source + index - self.segment_keys[segment]
            return position, position + 1
        return source, source + max(width, 1)

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self._source(start)[0], self._source(end - 1)[1]


def _ascii_keys(text: str) -> tuple[KeyedText, KeyedText]:
    # The keys of _build_keys for ASCII text, built segment by segment with regular
    # expressions (documents are keyed at ingest; a character loop is ten times slower).
    source = text
    if any(name in text.lower() for name in _ATTACHED_GREEK_NAMES):
        source = _ASCII_ATTACHED_GREEK_TEXT_RE.sub(lambda m: m.group(1) + m.group(2).lower(), text)
    spaced = source.translate(_ASCII_SPACES)
    pieces: list[str] = []
    keys: list[int] = []
    sources: list[int] = []
    widths: list[int] = []
    length = 0
    position = 0
    for match in _ASCII_EDIT_RE.finditer(spaced):
        start, end = match.span()
        if spaced[start] != " ":  # a space goes in after the character matched
            start = end = match.end()
        if start > position:
            keys.append(length)
            sources.append(position)
            widths.append(-1)
            pieces.append(spaced[position:start])
            length += start - position
        if pieces and pieces[-1][-1:] != " ":
            keys.append(length)
            sources.append(start)
            widths.append(end - start)
            pieces.append(" ")
            length += 1
        position = end
    if position < len(spaced):
        keys.append(length)
        sources.append(position)
        widths.append(-1)
        pieces.append(spaced[position:])
    key = "".join(pieces)
    segments = {"segment_keys": keys, "segment_sources": sources, "segment_widths": widths}
    return (
        _SegmentedKeyText(text, key, (), (), **segments),
        _SegmentedKeyText(text, key.lower(), (), (), **segments),
    )


_GREEK_NAME_ALTERNATION = _GLUED_NAMES
_ASCII_GLUED_RE = re.compile(
    r"(?<=[A-Z])(alpha|beta|gamma|delta|epsilon|kappa|lambda|sigma|theta|omega|zeta)(?![A-Za-z])"
)
_ASCII_ATTACHED_GREEK_RE = re.compile(
    rf"(?:(?<=\d)|(?<=-)|(?<=-\s))({_GREEK_NAME_ALTERNATION})(?![A-Za-z])", re.I
)
_ASCII_SEPARATORS_RE = re.compile(r"[\s-]+")
#: A Greek name attached to a digit or after a dash reads in lower case (IL1-BETA).
_ASCII_ATTACHED_GREEK_TEXT_RE = re.compile(
    rf"(\d|-[\s-]*|\s[\s-]*-[\s-]*)({_GREEK_NAME_ALTERNATION})(?![A-Za-z])", re.I
)
_ASCII_LETTER_DIGIT_RE = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def _ascii_match_key(name: str, casefold: bool) -> str:
    # The same key as _build_keys for ASCII text, with regular expressions (names are
    # keyed by the hundred thousand at load time).
    if _PLAIN_NAME_RE.fullmatch(name):
        if name.islower():
            return name
        name = _ASCII_GLUED_RE.sub(r" \1", name)
        return name.lower() if casefold else name
    name = _ASCII_GLUED_RE.sub(r" \1", name)
    if not casefold:
        name = _ASCII_ATTACHED_GREEK_RE.sub(lambda m: m.group(1).lower(), name)
    name = _ASCII_SEPARATORS_RE.sub(" ", name)
    name = _ASCII_LETTER_DIGIT_RE.sub(" ", name).strip()
    return name.lower() if casefold else name


def match_key(name: str, casefold: bool = True) -> str:
    """The match key of a vocabulary name (see ``keyed``), stripped."""
    name = name.strip()
    if name.isascii():
        return _ascii_match_key(name, casefold)
    sensitive, insensitive = _build_keys(name, both=casefold)
    key = insensitive.key if (casefold and insensitive is not None) else sensitive.key
    return key.strip()

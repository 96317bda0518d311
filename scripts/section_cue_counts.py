"""For each lay cue of A-18 (``pipeline.section_lay_cues``), how many stored EMA leaflet
sections its pattern matches, by section number (1 what it is for, 2 before you take it,
3 how to take it, 4 side effects, 5 storage, 6 contents): a pattern made of the leaflets'
own words is kept only where most of its matches are the section it cues. Patterns of a
question's own form ("does X cause") match few or no leaflet sections.

With ``--side-effect-words``: for each symptom word of A-21
(``pipeline.section_symptoms.SIDE_EFFECT_WORDS``), how many leaflet sections use its
lemma, by section number; each is kept where section 4 holds at least
``MIN_SECTION4_LEAFLETS`` of them and ``MIN_SECTION4_SHARE`` of all.

Usage: ``python scripts/section_cue_counts.py [--data ../shared/data]
[--side-effect-words]`` (prints a Markdown table).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from pipeline.section_symptoms import SIDE_EFFECT_WORDS, symptom_lemmas
from pipeline.section_vocabulary import SECTION_TABLE

ROOT = Path(__file__).resolve().parent.parent
_NUMBER = re.compile(r"(\d)\.")
#: A-21's rule for a symptom word: leaflets that use it in section 4, and the share of all
#: leaflet sections using it that are section 4.
MIN_SECTION4_LEAFLETS = 20
MIN_SECTION4_SHARE = 0.6


def section_texts(data: Path) -> list[tuple[str, str]]:
    """``(section number, text)`` of every numbered EMA leaflet section."""
    rows = []
    path = data / "drug_labels" / "ema_leaflet_sections.jsonl"
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            number = _NUMBER.match(row["section"])
            if number:
                rows.append((number.group(1), row["text"]))
    return rows


def cue_counts(texts: list[tuple[str, str]]) -> list[tuple[str, str, Counter[str]]]:
    """``(section cued, pattern, matches per section number)`` per lay cue."""
    out = []
    for row in SECTION_TABLE:
        for cue in row.lay_cues:
            pattern = re.compile(rf"\b(?:{cue})\b", re.IGNORECASE)
            counts = Counter(number for number, text in texts if pattern.search(text))
            out.append((row.section, cue, counts))
    return out


def side_effect_word_counts(texts: list[tuple[str, str]]) -> dict[str, Counter[str]]:
    """Sections (by number) whose text uses each ``SIDE_EFFECT_WORDS`` lemma (simplemma,
    English), per word."""
    counts: dict[str, Counter[str]] = {word: Counter() for word in SIDE_EFFECT_WORDS}
    for number, text in texts:
        for word in symptom_lemmas(text):
            counts[word][number] += 1
    return counts


_NUMBERS = {
    "indications_and_usage": "1",
    "warnings": "2",
    "dosage_and_administration": "3",
    "adverse_reactions": "4",
    "storage": "5",
    "description": "6",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--side-effect-words", action="store_true")
    args = parser.parse_args()
    if args.side_effect_words:
        print("| word | section 4 / all sections | 1 | 2 | 3 | 4 | 5 | 6 |")
        print("|---|---|---|---|---|---|---|---|")
        counts = side_effect_word_counts(section_texts(args.data))
        for word, by_section in sorted(counts.items()):
            cells = " | ".join(str(by_section[n]) for n in "123456")
            print(f"| {word} | {by_section['4']} / {sum(by_section.values())} | {cells} |")
        return
    print("| section | pattern | its section / all matches | 1 | 2 | 3 | 4 | 5 | 6 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for section, cue, counts in cue_counts(section_texts(args.data)):
        own = counts[_NUMBERS[section]]
        total = sum(counts.values())
        cells = " | ".join(str(counts[n]) for n in "123456")
        shown = cue.replace("|", "\\|")  # a Markdown table cell
        print(f"| {section} | `{shown}` | {own} / {total} | {cells} |")


if __name__ == "__main__":
    main()

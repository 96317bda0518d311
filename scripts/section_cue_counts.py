"""For each lay cue of A-18 (``pipeline.section_lay_cues``), how many stored EMA leaflet
sections its pattern matches, by section number (1 what it is for, 2 before you take it,
3 how to take it, 4 side effects, 5 storage, 6 contents): a pattern made of the leaflets'
own words is kept only where most of its matches are the section it cues. Patterns of a
question's own form ("does X cause") match few or no leaflet sections.

Usage: ``python scripts/section_cue_counts.py [--data ../shared/data]`` (prints a Markdown
table).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from pipeline.section_vocabulary import SECTION_TABLE

ROOT = Path(__file__).resolve().parent.parent
_NUMBER = re.compile(r"(\d)\.")


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
    args = parser.parse_args()
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

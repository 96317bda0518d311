"""Vocabulary precision (issue 13 acceptance): on sentences sampled from the stored EMA
leaflets, the share of matched entities that are false (a number, a unit, a common word,
a clinical abbreviation, a wrong sense), before and after the A-6 vocabulary.

Two figures per side:
- ``flagged``: matches an automatic rule calls false (the surface is a number, percentage,
  dose, unit or single letter; a salt word alone; a clinical abbreviation; a common
  English word, zipf >= 3.0, that is not a disease, a curated entity or a drug whose
  common sense is the drug). A floor, it cannot see a wrong sense;
- ``hand-checked``: a seeded sample of 50 matches per side, labelled by reading each
  sentence (labels in ``scripts/vocabulary_precision_labels.json``, keyed by sentence
  index, offset and surface); the report lists them.

"Before" is the matcher and vocabulary file of a git revision (``--before-rev``, default
the commit before A-6), loaded from ``git show``; "after" is the working tree.

Usage: ``python scripts/vocabulary_precision.py [--data ../shared/data] [--sentences 2000]
[--before-rev 979265e] [--out bench/latest/vocabulary_precision.md]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wordfreq import zipf_frequency

from pipeline.vocabulary import (
    CLINICAL_ABBREVIATIONS,
    SALT_FORMS,
    Vocabulary,
    name_filter_reason,
)

ROOT = Path(__file__).resolve().parent.parent

LABELS = Path(__file__).with_name("vocabulary_precision_labels.json")
BEFORE_REV = "979265e"
SAMPLE_SEED = 13
HAND_SAMPLE = 50
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
#: One-word names whose common sense is the drug (see scripts/build_vocabulary.py).
_DRUG_SENSE = {
    "insulin", "aspirin", "morphine", "caffeine", "nicotine", "alcohol", "ethanol",
    "testosterone", "estrogen", "oestrogen", "progesterone", "lithium", "melatonin",
}  # fmt: skip


@dataclass(frozen=True)
class Hit:
    sentence: int
    start: int
    surface: str
    canonical: str
    semantic_type: str
    curated: bool

    @property
    def key(self) -> str:
        return f"{self.sentence}|{self.start}|{self.surface}"


def sample_sentences(data: Path, count: int) -> list[str]:
    """``count`` sentences (30-400 characters) drawn with a fixed seed from the leaflets."""
    sentences: list[str] = []
    with open(data / "drug_labels" / "ema_leaflet_sections.jsonl", encoding="utf-8") as handle:
        for line in handle:
            for sentence in _SENTENCE_RE.split(json.loads(line)["text"]):
                if 30 <= len(sentence) <= 400:
                    sentences.append(sentence.strip())
    return random.Random(SAMPLE_SEED).sample(sentences, count)


def load_before(rev: str) -> Any:
    """The vocabulary module and file of ``rev`` (a module of its own, not this tree's)."""
    folder = Path(tempfile.mkdtemp(prefix="vocabulary-before-"))
    source = subprocess.run(
        ["git", "show", f"{rev}:pipeline/vocabulary.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    data = subprocess.run(
        ["git", "show", f"{rev}:configs/vocabulary/biomed_vocabulary.jsonl.gz"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    (folder / "vocabulary_before.py").write_bytes(source)
    (folder / "vocabulary.jsonl.gz").write_bytes(data)
    spec = importlib.util.spec_from_file_location(
        "vocabulary_before", folder / "vocabulary_before.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vocabulary_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.Vocabulary.load(folder / "vocabulary.jsonl.gz")


def hits(vocabulary: Any, sentences: list[str]) -> list[Hit]:
    found = []
    for index, sentence in enumerate(sentences):
        for match in vocabulary.find(sentence):
            entity = match.entity
            found.append(
                Hit(
                    index,
                    match.start,
                    match.surface,
                    entity.canonical,
                    entity.semantic_type,
                    bool(entity.related_drugs or entity.pathways),
                )
            )
    return found


def flag(hit: Hit) -> str | None:
    """Why an automatic rule calls ``hit`` false, or None."""
    surface = hit.surface.strip()
    reason = name_filter_reason(surface)
    if reason in ("number", "percentage", "dose", "unit", "single letter"):
        return reason
    if surface.lower() in SALT_FORMS:
        return "salt word alone"
    if surface.upper() in CLINICAL_ABBREVIATIONS and surface.isupper():
        return "clinical abbreviation"
    if (
        surface.isalpha()
        and not surface.isupper()
        and hit.semantic_type not in ("disease", "class")
        and not hit.curated
        and surface.lower() not in _DRUG_SENSE
        and zipf_frequency(surface.lower(), "en") >= 3.0
    ):
        return "common word"
    return None


def summarise(found: list[Hit]) -> dict[str, Any]:
    reasons: dict[str, int] = {}
    for hit in found:
        reason = flag(hit)
        if reason:
            reasons[reason] = reasons.get(reason, 0) + 1
    flagged = sum(reasons.values())
    return {
        "matches": len(found),
        "flagged": flagged,
        "flagged_share": flagged / len(found) if found else 0.0,
        "by_reason": dict(sorted(reasons.items(), key=lambda item: -item[1])),
    }


def hand_sample(found: list[Hit], side: str) -> list[Hit]:
    return random.Random(f"{SAMPLE_SEED}-{side}").sample(found, min(HAND_SAMPLE, len(found)))


def report(
    sentences: list[str],
    sides: dict[str, list[Hit]],
    labels: dict[str, dict[str, str]],
) -> tuple[str, dict[str, Any]]:
    lines = [
        "# Vocabulary precision",
        "",
        f"{len(sentences)} sentences sampled (seed {SAMPLE_SEED}) from "
        "`drug_labels/ema_leaflet_sections.jsonl`; every entity match counted.",
        "",
        "| side | matches | flagged false (automatic) | hand-checked false (of 50) |",
        "|---|---|---|---|",
    ]
    figures: dict[str, Any] = {}
    samples: dict[str, list[tuple[Hit, str]]] = {}
    for side, found in sides.items():
        summary = summarise(found)
        picked = hand_sample(found, side)
        side_labels = labels.get(side, {})
        labelled = [(hit, side_labels.get(hit.key, "unlabelled")) for hit in picked]
        checked = [label for _, label in labelled if label != "unlabelled"]
        false = sum(1 for label in checked if label.startswith("false"))
        summary["hand_checked"] = len(checked)
        summary["hand_false"] = false
        summary["hand_false_share"] = false / len(checked) if checked else None
        figures[side] = summary
        samples[side] = labelled
        hand = f"{false}/{len(checked)} = {false / len(checked):.1%}" if checked else "-"
        lines.append(
            f"| {side} | {summary['matches']} | {summary['flagged']} "
            f"({summary['flagged_share']:.1%}) | {hand} |"
        )
    lines.append("")
    for side, summary in figures.items():
        lines.append(f"Automatic flags, {side}: {json.dumps(summary['by_reason'])}")
    for side, labelled in samples.items():
        lines += [
            "",
            f"## Hand-checked sample, {side}",
            "",
            "| # | surface | entity (type) | label | sentence |",
            "|---|---|---|---|---|",
        ]
        for number, (hit, label) in enumerate(labelled, start=1):
            sentence = sentences[hit.sentence].replace("|", "/")
            if len(sentence) > 160:
                left = max(0, hit.start - 70)
                sentence = ("…" if left else "") + sentence[left : left + 160] + "…"
            lines.append(
                f"| {number} | {hit.surface} | {hit.canonical} ({hit.semantic_type}) | "
                f"{label} | {sentence} |"
            )
    return "\n".join(lines) + "\n", figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--before-rev", default=BEFORE_REV)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "latest" / "vocabulary_precision.md"
    )
    parser.add_argument(
        "--dump-sample", action="store_true", help="print the samples as JSON for labelling"
    )
    args = parser.parse_args()
    sentences = sample_sentences(args.data, args.sentences)
    sides = {
        "before": hits(load_before(args.before_rev), sentences),
        "after": hits(Vocabulary.load(), sentences),
    }
    if args.dump_sample:
        for side, found in sides.items():
            for hit in hand_sample(found, side):
                print(
                    json.dumps(
                        {
                            "side": side,
                            "key": hit.key,
                            "entity": hit.canonical,
                            "type": hit.semantic_type,
                            "sentence": sentences[hit.sentence],
                        },
                        ensure_ascii=False,
                    )
                )
        return
    labels = json.loads(LABELS.read_text(encoding="utf-8")) if LABELS.exists() else {}
    text, figures = report(sentences, sides, labels)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(json.dumps(figures, indent=1))
    print(f"report: {args.out}")


if __name__ == "__main__":
    main()

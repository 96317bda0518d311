"""Drug label readers: EMA package leaflet sections and FDA "Indications and Usage".

Document names carry the product and its active substance
(``Tagrisso (osimertinib) — EMA package leaflet``) so name look-ups (R-SUP-2) and
evaluation by document name work. Sources: EMA product information (reproduction
authorised with source acknowledged); FDA structured product labels (public domain).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pipeline.ingest.records import SourceRecord, read_jsonl
from pipeline.ingest.sections import heading_number, leaflet_section_numbers
from pipeline.scoring import drug_key
from pipeline.vocabulary import Vocabulary

__all__ = [
    "LOCAL_REPRESENTATIVES_HEADING",
    "active_substances",
    "is_drug_class",
    "read_ema_leaflets",
    "read_fda_indications",
    "split_local_representatives",
]

_ACTIVE_RE = re.compile(r"contains? (?:the )?active substances? ([^.;]+)", re.I)
# "osimertinib, which belongs to a group of medicines called ..." ends the substances.
_CLAUSE_END_RE = re.compile(r",?\s+(?:which|that|a |an |is |are |belongs?|known as)\b", re.I)
_DRUG_CLASS_RE = re.compile(
    r"(?:inhibitors|agents|antagonists|agonists|blockers|antibodies|medicines|drugs|vaccines|"
    r"hormones|analogues|analogs)$",
    re.I,
)


def is_drug_class(name: str) -> bool:
    """True for class names the drug table lists beside substances ("protein kinase
    inhibitors")."""
    return bool(_DRUG_CLASS_RE.search(name.strip()))


def active_substances(product: str, first_section: str, vocabulary: Vocabulary) -> list[str]:
    """Active substances of a product: what its first leaflet section says it contains (at
    most 3), then the drug the vocabulary reads the product's name as, where that is
    another name; with none said, what the vocabulary reads the name as. A question
    naming the product is read the same way and must meet its own leaflet (Cimzia is
    ``certolizumab`` in the vocabulary and ``certolizumab pegol`` in its leaflet; Zubsolv
    ``buprenorphine/naloxone`` and ``buprenorphine``)."""
    match = _ACTIVE_RE.search(first_section)
    window = match.group(1) if match else first_section[:300]
    window = _CLAUSE_END_RE.split(window, maxsplit=1)[0]
    found = [
        d
        for d in vocabulary.match_drug_entities(window, correct_typos=False)
        if d.lower() != product.lower() and not is_drug_class(d)
    ]
    named = [
        d
        for d in vocabulary.match_drug_entities(product, correct_typos=False)
        if not is_drug_class(d)
    ]
    chosen = found[:3] + named[:1] if found else named[:3]
    # one spelling per drug: "sofosbuvir, velpatasvir, and voxilaprevir" adds nothing to
    # the three substances the leaflet names
    unique: dict[str, str] = {}
    for drug in chosen:
        unique.setdefault(drug_key(drug), drug)
    return list(unique.values())


#: Heading of the part of section 6 that lists the holder's local representatives (A-9);
#: ``canonical_section`` reads it as ``contacts``.
LOCAL_REPRESENTATIVES_HEADING = "Local representatives of the Marketing Authorisation Holder"
# The QRD template's sentence that opens the list (742 of the 953 leaflets have one).
_REPRESENTATIVES_RE = re.compile(
    r"For any information about this medicine,? please contact the local representatives? ",
    re.I,
)


def split_local_representatives(text: str) -> tuple[str, str]:
    """``(before, list)``: a section 6 text cut where the QRD sentence "For any
    information about this medicine, please contact the local representative ..." opens
    the list of addresses and phone numbers (A-9); ``(text, "")`` without one. The
    holder and manufacturer paragraph stays before the cut."""
    match = _REPRESENTATIVES_RE.search(text)
    if match is None:
        return text, ""
    return text[: match.start()].rstrip(), text[match.start() :]


def _product_title(product: str) -> str:
    return " ".join(part.capitalize() for part in re.split(r"[-_\s]+", product) if part)


def read_ema_leaflets(path: str | Path, vocabulary: Vocabulary) -> Iterator[SourceRecord]:
    """Yield ``leaflet`` records, one per section, grouped by product (file order).

    Raises:
        ValueError: a line is not JSON or lacks ``drug`` / ``section`` / ``text``.
    """
    path = Path(path)
    products: dict[str, list[dict]] = {}
    for line_number, row in read_jsonl(path):
        try:
            products.setdefault(str(row["drug"]), []).append(
                {
                    "section": str(row["section"]),
                    "text": str(row["text"]),
                    "source": str(row.get("source_file") or ""),
                }
            )
        except KeyError as error:
            raise ValueError(f"{path}:{line_number}: bad leaflet row ({error})") from error
    for product, sections in products.items():
        first = next((s["text"] for s in sections if s["section"].startswith("1.")), "")
        drugs = active_substances(product, first, vocabulary)
        title = _product_title(product)
        name = (
            f"{title} ({', '.join(drugs)}) — EMA package leaflet"
            if drugs
            else (f"{title} — EMA package leaflet")
        )
        headings = _realigned_headings(sections)
        parts: list[tuple[str, str, str]] = []  # (heading, text, source)
        contacts: list[tuple[str, str, str]] = []
        for heading, section in zip(headings, sections, strict=True):
            text, listed = section["text"], ""
            if heading_number(heading) == 6:
                text, listed = split_local_representatives(text)
            parts.append((heading, text, section["source"]))
            if listed:
                contacts.append((LOCAL_REPRESENTATIVES_HEADING, listed, section["source"]))
        # The list goes last, so every other section keeps its index (and chunk ids).
        for index, (heading, text, source) in enumerate(parts + contacts):
            yield SourceRecord(
                document_id=f"ema-{product}",
                document_name=name,
                title=title,
                text=text,
                section_title=heading,
                section_index=index,
                kind="leaflet",
                source_uri=f"https://www.ema.europa.eu/ ({source})",
                file_name=Path(source).name or path.name,
                drugs=tuple(drugs),
            )


def _realigned_headings(sections: list[dict]) -> list[str]:
    """Each text's heading: its own, or, where the source split the leaflet one heading
    late, the heading of the section its text opens or continues
    (:func:`pipeline.ingest.sections.leaflet_section_numbers`)."""
    headings = [section["section"] for section in sections]
    numbers = leaflet_section_numbers(headings, [section["text"] for section in sections])
    by_number: dict[int, str] = {}
    for heading in headings:
        number = heading_number(heading)
        if number is not None:
            by_number.setdefault(number, heading)
    return [
        by_number.get(number, heading) if number is not None else heading
        for heading, number in zip(headings, numbers, strict=True)
    ]


def read_fda_indications(path: str | Path, vocabulary: Vocabulary) -> Iterator[SourceRecord]:
    """Yield one ``label`` record per product: its Indications and Usage text.

    Raises:
        ValueError: a line is not JSON or lacks ``unii`` / ``indications``.
    """
    path = Path(path)
    for line_number, row in read_jsonl(path):
        try:
            unii, text = str(row["unii"]), str(row["indications"])
        except KeyError as error:
            raise ValueError(f"{path}:{line_number}: bad FDA row ({error})") from error
        names = [str(n) for n in row.get("product_names") or []]
        drugs = list(
            dict.fromkeys(
                d
                for n in names
                for d in vocabulary.match_drug_entities(n, correct_typos=False)
                if not is_drug_class(d)
            )
        )
        generic = {d.lower() for d in drugs}
        brands = [n for n in names if n.lower() not in generic] or names
        label = ", ".join(_product_title(n) for n in brands[:3]) or unii
        name = f"{label} ({', '.join(drugs[:3])}) — FDA label" if drugs else f"{label} — FDA label"
        yield SourceRecord(
            document_id=f"fda-{unii}",
            document_name=name,
            title=label,
            text=text,
            section_title="Indications and Usage",
            kind="label",
            source_uri=f"https://dailymed.nlm.nih.gov/ (UNII {unii})",
            file_name=path.name,
            drugs=tuple(drugs[:3]),
        )

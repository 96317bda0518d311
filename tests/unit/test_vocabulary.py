"""R-VOC-1..4: letter-boundary matching, drug suffixes, order, shipped + MRCONSO loading."""

import gzip
import json

import pytest

from pipeline.vocabulary import SHIPPED_VOCABULARY, Entity, Vocabulary

pytestmark = pytest.mark.unit


def surfaces(vocabulary, text):
    return [match.surface for match in vocabulary.find(text)]


def canonicals(vocabulary, text):
    return [entity.canonical for entity in vocabulary.match_entities(text)]


@pytest.mark.parametrize(
    ("text", "absent"),
    [("VEGFR inhibitors", "EGFR"), ("metastatic colorectal cancer", "MET")],
)
def test_r_voc_1_no_match_inside_a_longer_word(vocabulary, text, absent):
    assert absent not in canonicals(vocabulary, text)
    assert absent not in surfaces(vocabulary, text)


def test_r_voc_1_digit_is_not_a_letter_vegfr_in_vegfr1_3(vocabulary):
    assert "VEGFR" in canonicals(vocabulary, "VEGFR1-3 expression in tumours")


def test_r_voc_1_a_longer_drug_name_beats_the_curated_drug_it_starts_with():
    # trastuzumab has relations (a curated row); "trastuzumab deruxtecan" is another drug
    entities = [
        Entity("trastuzumab", "drug", aliases=("Herceptin",), related_drugs=("pertuzumab",)),
        Entity("trastuzumab deruxtecan", "drug", aliases=("Enhertu",)),
        Entity("VEGFR", "gene", related_drugs=("axitinib",)),
        Entity("VEGFR1", "gene"),
    ]
    vocabulary = Vocabulary(entities)
    assert vocabulary.match_drug_entities("trastuzumab deruxtecan lung inflammation") == [
        "trastuzumab deruxtecan"]
    assert vocabulary.match_drug_entities("trastuzumab infusion") == ["trastuzumab"]
    assert canonicals(vocabulary, "VEGFR1-3 expression") == ["VEGFR"]  # a target still does


def test_r_voc_3_shipped_fda_suffixed_biologics_are_their_inn(vocabulary):
    # Enhertu's row was fam-trastuzumab deruxtecan-nxki, a drug apart from its INN
    assert vocabulary.match_drug_entities("Enhertu") == ["trastuzumab deruxtecan"]
    assert vocabulary.match_drug_entities("trastuzumab deruxtecan") == ["trastuzumab deruxtecan"]
    assert vocabulary.match_drug_entities("Libtayo cemiplimab-rwlc") == ["cemiplimab"]


@pytest.mark.parametrize(
    ("question", "cls"),
    [("which blood thinner is taken once daily", "anticoagulants"),
     ("steroid cream and infections", "corticosteroids")],
)
def test_r_voc_3_shipped_lay_class_names_reach_the_members(vocabulary, question, cls):
    from pipeline.rerank import boost_terms_for_query

    assert canonicals(vocabulary, question) == [cls]
    assert len(boost_terms_for_query(question, vocabulary)) >= 3  # the leaflets' members


def test_r_voc_1_pd_1_keeps_its_hyphen(vocabulary):
    matches = vocabulary.find("response to anti-PD-1 antibody therapy")
    assert [m.surface for m in matches if m.entity.canonical == "PD-1"] == ["PD-1"]


@pytest.mark.parametrize(
    ("text", "absent", "present"),
    [
        # the class "anti-IL" (interleukin inhibitors) is not in "anti-IL-5"
        ("anti-IL-5 biologic for severe eosinophilic asthma", "interleukin inhibitors", "IL5"),
        ("anti-IL-17A antibody", "interleukin inhibitors", "IL17A"),
    ],
)
def test_r_voc_1_a_hyphen_and_a_number_continue_a_name(vocabulary, text, absent, present):
    found = canonicals(vocabulary, text)
    assert absent not in found and present in found


def test_r_voc_1_ethanol_found_once_not_inside_methanol(vocabulary):
    found = [m for m in vocabulary.find("ethanol and methanol") if m.entity.canonical == "ethanol"]
    assert len(found) == 1
    assert found[0].start == 0
    assert "ethanol" not in canonicals(vocabulary, "methanol poisoning")


def test_r_voc_1_gene_symbols_match_as_written(vocabulary):
    assert "MET" in canonicals(vocabulary, "MET exon 14 skipping")
    assert "MET" not in canonicals(vocabulary, "I met the oncologist")


@pytest.mark.parametrize("drug", ["osimertinib", "olaparib", "pembrolizumab", "metformin"])
def test_r_voc_2_suffix_drugs_are_drugs(vocabulary, drug):
    assert vocabulary.match_drug_entities(f"dosing of {drug} in adults") == [drug]


def test_r_voc_2_unknown_suffix_word_becomes_a_drug():
    vocabulary = Vocabulary([Entity("aspirin", "drug")])
    assert vocabulary.match_drug_entities("zorbatinib versus aspirin") == ["zorbatinib", "aspirin"]


def test_r_voc_2_short_or_stop_listed_suffix_words_are_not_drugs():
    vocabulary = Vocabulary([Entity("aspirin", "drug")])
    assert vocabulary.match_drug_entities("the thermostat and statistics of a nib") == []


def test_r_voc_2_untyped_vocabulary_entity_with_suffix_is_a_drug():
    vocabulary = Vocabulary([Entity("foobarumab", "other")])
    assert vocabulary.match_drug_entities("foobarumab trial") == ["foobarumab"]


def test_r_voc_3_entities_in_order_of_first_appearance(vocabulary):
    text = "osimertinib for EGFR-mutant lung cancer after gefitinib, osimertinib"
    found = canonicals(vocabulary, text)
    assert found.index("osimertinib") < found.index("EGFR") < found.index("lung cancer")
    assert found.index("lung cancer") < found.index("gefitinib")
    assert found.count("osimertinib") == 1


def test_r_voc_3_brand_name_yields_active_substance(vocabulary):
    assert vocabulary.match_drug_entities("Tagrisso side effects") == ["osimertinib"]
    assert vocabulary.match_drug_entities("Iressa and gefitinib") == ["gefitinib"]


@pytest.mark.parametrize(
    ("text", "drugs"),
    [
        ("somatostatin analogue I can take by mouth for acromegaly", []),
        ("aldosterone antagonist after a heart attack", []),
        ("vitamin D analogue ointment for psoriasis", []),  # an alias of ergocalciferol
        ("aldosterone\u2013antagonist", []),  # en dash
        # a drug's own harm keeps the drug: a user's "adalimumab-induced lupus"
        ("adalimumab-induced lupus", ["adalimumab"]),
        ("somatostatin\u00a0analogue", []),  # no-break space
        ("octreotide or another somatostatin analog", ["octreotide"]),
        ("octreotide, a somatostatin analogue", ["octreotide"]),
        # the drug itself, followed by other words: kept
        ("heparin injection to prevent clots", ["heparin"]),
        ("testosterone for low testosterone", ["testosterone"]),
        ("antidote for paracetamol overdose", ["acetaminophen"]),  # A-11 needs it
    ],
)
def test_a17_a_drug_name_that_qualifies_the_next_word_is_no_drug(vocabulary, text, drugs):
    assert vocabulary.match_drug_entities(text) == drugs


def test_a17_the_modifier_rule_holds_for_misspelt_and_hyphenated_names(vocabulary):
    assert vocabulary.match_drug_entities("somatostatn analogue") == []
    assert vocabulary.match_drug_entities("somatostatn tablets") == ["somatostatin"]
    assert vocabulary.match_drug_entities("aldosterone - antagonist") == []


@pytest.mark.parametrize(
    ("text", "drugs"),
    [
        ("grandma's warfarin tablets", ["warfarin"]),  # not (S)-warfarin
        ("the patient\u2019s warfarin dose", ["warfarin"]),
        ("the patient's ketamine infusion", ["ketamine"]),  # not esketamine's "s-ketamine"
        ("S-warfarin is the more potent enantiomer", ["(s)-warfarin"]),
        ("ticagrelor's bleeding risk", ["ticagrelor"]),
    ],
)
def test_no_name_starts_after_a_words_apostrophe(vocabulary, text, drugs):
    assert vocabulary.match_drug_entities(text) == drugs


def test_body_substances_measured_in_tests_are_no_drugs(vocabulary):
    # "uric acid levels" named no medicine: as a drug it kept only the leaflets that list
    # raised uric acid as a side effect (probe35 h35-03)
    assert vocabulary.match_drug_entities("what brings uric acid down for gout") == []
    assert vocabulary.match_drug_entities("dabigatran and creatinine clearance") == [
        "dabigatran"
    ]
    # every name of the substance: gout questions say "urate crystals"
    assert vocabulary.match_drug_entities("monosodium urate crystals in gout") == []
    # a misspelt stop name is no misspelt drug one edit away: not "creatine clearance"
    assert vocabulary.corrections("creatnine clearance and dabigatran") == []
    assert vocabulary.corrections("warfrin and creatinine") == ["warfrin\u2192warfarin"]


def test_r_voc_4_shipped_file_loads_with_sources():
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    description = vocabulary.describe()
    assert description["by_type"]["drug"] > 10_000
    assert description["by_type"]["gene"] > 10_000
    assert any("HGNC" in source for source in description["sources"])
    egfr = vocabulary.get("EGFR")
    assert egfr is not None and "osimertinib" in egfr.related_drugs


MRCONSO_ROWS = [
    # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
    "C0000001|ENG|P|L1|PF|S1|Y|A1||||RXNORM|IN|1|Zorbatinib|0|N||",
    "C0000001|ENG|S|L2|VO|S2|Y|A2||||RXNORM|BN|2|Zorbaxa|0|N||",
    "C0000001|FRE|P|L3|PF|S3|Y|A3||||MSHFRE|MH|3|Zorbatinibe|0|N||",
    "C0000002|ENG|P|L4|PF|S4|Y|A4||||MSH|MH|4|Frobnication disorder|0|N||",
    "C0000002|ENG|S|L5|PF|S5|N|A5||||MSH|EN|5|Frobnosis|0|O||",
    "C0000003|ENG|P|L6|PF|S6|Y|A6||||HGNC|PT|6|ZORB1|0|N||",
]


@pytest.fixture
def mrconso(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_text("\n".join(MRCONSO_ROWS) + "\n", encoding="utf-8")
    (tmp_path / "MRSTY.RRF").write_text(
        "C0000001|T121|A1.4.1.1.1|Pharmacologic Substance|AT1|256|\n"
        "C0000002|T047|B2.2.1.2.1|Disease or Syndrome|AT2|256|\n"
        "C0000003|T028|A1.2.3.5|Gene or Genome|AT3|256|\n",
        encoding="utf-8",
    )
    return path


def test_r_voc_4_mrconso_english_rows_grouped_by_cui(mrconso):
    vocabulary = Vocabulary.from_mrconso(mrconso)
    drug = vocabulary.get("Zorbaxa")
    assert drug is not None and drug.canonical == "Zorbatinib" and drug.cui == "C0000001"
    assert drug.semantic_type == "drug"
    assert vocabulary.get("Zorbatinibe") is None  # French row left out
    assert vocabulary.get("Frobnosis") is None  # suppressed row left out
    assert vocabulary.get("Frobnication disorder").semantic_type == "disease"
    assert vocabulary.match_drug_entities("Zorbaxa in frobnication disorder") == ["Zorbatinib"]


def test_r_voc_4_mrconso_merges_with_a_base_vocabulary(mrconso, vocabulary):
    merged = Vocabulary.from_mrconso(mrconso, base=vocabulary)
    assert merged.match_drug_entities("Tagrisso then Zorbaxa") == ["osimertinib", "Zorbatinib"]
    # the base's rare names stay no typo target: mpox is not mapox (aciclovir)
    assert merged.correct("mpox") is None
    assert merged.correct("Tagriso")[1].canonical == "osimertinib"


def test_a6_rare_names_round_trip_through_a_vocabulary_file(tmp_path):
    path = tmp_path / "v.jsonl"
    rows = [
        {"format": "biomed-vocabulary", "version": 2},
        {"c": "zorbatinib", "t": "drug", "a": ["Zorbaxa", "zorbixol"], "nt": ["zorbixol"]},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    vocabulary = Vocabulary.load(path)
    assert vocabulary.match_drug_entities("zorbixol") == ["zorbatinib"]  # matched as written
    assert vocabulary.correct("zorbixal") is None  # but no misspelling is read as it
    assert vocabulary.correct("Zorbaxe")[0] == "Zorbaxa"


def test_r_voc_4_bad_file_header_is_rejected(tmp_path):
    path = tmp_path / "v.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps({"format": "other"}) + "\n")
    with pytest.raises(ValueError, match="biomed-vocabulary"):
        Vocabulary.load(path)


def test_fingerprint_is_the_same_for_the_same_findings_in_any_order():
    # stop names came as a set from scripts/build_vocabulary.py: their order, and the
    # fingerprint with it, changed from one process to the next
    entities = [Entity("gefitinib", "drug"), Entity("osimertinib", "drug", aliases=("tagrisso",))]
    one = Vocabulary(entities, stop_names=["iron", "water", "salt"])
    other = Vocabulary(entities, stop_names=["salt", "water", "iron", "water"])
    assert one.fingerprint == other.fingerprint
    assert Vocabulary(entities, stop_names=["iron"]).fingerprint != one.fingerprint
    assert Vocabulary(entities[:1], stop_names=["iron", "water", "salt"]).fingerprint != (
        one.fingerprint
    )


def test_fingerprint_carries_the_matching_rules_version(monkeypatch):
    # new rules find other drugs in the same texts: stored documents must be written again
    from pipeline import vocabulary as module

    entities = [Entity("gefitinib", "drug")]
    before = Vocabulary(entities).fingerprint
    monkeypatch.setattr(module, "MATCH_RULES_VERSION", module.MATCH_RULES_VERSION + 1)
    assert Vocabulary(entities).fingerprint != before

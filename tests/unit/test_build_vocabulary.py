"""A-6: the written-down filters of scripts/build_vocabulary.py, the drug-class reading of
the leaflets, and what the shipped vocabulary files carry."""

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from pipeline.vocabulary import KNOWN_WORDS, SHIPPED_VOCABULARY, Vocabulary, name_filter_reason
from pipeline.vocabulary_entities import Entity

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def build():
    spec = importlib.util.spec_from_file_location(
        "build_vocabulary", ROOT / "scripts" / "build_vocabulary.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (" 0.3%", "percentage"),
        ("0.05%", "percentage"),
        ("Clobetasol Propionate Cream 0.05%", "percentage"),
        ("Nabumetone 500 Mg", "dose"),
        ("aspirin 81mg", "dose"),
        ("1 g", "dose"),
        ("22:6-4, 7,10,13,16,19", "number"),
        ("350", "number"),
        ("mg", "unit"),
        ("tablets", "unit"),
        ("K", "single letter"),
        ("mesylates", "salt"),
        ("sodium", "salt"),
        ("ANA", "clinical abbreviation"),
        ("PFS", "clinical abbreviation"),
        ("HR", "clinical abbreviation"),
        ("imatinib", None),
        ("campath 1g", None),  # a digit glued to a letter is a name, not a dose
        ("KIR2DL5", None),
        ("HPV type 58 L1 protein", None),
        ("IL-1B", None),
        ("alcohol,", "markup"),  # a cut-off "alcohol, benzyl"
        (",no-udca", "markup"),
        ('&lt;ref name=&quot;areplivir&quot; /&gt;', "markup"),
        ("abigan}}", "markup"),
        ("2,4-dinitrophenol", None),
    ],
)
def test_a6_name_filters(name, reason):
    assert name_filter_reason(name) == reason


def test_the_shipped_vocabulary_reads_no_entity_into_alcohol_coffee_or_tea():
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    assert vocabulary.find("Any issues with alcohol, coffee or tea?") == []
    assert [m.entity.canonical for m in vocabulary.find("benzyl alcohol in the vial")] == [
        "benzyl alcohol"]


def test_the_shipped_vocabulary_reads_the_thyroid_gland_as_no_drug():
    # vocabulary_precision's hand-checked sample found "thyroid gland" read as the drug
    # thyroid (desiccated thyroid) in "your liver and thyroid gland"
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    assert vocabulary.match_drug_entities("my thyroid gland was removed") == []
    assert vocabulary.match_drug_entities("desiccated thyroid tablets") == ["thyroid"]


def test_a53_a_family_name_is_no_one_members_name():
    # DrugBank files "factor viii" under beroctocog alfa and "pegylated recombinant factor
    # viii" under Adynovi: the question read as that one product kept only its documents
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    for query in (
        "PEGylated recombinant factor VIII to prevent bleeding in haemophilia A",
        "how do I store my son's factor VIII",
    ):
        assert vocabulary.match_drug_entities(query) == []
        found = [(e.canonical, e.semantic_type) for e in vocabulary.match_entities(query)]
        assert ("factor VIII products", "class") in found
    factor_viii = vocabulary.get("factor VIII products")
    # the stored products' substances, Advate's and Kovaltry's first
    assert {"antihemophilic factor, human recombinant", "beroctocog alfa", "lonoctocog alfa",
            "damoctocog alfa pegol", "efmoroctocog alfa"} <= set(factor_viii.related_drugs)
    factor_ix = [e.canonical for e in vocabulary.match_entities("factor IX for haemophilia B")]
    assert "factor IX products" in factor_ix
    assert vocabulary.match_drug_entities("vitamin B tablets") == []
    # a product keeps its own name, and the longer names of the family theirs
    assert vocabulary.match_drug_entities("Adynovi storage") != []
    assert vocabulary.match_drug_entities("vitamin B12 injections") == ["vitamin b 12"]
    assert [
        e.canonical for e in vocabulary.match_entities("hereditary factor VIII deficiency")
    ] == ["Hereditary factor VIII deficiency"]


@pytest.mark.parametrize(
    ("name", "kind", "reason"),
    [
        ("sits", "alias", "common word"),
        ("caps", "alias", "common word"),
        ("FOR", "gene alias", "common word"),
        ("STOP", "gene alias", "common word"),
        ("gold", "canonical", "common word"),
        ("plan b", "alias", "common word"),
        ("blood group", "alias", "common word"),
        ("at 10", "alias", "common word"),  # dihydrotachysterol: "at 10 weeks pregnant"
        ("at-10", "alias", "common word"),
        ("GET-73", "alias", None),  # a code in capitals is a drug's name
        ("at10", "alias", "common word"),
        ("B 12", "alias", None),  # a letter and a number is a name
        ("AT1", "gene alias", None),  # a gene's symbol is matched as written
        ("gas-x", "alias", None),  # no number
        ("mesylate, imatinib", "alias", "inverted form"),
        ("Gleevec", "alias", None),
        ("osimertinib", "canonical", None),
        ("insulin", "canonical", None),  # its drug sense is the common one
        ("viagra", "alias", None),
        ("medical cannabis", "alias", None),
        ("vitamin a", "alias", None),
        ("Fever", "disease", None),  # diseases only meet the number / unit filters
    ],
)
def test_a6_common_word_filter(build, name, kind, reason):
    assert build.filter_reason(name, kind) == reason


def test_a6_brands_of_the_product_data_keep_their_alias(build):
    assert build.filter_reason("armour", "alias") == "common word"
    assert build.filter_reason("armour", "alias", {"armour"}) is None


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        (
            "sodium glucose co-transporter-2 (SGLT2) inhibitors ",
            ["sodium glucose co-transporter-2 inhibitor", "SGLT2 inhibitor"],
        ),
        (
            "DPP-4 inhibitors (dipeptidyl peptidase-4 inhibitors) metformin belongs to",
            ["DPP-4 inhibitor", "dipeptidyl peptidase-4 inhibitor"],
        ),
        (
            "tumour necrosis factor (TNF- ) inhibitors",
            ["tumour necrosis factor inhibitor", "TNF inhibitor"],
        ),
        ("TNF blockers ", ["TNF blocker"]),
        ("corticosteroids (or steroids)", ["corticosteroid"]),
        ("protein kinase inhibitors which are used to treat cancer", ["protein kinase inhibitor"]),
        ("monoclonal antibodies", []),  # too broad to stand for members
        ("anti- platelet agents", ["anti-platelet agent"]),  # "anti" apart from its word
        ("anti epileptics", ["anti-epileptic"]),
        ("anti-cancers", []),
        ("anti-inflammatories", []),  # NSAIDs, steroids and more: too broad
    ],
)
def test_a6_class_names_from_leaflet_sentences(build, raw, names):
    assert build.class_names(raw) == names


def test_a6_class_name_variants(build):
    variants = build.class_name_variants("TNF blocker", {"TNF": ["TNF-alpha"]})
    for name in ("TNF blockers", "TNF inhibitor", "anti-TNF", "TNF-alpha blocker"):
        assert name in variants


def test_an_anti_class_is_one_class_however_anti_is_written(build):
    variants = build.class_name_variants("anti-fungal")
    for name in ("antifungal", "anti-fungals", "antifungal agents", "anti-fungal medicine"):
        assert name in variants
    two_words = build.class_name_variants("oral anti-diabetic")
    assert "oral antidiabetics" in two_words and "oral antidiabetic agent" not in two_words


@pytest.mark.parametrize(
    ("sentence", "found"),
    [
        ("Cresemba is an anti-fungal medicine that contains", ("Cresemba", "anti-fungal")),
        ("Mycamine is called an antifungal medicine.", ("Mycamine", "antifungal")),
        ("desloratadine which is an antihistamine", ("desloratadine", "antihistamine")),
        ("This is a type of antiviral medicine called", ("This", "antiviral")),
        ("Enyglid is an oral antidiabetic medicine", ("Enyglid", "oral antidiabetic")),
        ("Tralokinumab is a monoclonal antibody", None),
        ("It is an antibody", None),
        ("LUMIGAN is an antiglaucoma medicine", None),  # no plural anyone writes
    ],
)
def test_anti_class_sentences(build, sentence, found):
    match = build._ANTI_CLASS_SENTENCE.search(sentence)
    assert (match["subj"], match["cls"]) == found if found else match is None


def test_anti_class_members_come_from_what_the_medicine_is(build, tmp_path):
    (tmp_path / "drug_labels").mkdir()
    (tmp_path / "vocabulary").mkdir()
    (tmp_path / "vocabulary" / "hgnc_genes.tsv").write_text("symbol\tsynonyms\n")
    rows = [
        (
            "cresemba",
            "1. What Cresemba is",
            "Cresemba is an anti-fungal medicine that contains the active substance "
            "isavuconazonium.",
        ),
        (
            "mycamine",
            "1. What Mycamine is",
            "Mycamine contains the active substance micafungin. Mycamine is called an "
            "antifungal medicine.",
        ),
        # "this" is rifampicin, a medicine of the interactions list, not linagliptin
        ("trajenta", "1. What Trajenta is", "It contains the active substance linagliptin."),
        ("trajenta", "2. What you need to know", "rifampicin. This is an antibiotic used"),
        (
            "quinsair",
            "1. What Quinsair is",
            "Quinsair contains the active substance levofloxacin. It is an antibiotic medicine.",
        ),
    ]
    with open(tmp_path / "drug_labels" / "ema_leaflet_sections.jsonl", "w") as handle:
        for drug, section, text in rows:
            handle.write(json.dumps({"drug": drug, "section": section, "text": text}) + "\n")
    names = ("isavuconazonium", "micafungin", "linagliptin", "levofloxacin", "rifampicin")
    vocabulary = Vocabulary([Entity(name, "drug") for name in names], known_words=())
    classes = {row["c"]: row for row in build.read_drug_classes(tmp_path, vocabulary)}
    assert set(classes) == {"anti-fungals", "antibiotics"}
    assert classes["anti-fungals"]["members"] == ["isavuconazonium", "micafungin"]
    assert "antifungal agents" in classes["anti-fungals"]["names"]
    assert classes["antibiotics"]["members"] == ["levofloxacin"]


def test_the_shipped_vocabulary_reads_antifungal_spellings_as_one_class_with_members():
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    found = [
        vocabulary.match_entities(f"which {word} medicine treats mucormycosis")
        for word in ("antifungal", "anti-fungal", "anti fungal")
    ]
    assert all(len(entities) == 1 for entities in found)
    assert {entities[0].canonical for entities in found} == {found[0][0].canonical}
    assert {"isavuconazonium", "posaconazole", "caspofungin"} <= set(found[0][0].related_drugs)


def test_a6_shipped_vocabulary_reports_its_filters_and_stop_names():
    with gzip.open(SHIPPED_VOCABULARY, "rt", encoding="utf-8") as handle:
        header = json.loads(handle.readline())
    assert header["version"] == 2
    for reason in ("number", "percentage", "dose", "common word", "clinical abbreviation"):
        assert header["filters"][reason] > 0
    assert {"mesylate", "sodium"} <= set(header["stop_names"])


def test_a6_shipped_vocabulary_has_no_number_unit_or_single_letter_names():
    vocabulary = Vocabulary.load()
    stop = set()
    with gzip.open(SHIPPED_VOCABULARY, "rt", encoding="utf-8") as handle:
        stop = {name.lower() for name in json.loads(handle.readline())["stop_names"]}
    bad = [
        (name, reason)
        for entity in vocabulary.entities
        for name in (entity.canonical, *entity.aliases)
        if name.lower() not in stop
        and (reason := name_filter_reason(name)) in ("number", "percentage", "dose", "unit")
    ]
    assert bad == []


def test_a6_shipped_drug_classes_and_known_words():
    classes = json.loads((SHIPPED_VOCABULARY.parent / "drug_classes.json").read_text())
    by_name = {row["c"]: row for row in classes}
    assert {"dapagliflozin", "empagliflozin"} <= set(
        by_name["sodium glucose co-transporter-2 inhibitors"]["members"]
    )
    with gzip.open(KNOWN_WORDS, "rt", encoding="utf-8") as handle:
        words = {line.strip() for line in handle}
    assert {"indications", "fibrillation", "neutropenia"} <= words
    assert "osimertinib" not in words and "imatinib" not in words
    # long English words of zipf 1.3-2.0 are known; shorter ones and a drug's plural not
    assert {"piperidine", "fibrinolysis", "trifluoromethyl"} <= words
    assert "lantos" not in words and "methamphetamines" not in words
    assert "isoflavone" not in words  # the singular of the name "isoflavones"


def test_a6_fda_suffixed_biologics_merge_into_their_inn(build):
    drugs = {
        "trastuzumab deruxtecan": {"c": "trastuzumab deruxtecan", "t": "drug", "a": [], "s": ""},
        "fam-trastuzumab deruxtecan-nxki": {
            "c": "fam-trastuzumab deruxtecan-nxki", "t": "drug", "a": ["Enhertu"], "s": ""},
        "epoetin": {"c": "epoetin", "t": "drug", "a": [], "s": ""},
        "epoetin-beta": {"c": "epoetin-beta", "t": "drug", "a": [], "s": ""},  # Greek: kept
        "ad5-ncov": {"c": "ad5-ncov", "t": "drug", "a": [], "s": ""},  # no "ad5" row: kept
    }
    evidence = {"fam-trastuzumab deruxtecan-nxki": True}
    assert build.merge_suffixed_biologics(drugs, evidence) == 1
    assert set(drugs) == {"trastuzumab deruxtecan", "epoetin", "epoetin-beta", "ad5-ncov"}
    assert drugs["trastuzumab deruxtecan"]["a"] == ["fam-trastuzumab deruxtecan-nxki", "Enhertu"]
    assert evidence["trastuzumab deruxtecan"] is True


def test_an_antibody_conjugate_is_named_by_its_first_word(build):
    rows = [
        {"c": "sacituzumab govitecan", "t": "drug", "a": ["trodelvy"]},
        {"c": "sacituzumab tirumotecan", "t": "drug", "a": []},
        {"c": "enfortumab vedotin", "t": "drug", "a": ["padcev"]},
        {"c": "trastuzumab", "t": "drug", "a": []},
        {"c": "trastuzumab deruxtecan", "t": "drug", "a": ["enhertu"]},
        {"c": "insulin glargine", "t": "drug", "a": []},
    ]
    assert build.first_word_aliases(rows, brands={"trodelvy", "padcev", "enhertu"}) == 2
    aliases = {row["c"]: row["a"] for row in rows}
    assert "sacituzumab" in aliases["sacituzumab govitecan"]  # the one with a product
    assert "sacituzumab" not in aliases["sacituzumab tirumotecan"]
    assert "enfortumab" in aliases["enfortumab vedotin"]
    assert "trastuzumab" not in aliases["trastuzumab deruxtecan"]  # a drug of its own
    assert aliases["insulin glargine"] == []  # not an antibody name


def test_the_shipped_vocabulary_reads_an_antibody_conjugate_by_its_first_word():
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    assert vocabulary.match_drug_entities("sacituzumab in breast cancer") == [
        "sacituzumab govitecan"
    ]
    misspelt = vocabulary.find("sacituzumb govitecan")
    assert [(m.entity.canonical, m.correction) for m in misspelt] == [
        ("sacituzumab govitecan", "sacituzumab")
    ]


def test_a6_leaflet_substance_is_read_from_any_section(build):
    vocabulary = Vocabulary(
        [Entity("silodosin", "drug"), Entity("arginine", "drug"), Entity("aspirin", "drug")],
        known_words=(),
    )
    silodyx = [
        ("1. What Silodyx is and what it is used for", "Silodyx belongs to a group of medicines."),
        ("2. What you need to know", "Not if allergic to the active substance or to aspirin."),
        ("6. Contents of the pack", "The active substance is silodosin. The other ..."),
    ]
    assert build.leaflet_substances(silodyx, vocabulary) == ["silodosin"]
    # a clause without a full stop is read up to the excipients, not into them
    cevenfacta = [
        ("1. What Cevenfacta is", "It contains the active substance eptacog beta"),
        ("6. Contents", "The active substance is eptacog beta The other excipients are: arginine"),
    ]
    assert build.leaflet_substances(cevenfacta, vocabulary) == []


def test_a6_a_row_sold_under_a_brand_is_a_drug(build):
    drugs = {
        "amlodipine/valsartan": {"c": "amlodipine/valsartan", "t": "other", "a": ["Exforge"]},
        "epoetin alfa": {"c": "epoetin alfa", "t": "other", "a": ["Binocrit", "eprex", "Retacrit"]},
        "thyroxine": {"c": "thyroxine", "t": "other", "a": ["levothyroxine sodium"]},
        "tnf inhibitors": {"c": "tnf inhibitors", "t": "class", "a": ["Exforge"]},
        "gelatin": {"c": "gelatin", "t": "other", "a": []},
    }
    brands = {"exforge", "binocrit", "retacrit", "levothyroxine sodium"}
    promoted, rows = build.mark_sold_as_drugs(drugs, brands)
    # a fixed combination is the product's drug; a brand of any other row is its own
    assert promoted == 1
    assert drugs["amlodipine/valsartan"]["t"] == "drug"
    assert rows == [
        {"c": "Binocrit", "t": "drug", "a": []},
        {"c": "Retacrit", "t": "drug", "a": []},
    ]
    assert drugs["epoetin alfa"] == {"c": "epoetin alfa", "t": "other", "a": ["eprex"]}
    assert drugs["thyroxine"]["t"] == "other"  # a generic salt name is not a brand
    assert drugs["thyroxine"]["a"] == ["levothyroxine sodium"]
    assert drugs["tnf inhibitors"]["t"] == "class"
    assert drugs["gelatin"]["t"] == "other"


def test_the_shipped_vocabulary_reads_every_leaflet_product_as_a_drug():
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    data = ROOT.parent / "shared" / "data" / "drug_labels" / "ema_leaflet_sections.jsonl"
    if not data.exists():
        pytest.skip("../shared/data is not here")
    with open(data, encoding="utf-8") as handle:
        products = {json.loads(line)["drug"] for line in handle}
    unread = sorted(
        product
        for product in products
        if not any(m.entity.is_drug for m in vocabulary.find(product.replace("-", " ")))
    )
    # "arsenic" (Arsenic trioxide Mylan) is a word before it is a product; "insulin" and
    # "tachosil" are the table's own (generic) names of rows it types ``other``
    assert unread == ["arsenic", "insulin", "tachosil"]
    found = vocabulary.find("how should Gardasl be stored")
    assert [(m.entity.canonical, m.correction) for m in found] == [("Gardasil", "Gardasil")]
    assert vocabulary.match_drug_entities("Urorec and Exforge") == [
        "silodosin",
        "amlodipine/valsartan",
    ]


def test_a6_rare_names_are_synonyms_nobody_writes(build, tmp_path):
    (tmp_path / "vocabulary").mkdir()
    (tmp_path / "vocabulary" / "drug_synonyms.tsv").write_text(
        "canonical\tname\tdrugbank_id\tmesh_id\tmedline_plus_id\tsmiles\tsynonyms\n"
        "acetaminophen\tAcetaminophen\tDB00316\t\t\t\tzorbixol|tylenol|paracetamol\n"
        "meloxicam\tMeloxicam\tDB00814\t\t\t\tmovicox|Qlarvyn\n",
        encoding="utf-8",
    )
    rows = [
        {"c": "acetaminophen", "t": "drug", "a": ["Acetaminophen", "zorbixol", "tylenol"]},
        {"c": "meloxicam", "t": "drug", "a": ["Meloxicam", "movicox", "Qlarvyn"]},
        {"c": "EGFR", "t": "gene", "a": ["ERBB1"]},
    ]
    # Qlarvyn is a stored product (a brand of the leaflets), tylenol an English word
    assert build.mark_rare_names(tmp_path, rows, {"qlarvyn"}) == 2
    assert rows[0]["nt"] == ["zorbixol"]
    assert rows[1]["nt"] == ["movicox"]
    assert "nt" not in rows[2]


def test_the_shipped_vocabulary_marks_rare_names():
    with gzip.open(SHIPPED_VOCABULARY, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle][1:]
    acyclovir = next(row for row in rows if row["c"] == "acyclovir")
    assert "mapox" in acyclovir["nt"] and "zovirax" not in acyclovir["nt"]  # zipf 1.35
    assert sum(len(row.get("nt", ())) for row in rows) > 10_000


def test_a6_an_fda_combination_name_is_no_brand_of_one_substance(build):
    vocabulary = Vocabulary(
        [
            Entity("oxycodone", "drug"),
            Entity("acetaminophen", "drug"),
            Entity("4-o-demethylpenclomedine", "drug", aliases=("Depen",)),
        ],
        known_words=(),
    )
    assert build.names_another_drug("OXYCODONE AND ACETAMINOPHEN", "oxycodone", vocabulary)
    assert build.names_another_drug("Multivitamin with acetaminophen", "oxycodone", vocabulary)
    assert not build.names_another_drug("Roxicodone", "oxycodone", vocabulary)
    # a whole name that is another row's synonym is still the label's brand
    assert not build.names_another_drug("Depen", "penicillamine", vocabulary)


def test_a37_a_slash_combination_merges_into_its_twin_drug_row(build):
    drugs = {
        "dolutegravir and lamivudine": {
            "c": "dolutegravir and lamivudine", "t": "drug", "a": ["dovato"],
        },
        "dolutegravir/lamivudine": {
            "c": "dolutegravir/lamivudine", "t": "other", "a": ["Dolutegravir/lamivudine"],
        },
        "fluticasone and vilanterol": {"c": "fluticasone and vilanterol", "t": "drug", "a": []},
        # a salt written on one substance and the other order still name the same pair
        "vilanterol/fluticasone furoate": {
            "c": "vilanterol/fluticasone furoate", "t": "other", "a": ["relvar ellipta"],
        },
        # a regimen with no product of the pair stays as it is
        "bortezomib/dexamethasone": {"c": "bortezomib/dexamethasone", "t": "other", "a": []},
        "bortezomib": {"c": "bortezomib", "t": "drug", "a": []},
        # a pair that one substance's row would swallow is no twin
        "amlodipine/valsartan": {"c": "amlodipine/valsartan", "t": "other", "a": []},
        "valsartan": {"c": "valsartan", "t": "drug", "a": []},
        # two drug rows of one pair: which one is meant is unknown, so neither takes it
        "a and b": {"c": "a and b", "t": "drug", "a": []},
        "b, a": {"c": "b, a", "t": "drug", "a": []},
        "a/b": {"c": "a/b", "t": "other", "a": []},
    }
    assert build.merge_combination_twins(drugs) == 2
    assert "dolutegravir/lamivudine" not in drugs
    assert drugs["dolutegravir and lamivudine"]["a"] == [
        "dovato", "dolutegravir/lamivudine", "Dolutegravir/lamivudine",
    ]
    assert drugs["fluticasone and vilanterol"]["a"] == [
        "vilanterol/fluticasone furoate", "relvar ellipta",
    ]
    assert {"bortezomib/dexamethasone", "amlodipine/valsartan", "a/b"} <= set(drugs)
    assert drugs["bortezomib/dexamethasone"]["t"] == "other"


def test_a37_the_shipped_vocabulary_reads_a_slash_combination_as_its_drug():
    """A question that writes a marketed combination with a slash (or by the brand the
    synonym table gave only its slash row) names that drug: the drug-entity workflow and
    the leaflet's section cue ("how many puffs" cued the indications before)."""
    from pipeline.intent import detect_retrieval_intent

    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    for text, drug, cues in [
        ("How many puffs of Relvar Ellipta a day?", "fluticasone and vilanterol",
         ("dosage_and_administration",)),
        ("dolutegravir/lamivudine side effects", "dolutegravir and lamivudine",
         ("adverse_reactions",)),
        ("ceftolozane/tazobactam dose", "ceftolozane and tazobactam",
         ("dosage_and_administration",)),
    ]:
        assert vocabulary.match_drug_entities(text) == [drug]
        intent = detect_retrieval_intent(text, vocabulary)
        assert (intent.workflow, intent.section_cues) == ("drug_entity", cues)
    # a regimen with no product of its own stays no drug
    assert vocabulary.match_drug_entities("bortezomib/dexamethasone for myeloma") == []


def test_a39_a_leaflet_naming_its_active_substances_in_the_plural_is_a_combination(build):
    vocabulary = Vocabulary(
        [
            Entity("sitagliptin", "drug"),
            Entity("metformin", "drug"),
            Entity("abiraterone", "drug"),
            Entity("testosterone", "drug"),
            Entity("emtricitabine and tenofovir", "drug"),
            Entity("elvitegravir", "drug"),
        ],
        known_words=(),
    )
    janumet = [
        ("1. What Janumet is", "Janumet contains two different medicines called sitagliptin."),
        ("6. Contents", "The active substances are sitagliptin and metformin. The other ..."),
    ]
    assert build.leaflet_combination(janumet, vocabulary) == ["sitagliptin", "metformin"]
    # a combination row found in the clause counts as its parts, in order
    genvoya = [("6. Contents", "The active substances are elvitegravir, emtricitabine and "
                               "tenofovir alafenamide.")]
    assert build.leaflet_combination(genvoya, vocabulary) == [
        "elvitegravir", "emtricitabine", "tenofovir",
    ]
    # a singular clause, or drugs met only in the opening words, name one substance
    zytiga = [
        ("1. What Zytiga is", "Zytiga contains abiraterone; it stops testosterone being made."),
        ("6. Contents", "The active substance is abiraterone acetate."),
    ]
    assert build.leaflet_combination(zytiga, vocabulary) == []
    assert build.combination_name(["sitagliptin", "metformin"]) == "sitagliptin and metformin"
    assert build.combination_name(["a", "b", "c"]) == "a, b, and c"


def test_a39_two_rows_of_one_combination_give_the_brand_to_the_drug_row(build):
    vocabulary = Vocabulary([Entity("a", "drug"), Entity("b", "drug")], known_words=())
    drugs = {
        "a/b": {"c": "a/b", "t": "other", "a": ["x", "y"]},
        "a and b": {"c": "a and b", "t": "drug", "a": []},
        "b, a": {"c": "b, a", "t": "drug", "a": ["z"]},
    }
    rows = build._combination_rows(drugs, vocabulary)
    assert rows == {"a / b": drugs["b, a"]}  # a drug row; of those, the one with more names


def test_a39_the_shipped_vocabulary_reads_a_combination_brand_as_the_combination():
    """A combination's brand named its first substance only: Janumet read as sitagliptin,
    Odefsey as emtricitabine, so A-38 capped the wrong products and a question about the
    metformin in Janumet met no entity of it."""
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    for brand, drug in [
        ("Janumet", "sitagliptin and metformin"),
        ("Velmetia", "sitagliptin and metformin"),
        ("Odefsey", "emtricitabine, rilpivirine, and tenofovir"),
        ("Ultibro", "indacaterol and glycopyrrolate"),
        ("Stalevo", "levodopa, carbidopa, and entacapone"),
        # an existing row of the same substances takes the brand, its spellings read
        # through the vocabulary ("colecalciferol" is cholecalciferol)
        ("Vantavo", "alendronic acid/colecalciferol"),
        ("Competact", "pioglitazone/metformin"),
        ("Trixeo", "budesonide/glycopyrronium bromide/formoterol"),
        # a brand the synonym table gave one of its substances moves to the combination
        ("Synjardy", "empagliflozin/metformin"),
        ("Juluca", "dolutegravir/rilpivirine"),
    ]:
        assert vocabulary.match_drug_entities(f"{brand} side effects") == [drug], brand
    # single-substance brands stay their substance's
    assert vocabulary.match_drug_entities("Zytiga side effects") == ["abiraterone"]
    assert vocabulary.match_drug_entities("Januvia side effects") == ["sitagliptin"]


def test_a42_the_shipped_vocabulary_reads_a_bisphosphonate_us_name_as_its_inn_acid():
    """The FDA labels' "ibandronate" and the EMA leaflets' "ibandronic acid" were two drug
    rows: "ibandronate 150 mg once a month - how do I take it?" found no Ibandronic Acid
    leaflet in 20 results."""
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    for text, drug in [
        ("ibandronate side effects", "ibandronic acid"),
        ("alendronate sodium weekly tablet", "alendronic acid"),
        ("Fosamax how to take", "alendronic acid"),
        ("risedronate for Paget's disease", "risedronic acid"),
    ]:
        assert vocabulary.match_drug_entities(text) == [drug], text


def test_the_shipped_vocabulary_reads_both_drugs_of_an_fda_combination_name():
    vocabulary = Vocabulary.load(SHIPPED_VOCABULARY)
    for text, drugs in [
        ("oxycodone and acetaminophen tablets", ["oxycodone", "acetaminophen"]),
        ("Sulfamethoxazole and Trimethoprim for UTI", ["sulfamethoxazole", "trimethoprim"]),
        ("buprenorphine and naloxone film", ["buprenorphine", "naloxone"]),
    ]:
        assert vocabulary.match_drug_entities(text) == drugs


def test_a19_spelling_words_are_words_of_two_products_but_no_drug_names(build, tmp_path):
    (tmp_path / "drug_labels").mkdir()
    leaflets = [
        ("alpha", "Alpha treats psoriasis and eczema. Take grapefruit juice."),
        ("alpha", "Psoriasis again in another section of the same product."),
        ("beta", "Beta treats psoriasis. Olaparib is not this medicine. No grapefruit."),
    ]
    with open(tmp_path / "drug_labels" / "ema_leaflet_sections.jsonl", "w") as handle:
        for drug, text in leaflets:
            handle.write(json.dumps({"drug": drug, "section": "1. What", "text": text}) + "\n")
    with open(tmp_path / "drug_labels" / "fda_indications.jsonl", "w") as handle:
        handle.write(json.dumps({"indications": "for eczema and olaparib-sensitive cases"}) + "\n")
    (tmp_path / "vocabulary").mkdir()
    (tmp_path / "vocabulary" / "icd10cm.tsv").write_text(
        "code\tdescription\nL40\tPsoriasin disorder\n"
    )
    rows = [{"c": "olaparib", "t": "drug"}, {"c": "grapefruit", "t": "drug"}]
    words = build.spelling_words(tmp_path, rows, stop_names=["grapefruit"])
    assert words["psoriasis"] == 2  # two products (one of them twice)
    assert words["eczema"] == 2  # a leaflet and a label
    assert "treats" in words and "medicine" not in words  # one product only
    assert "olaparib" not in words  # a drug name the vocabulary matches: A-12's
    assert words["grapefruit"] == 2  # a stop name: no match, so a word like any other
    # words one edit from a target that are words themselves: never misspellings
    assert words["psoriasin"] == 0  # ICD-10-CM
    assert words.get("eczemas", 0) == 0  # not a misspelling either way


def test_the_shipped_vocabulary_files_are_what_the_build_writes(build, tmp_path, monkeypatch):
    """The five files under configs/vocabulary are the build script's output for
    ../shared/data as the code stands: a matching rule that changes what the build reads
    (A-17's modifier words changed which class sentences read) must ship a rebuilt file."""
    data = ROOT.parent / "shared" / "data"
    if not (data / "drug_labels" / "ema_leaflet_sections.jsonl").exists():
        pytest.skip("../shared/data is not here")
    shipped = SHIPPED_VOCABULARY.parent
    monkeypatch.setattr(build, "CLASSES_OUT", tmp_path / "drug_classes.json")
    symptoms = tmp_path / "indication_symptoms.json"
    monkeypatch.setattr(build, "INDICATION_SYMPTOMS_OUT", symptoms)
    build.build(data, tmp_path / SHIPPED_VOCABULARY.name)
    names = [SHIPPED_VOCABULARY.name, "drug_classes.json", KNOWN_WORDS.name]
    names += ["spelling_words.tsv.gz", symptoms.name]
    stale = [n for n in names if (tmp_path / n).read_bytes() != (shipped / n).read_bytes()]
    assert stale == [], f"rebuild with python scripts/build_vocabulary.py: {stale}"


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ("aciclovir", "acyclovir", True),
        ("cefalexin", "cephalexin", True),
        ("beclometasone", "beclomethasone", True),
        ("simeticone", "simethicone", True),
        ("oestradiol", "estradiol", True),
        ("eftilagimod alpha", "eftilagimod alfa", True),
        ("vitamin k", "vitamin c", False),  # no letter rule reads k as c
        ("ethosuximide", "methsuximide", False),
    ],
)
def test_a23_inn_spelling_key(build, one, other, same):
    assert (build.inn_spelling_key(one) == build.inn_spelling_key(other)) is same


def test_a23_an_other_row_spelt_as_a_drug_merges_into_it(build):
    drugs = {
        "acyclovir": {"c": "acyclovir", "t": "drug", "a": ["zovirax"]},
        "aciclovir": {"c": "aciclovir", "t": "other", "a": ["Aciclovir"]},
        "chlorpheniramine": {"c": "chlorpheniramine", "t": "drug", "a": []},
        "chlorphenamine": {"c": "chlorphenamine", "t": "other", "a": ["piriton"]},
        "pentoxifylline": {"c": "pentoxifylline", "t": "drug", "a": ["pentoxil"]},
        "pentoxyl": {"c": "pentoxyl", "t": "other", "a": []},  # an alias's spelling only
        "thyroxin receptor": {"c": "thyroxin receptor", "t": "other", "a": []},
        "mesalamine": {"c": "mesalamine", "t": "drug", "a": []},
        "mesalazine": {"c": "mesalazine", "t": "drug", "a": ["mesalazina"]},  # a DrugBank row
        "cyclizine": {"c": "cyclizine", "t": "drug", "a": []},
        "ciclizine": {"c": "ciclizine", "t": "drug", "a": []},  # drug rows keep apart
        "albuterol": {"c": "albuterol", "t": "drug", "a": ["salbutamol"]},
        "salbutamol inhalers": {"c": "salbutamol inhalers", "t": "other", "a": []},
        "aspirin": {"c": "aspirin", "t": "drug", "a": []},
        "low-dose aspirin": {"c": "low-dose aspirin", "t": "other", "a": ["nu-seals"]},
        "ringer's lactate solution": {"c": "ringer's lactate solution", "t": "other", "a": []},
        "aciclovir cream": {"c": "aciclovir cream", "t": "other", "a": []},  # merged above
    }
    assert build.merge_inn_spellings(drugs) == 6
    assert set(drugs) == {
        "acyclovir", "chlorpheniramine", "pentoxifylline", "pentoxyl", "thyroxin receptor",
        "mesalamine", "cyclizine", "ciclizine", "albuterol", "aspirin",
        "ringer's lactate solution",
    }
    assert drugs["albuterol"]["a"] == ["salbutamol", "salbutamol inhalers"]
    assert drugs["aspirin"]["a"] == ["low-dose aspirin", "nu-seals"]
    assert drugs["mesalamine"]["a"] == ["mesalazine", "mesalazina"]
    assert drugs["acyclovir"]["a"] == ["zovirax", "aciclovir", "Aciclovir", "aciclovir cream"]
    assert drugs["chlorpheniramine"]["a"] == ["chlorphenamine", "piriton"]  # BRITISH_APPROVED_NAMES


def test_a23_stored_words_spelt_as_a_drug_become_its_aliases(build):
    rows = [
        {"c": "estradiol", "t": "drug", "a": []},
        {"c": "epinephrine", "t": "drug", "a": ["adrénaline"]},
        {"c": "aluminum", "t": "drug", "a": []},
        {"c": "oestrone", "t": "other", "a": []},
    ]
    stored = ["oestradiol", "adrenaline", "aluminium", "oestrone", "tablets"]
    assert build.stored_spelling_aliases(rows, stored, brands=set()) == 2
    aliases = {row["c"]: row["a"] for row in rows}
    assert aliases["estradiol"] == ["oestradiol"]
    assert aliases["epinephrine"] == ["adrénaline", "adrenaline"]  # DRUG_SENSE_WORDS keeps it
    assert aliases["aluminum"] == []  # "aluminium" is a common English word


@pytest.mark.parametrize(
    ("question", "drug"),
    [
        ("aciclovir cream for cold sores", "acyclovir"),
        ("beclometasone inhaler", "beclomethasone"),
        ("adrenaline auto-injector", "epinephrine"),
        ("Synthroid dose", "levothyroxine"),
        ("thyroxine and omeprazole", "levothyroxine"),
        ("sodium valproate in pregnancy", "valproic acid"),
        ("glyceryl trinitrate spray", "nitroglycerin"),
        ("oestradiol patches", "estradiol"),
        ("isotretinoin capsules", "isotretinoin"),
        ("travoprost timolol eye drops", "timolol"),
        ("salbutamol inhalers", "albuterol"),
        ("beclometasone inhalers", "beclomethasone"),
    ],
)
def test_the_shipped_vocabulary_reads_british_and_inn_names(vocabulary, question, drug):
    assert drug in vocabulary.match_drug_entities(question)


def test_a25_curated_lay_names_join_the_row_of_their_clinical_name(build, monkeypatch):
    rows = [
        {"c": "Enuresis", "t": "disease", "a": []},
        {"c": "Whooping cough", "t": "disease", "a": ["pertussis", "chin cough"]},
        {"c": "bivalirudin", "t": "drug", "a": ["BV-1"]},
    ]
    known = {name.lower(): row for row in rows for name in (row["c"], *row["a"])}
    table = {
        "enuresis": ("bedwetting",),
        # the row's own name: nothing to gloss; an alias already: a lay name too
        "pertussis": ("whooping cough", "chin cough"),
        # no row yet; "BV-1" is another row's; "UTI" is a clinical abbreviation
        "bacterial vaginosis": ("BV", "BV-1", "UTI"),
    }
    monkeypatch.setattr(build, "CURATED_LAY_NAMES", table)
    assert build.add_curated_lay_names(rows, known) == 3
    assert rows[0] == {"c": "Enuresis", "t": "disease", "a": ["bedwetting"], "l": ["bedwetting"]}
    assert rows[1]["a"] == ["pertussis", "chin cough"] and rows[1]["l"] == ["chin cough"]
    assert rows[3] == {"c": "bacterial vaginosis", "t": "disease", "a": ["BV"], "l": ["BV"],
                       "cs": ["BV"]}  # fmt: skip
    assert known["bv-1"] is rows[2]


def test_a25_a_disease_row_titled_by_a_lay_name_joins_the_clinical_row(build, monkeypatch):
    rows = [
        {"c": "Otitis externa", "t": "disease", "a": ["swimmers ear"]},
        # ICD's H60.33- beside the clinical row: the same condition, by its lay name
        {"c": "Swimmer's ear", "t": "disease", "a": ["Swimmers ear", "SE"], "cs": ["SE"]},
        # a row with more than names is kept (a drug, or a disease with ids)
        {"c": "Hay fever", "t": "disease", "a": [], "cui": "C0018621"},
        {"c": "Allergic rhinitis", "t": "disease", "a": []},
        # a row that only has the lay name as an alias is another condition
        {"c": "Otitis media", "t": "disease", "a": ["ear infection"]},
        {"c": "Labyrinthitis", "t": "disease", "a": []},
    ]
    known = {name.lower(): row for row in rows for name in (row["c"], *row["a"])}
    table = {
        "otitis externa": ("swimmer's ear",),
        "allergic rhinitis": ("hay fever",),
        "labyrinthitis": ("ear infection",),
    }
    monkeypatch.setattr(build, "CURATED_LAY_NAMES", table)
    assert build.add_curated_lay_names(rows, known) == 1
    otitis = rows[0]
    # the absorbed row's names once each, whatever their case; its capitals as written
    assert otitis["a"] == ["swimmers ear", "Swimmer's ear", "SE"]
    assert otitis["l"] == ["swimmer's ear"] and otitis["cs"] == ["SE"]
    assert known["swimmer's ear"] is otitis and known["se"] is otitis
    assert [row["c"] for row in rows] == [
        "Otitis externa", "Hay fever", "Allergic rhinitis", "Otitis media", "Labyrinthitis"
    ]  # fmt: skip
    assert "l" not in rows[2] and "l" not in rows[4]
    assert known["ear infection"]["c"] == "Otitis media"


def test_the_shipped_vocabulary_reads_lay_condition_names(vocabulary):
    for lay, condition in [
        ("bedwetting", "Enuresis"),
        ("piles", "haemorrhoids"),
        ("BV", "bacterial vaginosis"),
        ("heroin addiction", "Opioid dependence"),
        ("flu", "Influenza"),  # an alias already, now a lay name too
    ]:
        entity = vocabulary.get(lay)
        assert entity is not None and entity.canonical == condition
        assert lay in entity.lay_names
    # "at 10 weeks pregnant" names no drug (AT-10 is dihydrotachysterol)
    assert vocabulary.match_entities("sickness at 10 weeks") == []

"""A-6 on the shipped vocabulary: the cases of issue 13 ("Why") and other members of each
kind. Salts and brands resolve to the active moiety, numbers / units / clinical
abbreviations are no entities, Greek letters and hyphen variants match, misspelt drugs
are read as the drug with the correction recorded, class words reach their members."""

import pytest

from pipeline.expansion import expansion_terms, sparse_terms_for
from pipeline.intent import detect_retrieval_intent
from pipeline.rerank import boost_terms_for_query
from pipeline.supplement import resolve_drug_terms
from pipeline.vocabulary import Entity, Vocabulary, strip_salt

pytestmark = pytest.mark.unit


def canonicals(vocabulary, text):
    return [entity.canonical for entity in vocabulary.match_entities(text)]


# -- salts and brands ----------------------------------------------------------------


def test_a6_issue_imatinib_mesylate_is_one_drug(vocabulary):
    assert vocabulary.match_drug_entities("imatinib mesylate dosing") == ["imatinib"]
    [match] = vocabulary.find("imatinib mesylate dosing")
    assert match.surface == "imatinib mesylate"


def test_a6_issue_glivec_and_gleevec_map_to_the_same_parent(vocabulary):
    assert vocabulary.match_drug_entities("Glivec side effects") == ["imatinib"]
    assert vocabulary.match_drug_entities("Gleevec side effects") == ["imatinib"]
    assert resolve_drug_terms("Glivec side effects", vocabulary) == ["imatinib"]


def test_a6_issue_drug_with_its_salt_is_not_a_combination(vocabulary):
    intent = detect_retrieval_intent(
        "imatinib mesylate in combination with chemotherapy", vocabulary
    )
    assert intent.workflow == "drug_entity"


@pytest.mark.parametrize(
    ("query", "drugs"),
    [
        ("erlotinib hydrochloride", ["erlotinib"]),
        ("dabigatran etexilate capsules", ["dabigatran"]),
        ("sunitinib malate hand-foot syndrome", ["sunitinib"]),
        ("lapatinib ditosylate with capecitabine", ["lapatinib", "capecitabine"]),
        ("imatinib mesilate", ["imatinib"]),
        ("abiraterone acetate and prednisone", ["abiraterone", "prednisone"]),
        ("losartan potassium tablets", ["losartan"]),
        ("osimertinib mesylate monohydrate", ["osimertinib"]),  # salt name not listed
        ("lenvatinib mesilate plus pembrolizumab", ["lenvatinib", "pembrolizumab"]),
    ],
)
def test_a6_other_salts_resolve_to_the_parent(vocabulary, query, drugs):
    assert vocabulary.match_drug_entities(query) == drugs


def test_a6_salt_plus_second_drug_is_a_combination(vocabulary):
    query = "lenvatinib mesilate plus pembrolizumab"
    assert detect_retrieval_intent(query, vocabulary).workflow == "combination"


@pytest.mark.parametrize("word", ["mesylate", "hydrochloride", "sodium", "monohydrate", "malate"])
def test_a6_a_salt_word_alone_is_no_entity(vocabulary, word):
    assert vocabulary.match_entities(f"the {word} salt") == []


@pytest.mark.parametrize(
    ("name", "parent"),
    [
        ("imatinib mesylate", "imatinib"),
        ("dabigatran etexilate mesilate", "dabigatran"),
        ("lapatinib ditosylate monohydrate", "lapatinib"),
        ("Erlotinib Hydrochloride", "Erlotinib"),
        ("candesartan cilexetil", "candesartan"),
        ("imatinib (as mesilate)", "imatinib"),
        ("sodium chloride", "sodium chloride"),  # inorganic salts stay whole
        ("ferrous sulfate", "ferrous sulfate"),
        ("potassium chloride", "potassium chloride"),
        ("mesylate", "mesylate"),
    ],
)
def test_a6_strip_salt(name, parent):
    assert strip_salt(name) == parent


def test_a6_get_resolves_an_unlisted_salt_name(vocabulary):
    assert vocabulary.get("osimertinib mesylate").canonical == "osimertinib"


# -- numbers, units, common words, clinical abbreviations ----------------------------


def test_a6_issue_percentages_are_not_drugs(vocabulary):
    query = "0.3% of patients on osimertinib plus chemotherapy had ILD"
    assert vocabulary.match_drug_entities(query) == ["osimertinib"]
    intent = detect_retrieval_intent(query, vocabulary)
    assert intent.workflow == "drug_entity"
    assert resolve_drug_terms(query, vocabulary) == ["osimertinib"]
    assert vocabulary.match_drug_entities("apixaban 0.5% solution") == ["apixaban"]
    assert vocabulary.match_entities("a 0.05% cream") == []


@pytest.mark.parametrize(
    "text",
    ["0.01% gel", "500 mg twice daily", "1 g intravenously", "10 mL vial", "2.5 mg/kg", "5%"],
)
def test_a6_other_numbers_doses_and_units_are_no_entities(vocabulary, text):
    assert vocabulary.match_entities(text) == []


def test_a6_issue_ana_is_not_the_gene_btg3(vocabulary):
    query = "ANA positive patients on adalimumab"
    assert canonicals(vocabulary, query) == ["adalimumab"]
    terms = expansion_terms(query, vocabulary)
    assert "BTG3" not in terms and "APRO4" not in terms


@pytest.mark.parametrize(
    "query",
    [
        "OS and PFS with niraparib",
        "ORR was 45% on niraparib",
        "HR 0.62 (95% CI 0.50-0.76) for niraparib",
        "ECOG 0-1 patients on niraparib",
        "AND/OR criteria for niraparib",
        "ALT and AST rises on niraparib",
    ],
)
def test_a6_other_clinical_abbreviations_are_no_entities(vocabulary, query):
    assert canonicals(vocabulary, query) == ["niraparib"]


def test_a6_all_capitals_question_matches_no_gene_words(vocabulary):
    query = "WHAT IS THE DOSE OF XARELTO FOR CHILDREN"
    assert canonicals(vocabulary, query) == ["rivaroxaban"]


def test_a6_guarded_gene_symbols_match_as_written_in_mixed_case_only(vocabulary):
    assert "MET" in canonicals(vocabulary, "MET exon 14 skipping")
    assert "MET" not in canonicals(vocabulary, "I met the oncologist")
    assert "SET" in canonicals(vocabulary, "SET overexpression in leukaemia")
    assert "SET" not in canonicals(vocabulary, "DOSE SET BY THE DOCTOR")


def test_a6_egfr_in_kidney_function_is_not_the_gene(vocabulary):
    assert "EGFR" not in canonicals(vocabulary, "eGFR below 30 mL/min")
    assert "EGFR" in canonicals(vocabulary, "EGFR exon 19 deletion")


@pytest.mark.parametrize("word", ["gold", "honey", "water", "sits", "caps"])
def test_a6_common_words_are_no_entities(vocabulary, word):
    assert vocabulary.match_entities(f"the {word} of the study") == []


# -- Greek letters and hyphen variants ----------------------------------------------


@pytest.mark.parametrize("spelling", ["TNFα", "TNF-α", "TNF α", "TNF-alpha", "TNFalpha"])
def test_a6_issue_tnf_alpha_in_every_spelling_is_the_gene(vocabulary, spelling):
    assert canonicals(vocabulary, f"{spelling} levels") == ["TNF"]


@pytest.mark.parametrize(
    ("text", "gene"),
    [
        ("IL-1β", "IL1B"),
        ("IL1β", "IL1B"),
        ("IL-1 beta", "IL1B"),
        ("PI3Kδ", "PIK3CD"),
        ("PI3K-delta", "PIK3CD"),
        ("ER-α", "ESR1"),
        ("HIF-1α", "HIF1A"),
        ("TGF-β", "TGFB1"),
        ("RARα", "RARA"),
    ],
)
def test_a6_other_greek_lettered_targets(vocabulary, text, gene):
    assert canonicals(vocabulary, f"{text} signalling") == [gene]


def test_a6_issue_tnf_alpha_inhibitor_is_no_drug_and_reaches_the_members(vocabulary):
    for query in ("TNFα inhibitor side effects", "TNF-alpha inhibitor side effects"):
        assert vocabulary.match_drug_entities(query) == []  # no cross-drug penalty
        members = set(resolve_drug_terms(query, vocabulary))
        assert {"adalimumab", "infliximab", "etanercept"} <= members
        assert detect_retrieval_intent(query, vocabulary).section_cues == ("adverse_reactions",)


def test_a6_hyphen_variants_of_a_gene(vocabulary):
    for text in ("PD-1", "PD1", "PD 1", "PD‑1"):
        assert canonicals(vocabulary, f"anti-{text} antibody") == ["PD-1"]


def test_a6_digit_ended_name_not_inside_a_longer_number_or_word(vocabulary):
    assert "IL1B" not in canonicals(vocabulary, "IL-17 inhibitors")
    assert canonicals(vocabulary, "C#Cc1cccc(Nc2ncnc3cc(OCCOC)c(OCCOC)cc23)c1") == []


# -- typos -------------------------------------------------------------------------------


def test_a6_issue_osimertinb_is_read_as_osimertinib(vocabulary):
    intent = detect_retrieval_intent("osimertinb rash", vocabulary)
    assert intent.workflow == "drug_entity"
    assert intent.corrections == ("osimertinb→osimertinib",)
    assert vocabulary.match_drug_entities("osimertinb rash") == ["osimertinib"]
    assert resolve_drug_terms("osimertinb rash", vocabulary) == ["osimertinib"]
    assert boost_terms_for_query("osimertinb rash", vocabulary) == ["osimertinib"]
    assert "osimertinib" in expansion_terms("osimertinb rash", vocabulary)


@pytest.mark.parametrize(
    ("query", "drug", "correction"),
    [
        ("pembrolizumb infusion reactions", "pembrolizumab", "pembrolizumb→pembrolizumab"),
        ("apixiban dose after hip replacement", "apixaban", "apixiban→apixaban"),
        ("rivaroxiban bleeding", "rivaroxaban", "rivaroxiban→rivaroxaban"),
        ("ibrutnib atrial fibrillation", "ibrutinib", "ibrutnib→ibrutinib"),
        ("Lenvimma side effects", "lenvatinib", "Lenvimma→Lenvima"),
        ("dabrafenb fever", "dabrafenib", "dabrafenb→dabrafenib"),
        ("osimeritnib", "osimertinib", "osimeritnib→osimertinib"),  # transposition
        ("Tagriso rash", "osimertinib", "Tagriso→Tagrisso"),
    ],
)
def test_a6_other_typos_of_other_drugs(vocabulary, query, drug, correction):
    intent = detect_retrieval_intent(query, vocabulary)
    assert vocabulary.match_drug_entities(query) == [drug]
    assert intent.corrections == (correction,)
    assert intent.workflow == "drug_entity"


@pytest.mark.parametrize(
    "query",
    [
        "indications and warnings",
        "infusion reactions with neutropenia",
        "hepatotoxicity and pneumonitis",
        "replacement therapy during pregnancy",
        "breastfeeding mothers",
        "atrial fibrillation",
    ],
)
def test_a6_ordinary_words_are_not_corrected(vocabulary, query):
    assert detect_retrieval_intent(query, vocabulary).corrections == ()
    assert vocabulary.match_drug_entities(query) == []


def test_a6_typo_needs_four_letters_and_the_allowed_distance(vocabulary):
    assert vocabulary.correct("aspirn") is not None  # 6 letters, distance 1
    assert vocabulary.correct("asprn") is None  # distance 2 at 5 letters
    assert vocabulary.correct("osmrtnib") is None  # distance 3 at 8 letters
    assert vocabulary.correct("Eyea")[0].lower() == "eylea"  # 4 letters, distance 1
    assert vocabulary.correct("Qtrn")[1].canonical == vocabulary.get("Qtern").canonical
    assert vocabulary.correct("Eyl") is None  # 3 letters


@pytest.mark.parametrize(
    ("word", "brand"),
    [("zevudy", "xevudy"), ("canuma", "kanuma"), ("Kytruda", "keytruda"), ("kutenza", "qutenza")],
)
def test_a6_a_first_letter_that_sounds_alike_is_looked_up_too(vocabulary, word, brand):
    assert vocabulary.correct(word)[0].lower() == brand


@pytest.mark.parametrize("query", ["amitriptyline 10 mg nocte", "Exviera bd: missed the mane dose"])
def test_a6_prescription_shorthand_is_not_a_typo(vocabulary, query):
    assert vocabulary.corrections(query) == []


@pytest.mark.parametrize("word", ["EYEA", "AICR", "DAPS", "URTIs"])
def test_a6_a_short_word_in_capitals_is_an_abbreviation_not_a_typo(vocabulary, word):
    assert vocabulary.correct(word) is None


@pytest.mark.parametrize(
    "query",
    # each word is one edit from a drug name (milid, ucine, sular, relpax, hemel, axura):
    # the known words keep them
    ["mild pain", "blood in my urine", "sugar levels", "relax before bed", "heel pain", "aura"],
)
def test_a6_short_everyday_words_are_not_corrected(vocabulary, query):
    assert vocabulary.corrections(query) == []


@pytest.mark.parametrize(
    ("query", "shorthand"),
    [
        ("tamox and hot flushes", "tamox"),  # would be timox (oxcarbazepine)
        ("digox level", "digox"),
        ("does chemo damage the gonad", "gonad"),
        ("preop antibiotics before hip surgery", "preop"),
        ("post ictal confusion", "ictal"),
    ],
)
def test_a6_shorthand_that_begins_a_longer_word_is_not_a_typo(vocabulary, query, shorthand):
    assert vocabulary.corrections(query) == []
    assert shorthand in vocabulary.corrected(query)


def test_a12_corrected_writes_each_misspelt_name_as_read(vocabulary):
    assert vocabulary.corrected("how should Stcrin be stored") == "how should Stocrin be stored"
    assert vocabulary.corrected("Eyea or Tagriso?").lower() == "eylea or tagrisso?"
    assert vocabulary.corrected("how should Stocrin be stored") == "how should Stocrin be stored"


def test_a6_documents_are_not_typo_corrected(vocabulary):
    long_text = "The patient took osimertinb daily. " * 12
    assert all(not match.correction for match in vocabulary.find(long_text))
    assert vocabulary.find(long_text, correct_typos=True)[0].correction == "osimertinib"


def test_a6_typo_look_up_on_a_small_vocabulary_without_known_words():
    vocabulary = Vocabulary([Entity("zorbatinib", "drug", aliases=("Zorbaxa",))], known_words=())
    assert vocabulary.match_drug_entities("zorbatinb and zorbaxxa") == ["zorbatinib"]
    assert vocabulary.corrections("zorbatinb and zorbaxxa") == [
        "zorbatinb→zorbatinib",
        "zorbaxxa→Zorbaxa",
    ]


def test_a6_a_rare_name_is_matched_but_never_read_as_a_typo():
    entities = [Entity("zorbatinib", "drug", aliases=("Zorbaxa", "zorbixol"))]
    plain = Vocabulary(entities, known_words=())
    rare = Vocabulary(entities, known_words=(), rare_names={"zorbatinib": ["zorbixol"]})
    assert plain.correct("zorbixal")[0] == "zorbixol"
    assert rare.correct("zorbixal") is None
    assert rare.match_drug_entities("zorbixol tablets") == ["zorbatinib"]
    assert rare.correct("Zorbaxe")[0] == "Zorbaxa"


@pytest.mark.parametrize(
    ("word", "was_read_as"),
    [
        ("mpox", "mapox"),  # a disease, not an aciclovir brand
        ("movicol", "movicox"),  # a laxative, not a meloxicam brand
        ("ecoli", "ecolid"),
        ("abeta", "akbeta"),
        ("hpmc", "hpmpc"),  # hypromellose, not cidofovir's code name
        ("ancer", "ancef"),  # a dropped letter of "cancer"
    ],
)
def test_a6_a_name_nobody_writes_is_no_typo_target(vocabulary, word, was_read_as):
    # These synonyms are in no stored label and in no English text (wordfreq zipf 0):
    # the shipped file marks them rare, so the words above stay as written.
    assert vocabulary.get(was_read_as) is not None
    assert vocabulary.correct(word) is None


def test_a6_a_rare_name_is_no_target_only_for_the_entity_it_is_listed_under():
    # "zorbix" is listed rare under zorbatinib but names another drug: still a target
    entities = [Entity("zorbatinib", "drug"), Entity("quexamab", "drug", aliases=("zorbix",))]
    rare = Vocabulary(entities, known_words=(), rare_names={"zorbatinib": ["zorbix"]})
    assert rare.correct("zorbex")[0] == "zorbix"


def test_a6_a_name_two_edits_away_yields_to_a_word_one_edit_away():
    entities = [Entity("zorbatinibol", "drug"), Entity("cholesteryl", "drug")]
    plain = Vocabulary(entities, known_words=())
    assert plain.correct("zorbatinbal")[0] == "zorbatinibol"  # two edits, nothing nearer
    assert plain.correct("cholestrol")[0] == "cholesteryl"
    # a known word one edit away: a misspelt "zorbatinbak", not the drug
    known = Vocabulary(entities, known_words=["zorbatinbak"])
    assert known.correct("zorbatinbal") is None
    # a name of another entity one edit away
    gene = Vocabulary([*entities, Entity("zorbatinbak", "gene")], known_words=())
    assert gene.correct("zorbatinbal") is None
    # but not a name of the same drug ("voriconazol" of voriconazole: a rare name, never
    # a reading itself), nor a known word that is a misspelling of the name (leaflets
    # print "doxycyline")
    alias = [Entity("zorbatinibol", "drug", aliases=("zorbatinibl",))]
    rare = Vocabulary(alias, known_words=(), rare_names={"zorbatinibol": ["zorbatinibl"]})
    assert rare.correct("zorbatinbl")[0] == "zorbatinibol"
    misprint = Vocabulary(entities, known_words=["zorbatinibl"])
    assert misprint.correct("zorbatinbl")[0] == "zorbatinibol"
    # a stop name one edit away (cholesterol is one: never a typo's reading either)
    stopped = Vocabulary([*entities, Entity("cholesterol", "drug")], stop_names=["cholesterol"])
    assert stopped.correct("cholestrol") is None
    # one edit from the drug stays read, whatever else is one edit away
    near = Vocabulary(entities, known_words=["zorbatinibal"])
    assert near.correct("zorbatinibo")[0] == "zorbatinibol"


@pytest.mark.parametrize(
    "query",
    ["compounds with a piperidine ring", "fibrinolytic therapy", "a trifluoromethyl group",
     "low cholestrol diet", "what is a saccharide"],
)
def test_a6_long_english_words_and_near_words_are_no_drugs(vocabulary, query):
    # each was read as a drug two edits away: piperidione, fibrinolysin, trifluoroethyl,
    # cholesteryl, saccharin
    assert vocabulary.corrections(query) == []


@pytest.mark.parametrize(
    ("word", "drug"),
    [("voryconazol", "voriconazole"), ("collchicin", "colchicine"),
     ("doxicyline", "doxycycline"), ("buproprian", "bupropion"),
     ("carbamazapin", "carbamazepine"), ("capecitbin", "capecitabine")],
)
def test_a6_two_edit_typos_near_the_drugs_own_names_are_still_read(vocabulary, word, drug):
    # one edit from a rare name of the same drug, or from a misprint leaflets use
    assert vocabulary.correct(word)[1].canonical == drug


def test_a6_known_words_do_not_change_the_fingerprint():
    entities = [Entity("zorbatinib", "drug", aliases=("zorbixol",))]
    assert (
        Vocabulary(entities, known_words=()).fingerprint
        == Vocabulary(entities, known_words=["zorbixal", "zorbatinb"]).fingerprint
    )


def test_a6_rare_names_do_not_change_the_fingerprint():
    # documents are never typo-corrected, so what is stored does not depend on them
    entities = [Entity("zorbatinib", "drug", aliases=("zorbixol",))]
    plain = Vocabulary(entities, known_words=())
    rare = Vocabulary(entities, known_words=(), rare_names={"zorbatinib": ["zorbixol"]})
    assert plain.fingerprint == rare.fingerprint


@pytest.mark.parametrize(
    ("word", "read_as"),
    [
        ("levocarnatine", "levocarnitine"),  # a salt's parent is a substance's name
        ("tylenal", "tylenol"),  # a brand English text uses (zipf 2.8) stays a target
        ("Zigen", "ziagen"),  # a stored product, no longer tied with ziken (a mesna brand)
        ("Privign", "Privigen"),  # tied with privin (naphazoline) before
    ],
)
def test_a6_names_people_write_stay_typo_targets(vocabulary, word, read_as):
    assert vocabulary.correct(word)[0] == read_as


def test_a6_typo_never_chooses_between_two_drugs():
    vocabulary = Vocabulary(
        [Entity("abcdefgh", "drug"), Entity("abcdefgk", "drug")], known_words=()
    )
    assert vocabulary.correct("abcdefgx") is None


# -- class words -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "members"),
    [
        ("TNF-α blocker for rheumatoid arthritis", {"adalimumab", "infliximab", "etanercept"}),
        ("anti-TNF therapy", {"adalimumab", "infliximab"}),
        ("SGLT2 inhibitor for heart failure", {"dapagliflozin", "empagliflozin"}),
        ("PARP inhibitor ovarian cancer", {"olaparib", "niraparib"}),
        ("DPP-4 inhibitors", {"sitagliptin", "linagliptin"}),
        ("PI3Kδ inhibitor for follicular lymphoma", {"idelalisib", "duvelisib"}),
        ("BRAF inhibitor for melanoma", {"vemurafenib", "dabrafenib"}),
    ],
)
def test_a6_class_words_reach_their_member_drugs(vocabulary, query, members):
    assert vocabulary.match_drug_entities(query) == []
    assert members <= set(resolve_drug_terms(query, vocabulary))
    assert members & set(boost_terms_for_query(query, vocabulary))


def test_a6_sparse_terms_use_the_corrected_drug(vocabulary):
    intent = detect_retrieval_intent("osimertinb side effects", vocabulary)
    assert sparse_terms_for("osimertinb side effects", intent, vocabulary) == (
        "osimertinib",
        "adverse reactions",
    )


def test_a6_issue_os_pfs_is_not_a_structure(vocabulary):
    # R-INT-1 as amended by A-3 (pipeline.structure, RDKit): "OS/PFS" parses as no structure.
    intent = detect_retrieval_intent("OS/PFS results for osimertinib", vocabulary)
    assert intent.workflow == "drug_entity"
    assert vocabulary.match_drug_entities("OS/PFS results for osimertinib") == ["osimertinib"]

"""A-5: section cues are a table of section words (lay phrasing included), named by the
canonical section values ingest stores; R-INT-6's cues stay a subset; ingest headings
use the same table (R-ING-2)."""

import importlib.util
import json
from pathlib import Path

import pytest

from pipeline.ingest.sections import canonical_section
from pipeline.intent import detect_retrieval_intent, section_cues_for
from pipeline.schema import Node
from pipeline.scoring import section_match_score
from pipeline.section_vocabulary import (
    CANONICAL_SECTIONS,
    SECTION_TABLE,
    SEED_CUE_SECTIONS,
    SEED_QUERY_CUES,
)
from pipeline.settings import PipelineSettings

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("query", "cue"),
    [
        # the phrasings
        ("side effects of Tagrisso", "adverse_reactions"),
        ("what is Xalkori used for", "indications_and_usage"),
        ("how to store Opdivo", "storage"),
        ("can I drive while taking Xalkori", "warnings"),
        ("what happens if I miss a dose of Tarceva", "dosage_and_administration"),
        ("what does Zydelig contain", "description"),
        # the development set's
        ("should Lucentis be kept in the refrigerator", "storage"),
        ("common side effects of Verzenios", "adverse_reactions"),
        ("what is in a Zydelig tablet", "description"),
        ("who should not take Pradaxa", "warnings"),
        ("WHAT IS THE DOSE OF XARELTO FOR CHILDREN", "dosage_and_administration"),
        # other members of each kind
        ("what is Tarceva for", "indications_and_usage"),
        ("is Keytruda approved for lung cancer", "indications_and_usage"),
        ("how much Eliquis should I take", "dosage_and_administration"),
        ("I forgot to take my Xarelto", "dosage_and_administration"),
        ("dosing of osimertinib", "dosage_and_administration"),
        ("pyrukynd dose increase based on hemoglobin", "dosage_and_administration"),
        ("my dose of Lyrica was increased, how many capsules now", "dosage_and_administration"),
        # a raised dose is a dosage question unless it dates a symptom ("since ...")
        ("my Ozempic dose went up to 1 mg, which pen should I use", "dosage_and_administration"),
        ("when can I re-dose my EpiPen", "dosage_and_administration"),
        (
            "Keppra dose was increased, is 1500 mg twice a day the maximum",
            "dosage_and_administration",
        ),
        ("can I drink alcohol with Zydelig", "warnings"),
        ("is Tagrisso safe in pregnancy", "warnings"),
        ("before taking Iressa", "warnings"),
        ("can Humira be frozen", "storage"),
        ("shelf life of Ozempic pens", "storage"),
        ("adverse reactions to nivolumab", "adverse_reactions"),
        ("what are the ingredients of Glivec", "description"),
        ("what Tagrisso looks like", "description"),
        ("contraindications of warfarin", "contraindications"),
        ("does Paxlovid interact with statins", "drug_interactions"),
        ("how does Lynparza work", "clinical_pharmacology"),
        ("how is Darzalex given", "dosage_and_administration"),
        ("how is Keytruda administered", "dosage_and_administration"),
        ("will Erivedge make my hair fall out", "adverse_reactions"),
        # A-40: clinicians' shorthand for side effects
        ("daxas 500mcg od, pt losing wt - known SE??", "adverse_reactions"),
        ("Pt on Afinitor 10 mg/d c/o mouth ulcers ?SE", "adverse_reactions"),
        ("ADRs of nivolumab", "adverse_reactions"),
        ("common AEs with Verzenios", "adverse_reactions"),
        ("any s/e from metformin", "adverse_reactions"),
        ("does Abilify Maintena make you put on weight", "adverse_reactions"),
        (
            "my child accidentally swallowed some of my Valdoxan tablets",
            "dosage_and_administration",
        ),
        ("Xeplion initiation regimen day 1 / day 8", "dosage_and_administration"),
        ("Tremfya 100 mg SC wk 0, wk 4 then q8w", "dosage_and_administration"),
        ("can I get my vaccinations while using Cibinqo", "warnings"),
        ("having a live vaccine on Rinvoq", "warnings"),
        # contraception advice is in section 2 of the leaflets that give it
        ("How long must women use contraception after the last dose of Kisqali?", "warnings"),
        ("will Ontozry stop my contraceptive pill from working", "warnings"),
        ("is birth control needed with Xeljanz", "warnings"),
        # tests and checks during treatment are in section 2; food and timing in section 3
        ("Tasmar 100 mg tds - how often are LFTs needed during the first year?", "warnings"),
        ("Does Zejula require blood pressure monitoring?", "warnings"),
        ("what blood tests do I need on Xeljanz", "warnings"),
        ("rydpat capsules - with food or without?", "dosage_and_administration"),
        ("Feraccru 30 mg bd - before or after food?", "dosage_and_administration"),
        ("should Zykadia be swallowed on an empty stomach", "dosage_and_administration"),
        # the only questions that recall the list of local representatives
        ("Tasigna local representative in Belgium", "contacts"),
        ("phone number for Novartis about Tasigna", "contacts"),
        ("who do I contact about Xarelto in Denmark", "contacts"),
    ],
)
def test_a5_lay_phrasing_cues_the_stored_section(query, cue):
    assert cue in detect_retrieval_intent(query).section_cues
    assert cue in CANONICAL_SECTIONS


@pytest.mark.parametrize(
    "query",
    [
        "Lokelma for too much potassium in my blood",
        "too much sugar in my blood on prednisolone",
        "Zyloric for too much uric acid levels",
        "I drank too much alcohol on metronidazole",
    ],
)
def test_a40_too_much_of_something_in_the_body_is_no_overdose(query):
    assert "dosage_and_administration" not in detect_retrieval_intent(query).section_cues


@pytest.mark.parametrize(
    "query",
    [
        "what if I take too much Eliquis",
        "gave my child too much iron syrup",
        "too much thyroid medication",
        # the exception follows "too much" only
        "paracetamol overdose blood test",
        "metformin overdose blood sugar",
    ],
)
def test_a40_an_amount_of_a_medicine_is_still_an_overdose(query):
    assert "dosage_and_administration" in detect_retrieval_intent(query).section_cues


@pytest.mark.parametrize(
    "query",
    [
        "malaria prophylaxis for travel to SE Asia",
        "Lyme disease in the SE USA treatment",
        "prednisolone for AE-COPD",
        "prednisolone for AE COPD",
        "SE of the mean for metformin trials",
        "Tagrisso se puede tomar con comida",
    ],
)
def test_a40_side_effect_shorthand_only_as_shorthand(query):
    assert "adverse_reactions" not in detect_retrieval_intent(query).section_cues


def _named_cues(query):
    """The cues the question's words name, at the product defaults: A-26's and A-27's
    inferred indications (``section_cues_implied``) left out."""
    intent = detect_retrieval_intent(query)
    return () if intent.section_cues_implied else intent.section_cues


@pytest.mark.parametrize(
    "query",
    [
        "0.5% of patients on rivaroxaban had major bleeding",
        "OS/PFS benefit of niraparib",
        "nivolumab together with relatlimab",
        "imatinib mesylate tablets",
        "how many patients responded to osimertinib",
        "how is the disease diagnosed",
        # not the food and tests cues: section 2's "with food and drink", a device (a
        # symptom after eating on a drug is A-21's side-effect cue, below)
        "Kisqali with food and drink",
        "continuous glucose monitor with insulin pump",
        "how to test whether the pen works",
        # A-40's shorthand is matched in capitals only, of a medicine named
        "vitamin ae deficiency",
        "results in SE England",
    ],
)
def test_a5_no_cue_where_no_section_is_asked_for(query):
    assert _named_cues(query) == ()
    # A-27 infers the indications where no drug is named; A-5 alone asks for none
    assert detect_retrieval_intent(query, general_cue=False).section_cues == ()


@pytest.mark.parametrize(
    ("query", "cue"),
    [
        # side effects asked with a verb of causing
        ("does metformin cause diarrhoea", "adverse_reactions"),
        ("can Ozempic give you hair loss", "adverse_reactions"),
        ("might Lyrica bring on weight gain", "adverse_reactions"),
        ("is Humira linked to lymphoma", "adverse_reactions"),
        ("is it normal to feel tired on Kisqali", "adverse_reactions"),
        ("itchy skin since starting Entresto", "adverse_reactions"),
        # a symptom dated by a dose that was raised
        ("room spinning since the Fycompa dose went up", "adverse_reactions"),
        ("dizzy since they upped my Keppra dose", "adverse_reactions"),
        ("headache since the dose of Keppra went up", "adverse_reactions"),
        ("since increasing the Keppra dose I feel sick", "adverse_reactions"),
        # section 3's advice in lay words
        ("forgot my Trulicity pen yesterday", "dosage_and_administration"),
        ("can Jakavi tablets be crushed", "dosage_and_administration"),
        ("is it ok to chew Xarelto tablets", "dosage_and_administration"),
        ("must Tagrisso be swallowed whole", "dosage_and_administration"),
        ("can I split my Eliquis in half", "dosage_and_administration"),
        ("can I open the Kalydeco capsules", "dosage_and_administration"),
        ("should I double up on Januvia", "dosage_and_administration"),
        ("how many puffs of Trimbow a day", "dosage_and_administration"),
        ("Jardiance morning or evening", "dosage_and_administration"),
        ("where to inject Dupixent", "dosage_and_administration"),
        ("how long does an Ocrevus infusion take", "dosage_and_administration"),
        ("my son threw up ten minutes after taking his Kuvan", "dosage_and_administration"),
        ("can I stop Cymbalta suddenly", "dosage_and_administration"),
        ("can I stop Brintellix abruptly", "dosage_and_administration"),
        # section 2's sub-headings in lay words
        ("Lipitor and grapefruit", "warnings"),
        ("does Aubagio affect fertility", "warnings"),
        ("we are trying for a baby and I take Tecfidera", "warnings"),
        ("does my partner need condoms while I'm on Revlimid", "warnings"),
        ("can Xeljanz be taken with the contraceptive pill", "warnings"),
        ("Lumigan with contact lenses", "warnings"),
        ("do I need sunscreen on Vfend", "warnings"),
        ("telling the dentist about Prolia", "warnings"),
        ("a couple of beers on Keppra", "warnings"),
        # section 5 and 6
        ("how long does Xalatan last after opening", "storage"),
        ("what colour are Eliquis tablets", "description"),
        ("what is imprinted on Plavix tablets", "description"),
        ("is there gelatin in Creon", "description"),
    ],
)
def test_a18_lay_words_of_the_leaflet_sub_headings_cue_their_section(query, cue):
    assert cue in detect_retrieval_intent(query).section_cues


@pytest.mark.parametrize(
    ("query", "treatment"),
    [
        # a condition or its cause, not a medicine's side effect
        ("tablet for hair falling out in patches", True),
        ("what can cause gout", False),
        ("antibiotic for infections caused by MRSA", True),
        # forgetfulness is a symptom; a pack of how many tablets is asked elsewhere
        ("memory loss and forgetfulness in older people", False),
        ("how many patients stopped treatment in the trial", False),
        # a treatment question about a condition's symptoms
        ("what will the hospital give her for Kawasaki disease", False),
        ("anti-sickness injection for vomiting after chemotherapy", True),
        ("weak muscles that can be linked to a tumour", False),
        ("is there a drink test for growth hormone deficiency", False),
    ],
)
def test_a18_no_cue_from_the_same_words_used_otherwise(query, treatment):
    # A-18's words cue nothing here; a request for a treatment is A-26's indications cue
    assert _named_cues(query) == ()
    cues = ("indications_and_usage",) if treatment else ()
    assert detect_retrieval_intent(query, general_cue=False).section_cues == cues
    off = detect_retrieval_intent(query, treatment_cue=False, general_cue=False)
    assert off.section_cues == ()


@pytest.mark.parametrize(
    ("query", "not_cued"),
    [
        # a condition, a food or a habit: no medicine's leaflet is asked for
        ("does diabetes cause kidney damage", None),
        ("does soy affect sperm quality", None),
        ("does red wine lower cholesterol", None),
        # the medicine is named, but the words mean something else here
        ("can I give him his Keppra early", "adverse_reactions"),
        ("can my GP give me Ozempic for weight loss", "adverse_reactions"),
        ("is it usual to take Keppra twice a day", "adverse_reactions"),
        ("I keep forgetting things since starting Topamax", "dosage_and_administration"),
        ("jaw pain when chewing on Prolia", "dosage_and_administration"),
        ("crushing chest pain on Xarelto", "dosage_and_administration"),
        ("vomiting after every meal on Ozempic", "dosage_and_administration"),
        ("what colour is my urine on rifampicin", "description"),
        # "dose" as a modifier or a date, not a question about the dose
        ("rescue after high-dose methotrexate", "dosage_and_administration"),
        ("glasdegib and low-dose cytarabine for AML", "dosage_and_administration"),
        ("fixed-dose empagliflozin and linagliptin", "dosage_and_administration"),
        ("nodding off in class since the Intuniv dose went up", "dosage_and_administration"),
        ("dizzy since they upped my Keppra dose", "dosage_and_administration"),
        ("Rekovelle fertility treatment side effects", "warnings"),
        ("do I need to have a drink of water with Fosamax", "warnings"),
    ],
)
def test_a18_lay_cues_need_a_medicine_and_their_own_sense(query, not_cued):
    cues = _named_cues(query)
    assert cues == () if not_cued is None else not_cued not in cues


def test_a5_cues_keep_first_appearance_order():
    query = "side effects and dosing and storage of Tagrisso"
    assert section_cues_for(query, extended=True) == (
        "adverse_reactions",
        "dosage_and_administration",
        "storage",
    )


def test_a5_is_the_product_default_and_the_seed_stays_reachable():
    assert PipelineSettings().routing.extended_section_cues is True
    query = "side effects of osimertinib"
    assert detect_retrieval_intent(query).section_cues == ("adverse_reactions",)
    assert detect_retrieval_intent(query, extended_section_cues=False).section_cues == ()


@pytest.mark.parametrize(
    "query",
    ["warning", "warnings", "dosage", "dosing", "indications", "indication", "usage"],
)
def test_a5_r_int_6_cues_are_a_subset_of_the_table(query):
    seed = section_cues_for(f"{query} of X", extended=False)
    table = section_cues_for(f"{query} of X", extended=True)
    assert len(seed) == 1 and len(table) == 1
    assert SEED_CUE_SECTIONS[seed[0]] == table[0]


def test_a5_every_seed_cue_names_a_table_section():
    sections = {row.section for row in SECTION_TABLE}
    assert {SEED_CUE_SECTIONS[cue] for _, cue in SEED_QUERY_CUES} <= sections
    assert sections <= set(CANONICAL_SECTIONS)


def test_a5_cue_equals_the_stored_section_value_for_the_section_score():
    node = Node(node_id="n", text="Take one tablet.", metadata={"biomed_section": "storage"})
    intent = detect_retrieval_intent("should Lucentis be kept in the refrigerator")
    assert section_match_score(node, intent.section_cues) == 1.0


@pytest.mark.parametrize(
    ("heading", "section"),
    [
        ("Dose reduction", "dosage_and_administration"),
        ("Dose modifications for toxicity", "dosage_and_administration"),
        ("Missed dose", "dosage_and_administration"),
        ("Overdosage", "dosage_and_administration"),
        ("Pregnancy and breast-feeding", "warnings"),
        ("Driving and using machines", "warnings"),
        ("Ingredients", "description"),
        # unchanged ones
        ("How to take Tagrisso", "dosage_and_administration"),
        ("Possible side effects", "adverse_reactions"),
        ("How to store Tagrisso", "storage"),
        ("Contents of the pack and other information", "description"),
        ("Warnings and precautions", "warnings"),
        ("What is in this leaflet", "overview"),
        ("Methods", "methods"),
        ("Acknowledgements", "body"),
    ],
)
def test_a5_ingest_headings_use_the_same_section_words(heading, section):
    assert canonical_section(heading) == section


def test_an_interactions_sub_heading_inside_section_2_answers_the_interactions_cue():
    # EMA leaflets have no interactions section: "Other medicines and Tasigna" and
    # "Tasigna with food and drink" are sub-headings of section 2 (warnings)
    cues = detect_retrieval_intent("Tasigna food interaction").section_cues
    assert cues == ("drug_interactions",)
    meta = {"biomed_section": "warnings"}
    food = Node(
        node_id="a",
        text="Tasigna with food and drink Do not take Tasigna with food.",
        metadata=meta,
    )
    medicines = Node(
        node_id="b", text="Other medicines and Tasigna Tell your doctor.", metadata=meta
    )
    driving = Node(node_id="c", text="Driving and using machines Be careful.", metadata=meta)
    assert section_match_score(food, cues) == 1.0
    assert section_match_score(medicines, cues) == 1.0
    assert section_match_score(driving, cues) == 0.0


def _count_script():
    path = Path(__file__).resolve().parents[2] / "scripts" / "section_cue_counts.py"
    spec = importlib.util.spec_from_file_location("section_cue_counts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a18_the_count_script_counts_leaflet_sections_by_number(tmp_path):
    module = _count_script()
    (tmp_path / "drug_labels").mkdir()
    rows = [
        ("3. How to take X", "Do not crush or chew the tablets."),
        ("2. What you need to know before you take X", "Avoid grapefruit juice."),
        ("3. How to take X", "Take it with grapefruit juice or water."),
        ("Package leaflet: Information for the user", "grapefruit"),  # no number: left out
    ]
    with open(tmp_path / "drug_labels" / "ema_leaflet_sections.jsonl", "w") as handle:
        for section, text in rows:
            handle.write(json.dumps({"drug": "x", "section": section, "text": text}) + "\n")
    counts = {cue: c for _, cue, c in module.cue_counts(module.section_texts(tmp_path))}
    assert counts["grapefruits?"] == {"2": 1, "3": 1}
    crush = next(c for cue, c in counts.items() if cue.startswith("(?:chew|crush)(?:ed)? or"))
    assert crush == {"3": 1}


@pytest.mark.parametrize(
    "query",
    [
        "Tagrisso rash",
        "vivid dreams on Valdoxan",
        "breaking out in spots on Rinvoq",
        "tickly dry cough after starting Entresto",
        "room spinning a few days after my Emgality injection",
        "mum is irritable and restless since the donepezil",
        "Ozempic constipation and bloating",
        # no cue before A-21 (A-5's food and tests words do not cue them)
        "contact your doctor if you get a rash on Tagrisso",
        "I get diarrhoea after eating on Orlistat",
    ],
)
def test_a21_a_drug_and_a_symptom_cue_the_side_effects(query):
    assert detect_retrieval_intent(query).section_cues == ("adverse_reactions",)


@pytest.mark.parametrize(
    ("query", "cues"),
    [
        # the symptom is what the medicine is asked for
        ("Veoza for hot flushes", ()),
        ("is Veoza for my hot flushes", ()),
        ("something to help with the itching on Dupixent", ()),
        ("can Xyzal stop the sneezing", ()),
        # another cue wins; no medicine, or a class only: no leaflet of one drug
        ("how to store Humira when it is hot", ("storage",)),
        ("rash on my arm after gardening", ()),
        ("dopamine agonist for restless legs, I cant sleep", ()),  # A-26/27: inferred
        # a symptom the drug's own indications name: what it is for
        ("Veoza hot flushes", ()),
        ("Aerius hives", ()),
        ("Resolor constipation", ()),
        ("Quviviq insomnia", ()),
        # "span" is no "spin"; a symptom word in another sense
        ("Keytruda life span", ()),
        ("Humira pen left in a hot car", ()),
        ("Trelegy dry powder", ()),
        ("best spot to inject Dupixent", ()),
        ("Jardiance sick day rules", ()),
        ("flush Ozempic needles down the toilet", ()),
        # what to do about it: sections 2 and 3
        ("watery diarrhoea for a week on Constella, should I carry on", ()),
        ("Verzenios: what should the patient do at the first sign of diarrhoea?", ()),
    ],
)
def test_a21_no_side_effect_cue_for_what_a_medicine_treats(query, cues):
    assert _named_cues(query) == cues


def test_a21_seed_cues_have_no_symptom_cue():
    drugs = ("osimertinib",)
    assert section_cues_for("Tagrisso rash", extended=False, drugs=drugs) == ()
    assert section_cues_for("Tagrisso rash", extended=True, drugs=drugs) == ("adverse_reactions",)
    assert section_cues_for("Tagrisso rash", extended=True, drugs=()) == ()


def test_a21_each_symptom_word_is_a_section_4_word_of_the_leaflets():
    module = _count_script()
    data = Path(__file__).resolve().parents[3] / "shared" / "data"
    if not (data / "drug_labels" / "ema_leaflet_sections.jsonl").exists():
        pytest.skip("../shared/data is not here")
    counts = module.side_effect_word_counts(module.section_texts(data))
    weak = {
        word: dict(by_section)
        for word, by_section in counts.items()
        if by_section["4"] < module.MIN_SECTION4_LEAFLETS
        or by_section["4"] < module.MIN_SECTION4_SHARE * sum(by_section.values())
    }
    assert weak == {}


@pytest.mark.parametrize(
    "query",
    [
        "antibiotic for Delhi belly",
        "is there a jab that protects against lockjaw",
        "what can the GP prescribe for piles",
        "tablets to prevent altitude sickness",
        "how is gout treated",
        "which medicine treats gout",
        "can I get a cream for my eczema",
        "tablets to stop new kidney stones forming",
        # a class named by a word of its own, asked for a condition
        "SSRIs for anxiety",
        "proteasome inhibitors for multiple myeloma",
    ],
)
def test_a26_a_request_for_a_treatment_cues_the_indications(query):
    intent = detect_retrieval_intent(query, general_cue=False)
    assert intent.section_cues == ("indications_and_usage",)
    assert not intent.section_cues_implied  # A-26 as session 19 left it: words and all
    # A-27 gives the same cue, inferred
    assert detect_retrieval_intent(query).section_cues == intent.section_cues
    assert detect_retrieval_intent(query).section_cues_implied
    # the switch off is A-5 alone: no section asked for
    off = detect_retrieval_intent(query, treatment_cue=False, general_cue=False)
    assert off.section_cues == ()


@pytest.mark.parametrize(
    ("query", "cues"),
    [
        # another section is asked for: that one alone
        ("dose of antibiotics for a child", ("dosage_and_administration",)),
        ("side effects of tablets for high blood pressure", ("adverse_reactions",)),
        # a question about a named drug: its own cues, none here
        ("cream for the rash Tagrisso gave me", ()),
        ("Kisqali tablets for breast cancer", ()),
        # a medicine named by a plain word is asked about as A-18 reads it
        ("can you crush tablets for epilepsy", ("dosage_and_administration",)),
        ("how long does the cream for eczema last after opening", ("storage",)),
        # what a medicine did, not what it is for
        ("my tablets for diabetes gave me a rash", ()),
        # no request for a treatment
        ("what causes gout", ()),
        ("what should I take before surgery", ()),
        ("what can I take with my blood pressure tablets", ()),
        ("what does the doctor take blood for", ()),
        ("drugs for which a REMS programme is required", ()),
        ("statins for which patients", ()),
        ("medicines to stop before surgery", ()),
    ],
)
def test_a26_no_treatment_cue_beside_another_or_without_a_request(query, cues):
    assert detect_retrieval_intent(query, general_cue=False).section_cues == cues


def test_a26_is_the_product_default():
    assert PipelineSettings().routing.treatment_section_cue is True


@pytest.mark.parametrize(
    "query",
    [
        # a condition, by its everyday or its clinical name, with no request words
        "acid reflux and heartburn",
        "hereditary angioedema prophylaxis",
        "does diabetes cause kidney damage",  # A-18's "does X cause" needs a medicine
        "does high LDL cholesterol cause a stroke",  # a lab value is no medicine
        "my blood pressure drops when I stand up, is it normal to feel dizzy",
        "which cream is best for which type of eczema",
        "I always throw up after a general anaesthetic. Is there anything to stop it first?",
        # a kind of medicine and no condition
        "EGFR tyrosine kinase inhibitor tablets",
        # A-26's requests are A-27's too
        "antibiotic for Delhi belly",
        "dopamine agonist for restless legs, I cant sleep",
    ],
)
def test_a27_a_question_that_names_no_drug_cues_the_indications(query):
    intent = detect_retrieval_intent(query)
    assert intent.section_cues == ("indications_and_usage",)
    assert intent.section_cues_implied
    off = detect_retrieval_intent(query, treatment_cue=False, general_cue=False)
    assert off.section_cues == ()
    assert not off.section_cues_implied


@pytest.mark.parametrize(
    ("query", "cues"),
    [
        # a section the question names is its only cue, named by its words
        ("side effects of tablets for high blood pressure", ("adverse_reactions",)),
        ("can you crush tablets for epilepsy", ("dosage_and_administration",)),
        ("what are these tablets used for", ("indications_and_usage",)),
        # a question that names a drug asks about that drug
        ("Kisqali tablets for breast cancer", ()),
        ("Tagrisso rash", ("adverse_reactions",)),
        # what a medicine did, not what it is for
        ("my tablets for diabetes gave me a rash", ()),
        # a medicine named by a substance or a plain word is read by A-18 first
        ("how long do the eye drops last once opened", ("storage",)),
        ("is there gelatin in iron tablets", ("description",)),
        # a treatment request is read so too, as A-26 read it
        ("what can I take for hay fever while trying for a baby", ("warnings",)),
        # about no condition (A-26's exclusions)
        ("drugs for which a REMS programme is required", ()),
        ("medicines to stop before surgery", ()),
        ("which tablets do I need to stop 7 days before an operation", ()),
        ("which medicines should be stopped before surgery", ()),
        # a label asked for (R-INT-2) is no question about section 1
        ("prescribing information of SGLT2 inhibitors", ()),
        # a structure question carries no cue (R-INT-1)
        ("SMILES of caffeine", ()),
    ],
)
def test_a27_no_inferred_cue_beside_a_named_one_a_drug_or_what_a_medicine_did(query, cues):
    intent = detect_retrieval_intent(query)
    assert intent.section_cues == cues
    assert not intent.section_cues_implied


def test_a27_needs_the_extended_cues_and_no_structure_question():
    # R-INT-1's chemical workflow carries no cue, inferred or not; the seed's cues none
    assert not detect_retrieval_intent("compound that inhibits EGFR").section_cues_implied
    seed = detect_retrieval_intent("acid reflux and heartburn", extended_section_cues=False)
    assert seed.section_cues == ()
    assert not seed.section_cues_implied


def test_a27_is_the_product_default():
    assert PipelineSettings().routing.general_section_cue is True

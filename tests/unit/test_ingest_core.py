"""R-ING-1..5: readers, sections, chunking, profiles, primary drugs (the runner against
real Milvus and PostgreSQL is in tests/integration)."""

import dataclasses
import json

import pytest

from pipeline.ingest.chunker import chunk_document
from pipeline.ingest.profile import document_profile, target_collections
from pipeline.ingest.read_compounds import compound_record
from pipeline.ingest.read_drug_labels import active_substances, split_local_representatives
from pipeline.ingest.readers import detect_format, read_source
from pipeline.ingest.records import SourceRecord
from pipeline.ingest.runner import IngestRunner, content_hash, validate_record
from pipeline.ingest.sections import canonical_section, leaflet_section_numbers
from pipeline.schema import CHUNK_METADATA_KEYS
from pipeline.settings import IngestSettings, PipelineSettings
from pipeline.vocabulary import Entity, Vocabulary
from tests.support.fakes import HashingTextEncoder, InMemoryRegistry, InMemoryVectorStore

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("heading", "kind", "section"),
    [
        ("1. What tagrisso is and what it is used for", "leaflet", "indications_and_usage"),
        ("2. What you need to know before you take tagrisso", "leaflet", "warnings"),
        ("3. How to take tagrisso", "leaflet", "dosage_and_administration"),
        ("4. Possible side effects", "leaflet", "adverse_reactions"),
        ("5. How to store tagrisso", "leaflet", "storage"),
        ("6. Contents of the pack and other information", "leaflet", "description"),
        ("Indications and Usage", "label", "indications_and_usage"),
        ("BOXED WARNING", "label", "warnings"),
        ("Contraindications", "label", "contraindications"),
        ("Methods", "paper", "methods"),
        ("Results and Discussion", "paper", "results"),
        ("Background", "paper", "introduction"),
        ("Anything", "compound", "compound"),
        ("Acknowledgements", "paper", "body"),
    ],
)
def test_r_ing_2_section_aliases(heading, kind, section):
    assert canonical_section(heading, kind) == section


def leaflet(text, section="4. Possible side effects", index=4, drugs=("osimertinib",)):
    return SourceRecord(
        document_id="ema-tagrisso",
        document_name="Tagrisso (osimertinib)",
        title="Tagrisso",
        text=text,
        section_title=section,
        section_index=index,
        kind="leaflet",
        drugs=drugs,
    )


def test_r_ing_1_every_chunk_carries_the_metadata_keys(vocabulary):
    drafts = chunk_document(
        [leaflet("Diarrhoea. Rash. Dry skin.")], "labels", vocabulary, IngestSettings()
    )
    assert len(drafts) == 1
    metadata = drafts[0].metadata
    assert set(CHUNK_METADATA_KEYS) - {"node_id"} <= set(metadata)
    assert metadata["biomed_section"] == "adverse_reactions"
    assert metadata["kb_name"] == "labels"
    assert drafts[0].text.startswith("Tagrisso — 4. Possible side effects\n")
    assert metadata["content_summary"].startswith("4. Possible side effects: Diarrhoea.")


def test_chunks_respect_size_and_overlap(vocabulary):
    sentences = [f"Sentence number {i} says something about dosing." for i in range(60)]
    settings = IngestSettings(chunk_tokens=40, chunk_overlap=10)
    drafts = chunk_document([leaflet(" ".join(sentences))], "kb", vocabulary, settings)
    assert len(drafts) > 5
    bodies = [draft.text.split("\n", 1)[1] for draft in drafts]
    assert all(len(body.split()) <= 40 for body in bodies)
    assert bodies[0].split(". ")[-1].rstrip(".") in bodies[1]  # overlap repeats a sentence
    assert len({draft.chunk_id for draft in drafts}) == len(drafts)


def test_very_long_sentence_is_cut_not_dropped(vocabulary):
    drafts = chunk_document(
        [leaflet("word " * 500)],
        "kb",
        vocabulary,
        IngestSettings(chunk_tokens=100, chunk_overlap=10),
    )
    assert len(drafts) >= 5


def test_r_ing_3_primary_drugs_document_drugs_else_chunk_mentions(vocabulary):
    named = chunk_document(
        [leaflet("Tell your doctor if you take warfarin.")], "kb", vocabulary, IngestSettings()
    )
    assert named[0].metadata["primary_drugs"] == ["osimertinib"]
    paper = SourceRecord(
        document_id="p1",
        document_name="A trial",
        text=("Tagrisso improved survival. Osimertinib was well tolerated versus gefitinib."),
        kind="paper",
    )
    drafts = chunk_document([paper], "kb", vocabulary, IngestSettings())
    assert drafts[0].metadata["primary_drugs"][:2] == ["osimertinib", "gefitinib"]


def test_r_ing_3_a_leaflet_also_has_the_drug_its_product_name_reads_as():
    vocabulary = Vocabulary(
        [
            Entity("certolizumab", "drug", aliases=("Cimzia",)),
            Entity("certolizumab pegol", "drug"),
            Entity("osimertinib", "drug", aliases=("Tagrisso",)),
            Entity("Gardasil", "drug"),
        ],
        known_words=(),
    )
    # a question naming Cimzia asks for "certolizumab": its leaflet must carry that name
    cimzia = "Cimzia contains the active substance certolizumab pegol, which is a ..."
    assert active_substances("cimzia", cimzia, vocabulary) == [
        "certolizumab pegol",
        "certolizumab",
    ]
    tagrisso = "Tagrisso contains the active substance osimertinib."
    assert active_substances("tagrisso", tagrisso, vocabulary) == ["osimertinib"]
    assert active_substances("tagrisso", "It treats lung cancer.", vocabulary) == ["osimertinib"]
    assert active_substances("unknown", "It treats lung cancer.", vocabulary) == []
    assert active_substances("gardasil", "Gardasil is a vaccine.", vocabulary) == ["Gardasil"]


def test_r_ing_4_profiles(vocabulary):
    settings = PipelineSettings()
    general = SourceRecord(
        document_id="g",
        document_name="Holiday policy",
        text="Staff may take twenty days of holiday each year.",
    )
    biomedical = SourceRecord(
        document_id="b",
        document_name="Notes",
        text="Osimertinib inhibits EGFR in lung cancer; gefitinib too.",
    )
    assert document_profile([general], vocabulary, settings) == "general"
    assert document_profile([biomedical], vocabulary, settings) == "biomedical"
    assert [c.name for c in target_collections("general", settings)] == ["general_text"]
    assert [c.name for c in target_collections("biomedical", settings)] == [
        "biomed_text",
        "medcpt_text",
    ]
    off = PipelineSettings(collections={"general_text": {"enabled": False}})
    assert [c.name for c in target_collections("general", off)] == ["biomed_text"]


def test_r_ing_5_compound_smiles_backfilled_from_vocabulary(vocabulary):
    record = compound_record("osimertinib", "X1", "", vocabulary)
    assert record.smiles and "SMILES:" in record.text
    assert "Tagrisso" in record.text
    assert record.drugs == ("osimertinib",)


def test_validation_reasons():
    assert validate_record(SourceRecord(document_id="", document_name="x", text="t"))
    assert validate_record(SourceRecord(document_id="a b", document_name="x", text="t"))
    assert validate_record(SourceRecord(document_id="a", document_name="x", text="   "))
    assert validate_record(SourceRecord(document_id="a", document_name="x", text="a\x00b"))
    assert validate_record(SourceRecord(document_id="a", document_name="x", text="ok")) is None


def test_readers_detect_and_read(tmp_path, vocabulary):
    beir = tmp_path / "corpus.jsonl"
    beir.write_text(json.dumps({"_id": "MED-1", "title": "T", "text": "body"}) + "\n")
    ema = tmp_path / "ema.jsonl"
    ema.write_text(
        json.dumps(
            {
                "drug": "tagrisso",
                "section": "1. What tagrisso is",
                "text": "Tagrisso contains the active substance osimertinib.",
                "source_file": "x.fsh",
            }
        )
        + "\n"
    )
    fda = tmp_path / "fda.jsonl"
    fda.write_text(
        json.dumps(
            {
                "unii": "U1",
                "product_names": ["TAGRISSO", "osimertinib"],
                "indications": "TAGRISSO is indicated for NSCLC.",
            }
        )
        + "\n"
    )
    markdown = tmp_path / "notes.md"
    markdown.write_text("# My notes\nintro\n## Dosing\ntake one\n")
    assert [detect_format(p) for p in (beir, ema, fda, markdown)] == [
        "beir",
        "ema-leaflets",
        "fda-indications",
        "markdown",
    ]
    ema_record = next(read_source(ema, vocabulary))
    assert ema_record.document_name == "Tagrisso (osimertinib) — EMA package leaflet"
    fda_record = next(read_source(fda, vocabulary))
    assert fda_record.document_name == "Tagrisso (osimertinib) — FDA label"
    assert [r.section_title for r in read_source(markdown, vocabulary)] == ["My notes", "Dosing"]
    with pytest.raises(ValueError, match="format"):
        list(read_source(beir, vocabulary, "pdf"))


LIXIANA = [  # as the source split it: one heading late from "3." on
    ("1. What lixiana is and what it is used for", "Lixiana contains edoxaban."),
    ("2. What you need to know before you take lixiana",
     "Do not take Lixiana if you are allergic to edoxaban."),
    ("3. How to take lixiana", "Take special care with Lixiana if you have APS."),
    ("4. Possible side effects", "Always take this medicine exactly as your doctor says."),
    ("5. How to store lixiana", "Like all medicines, this medicine can cause side effects."),
    ("6. Contents of the pack and other information",
     "Keep this medicine out of the sight and reach of children."),
]


def test_r_ing_2_the_hiv_side_effects_opening_keeps_section_4_in_place():
    # Norvir: section 4 opens "During HIV therapy ...", its side effects run on under
    # "5. How to store" and the storage text is under "6."
    headings = ["1. What", "2. What you need", "3. How to take", "4. Possible side effects",
                "5. How to store", "6. Contents of the pack"]
    texts = [
        "Norvir contains ritonavir.",
        "Do not take Norvir if you are allergic to ritonavir.",
        "Always take this medicine exactly as your doctor has told you.",
        "During HIV therapy there may be an increase in weight and in blood lipids.",
        "In patients with haemophilia there have been reports of increased bleeding.",
        "Keep this medicine out of the sight and reach of children.",
    ]
    assert leaflet_section_numbers(headings, texts) == [1, 2, 3, 4, 4, 5]


def test_r_ing_2_a_leaflet_split_one_heading_late_is_read_by_its_qrd_openings(
    tmp_path, vocabulary
):
    headings, texts = zip(*LIXIANA, strict=True)
    assert leaflet_section_numbers(list(headings), list(texts)) == [1, 2, 2, 3, 4, 5]
    on_time = [*texts[:2], *texts[3:], "What Lixiana contains: edoxaban."]
    assert leaflet_section_numbers(["What is in this leaflet", *headings], ["...", *on_time]) == [
        None, 1, 2, 3, 4, 5, 6]
    path = tmp_path / "ema.jsonl"
    path.write_text("".join(
        json.dumps({"drug": "lixiana", "section": h, "text": t}) + "\n" for h, t in LIXIANA
    ))
    records = list(read_source(path, vocabulary))
    sections = [canonical_section(r.section_title, "leaflet") for r in records]
    assert sections == ["indications_and_usage", "warnings", "warnings",
                        "dosage_and_administration", "adverse_reactions", "storage"]
    assert [r.section_index for r in records] == list(range(6))  # chunk ids keep their place


def test_a9_the_local_representatives_list_is_its_own_last_section(tmp_path, vocabulary):
    six = (
        "What Tasigna contains The active substance is nilotinib. Marketing Authorisation "
        "Holder Novartis Europharm Limited Dublin Ireland. For any information about this "
        "medicine, please contact the local representative of the Marketing Authorisation "
        "Holder: Belgique Novartis Pharma N.V. Tel: +32 2 246 16 Danmark Tlf: +45 39 16 84"
    )
    rows = [
        ("1. What tasigna is and what it is used for", "Tasigna contains nilotinib."),
        ("6. Contents of the pack and other information", six),
        ("5. How to store tasigna", "Keep this medicine out of the sight and reach of children."),
    ]
    path = tmp_path / "ema.jsonl"
    path.write_text(
        "".join(json.dumps({"drug": "tasigna", "section": h, "text": t}) + "\n" for h, t in rows)
    )
    records = list(read_source(path, vocabulary))
    sections = [canonical_section(r.section_title, "leaflet") for r in records]
    assert sections == ["indications_and_usage", "description", "storage", "contacts"]
    assert [r.section_index for r in records] == [0, 1, 2, 3]  # the others keep their ids
    assert records[1].text.endswith("Dublin Ireland.") and "Tel" not in records[1].text
    assert records[3].text.startswith("For any information") and "Tlf: +45" in records[3].text
    # a section 6 without the list, or a list sentence elsewhere, is left whole
    assert split_local_representatives("Manufacturer Sandoz GmbH Austria.") == (
        "Manufacturer Sandoz GmbH Austria.",
        "",
    )


def test_a_file_its_reader_cannot_read_is_named_in_the_error(tmp_path, vocabulary):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Notes\ntext\n")
    (folder / "binary.md").write_bytes(b"# \xfc\xfd\xfe not utf-8\n")
    with pytest.raises(ValueError, match=r"binary\.md: 'utf-8' codec"):
        list(read_source(folder, vocabulary))


def hashing_runner(vocabulary, **settings):
    """An ingest runner on in-memory stores, every document role on one hashing encoder,
    MedCPT's collection off: ``(runner, store, registry)``."""
    store, registry = InMemoryVectorStore(), InMemoryRegistry()
    encoder = HashingTextEncoder()
    roles = ("pubmedbert", "medcpt-article", "general-text", "molformer")
    runner = IngestRunner(
        store=store,
        registry=registry,
        encoders=dict.fromkeys(roles, encoder),
        settings=PipelineSettings(collections={"medcpt_text": {"enabled": False}}, **settings),
        vocabulary=vocabulary,
    )
    return runner, store, registry


async def test_runner_twice_adds_nothing_and_reports_bad_records(vocabulary):
    runner, store, _ = hashing_runner(vocabulary)
    records = [
        leaflet("Diarrhoea and rash."),
        SourceRecord(document_id="bad id!", document_name="x", text="t"),
        compound_record("gefitinib", "C1", "", vocabulary),
    ]
    first = await runner.run(records, "kb")
    assert first.documents_written == 2 and len(first.failures) == 1
    assert "characters" in first.failures[0].reason
    counts = {name: len(rows) for name, rows in store.rows.items()}
    assert counts == {"biomed_text": 1, "chemical": 1}
    second = await runner.run(records, "kb")
    assert second.documents_written == 0 and second.documents_unchanged == 2
    assert {name: len(rows) for name, rows in store.rows.items()} == counts
    changed = await runner.run([leaflet("Diarrhoea. Rash. " + "More text. " * 400)], "kb")
    assert changed.documents_written == 1
    assert all(
        node_id.startswith("biomed_text:ema-tagrisso#s4-c") for node_id in store.rows["biomed_text"]
    )
    assert len(store.rows["biomed_text"]) > 1


async def test_a_repeated_record_is_a_failure_and_the_first_one_stays(tmp_path, vocabulary):
    # Two JSONL rows with one id: both were section 0 of one document, so the second
    # row's chunks took the first one's ids and its text replaced the first unseen.
    source = tmp_path / "dup.jsonl"
    rows = [
        {"id": "d-1", "text": "First text about aspirin and bleeding."},
        {"id": "d-2", "text": "Another document."},
        {"id": "d-1", "text": "Second text about warfarin."},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    runner, store, _ = hashing_runner(vocabulary)
    report = await runner.run(read_source(source, vocabulary, "auto"), "kb")
    assert report.documents_seen == 2 and report.documents_written == 2
    assert [failure.record_id for failure in report.failures] == ["d-1#0"]
    assert "repeats document d-1" in report.failures[0].reason
    assert "dup.jsonl" in report.failures[0].reason
    stored = [node.text for node, _, _ in store.rows["biomed_text"].values()]
    assert any("aspirin" in text for text in stored)
    assert not any("warfarin" in text for text in stored)


async def test_a_changed_title_namespace_or_source_is_written_again(vocabulary):
    # The content hash covered text, section titles, SMILES and tags only: a new title
    # (part of every chunk's encoded text), source URI or namespace was "unchanged".
    runner, store, registry = hashing_runner(vocabulary)
    base = leaflet("Diarrhoea and rash.")
    assert (await runner.run([base], "kb")).documents_written == 1
    assert (await runner.run([base], "kb")).documents_unchanged == 1

    retitled = dataclasses.replace(base, title="Tagrisso 80 mg")
    assert (await runner.run([retitled], "kb")).documents_written == 1
    (node, _, _), = store.rows["biomed_text"].values()
    assert node.text.startswith("Tagrisso 80 mg — ")

    moved = dataclasses.replace(retitled, source_uri="https://example.org/tagrisso-v2")
    assert (await runner.run([moved], "kb")).documents_written == 1
    assert registry.documents["ema-tagrisso"].source_uri == "https://example.org/tagrisso-v2"

    again = await runner.run([moved], "kb", namespace="oncology")
    assert again.documents_written == 1
    assert registry.documents["ema-tagrisso"].namespace == "oncology"
    assert (await runner.run([moved], "kb", namespace="oncology")).documents_unchanged == 1


async def test_documents_are_registered_under_the_configured_namespace(vocabulary):
    # the supplementary recall looks documents up in pipeline.namespace (R-SUP-2); the
    # ingest registered every document under "biomed" whatever the config said
    runner, _, registry = hashing_runner(vocabulary, namespace="oncology")
    assert (await runner.run([leaflet("Diarrhoea and rash.")], "kb")).documents_written == 1
    assert registry.documents["ema-tagrisso"].namespace == "oncology"
    assert await registry.lookup_document_ids_by_name_terms(["tagrisso"], None, "oncology") == [
        "ema-tagrisso"
    ]
    assert await registry.lookup_document_ids_by_name_terms(["tagrisso"], None, "biomed") == []


async def test_a_changed_vocabulary_writes_the_documents_again():
    # Ingest stores what the vocabulary found (primary drugs, lexical texts): with a new
    # vocabulary the old chunks kept the old entities, and the runner called them unchanged.
    def stored_primary_drugs(store):
        return [sorted(node.metadata["primary_drugs"])
                for rows in store.rows.values() for node, _, _ in rows.values()]

    gefitinib = Entity("gefitinib", "drug")
    record = leaflet("Diarrhoea after gefitinib or TAGRISSO in 3 patients.", drugs=())
    runner, store, _ = hashing_runner(Vocabulary([gefitinib]))
    assert (await runner.run([record], "kb")).documents_written == 1
    assert stored_primary_drugs(store) == [["gefitinib"]]

    runner.vocabulary = Vocabulary([gefitinib])  # the same entities, loaded again
    assert (await runner.run([record], "kb")).documents_unchanged == 1

    osimertinib = Entity("osimertinib", "drug", aliases=("tagrisso",))
    runner.vocabulary = Vocabulary([gefitinib, osimertinib])
    assert (await runner.run([record], "kb")).documents_written == 1
    assert stored_primary_drugs(store) == [["gefitinib", "osimertinib"]]
    assert (await runner.run([record], "kb")).documents_unchanged == 1


def test_a_jsonl_row_moved_in_its_file_keeps_its_content_hash(tmp_path, vocabulary):
    # its source URI was FILE:LINE, and every field is hashed: a line added above made
    # every row below "changed", written and encoded again
    rows = [{"id": f"doc-{i}", "title": f"Doc {i}", "text": f"Text {i}."} for i in range(3)]
    path = tmp_path / "docs.jsonl"

    def hashes(ordered):
        path.write_text("".join(json.dumps(row) + "\n" for row in ordered), encoding="utf-8")
        records = list(read_source(path, vocabulary))
        return {r.document_id: content_hash([r], "kb", "salt") for r in records}

    assert hashes(rows) == hashes([rows[2], rows[0], rows[1]])


async def test_new_bm25_settings_write_the_documents_again(vocabulary):
    # The stored BM25 text follows the lexical settings (title weight, synonyms): with
    # new ones the old texts stayed, and the runner called the documents unchanged.
    record = leaflet("Take TAGRISSO once a day.", drugs=())
    runner, _, _ = hashing_runner(vocabulary)
    assert (await runner.run([record], "kb")).documents_written == 1
    runner.settings = PipelineSettings(
        collections={"medcpt_text": {"enabled": False}}, lexical={"title_weight": 3}
    )
    assert (await runner.run([record], "kb")).documents_written == 1
    assert (await runner.run([record], "kb")).documents_unchanged == 1

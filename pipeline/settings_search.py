"""Settings of the recall side of the pipeline: collections (SPEC.md section 0), routing,
hybrid fusion, the BM25 leg, RRF and the entity-anchored supplement. Re-exported by
``pipeline.settings``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import Field

from pipeline.settings_base import T, _Frozen, choice_for_scope
from pipeline.vocabulary_entities import EntityType

#: How R-HYB-3's term overlap counts a query term (``HybridSettings.term_weighting``).
TermWeighting = Literal["uniform", "pool_idf"]

__all__ = [
    "CollectionSpec",
    "HybridSettings",
    "LexicalSettings",
    "RoutingSettings",
    "RrfSettings",
    "SupplementSettings",
    "default_collections",
]


class CollectionSpec(_Frozen):
    """One vector collection (SPEC.md section 0).

    ``query_encoder`` / ``document_encoder`` are encoder *roles*; the model profile decides
    which weights fill a role. ``modality`` is what the document side embeds: ``text``,
    ``smiles`` or ``image``. ``hybrid`` adds the BM25 leg and R-HYB-1 fusion (R-HYB-4).

    ``metric`` is how the dense leg compares query and document vectors, from the model
    card of its encoders (it must equal their ``models.specs.EncoderSpec.metric``, checked
    where the profile is loaded, ``deployments.config.AppConfig``): ``cosine`` (default;
    the encoders return unit vectors, Milvus index metric ``COSINE``) or ``ip`` (the raw
    inner product of unnormalised vectors, Milvus ``IP``; MedCPT, whose card and training
    score by inner product). The dense leg of an ``ip`` collection is ordered by the raw
    inner product; its ``vector_similarity`` stays the cosine in [0, 1] (R-HYB-2, see
    ``pipeline.stores.milvus_search``).
    """

    name: str
    query_encoder: str
    document_encoder: str
    modality: str = "text"
    hybrid: bool = False
    enabled: bool = True
    metric: Literal["cosine", "ip"] = "cosine"


def default_collections() -> dict[str, CollectionSpec]:
    """The seven collections of SPEC.md section 0, keyed by their logical name."""
    rows = [
        ("biomed_text", "pubmedbert", "pubmedbert", "text", True),
        ("medcpt_text", "medcpt-query", "medcpt-article", "text", True),
        ("general_text", "general-text", "general-text", "text", False),
        ("chemical", "molformer", "molformer", "smiles", False),
        ("radiology", "biomedclip", "biomedclip", "image", False),
        ("pathology", "uni2", "uni2", "image", False),
        ("visual", "general-vl", "general-vl", "image", False),
    ]
    return {
        name: CollectionSpec(
            name=name,
            query_encoder=query,
            document_encoder=document,
            modality=modality,
            hybrid=hybrid,
        )
        for name, query, document, modality, hybrid in rows
    }


class RoutingSettings(_Frozen):
    """Routing configuration (R-RT-2..9). Collection names are logical keys of
    ``PipelineSettings.collections``."""

    default_dual_text_search: bool = False
    medcpt_dual_search: bool = False
    exploratory_search_collections: tuple[str, ...] = ()
    collection_recall_top_k: int = Field(20, ge=1, le=1024)
    #: A-5: section cues from the table of section words, lay phrasing included (see
    #: intent.section_cues_for); False is R-INT-6 as the seed wrote it.
    extended_section_cues: bool = True
    #: A-12: every stage reads the question with each misspelt drug name corrected (A-6):
    #: BM25 and the encoders meet ``Stocrin``, not ``Stcrin``. False leaves the typo in
    #: the text the stages read (only the entities are corrected, as A-6 alone did).
    search_corrected_query: bool = True
    #: A-19: a misspelt word of the question that is no name ("psoraisis", "migrane",
    #: "diarhea") is read as the word of the stored leaflets and labels it is one edit
    #: from (``pipeline.spelling``), and every stage reads it so. False corrects drug
    #: names only (A-12).
    correct_misspelt_words: bool = True
    #: A-25: a condition the question names by a lay name only ("piles", "bedwetting")
    #: gets its clinical name in brackets after it, and every stage reads it so ("piles
    #: (haemorrhoids)"; ``pipeline.lay_names``). False: the words as typed (the seed).
    gloss_lay_names: bool = True
    #: A-30: an overdose said in other words ("taken too many paracetamol tablets",
    #: "overdosed on heroin") gets "(<drug> overdose)" after the drug, before the intent
    #: is read (``pipeline.overdose``). False: the words as typed (the seed).
    gloss_overdoses: bool = True
    #: A-34: in a question that asks to treat an overdose ("took a handful of her
    #: oxycodone ... is there an antidote"), a drug whose overdose the labels name by its
    #: class also gets that condition, the drug kept ("(oxycodone overdose, opioid
    #: overdose)"; ``pipeline.overdose_classes``). False: A-30's gloss only. (That such a
    #: question is a reversal question is A-11's cue, turned off with A-11's switches:
    #: ``tier2.reversal_agents``, ``lexical.reversal_words``, ``lexical.reversal_leg``.)
    gloss_class_overdoses: bool = True
    #: A-26: a question that names no drug (a class may be named), cues no section and
    #: asks for a treatment ("antibiotic for Delhi belly", "what can the GP prescribe for
    #: piles") cues the indications (``pipeline.intent.section_cues_for``). Read where
    #: A-27 is off or does not apply (a label question); false there: no cue.
    treatment_section_cue: bool = True
    #: A-27: every question that names no drug, no section and no label cues the
    #: indications ("acid reflux and heartburn"), after A-18's reading where it names a
    #: medicine by a class or a plain word ("how long do the eye drops last once opened"
    #: -> storage); the inferred cue weighs in Tier-2 but adds no sparse words
    #: (``pipeline.intent.general_section_cues``, ``section_cues_implied``). Needs
    #: ``extended_section_cues``. False: A-26 as session 19 left it.
    general_section_cue: bool = True
    #: R-RT-5: a text question that names a drug also searches the chemical collection.
    #: False routes it to text only (a structure question still goes to chemistry, R-RT-3).
    chemical_for_drug_queries: bool = True
    #: R-RT-12: ``all`` adds every collection the scope's documents are in (the seed);
    #: ``query_modalities`` only those whose modality the question carries: text
    #: collections always, SMILES collections for a structure or chemical question,
    #: image collections with an image or in visual mode.
    scope_union: Literal["all", "query_modalities"] = "all"
    biomed_text_collection: str = "biomed_text"
    medcpt_text_collection: str = "medcpt_text"
    general_text_collection: str = "general_text"
    chemical_collection: str = "chemical"
    radiology_collection: str = "radiology"
    pathology_collection: str = "pathology"
    visual_collection: str = "visual"
    radiology_keywords: tuple[str, ...] = (
        "radiology",
        "radiograph",
        "x-ray",
        "xray",
        "chest film",
        "ct scan",
        "computed tomography",
        "mri",
        "magnetic resonance",
        "ultrasound",
        "mammogram",
        "mammography",
        "pet scan",
        "imaging finding",
        "opacity",
        "nodule on ct",
    )
    pathology_keywords: tuple[str, ...] = (
        "pathology",
        "histology",
        "histopathology",
        "biopsy slide",
        "h&e",
        "whole slide",
        "tissue section",
        "immunohistochemistry",
        "ihc stain",
        "cytology",
    )


class HybridSettings(_Frozen):
    """Dense + sparse fusion (R-HYB-1..4). ``alpha`` is the dense weight; a request's
    ``vector_similarity_weight`` overrides it (R-REQ-1 names the same knob)."""

    alpha: float = Field(0.3, ge=0.0, le=1.0)
    hybrid_text_collections: tuple[str, ...] = ("biomed_text", "medcpt_text")
    lexical_leg: bool = True
    #: ``replace``: the plan is ordered by the R-HYB-1 score (the seed). ``rrf``: the
    #: R-HYB-1 ranking joins the dense and BM25 rankings as a third RRF vote, so it
    #: refines the legs' evidence instead of replacing it (A-4's rule, one stage earlier).
    fusion: Literal["replace", "rrf"] = "replace"
    #: The R-HYB-1 ranking's weight in ``rrf`` fusion (each leg weighs 1.0): weighted
    #: RRF; large weights approach ``replace`` with the legs breaking its ties.
    rrf_weight: float = Field(1.0, ge=0.0, le=100.0)
    #: Knowledge base -> fusion, for a kb whose own development set chose differently.
    #: Applies when every kb of the request's scope names the same fusion here.
    fusion_by_kb: dict[str, Literal["replace", "rrf"]] = Field(default_factory=dict)
    #: A-13: ``fusion_by_kb`` (and ``term_weighting_by_kb``) applies to questions that
    #: name a drug, or a class or condition with related drugs
    #: (``pipeline.supplement.names_drug_terms``); one that names none (lay words: "a gel
    #: for a red, flushed face") gets ``fusion``, like a kb without its own choice. The
    #: drug KB chose ``replace`` on questions that all name drugs or classes. False:
    #: ``fusion_by_kb`` and ``term_weighting_by_kb`` for every question.
    fusion_by_kb_needs_drugs: bool = True
    #: A-16: the entities with related drugs that make a question drug-named for A-13's
    #: gate, by ``semantic_type``. None: any (A-13 as written: "antifungal", "diabetes",
    #: "EGFR" all count). ``["gene"]``: a gene target still counts ("EGFR inhibitor"),
    #: while a question that names only a class or a condition gets ``fusion`` and
    #: ``term_weighting``, as a lay question does. A named drug always counts.
    fusion_by_kb_related_types: tuple[EntityType, ...] | None = None
    #: A-44: A-32's short BM25 query of a reversal question also joins the plan's
    #: candidates as its own RRF list after R-HYB-1: with ``fusion`` ``replace`` the
    #: R-HYB-1 score alone orders the union of the legs, and the antidote's chunk, whose
    #: words and vector are far from the long question's, fell out of the Tier-2 window
    #: (Ondexxya 39th for "... swallowed a handful of xarelto ..., antidote for
    #: rivaroxaban?"). Only where R-HYB-1 ran: without it the BM25 leg already holds the
    #: short query's hits (A-32). ``false``: the short query counts only inside that leg.
    reversal_list: bool = True
    #: Canonical sections whose chunks both legs leave out unless the question cues that
    #: section (A-9): a leaflet's list of local representatives answers no medical
    #: question. ``[]`` keeps every chunk (the seed).
    set_aside_sections: tuple[str, ...] = ("contacts",)
    #: A-28: for a question that names no drug, class or gene target and whose one
    #: section cue is the indications (named, or inferred by A-27), each leg of a text
    #: collection also searches within the indications sections, and its two rankings
    #: are fused by RRF (``pipeline.section_recall``); a scope where that search found
    #: nothing is searched once per leg for 5 minutes. ``false``: one search per leg.
    section_recall: bool = True
    #: How R-HYB-3's term overlap counts a query term. ``uniform``: every term 1 (the
    #: seed). ``pool_idf`` (A-14): its BM25 IDF over the plan's candidates
    #: (``pipeline.hybrid.pool_term_weights``), so the rare word that decides a lay
    #: question outweighs the common words around it.
    term_weighting: TermWeighting = "uniform"
    #: Knowledge base -> term weighting, like ``fusion_by_kb`` (and, with
    #: ``fusion_by_kb_needs_drugs``, for questions that name a drug only).
    term_weighting_by_kb: dict[str, TermWeighting] = Field(default_factory=dict)

    def fusion_for(
        self, kb_names: Sequence[str], *, names_drugs: bool
    ) -> Literal["replace", "rrf"]:
        """The fusion of a request scoped to ``kb_names`` (``()``: unscoped) whose
        question does (``names_drugs``) or does not name a drug (A-13)."""
        return self._kb_choice(self.fusion, self.fusion_by_kb, kb_names, names_drugs)

    def term_weighting_for(self, kb_names: Sequence[str], *, names_drugs: bool) -> TermWeighting:
        """R-HYB-3's term weighting for a request scoped to ``kb_names`` whose question
        does (``names_drugs``) or does not name a drug: the kb's own choice applies as
        :meth:`fusion_for`'s does (A-13, A-14)."""
        return self._kb_choice(
            self.term_weighting, self.term_weighting_by_kb, kb_names, names_drugs
        )

    def _kb_choice(
        self, default: T, by_kb: Mapping[str, T], kb_names: Sequence[str], names_drugs: bool
    ) -> T:
        # a kb's own choice is for questions that name drugs (with the gate on)
        if not names_drugs and self.fusion_by_kb_needs_drugs:
            return default
        return choice_for_scope(default, by_kb, kb_names)


class LexicalSettings(_Frozen):
    """BM25 leg (R-REQ-6): domain dictionary, synonyms, section-title weight, minimum
    should match, and (A-8) the form its words are read in, in indexed and query text
    alike (``pipeline.lexical.word_forms``): ``as_written`` is the seed's BM25, which
    meets only the same word form."""

    title_weight: int = Field(2, ge=1, le=5)
    minimum_should_match: float = Field(0.0, ge=0.0, le=1.0)
    synonyms: bool = True
    word_form: Literal["as_written", "lemma", "snowball"] = "lemma"
    #: A-11: a question that asks what reverses a drug ("antidote for dabigatran"), or
    #: since A-34 says an overdose and asks what treats it, also looks for "antidote",
    #: "reversal" and "reverse" (``pipeline.reversal``); ``false``: the query's own words
    #: only (the seed).
    reversal_words: bool = True
    #: A-32: such a question also runs a short BM25 query, its named drugs and conditions
    #: and "antidote reversal reverse overdose", fused by RRF into the leg
    #: (``pipeline.reversal.reversal_hits``, ``fuse_reversal_hits``); ``false``: one query
    #: (the seed), and no A-44 list (``hybrid.reversal_list``).
    reversal_leg: bool = True
    #: A-20: each word of a question also asks for its other spelling (British or
    #: American) where the stored texts use it ("diarrhea" -> "diarrhoea";
    #: ``pipeline.spelling_variants``); ``false``: the spelling typed only (the seed).
    spelling_variants: bool = True
    #: A-24, off by default: a question that names a condition by a lay name or short
    #: form ("high blood pressure", "hep C") also asks BM25 for the condition's own name
    #: ("hypertension", "hepatitis C"). On, "covid" asked for "covid-19", which leaflets'
    #: vaccine warnings write, and three held-out COVID questions lost their answers
    #: (``eval-results/2026-12-06-condition-names``); the vocabulary's names and R-EXP-1's
    #: dense suffix carry the condition either way.
    condition_names: bool = False


class RrfSettings(_Frozen):
    """Reciprocal rank fusion (R-RRF-1)."""

    k: int = Field(60, ge=1)


class SupplementSettings(_Frozen):
    """Entity-anchored supplementary recall (R-SUP-1..4) and injection (R-INJ-1)."""

    enabled: bool = True
    related_drugs_limit: int = Field(4, ge=0)
    per_document_limit: int = Field(4, ge=1)
    min_limit: int = Field(8, ge=1)
    entity_weight: float = 2.0
    lexical_weight: float = 1.0
    dense_weight: float = 0.1
    max_document_ids: int = Field(512, ge=1)
    inject_min_new: int = Field(2, ge=0)
    inject_boost: float = 100.0

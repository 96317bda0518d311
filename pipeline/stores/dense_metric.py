"""The dense leg's metric per collection: cosine or inner product, and the scores a hit
gets under each.

A collection's metric (``CollectionSpec.metric``) follows its encoders' model cards:
``cosine`` for encoders that return unit vectors (Milvus index metric ``COSINE``), ``ip``
for models scored by the raw inner product of unnormalised vectors (Milvus ``IP``).
MedCPT (``ncbi/MedCPT-Query-Encoder`` / ``ncbi/MedCPT-Article-Encoder``; Jin et al. 2023,
Bioinformatics 39(11) btad651) is one: its embeddings are the ``[CLS]`` last hidden state,
not normalised, and relevance is the inner product of query and article embeddings, so an
article vector's norm carries signal that a cosine would discard.

Milvus fixes an index's metric when the collection is created and a search must pass the
same ``metric_type``; :func:`metric_from_index` reads it back from ``describe_index``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "DENSE_METRICS",
    "cosine_to_unit",
    "dense_scores",
    "metric_from_index",
    "milvus_metric",
]

#: Collection metric (``CollectionSpec.metric``) -> Milvus ``metric_type`` of the dense index.
DENSE_METRICS: dict[str, str] = {"cosine": "COSINE", "ip": "IP"}


def milvus_metric(metric: str) -> str:
    """The Milvus ``metric_type`` of collection metric ``metric`` (``COSINE`` / ``IP``).

    Raises:
        ValueError: an unknown metric.
    """
    try:
        return DENSE_METRICS[metric]
    except KeyError:
        raise ValueError(
            f"unknown dense metric {metric!r}; one of {sorted(DENSE_METRICS)}"
        ) from None


def metric_from_index(description: Mapping[str, Any] | None) -> str:
    """The collection metric (``cosine`` / ``ip``) of a ``describe_index`` answer for the
    dense field; ``cosine`` when there is none (no index yet: how collections were made
    before metrics were configurable).

    Raises:
        ValueError: the index has a metric the store does not use (e.g. ``L2``).
    """
    if not description:
        return "cosine"
    raw = str(description.get("metric_type") or "COSINE").upper()
    for metric, milvus in DENSE_METRICS.items():
        if raw == milvus:
            return metric
    raise ValueError(f"dense index metric {raw!r} is not one of {sorted(DENSE_METRICS.values())}")


def cosine_to_unit(distance: float) -> float:
    """Cosine similarity clipped to [0, 1] (R-HYB-2: ``max(0, cos)``, NaN -> 0)."""
    if math.isnan(distance):
        return 0.0
    return min(1.0, max(0.0, float(distance)))


def dense_scores(
    distance: float, metric: str, query_norm: float = 1.0, stored: Any = None
) -> tuple[float, float]:
    """``(score, vector_similarity)`` of one dense hit whose Milvus distance is ``distance``.

    ``cosine``: both are the cosine clipped to [0, 1] (R-HYB-2), as before.

    ``ip``: ``score`` is the raw inner product, which orders the dense leg as the model
    card scores (MedCPT: relevance = query . article embedding, unnormalised; Jin et al.
    2023); it is unbounded and not comparable to a cosine. ``vector_similarity`` stays
    what R-HYB-2 and the response define, the cosine in [0, 1]:
    ``max(0, ip / (|q| |d|))`` with ``query_norm`` = ``|q|`` and ``stored`` the (d,) stored
    vector; 0.0 when either norm is 0 or ``stored`` is None.
    """
    if metric != "ip":
        unit = cosine_to_unit(distance)
        return unit, unit
    score = float(distance) if not math.isnan(distance) else float("-inf")
    if stored is None:
        return score, 0.0
    norm = float(np.linalg.norm(np.asarray(stored, dtype=np.float64))) * float(query_norm)
    if not norm > 0.0 or not math.isfinite(score):
        return score, 0.0
    return score, cosine_to_unit(score / norm)

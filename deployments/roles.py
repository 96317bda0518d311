"""Which model roles a configuration needs, and in which model deployment each runs:
the one mapping the app builder, the GPU planner, the benchmarks and the loaders share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from deployments.config import AppConfig
from models.loader import load_role
from models.specs import EncoderSpec, Modality, ModelProfile

__all__ = [
    "CROSS_ENCODER_ROLE",
    "ModelDeployment",
    "load_shared",
    "model_deployments",
    "model_sharing_key",
    "query_roles",
    "uses_cross_encoder",
]

CROSS_ENCODER_ROLE = "medcpt-rerank"


def query_roles(config: AppConfig) -> list[str]:
    """Roles the service needs at query time: the query encoders of the enabled
    collections and their Tier-1 encoders, that the model profile enables."""
    roles: list[str] = []
    enabled = config.pipeline.enabled_collections()
    for name, spec in enabled.items():
        roles.append(spec.query_encoder)
        tier1 = config.pipeline.tier1.encoders.get(name)
        if tier1:
            roles.append(tier1)
    available = set(config.models.enabled_roles())
    return [role for role in dict.fromkeys(roles) if role in available]


def uses_cross_encoder(config: AppConfig) -> bool:
    """True when Tier-2 reranks with the cross-encoder role and the profile fills it
    (a ``stored_vectors`` scorer reads stored vectors and needs no cross-encoder)."""
    return (
        config.pipeline.tier2.policy.value != "none"
        and config.pipeline.tier2.scorer.value == "cross_encoder"
        and CROSS_ENCODER_ROLE in config.models.enabled_roles()
    )


def model_sharing_key(spec: EncoderSpec) -> str:
    """Roles whose specs match but for the role name (and card) share one model."""
    return spec.model_dump_json(exclude={"role", "model_card"})


@dataclass(frozen=True)
class ModelDeployment:
    """One model deployment: its Serve name, its kind and the roles it serves (roles
    that share weights share a deployment, named after the first)."""

    name: str
    kind: Literal["encoder", "image_encoder", "cross_encoder"]
    roles: tuple[str, ...]


def model_deployments(config: AppConfig) -> list[ModelDeployment]:
    """The model deployments ``config`` needs, in a stable order: ``Encoder-<role>`` and
    ``ImageEncoder-<role>`` per group of roles sharing weights, then ``CrossEncoder``
    when Tier-2 uses it."""
    groups: dict[str, list[str]] = {}
    for role in query_roles(config):
        groups.setdefault(model_sharing_key(config.models.spec(role)), []).append(role)
    result = []
    for roles in groups.values():
        if config.models.spec(roles[0]).modality == Modality.IMAGE:
            result.append(
                ModelDeployment(f"ImageEncoder-{roles[0]}", "image_encoder", tuple(roles))
            )
        else:
            result.append(ModelDeployment(f"Encoder-{roles[0]}", "encoder", tuple(roles)))
    if uses_cross_encoder(config):
        result.append(ModelDeployment("CrossEncoder", "cross_encoder", (CROSS_ENCODER_ROLE,)))
    return result


def load_shared(profile: ModelProfile, roles: Sequence[str]) -> dict[str, Any]:
    """Role -> loaded model for ``roles``; roles with one sharing key get one object.

    Raises:
        models.errors.ModelNotAvailableError: weights missing (names model and remedy).
    """
    loaded: dict[str, Any] = {}
    result = {}
    for role in roles:
        key = model_sharing_key(profile.spec(role))
        if key not in loaded:
            loaded[key] = load_role(role, profile)
        result[role] = loaded[key]
    return result

"""Which model roles a configuration needs, and where."""

from __future__ import annotations

from deployments.config import AppConfig

__all__ = ["CROSS_ENCODER_ROLE", "query_roles", "uses_cross_encoder"]

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

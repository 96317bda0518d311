"""API keys of the service (``auth`` in a profile): which knowledge bases each bearer
token may read. With none configured the service is open (local use)."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, SecretStr

__all__ = ["ApiKey", "AuthSettings"]


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ApiKey(_Settings):
    """One bearer token and the knowledge bases it may read (``*`` = all). ``admin``
    keys may also read the operational endpoint ``GET /v1/stats`` and see
    ``GET /v1/collections`` row counts of every knowledge base."""

    name: str
    key: SecretStr | None = None
    key_env: str | None = None
    kb_ids: tuple[str, ...] = ("*",)
    admin: bool = False

    def secret(self) -> str | None:
        """The token: ``key``, else the value of environment variable ``key_env``."""
        if self.key is not None:
            return self.key.get_secret_value()
        if self.key_env:
            return os.environ.get(self.key_env) or None
        return None


class AuthSettings(_Settings):
    """Optional API keys; with none configured the service is open (local use)."""

    api_keys: tuple[ApiKey, ...] = ()

"""What both framework retrievers share: the client pair they are thin over, the search
options they pass on, and the metadata they attach to each chunk (one place for both)."""

from __future__ import annotations

import asyncio
from typing import Any

from biomed_search.client import (
    DEFAULT_URL,
    AsyncBiomedSearchClient,
    BiomedSearchClient,
    RetryPolicy,
    SearchOptions,
    check_options,
)
from pipeline.schema import Chunk

__all__ = ["SCORE_KEYS", "ClientPair", "chunk_metadata", "missing_extra"]

#: Metadata keys that are scores, not content: kept out of what an LLM or an embedding
#: model is shown (LlamaIndex's ``excluded_*_metadata_keys``).
SCORE_KEYS: tuple[str, ...] = (
    "similarity",
    "vector_similarity",
    "term_similarity",
    "relevance",
    "score_parts",
)


def missing_extra(framework: str, extra: str) -> ImportError:
    """The ImportError raised when a framework adapter's optional dependency is absent."""
    return ImportError(
        f"biomed_search.integrations.{extra} needs {framework}: "
        f"pip install 'biomed-search[{extra}]'"
    )


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """A result chunk's metadata for a framework node or document: where it comes from
    (``chunk_id``, ``document_id``, ``document_name``, ``kb_id``, ``collection``,
    ``biomed_section``, ``highlight`` when asked for) and its scores (``similarity`` in
    [0, 1], ``vector_similarity``, ``term_similarity``, ``relevance``, and the non-null
    ``score_parts``)."""
    metadata: dict[str, Any] = {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "document_name": chunk.document_name,
        "kb_id": chunk.kb_id,
        "collection": chunk.collection,
        "biomed_section": chunk.biomed_section,
        "similarity": chunk.similarity,
        "vector_similarity": chunk.vector_similarity,
        "term_similarity": chunk.term_similarity,
        "relevance": chunk.relevance,
        "score_parts": chunk.score_parts.model_dump(exclude_none=True),
    }
    if chunk.highlight is not None:
        metadata["highlight"] = chunk.highlight
    return metadata


class ClientPair:
    """A blocking client and an asyncio client over one service, with the search options
    a retriever sends on every query.

    The async client is made on first use inside a running event loop and made again if a
    later call runs in another loop (an ``httpx.AsyncClient`` belongs to one loop).

    Args:
        base_url, api_key, timeout, retry: as :class:`BiomedSearchClient`.
        client: use this blocking client instead of making one.
        async_client: use this async client instead of making one.
        options: :class:`SearchOptions` fields (``kb_ids``, ``page_size``, ...).

    Raises:
        TypeError: an unknown option name.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        client: BiomedSearchClient | None = None,
        async_client: AsyncBiomedSearchClient | None = None,
        **options: Any,
    ) -> None:
        self.options: SearchOptions = check_options(options)
        self.base_url = base_url
        self._settings: dict[str, Any] = {"api_key": api_key, "timeout": timeout, "retry": retry}
        self._owns_client = client is None
        self.client = client or BiomedSearchClient(base_url, **self._settings)
        self._given_async = async_client
        self._made_async: tuple[asyncio.AbstractEventLoop, AsyncBiomedSearchClient] | None = None

    def search(self, query: str) -> list[Chunk]:
        """The chunks for ``query`` with the pair's options, best first (blocking).

        Raises:
            BiomedSearchAPIError, BiomedSearchConnectionError: as the client's ``search``.
        """
        return self.client.search(query, **self.options).chunks

    async def asearch(self, query: str) -> list[Chunk]:
        """The chunks for ``query`` with the pair's options, best first (asyncio).

        Raises:
            BiomedSearchAPIError, BiomedSearchConnectionError: as the client's ``search``.
        """
        return (await self._async_client().search(query, **self.options)).chunks

    async def aclose(self) -> None:
        """Close the connection pools of the clients this pair made (not given ones)."""
        if self._made_async is not None:
            await self._made_async[1].aclose()
            self._made_async = None
        self.close()

    def close(self) -> None:
        """Close the blocking client's pool, if this pair made it."""
        if self._owns_client:
            self.client.close()

    def _async_client(self) -> AsyncBiomedSearchClient:
        if self._given_async is not None:
            return self._given_async
        loop = asyncio.get_running_loop()
        if self._made_async is None or self._made_async[0] is not loop:
            self._made_async = (loop, AsyncBiomedSearchClient(self.base_url, **self._settings))
        return self._made_async[1]

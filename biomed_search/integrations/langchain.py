"""``BiomedSearchRetriever`` for LangChain: a ``BaseRetriever`` over the biomed-search
service (``pip install 'biomed-search[langchain]'``).

    from biomed_search.integrations.langchain import BiomedSearchRetriever

    retriever = BiomedSearchRetriever(base_url="http://127.0.0.1:8000", page_size=5)
    for doc in retriever.invoke("osimertinib side effects"):
        print(doc.metadata["similarity"], doc.metadata["document_name"])

Each result is a ``Document``: ``id`` the chunk id, ``page_content`` the chunk's content,
``metadata`` :func:`biomed_search.integrations.common.chunk_metadata` (document,
section, kb, ``similarity`` in [0, 1] and the score parts), best first.
"""

from __future__ import annotations

from typing import Any

from biomed_search.client import (
    DEFAULT_URL,
    AsyncBiomedSearchClient,
    BiomedSearchClient,
    RetryPolicy,
)
from biomed_search.integrations.common import ClientPair, chunk_metadata, missing_extra
from pipeline.schema import Chunk

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import PrivateAttr
except ImportError as error:  # the optional extra is not installed
    raise missing_extra("langchain-core", "langchain") from error

__all__ = ["BiomedSearchRetriever"]


class BiomedSearchRetriever(BaseRetriever):
    """LangChain retriever over ``POST /v1/search`` (``invoke`` and ``ainvoke``).

    Args:
        base_url: the service (``make serve``: ``http://127.0.0.1:8000``).
        api_key: Bearer key; default: ``BIOMED_SEARCH_API_KEY`` from the environment.
        timeout: seconds per request.
        retry: the client's :class:`~biomed_search.client.RetryPolicy`.
        client, async_client: ready clients to use instead of making them.
        tags, metadata: as LangChain's ``BaseRetriever`` (for callbacks and tracing).
        **options: search options sent with every query (``kb_ids``, ``page_size``,
            ``similarity_threshold``, ``route_mode``, ...; see
            :class:`~biomed_search.client.SearchOptions`).

    Raises:
        TypeError: an unknown option name.
    """

    base_url: str = DEFAULT_URL
    _service: ClientPair = PrivateAttr()

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        client: BiomedSearchClient | None = None,
        async_client: AsyncBiomedSearchClient | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(base_url=base_url, tags=tags, metadata=metadata)
        self._service = ClientPair(
            base_url,
            api_key=api_key,
            timeout=timeout,
            retry=retry,
            client=client,
            async_client=async_client,
            **options,
        )

    def close(self) -> None:
        """Close the connection pools the retriever made (optional: they close at exit)."""
        self._service.close()

    async def aclose(self) -> None:
        """Close the connection pools the retriever made, the async one too."""
        await self._service.aclose()

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        """The service's chunks for ``query`` as Documents, best first."""
        return [_document(chunk) for chunk in self._service.search(query)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        """The service's chunks for ``query`` as Documents, best first (asyncio)."""
        return [_document(chunk) for chunk in await self._service.asearch(query)]


def _document(chunk: Chunk) -> Document:
    return Document(id=chunk.chunk_id, page_content=chunk.content, metadata=chunk_metadata(chunk))

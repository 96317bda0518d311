"""``BiomedSearchRetriever`` for LlamaIndex: a ``BaseRetriever`` over the biomed-search
service (``pip install 'biomed-search[llamaindex]'``).

    from biomed_search.integrations.llamaindex import BiomedSearchRetriever

    retriever = BiomedSearchRetriever("http://127.0.0.1:8000", page_size=5)
    for hit in retriever.retrieve("osimertinib side effects"):
        print(f"{hit.score:.3f}", hit.node.metadata["document_name"])

Each result is a ``NodeWithScore``: a ``TextNode`` whose ``id_`` is the chunk id, whose
text is the chunk's content and whose metadata is
:func:`biomed_search.integrations.common.chunk_metadata` (document, section, kb, scores
and score parts), scored with the chunk's ``similarity`` (in [0, 1], best first). An LLM
and an embedding model see only the document name and section of the metadata.
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
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as error:  # the optional extra is not installed
    raise missing_extra("llama-index-core", "llamaindex") from error

__all__ = ["BiomedSearchRetriever"]

#: Metadata an LLM prompt and an embedding are given; the rest (ids, scores) is not.
SHOWN_KEYS = frozenset({"document_name", "biomed_section"})


class BiomedSearchRetriever(BaseRetriever):
    """LlamaIndex retriever over ``POST /v1/search`` (sync ``retrieve`` and async
    ``aretrieve``).

    Args:
        base_url: the service (``make serve``: ``http://127.0.0.1:8000``).
        api_key: Bearer key; default: ``BIOMED_SEARCH_API_KEY`` from the environment.
        timeout: seconds per request.
        retry: the client's :class:`~biomed_search.client.RetryPolicy`.
        client, async_client: ready clients to use instead of making them.
        callback_manager, verbose: as LlamaIndex's ``BaseRetriever``.
        **options: search options sent with every query (``kb_ids``, ``page_size``,
            ``similarity_threshold``, ``route_mode``, ...; see
            :class:`~biomed_search.client.SearchOptions`).

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
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **options: Any,
    ) -> None:
        self._service = ClientPair(
            base_url,
            api_key=api_key,
            timeout=timeout,
            retry=retry,
            client=client,
            async_client=async_client,
            **options,
        )
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def close(self) -> None:
        """Close the connection pools the retriever made (optional: they close at exit)."""
        self._service.close()

    async def aclose(self) -> None:
        """Close the connection pools the retriever made, the async one too."""
        await self._service.aclose()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The service's chunks for the query, best first."""
        return [_node(chunk) for chunk in self._service.search(query_bundle.query_str)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """The service's chunks for the query, best first (asyncio)."""
        chunks = await self._service.asearch(query_bundle.query_str)
        return [_node(chunk) for chunk in chunks]


def _node(chunk: Chunk) -> NodeWithScore:
    metadata = chunk_metadata(chunk)
    hidden = [key for key in metadata if key not in SHOWN_KEYS]
    node = TextNode(
        id_=chunk.chunk_id,
        text=chunk.content,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )
    return NodeWithScore(node=node, score=chunk.similarity)

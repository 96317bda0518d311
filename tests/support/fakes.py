"""In-memory fakes of the pipeline ports, for the retrieval-core tests only (issue 2: the
real Milvus, PostgreSQL and models are tested in their own suites). They implement the
protocols of ``pipeline/ports.py`` honestly: cosine search, a BM25 scorer, ILIKE-style
name look-up, a bag-of-words encoder whose similarities mean something."""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Sequence

import numpy as np

from pipeline.errors import BackendUnavailable
from pipeline.schema import DocumentRecord, Node, NodeWithScore, ScopeFilter
from pipeline.structure import morgan_fingerprint, standardize, tanimoto
from pipeline.text import tokens


class HashingTextEncoder:
    """Bag-of-words hashed into ``dimension`` buckets, L2-normalised: (n, d) float32."""

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension
        self.calls: list[int] = []

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokens(text):
                matrix[row, zlib.crc32(token.encode()) % self.dimension] += 1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return matrix / norms

    async def encode(self, texts: Sequence[str], titles: Sequence[str] | None = None) -> np.ndarray:
        self.calls.append(len(texts))
        return self.encode_sync(texts)


class FailingEncoder(HashingTextEncoder):
    """An encoder whose backend is down."""

    async def encode(self, texts: Sequence[str], titles: Sequence[str] | None = None) -> np.ndarray:
        raise BackendUnavailable("encoder replica is down")


class OverlapCrossEncoder:
    """Scores a text by how many query tokens it contains (a stand-in relevance model)."""

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        self.batch_sizes.append(len(texts))
        wanted = set(tokens(query))
        return np.array(
            [len(wanted & set(tokens(text))) + 0.001 * len(text) / 1000 for text in texts],
            dtype=np.float32,
        )


class FailingCrossEncoder:
    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        raise RuntimeError("cross-encoder exploded")


class ShortCrossEncoder:
    """Returns one score too few (R-T2-4)."""

    async def score(
        self, query: str, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> np.ndarray:
        return np.ones(max(0, len(texts) - 1), dtype=np.float32)


def _in_scope(node: Node, scope: ScopeFilter | None, sections: Sequence[str] = ()) -> bool:
    metadata = node.metadata
    if sections and metadata.get("biomed_section") not in sections:
        return False
    if scope is None:
        return True
    if scope.kb_names and metadata.get("kb_name") not in scope.kb_names:
        return False
    if scope.document_ids and metadata.get("document_id") not in scope.document_ids:
        return False
    return not scope.tags or bool(set(scope.tags) & set(metadata.get("tags") or []))


class InMemoryVectorStore:
    """Dense search by each collection's metric (``cosine``: scores max(0, cos);
    ``ip``: score = raw inner product, vector_similarity = max(0, cos), as the Milvus
    store) plus BM25 (k1=0.9, b=0.4) over lexical texts."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, tuple[Node, np.ndarray, str]]] = {}
        self.fail_collections: set[str] = set()
        self.metrics: dict[str, str] = {}

    async def upsert(
        self,
        collection: str,
        nodes: Sequence[Node],
        vectors: np.ndarray,
        lexical_texts: Sequence[str] | None = None,
    ) -> int:
        table = self.rows.setdefault(collection, {})
        for index, node in enumerate(nodes):
            lexical = lexical_texts[index] if lexical_texts is not None else node.text
            table[node.node_id] = (node, np.asarray(vectors[index], dtype=np.float32), lexical)
        return len(nodes)

    def _table(self, collection: str) -> dict[str, tuple[Node, np.ndarray, str]]:
        if collection in self.fail_collections:
            raise BackendUnavailable(f"collection {collection} unavailable")
        return self.rows.get(collection, {})

    async def search_dense(
        self,
        collection: str,
        vector: np.ndarray,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        hits = []
        for node, stored, _ in self._table(collection).values():
            if not _in_scope(node, scope, sections):
                continue
            similarity = max(0.0, float(np.dot(stored, vector)))
            score = similarity
            if self.metrics.get(collection) == "ip":
                score = float(np.dot(stored, vector))
                norms = float(np.linalg.norm(stored) * np.linalg.norm(vector))
                similarity = min(1.0, max(0.0, score / norms)) if norms > 0 else 0.0
            found = (
                node.model_copy(update={"embedding": tuple(stored.tolist())})
                if with_vectors
                else node
            )
            hits.append(
                NodeWithScore(
                    node=found,
                    score=score,
                    collection=collection,
                    vector_similarity=similarity,
                )
            )
        hits.sort(key=lambda item: (-item.score, item.node.node_id))
        return hits[:top_k]

    async def search_lexical(
        self,
        collection: str,
        query_text: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
        sections: Sequence[str] = (),
    ) -> list[NodeWithScore]:
        table = [
            row for row in self._table(collection).values() if _in_scope(row[0], scope, sections)
        ]
        documents = [Counter(tokens(lexical)) for _, _, lexical in table]
        if not documents:
            return []
        average = sum(sum(doc.values()) for doc in documents) / len(documents)
        query = set(tokens(query_text))
        frequency = {term: sum(1 for doc in documents if term in doc) for term in query}
        hits = []
        for (node, stored, _), doc in zip(table, documents, strict=True):
            length = sum(doc.values())
            score = 0.0
            for term in query:
                if term not in doc:
                    continue
                idf = math.log(
                    1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5)
                )
                tf = doc[term]
                score += idf * tf * 1.9 / (tf + 0.9 * (1 - 0.4 + 0.4 * length / average))
            if score > 0:
                found = (
                    node.model_copy(update={"embedding": tuple(stored.tolist())})
                    if with_vectors
                    else node
                )
                hits.append(NodeWithScore(node=found, score=score, collection=collection))
        hits.sort(key=lambda item: (-item.score, item.node.node_id))
        return hits[:top_k]

    def _structures(self, collection: str, scope: ScopeFilter | None):
        for node, _, _ in self._table(collection).values():
            smiles = str(node.metadata.get("smiles") or "")
            structure = standardize(smiles) if smiles else None
            if structure is not None and _in_scope(node, scope):
                yield node, structure

    async def search_fingerprint(
        self,
        collection: str,
        fingerprint: bytes,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        hits = []
        for node, structure in self._structures(collection, scope):
            similarity = tanimoto(fingerprint, morgan_fingerprint(structure))
            if similarity > 0:
                hits.append(
                    NodeWithScore(
                        node=node,
                        score=similarity,
                        collection=collection,
                        vector_similarity=similarity,
                    )
                )
        hits.sort(key=lambda item: (-item.score, item.node.node_id))
        return hits[:top_k]

    async def search_inchikey(
        self,
        collection: str,
        inchikey: str,
        top_k: int,
        scope: ScopeFilter | None = None,
        with_vectors: bool = False,
    ) -> list[NodeWithScore]:
        hits = [
            NodeWithScore(node=node, score=1.0, collection=collection, vector_similarity=1.0)
            for node, structure in self._structures(collection, scope)
            if inchikey and structure.inchikey == inchikey
        ]
        hits.sort(key=lambda item: item.node.node_id)
        return hits[:top_k]

    async def count(self, collection: str, kb_names: Sequence[str] | None = None) -> int:
        rows = self.rows.get(collection, {}).values()
        if kb_names is None:
            return len(rows)
        return sum(1 for row in rows if row.get("kb_name") in set(kb_names))

    async def ensure_collection(
        self,
        name: str,
        dimension: int,
        hybrid: bool,
        structure: bool = False,
        metric: str = "cosine",
    ) -> None:
        self.rows.setdefault(name, {})
        self.metrics.setdefault(name, metric)

    async def delete_documents(self, collection: str, document_ids: Sequence[str]) -> None:
        table = self.rows.get(collection, {})
        for node_id in [
            i for i, row in table.items() if row[0].metadata.get("document_id") in set(document_ids)
        ]:
            del table[node_id]

    async def delete_knowledge_base(self, collection: str, kb_name: str) -> int:
        table = self.rows.get(collection, {})
        doomed = [i for i, row in table.items() if row[0].metadata.get("kb_name") == kb_name]
        for node_id in doomed:
            del table[node_id]
        return len(doomed)

    async def has_collection(self, collection: str) -> bool:
        return collection in self.rows


class InMemoryRegistry:
    """The documents registry as a dict; name look-up is case-insensitive substring."""

    def __init__(self) -> None:
        self.documents: dict[str, DocumentRecord] = {}
        self.lookups: list[tuple[tuple[str, ...], object]] = []

    async def register_documents(self, records: Sequence[DocumentRecord]) -> int:
        for record in records:
            self.documents[record.document_id] = record
        return len(records)

    async def lookup_document_ids_by_name_terms(
        self,
        terms: Sequence[str],
        kb_name: str | Sequence[str] | None = None,
        namespace: str | None = "biomed",
    ) -> list[str]:
        self.lookups.append((tuple(terms), kb_name))
        kbs = {kb_name} if isinstance(kb_name, str) else set(kb_name or [])
        found = [
            record.document_id
            for record in self.documents.values()
            if any(term.lower() in record.name.lower() for term in terms)
            and (not kbs or record.kb_name in kbs)
            and (namespace is None or record.namespace == namespace)
        ]
        return sorted(found)

    async def lookup_documents(self, document_ids: Sequence[str]) -> dict[str, DocumentRecord]:
        return {i: self.documents[i] for i in document_ids if i in self.documents}

    async def delete_documents(self, document_ids: Sequence[str]) -> int:
        return sum(self.documents.pop(i, None) is not None for i in set(document_ids))

    async def document_ids_for_scope(self, scope: ScopeFilter) -> list[str]:
        if scope.is_empty:
            return []
        return sorted(
            record.document_id
            for record in self.documents.values()
            if (not scope.kb_names or record.kb_name in scope.kb_names)
            and (not scope.document_ids or record.document_id in scope.document_ids)
        )

    async def collections_for_scope(self, scope: ScopeFilter) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        for record in self.documents.values():
            if scope.kb_names and record.kb_name not in scope.kb_names:
                continue
            if scope.document_ids and record.document_id not in scope.document_ids:
                continue
            for collection, encoder in zip(record.collections, record.encoders, strict=True):
                if (collection, encoder) not in pairs:
                    pairs.append((collection, encoder))
        return pairs

"""Store adapters behind the ports of ``pipeline/ports.py`` (DESIGN.md "Data stores").

- ``milvus`` / ``milvus_schema``: ``MilvusVectorStore`` (``VectorStore``) and its layout;
  its parts: ``milvus_collections`` (create, load, drop, count), ``milvus_writes``
  (upsert, delete, fetch), ``milvus_search`` (dense and BM25 search, with the dynamic
  batching of ``search_batching``), ``milvus_structure_search`` (fingerprint and
  InChIKey), ``milvus_errors``.
- ``registry`` / ``migrate``: ``PostgresDocumentRegistry`` (``DocumentRegistry``) and
  its SQL migrations (``migrations/NNN_name.sql``).
- ``expressions``: safe Milvus filter expressions for request scopes.

The servers themselves (Milvus Lite, embedded PostgreSQL) are started by
``deployments/runtime/``; this package only talks to them.

Nothing is imported here, so that importing one adapter does not load the others'
client libraries.
"""

__all__: list[str] = []

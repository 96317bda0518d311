"""Store adapters behind the ports of ``pipeline/ports.py`` (DESIGN.md "Data stores").

- ``embedded``: managed local servers (Milvus Lite server process, embedded PostgreSQL).
- ``milvus`` / ``milvus_schema``: ``MilvusVectorStore`` (``VectorStore``) and its layout.
- ``registry`` / ``migrate``: ``PostgresDocumentRegistry`` (``DocumentRegistry``) and
  its SQL migrations (``migrations/NNN_name.sql``).
- ``expressions``: safe Milvus filter expressions for request scopes.

Nothing is imported here, so that importing one adapter does not load the others'
client libraries.
"""

__all__: list[str] = []

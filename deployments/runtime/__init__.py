"""Local processes the service runs beside itself: the embedded Milvus Lite and
PostgreSQL servers and the namespaced Milvus 2.3 standalone (no ray, no torch)."""

from deployments.runtime.milvus_lite import MilvusLiteServer
from deployments.runtime.postgres import EmbeddedPostgres
from deployments.runtime.processes import find_free_port

__all__ = ["EmbeddedPostgres", "MilvusLiteServer", "find_free_port"]

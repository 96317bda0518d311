"""SQL text of the PostgreSQL document registry (``pipeline/stores/registry.py``).

Every value is a query parameter (``%s`` / ``%(name)s``); the tables are those of
``pipeline/stores/migrations/``.
"""

__all__ = [
    "INSERT_COLLECTION",
    "LOOKUP",
    "NAME_LOOKUP",
    "SCOPE_COLLECTIONS",
    "SCOPE_WHERE",
    "UPSERT_DOCUMENT",
]

UPSERT_DOCUMENT = """
INSERT INTO documents AS d
    (document_id, name, file_name, source_uri, kb_name, namespace, tags, content_hash, metadata)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (document_id) DO UPDATE SET
    name = EXCLUDED.name, file_name = EXCLUDED.file_name, source_uri = EXCLUDED.source_uri,
    kb_name = EXCLUDED.kb_name, namespace = EXCLUDED.namespace, tags = EXCLUDED.tags,
    content_hash = COALESCE(NULLIF(EXCLUDED.content_hash, ''), d.content_hash),
    metadata = d.metadata || EXCLUDED.metadata,
    updated_at = now()
WHERE (d.name, d.file_name, d.source_uri, d.kb_name, d.namespace, d.tags, d.content_hash,
       d.metadata)
   IS DISTINCT FROM
      (EXCLUDED.name, EXCLUDED.file_name, EXCLUDED.source_uri, EXCLUDED.kb_name,
       EXCLUDED.namespace, EXCLUDED.tags,
       COALESCE(NULLIF(EXCLUDED.content_hash, ''), d.content_hash),
       d.metadata || EXCLUDED.metadata)
"""
INSERT_COLLECTION = """
INSERT INTO document_collections (document_id, collection, encoder) VALUES (%s, %s, %s)
ON CONFLICT DO NOTHING
"""
#: ``{matches}`` / ``{ranks}`` are built from placeholders only (one per term), so each
#: pattern is a bound parameter: the planner folds ``ESCAPE`` into a constant and the
#: trigram index serves every ``ILIKE`` (a join against ``unnest(patterns)`` did not).
NAME_LOOKUP = r"""
SELECT d.document_id
FROM documents AS d
WHERE ({matches})
  AND (%(namespace)s::text IS NULL OR d.namespace = %(namespace)s)
  AND (%(kb_names)s::text[] IS NULL OR d.kb_name = ANY(%(kb_names)s))
ORDER BY CASE {ranks} END, d.document_id COLLATE "C"
LIMIT %(limit)s
"""
SCOPE_WHERE = """
    (%(ids)s::text[] IS NULL OR d.document_id = ANY(%(ids)s))
AND (%(kb_names)s::text[] IS NULL OR d.kb_name = ANY(%(kb_names)s))
AND (%(tags)s::text[] IS NULL OR d.tags && %(tags)s)
"""
# Distinct (collection, encoder) pairs by a loose index scan of the pair index (a few
# index probes, not a pass over every row), each kept if one document in scope has it
# (LATERAL ... LIMIT 1 stops at the first). 12.5 -> 2 ms p50 for a 4,583-document kb.
SCOPE_COLLECTIONS = (
    """
WITH RECURSIVE pairs AS (
    (SELECT collection, encoder FROM document_collections
     ORDER BY collection, encoder LIMIT 1)
    UNION ALL
    SELECT following.collection, following.encoder FROM pairs AS p, LATERAL (
        SELECT collection, encoder FROM document_collections
        WHERE (collection, encoder) > (p.collection, p.encoder)
        ORDER BY collection, encoder LIMIT 1
    ) AS following
)
SELECT p.collection COLLATE "C", p.encoder COLLATE "C" FROM pairs AS p, LATERAL (
    SELECT 1 FROM document_collections AS c JOIN documents AS d USING (document_id)
    WHERE c.collection = p.collection AND c.encoder = p.encoder AND"""
    + SCOPE_WHERE
    + """    LIMIT 1
) AS in_scope
ORDER BY 1, 2
"""
)
LOOKUP = """
SELECT d.document_id, d.name, d.file_name, d.source_uri, d.kb_name, d.namespace, d.tags,
       d.content_hash, d.metadata,
       coalesce(array_agg(c.collection ORDER BY c.collection COLLATE "C", c.encoder COLLATE "C")
                FILTER (WHERE c.collection IS NOT NULL), '{}'),
       coalesce(array_agg(c.encoder ORDER BY c.collection COLLATE "C", c.encoder COLLATE "C")
                FILTER (WHERE c.collection IS NOT NULL), '{}')
FROM documents AS d LEFT JOIN document_collections AS c USING (document_id)
WHERE d.document_id = ANY(%s)
GROUP BY d.document_id
"""

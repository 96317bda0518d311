-- 001: the documents registry (R-ING-6) and the collections / encoders each document was
-- ingested into (R-RT-12, R-T2-10). Name look-ups (R-SUP-2) use a pg_trgm GIN index.
-- pg_trgm folds case itself, so a trigram index on name serves `name ILIKE '%term%'`
-- directly (an index on lower(name) would only serve `lower(name) LIKE ...`).

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE IF NOT EXISTS documents (
    document_id  text PRIMARY KEY,
    name         text NOT NULL DEFAULT '',
    file_name    text NOT NULL DEFAULT '',
    source_uri   text NOT NULL DEFAULT '',
    kb_name      text NOT NULL DEFAULT 'default',
    namespace    text NOT NULL DEFAULT 'biomed',
    tags         text[] NOT NULL DEFAULT '{}',
    content_hash text NOT NULL DEFAULT '',
    metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS documents_kb_name_idx ON documents (kb_name);
CREATE INDEX IF NOT EXISTS documents_namespace_kb_name_idx ON documents (namespace, kb_name);
CREATE INDEX IF NOT EXISTS documents_tags_idx ON documents USING gin (tags);
CREATE INDEX IF NOT EXISTS documents_name_trgm_idx ON documents USING gin (name gin_trgm_ops);

CREATE TABLE IF NOT EXISTS document_collections (
    document_id text NOT NULL REFERENCES documents (document_id) ON DELETE CASCADE,
    collection  text NOT NULL,
    encoder     text NOT NULL,
    PRIMARY KEY (document_id, collection, encoder)
);

CREATE INDEX IF NOT EXISTS document_collections_collection_idx
    ON document_collections (collection, encoder);

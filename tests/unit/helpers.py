"""Small builders for unit tests."""

from pipeline.schema import Node, NodeWithScore


def hit(node_id, score=1.0, text="", collection="biomed_text", vector=None, term=None, **meta):
    metadata = {"node_id": node_id, **meta}
    return NodeWithScore(
        node=Node(node_id=node_id, text=text or f"text of {node_id}", metadata=metadata),
        score=score,
        collection=collection,
        vector_similarity=vector,
        term_similarity=term,
    )


def ids(items):
    return [item.node.node_id for item in items]

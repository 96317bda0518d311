"""Retrievers for RAG frameworks over :mod:`biomed_search.client`.

- :mod:`biomed_search.integrations.llamaindex`: ``BiomedSearchRetriever`` for LlamaIndex
  (``pip install biomed-search[llamaindex]``);
- :mod:`biomed_search.integrations.langchain`: ``BiomedSearchRetriever`` for LangChain
  (``pip install biomed-search[langchain]``).

Each module imports its framework itself; this package imports neither.
"""

"""Plugin discovery: hybrid (dense + BM25) retrieval over plain documents.

The retrieval core (``engine``, ``embedders``, ``lexical``, ``vectors``) imports neither
the registry nor the store; the service over a registry, and where it keeps vectors and
learned requests (``vector_store``, ``remembered``, ``pgvector``), use both.
Import from the submodules (`engine`, `embedders`, `minilm`, `remote`, ...);
this module imports nothing, so importing the package never loads a model.
"""

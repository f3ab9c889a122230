"""Plugin discovery: hybrid (dense + BM25) retrieval over plain documents.

Self-contained on purpose: nothing here imports the registry or the store.
Import from the submodules (`engine`, `embedders`, `minilm`, `remote`, ...);
this module imports nothing, so importing the package never loads a model.
"""

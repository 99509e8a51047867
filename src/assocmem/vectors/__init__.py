"""Embeddings: the embedder protocol and registry, the local and HTTP
embedders, the vector space.
"""

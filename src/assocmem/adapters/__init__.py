"""Adapters: the CLI, the HTTP server and client, the MCP server.

They import only the public API (`assocmem`, `surface`, `types`, `errors`).
"""

"""Stage 8: GitHub — the REST client and the Actions environment."""

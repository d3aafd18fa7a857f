"""GitHub: the REST client and the Actions environment."""

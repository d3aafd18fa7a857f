"""Stage: compare the results with the stored baseline (stores, statistics, comparison models)."""

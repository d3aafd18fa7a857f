"""What each run spent: tokens, model and tool calls, latency, cost (compared with the baseline in baseline/efficiency.py)."""

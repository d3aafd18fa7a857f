"""What each run spent (tokens, model and tool calls, latency, cost) and whether a pull request made it worse."""

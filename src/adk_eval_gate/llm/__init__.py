"""The model client shared by the stages that call an LLM: the user simulator (targets) and the judges (criteria)."""

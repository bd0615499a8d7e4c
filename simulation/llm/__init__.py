"""The LLM layer: requests and responses, backends, the client with its limits, retries,
hedging and cache, model roles, prompt packs, and the scripted behaviour model."""

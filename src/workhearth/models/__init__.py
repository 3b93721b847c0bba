"""Model-facing types: canonical messages and provider adapters (DESIGN §3, §5)."""

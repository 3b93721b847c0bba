"""The agent runtime: loop, tools, modes and workspace policy, audit (DESIGN §5)."""

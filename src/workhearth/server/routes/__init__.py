"""REST routes, one module per resource (DESIGN §6)."""

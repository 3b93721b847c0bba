"""Team tasks (issue 23): a lead asks, plans and lets the user nudge; specialists with roles
work in parallel in scratch copies; their work is merged back and reviewed."""

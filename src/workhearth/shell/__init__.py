"""Capturing the user's shell and running commands through it (DESIGN §5)."""

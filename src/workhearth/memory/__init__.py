"""Memory: awareness Markdown files, their index, search and context (DESIGN §4)."""

"""Team memory: the bank on a shared PostgreSQL server (issue #13, DESIGN §4 bank rules)."""

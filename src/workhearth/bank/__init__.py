"""The team memory bank (DESIGN §4 bank rules): a client side every hearth may use,
and a server side on a shared PostgreSQL (``hearth serve --store``, ``hearth team``)."""

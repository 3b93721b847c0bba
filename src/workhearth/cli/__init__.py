"""The ``hearth`` command: one module per command group, each thin over the library."""

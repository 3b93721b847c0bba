"""The local REST API and web workbench (`hearth serve`)."""

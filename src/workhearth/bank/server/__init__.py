"""The bank's server side on PostgreSQL (the ``team`` extra, psycopg): the store and its
connection pool, schema, encrypted search terms, crypto, users and purge."""

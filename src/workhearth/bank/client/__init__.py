"""The bank seen from a person's hearth: ``wh.memory`` routing saves to the team bank
(facade), its REST client (remote) and the durable outbox of saves not yet sent (queue).
Needs no database driver: nothing here imports :mod:`workhearth.bank.server`."""

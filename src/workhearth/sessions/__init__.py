"""Crash-proof sessions: the append-only event log and everything built on it (DESIGN §3)."""

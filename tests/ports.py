"""Free loopback ports for test servers: each pytest-xdist worker picks from its own block.

Why not ``bind(("127.0.0.1", 0))`` then close: the kernel hands out ports from the
ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``, usually 32768–60999) to
every outgoing connection too, so a port a test closes and a server binds a moment
later — or seconds later, when a test restarts its server on the same port — can be
taken meanwhile by another worker's client or server. Below that range, each worker
(and a run without xdist) has a block of its own; a port in use is skipped.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import socket

FIRST, BLOCK = 10_000, 2_000


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def worker_index() -> int:
    """0 without xdist, then 1, 2, … for workers ``gw0``, ``gw1``, …"""
    found = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    return int(found[1]) + 1 if found else 0


def worker_tag() -> str:
    """``gw0``, ``gw1``, … or ``main``: to name what a worker makes (databases, folders)."""
    return os.environ.get("PYTEST_XDIST_WORKER") or "main"


_BLOCKS = max(1, (_ephemeral_low() - FIRST) // BLOCK)
_START = FIRST + BLOCK * (worker_index() % _BLOCKS)
# Why a random start: two separate pytest runs on one machine use the same blocks.
_offsets = itertools.count(random.randrange(BLOCK))


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, from this worker's block."""
    for _ in range(BLOCK):
        port = _START + next(_offsets) % BLOCK
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {_START}-{_START + BLOCK - 1}")

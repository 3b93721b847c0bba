"""What encryption at rest costs the team bank's search: a keyed store against a plain one.

Two stores on one PostgreSQL, one plain and one keyed (``--store-key-file``: content
AES-256-GCM, search through the blind index of HMAC'd trigrams and CJK bigrams), hold
the same entries of one user: the mixed English/Chinese corpus of
``tests/bank/corpus.py``. For each of its queries, the plain store's hits (up to 10)
are what the keyed store should find:

* **recall**: the share of the plain store's hits the keyed store also returns;
* **same ranking**: queries whose hits come back in the same order from both;
* **blind rows per entry**: the ``entry_terms`` rows a keyed save adds.

Then ``--filler`` more entries (seeded sentences) go into both, timed per save, and
every query is searched on each store: once right after the saves (the planner's
statistics still describe the emptier tables), then ``--reps`` times after ``ANALYZE``
(what autovacuum does within about a minute): the median search and save, in process
through ``PgBank`` (the HTTP server adds the same on both sides).

PostgreSQL: ``--pg URL`` (a superuser URL; two databases are made and dropped), else
``HEARTH_TEST_PG``, else a throwaway cluster from Debian's binaries.

    python bench/team_crypto.py [--filler 500] [--reps 5] [--pg URL] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import _runs
from team_load import database, postgres

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.bank.corpus, the corpus the crypto test uses
from tests.bank.corpus import QUERIES, SENTENCES  # noqa: E402

KEY = bytes(range(32))
LIMIT = 10
FILLER_WORDS = (
    "deploy pipeline staging invoice budget meeting office printer laptop vendor "
    "contract payroll roadmap sprint customer ticket 周会 预算 合同 工单 客户 迭代"
).split()


def filler(n: int, seed: int = 7) -> list[str]:
    """Seeded sentences that share words with each other, few with the queries."""
    rng = random.Random(seed)
    return [f"note {i}: " + " ".join(rng.choices(FILLER_WORDS, k=8)) for i in range(n)]


def quality(plain: Any, keyed: Any, owner: str, texts: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Recall and ranking of the keyed store against the plain one on the corpus queries."""
    expected = found = same = 0
    differ: list[str] = []
    for q in QUERIES:
        want = [texts["plain"][h.entry_id] for h in plain.search(owner, q, limit=LIMIT)]
        got = [texts["keyed"][h.entry_id] for h in keyed.search(owner, q, limit=LIMIT)]
        expected += len(want)
        found += len(set(want) & set(got))
        if want == got:
            same += 1
        else:
            differ.append(q)
    return {
        "queries": len(QUERIES),
        "expected_hits": expected,
        "found_hits": found,
        "recall": round(found / expected, 4) if expected else None,
        "same_ranking": same,
        "ranking_differs_on": differ,
    }


def timed(fn: Any, *args: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    result = fn(*args)
    return result, (time.perf_counter() - t0) * 1000


def latency(banks: dict[str, Any], owner: str, reps: int) -> dict[str, dict[str, float]]:
    """Median and p90 ms per search over every query, ``reps`` times, stores alternating."""
    samples: dict[str, list[float]] = {name: [] for name in banks}
    for _ in range(reps):
        for q in QUERIES:
            for name, bank in banks.items():
                samples[name].append(timed(bank.search, owner, q, LIMIT)[1])
    return {name: summary(values) for name, values in samples.items()}


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "median_ms": round(statistics.median(ordered), 3),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
    }


def run(pg: str, n_filler: int, reps: int) -> dict[str, Any]:
    from workhearth.bank.server.store import PgBank, connect
    from workhearth.bank.server.users import add_user

    owner = "ann"
    with database(pg) as plain_url, database(pg) as keyed_url:
        with PgBank(plain_url) as plain, PgBank(keyed_url, key=KEY) as keyed:
            banks = {"plain": plain, "keyed": keyed}
            for url in (plain_url, keyed_url):
                with connect(url) as conn:
                    add_user(conn, owner)
            texts = {
                name: {bank.save(owner, s).id: s for s in SENTENCES} for name, bank in banks.items()
            }
            with connect(keyed_url) as conn:
                (rows,) = conn.execute("SELECT count(*) FROM entry_terms").fetchone()
            result: dict[str, Any] = {
                "corpus_entries": len(SENTENCES),
                "quality": quality(plain, keyed, owner, texts),
                "blind_rows_per_entry": round(rows / len(SENTENCES), 1),
            }
            saves: dict[str, list[float]] = {name: [] for name in banks}
            for text in filler(n_filler):
                for name, bank in banks.items():
                    saves[name].append(timed(bank.save, owner, text)[1])
            result["entries"] = len(SENTENCES) + n_filler
            result["save"] = {name: summary(v) for name, v in saves.items()} if n_filler else {}
            # Why twice: right after a burst of saves the planner's statistics are stale
            # (autovacuum refreshes them within about a minute) and it picks other plans.
            result["search_before_analyze"] = latency(banks, owner, 1)
            for url in (plain_url, keyed_url):
                with connect(url) as conn:
                    conn.execute("ANALYZE")
            result["search"] = latency(banks, owner, reps)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filler", type=int, default=500, help="entries added before timing")
    ap.add_argument("--reps", type=int, default=5, help="times each query is searched")
    ap.add_argument("--pg", default=os.environ.get("HEARTH_TEST_PG"), help="superuser URL")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "team_crypto.json")
    args = ap.parse_args()

    with postgres(args.pg) as pg:
        result = run(pg, args.filler, args.reps)
    search = result["search"]
    result["config"] = {"filler": args.filler, "reps": args.reps, "limit": LIMIT}
    result["cpus"] = os.cpu_count()
    result["search_keyed_over_plain"] = round(
        search["keyed"]["median_ms"] / search["plain"]["median_ms"], 2
    )
    _runs.save(args.out, result)

    q = result["quality"]
    print(f"team bank, plain vs keyed: {len(SENTENCES)} corpus entries, {q['queries']} queries")
    print(
        f"recall {q['recall']:.2f} on {q['expected_hits']} expected hits; same ranking on "
        f"{q['same_ranking']} of {q['queries']} (differs: {', '.join(q['ranking_differs_on'])}); "
        f"{result['blind_rows_per_entry']} blind rows per entry"
    )
    print(f"\n{result['entries']} entries | plain median | keyed median | plain p90 | keyed p90")
    print("|---|---:|---:|---:|---:|")
    for kind in ("search_before_analyze", "search", "save"):
        if result[kind]:
            p, k = result[kind]["plain"], result[kind]["keyed"]
            print(
                f"| {kind} | {p['median_ms']} ms | {k['median_ms']} ms "
                f"| {p['p90_ms']} ms | {k['p90_ms']} ms |"
            )


if __name__ == "__main__":
    main()

"""What an offline semantic signal would add to memory search on LoCoMo (a decision record).

Not part of hearth: it needs ``wordllama`` (static token embeddings whose wheel ships
its weights, so nothing downloads), which only the ``bench`` extra installs; absent,
it skips. ``tests/test_benches.py`` runs it once on a tiny conversation (in CI the
extra is installed, so it runs there)::

    .venv/bin/pip install -e '.[bench]' && .venv/bin/python bench/memory_semantic_probe.py

Same files, questions and score as ``bench/memory_quality.py`` (evidence-in-context@6,
two folds by conversation). The lexical part is the library's own ``Searcher``; on
top of it, each layer alone and together:

* **dense** — every chunk embedded as the SIF-weighted sum of its tokens' vectors
  (weight ``a / (a + p(token))``, ``p`` counted over the indexed chunks, ``a = 1e-3``:
  Arora et al. 2017), the question the same way; cosine above the median of all
  chunks, scaled to the best, added with weight 0.5 to the lexical score (divided by
  its best). ``dense-binary`` keeps only the sign bits (32 bytes a chunk).
* **expansion** — for each question word, the corpus words whose embedding is at
  least 0.6 similar (``injured`` → ``hurt``, ``religious`` → ``church``): one BM25
  query over them, weight 0.4.
* **heading** — each chunk's section heading as a second column of the word index.

Run::

    .venv/bin/python bench/memory_semantic_probe.py [--data PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import _runs
import memory_quality as mq

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / "results" / "memory_semantic_probe.json"
SIF_A = 1e-3
DENSE_WEIGHT = 0.5
EXPAND_SIM, EXPAND_WEIGHT = 0.6, 0.4
_ID = re.compile(r"\[D\d+:\d+\]")


class Embedder:
    def __init__(self) -> None:
        import numpy as np
        import wordllama
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = Path(wordllama.__file__).parent
        self.np = np
        self.tok = Tokenizer.from_file(str(root / "tokenizers/l2_supercat_tokenizer_config.json"))
        (table,) = load_file(str(root / "weights/l2_supercat_256.safetensors")).values()
        self.table = table.astype(np.float32)

    def ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(texts, add_special_tokens=False)]

    def pool(self, ids: list[list[int]], weight):
        np = self.np
        out = np.zeros((len(ids), self.table.shape[1]), np.float32)
        for k, t in enumerate(ids):
            if t:
                out[k] = (weight[t][:, None] * self.table[t]).sum(0)
        norm = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norm == 0, 1, norm)


def probe_sample(sample: dict, emb: Embedder, variants: dict[str, tuple]) -> dict[str, tuple]:
    """Every variant's results on one conversation, in its own ``HEARTH_HOME``."""
    from workhearth import Workhearth
    from workhearth.memory.chunking import chunk_lines
    from workhearth.memory.index import latin_text
    from workhearth.memory.search import Searcher
    from workhearth.memory.text import STOPWORDS, fts_quote, latin_words, word_terms

    np = emb.np
    scores: dict[str, tuple] = {}
    files = {
        f"locomo/session-{n:02d}.md": mq.session_markdown(n, date, turns)
        for n, date, turns in mq.sessions(sample["conversation"])
    }
    with tempfile.TemporaryDirectory(prefix="hearth-probe-") as tmp:
        wh = Workhearth(home=Path(tmp) / "home", workspace=Path(tmp))
        folder = wh.memory.folder("project")
        (folder / "locomo").mkdir(parents=True)
        for rel, md in files.items():
            (folder / rel).write_text(md, encoding="utf-8")
        wh.memory.index()
        db = wh.memory.store("project").index.db
        rows = db.execute("SELECT id, text FROM chunks ORDER BY id").fetchall()
        chunk_ids = [r[0] for r in rows]
        token_ids = emb.ids([_ID.sub(" ", r[1]) for r in rows])
        counts = Counter(t for ids in token_ids for t in ids)
        total = sum(counts.values())
        weight = np.ones(emb.table.shape[0], np.float32)
        for t, n in counts.items():
            weight[t] = SIF_A / (SIF_A + n / total)
        vectors = emb.pool(token_ids, weight)
        signs = vectors > 0
        vocab = sorted({w for _, t in rows for w in latin_words(_ID.sub(" ", t)) if len(w) > 2})
        vocab_vectors = emb.pool(emb.ids(vocab), np.ones_like(weight))
        # the heading column: a side word index with each chunk's section heading
        db.execute(
            "CREATE VIRTUAL TABLE probe_words USING fts5(text, heading, content='',"
            " tokenize='porter unicode61 remove_diacritics 2')"
        )
        for path, first, n in db.execute("SELECT path, first_id, chunks FROM files"):
            chunks = chunk_lines((folder / path).read_text(encoding="utf-8").split("\n"))
            assert len(chunks) == n
            db.executemany(
                "INSERT INTO probe_words(rowid, text, heading) VALUES (?, ?, ?)",
                [
                    (first + k, latin_text(c.text), latin_text(c.heading))
                    for k, c in enumerate(chunks)
                ],
            )

        def make(dense: bool, binary: bool, expand: bool, heading: bool) -> Searcher:
            class Probe(Searcher):
                def _words(self, words, n, into, weak=False):
                    if not heading:
                        return super()._words(words, n, into, weak)
                    words, useful = self._informative(list(dict.fromkeys(words)))
                    if not words or not useful or weak:
                        return super()._words(words, n, into, weak)
                    sql = (
                        "SELECT rowid, bm25(probe_words, 1.0, 1.0) FROM probe_words"
                        " WHERE probe_words MATCH ? ORDER BY 2 LIMIT ?"
                    )
                    match = " OR ".join(fts_quote(w) for w in words)
                    return self._ranked(sql, (match, n), "word", into)

                def candidates(self, query: str, limit: int) -> dict[int, float]:
                    out = super().candidates(query, limit)
                    best = max(out.values()) if out else 1.0
                    out = {c: s / best for c, s in out.items()}
                    if expand:
                        self._expand(query, limit, out)
                    if dense:
                        q = emb.pool(emb.ids([query]), weight)[0]
                        cos = (signs == (q > 0)).mean(1) * 2 - 1 if binary else vectors @ q
                        base, top = float(np.median(cos)), float(cos.max())
                        for k in np.nonzero(cos > base)[0]:
                            c = chunk_ids[k]
                            lift = DENSE_WEIGHT * (cos[k] - base) / (top - base)
                            out[c] = out.get(c, 0.0) + lift
                    return out

                def _expand(self, query: str, limit: int, out: dict[int, float]) -> None:
                    words = [w for w in latin_words(query) if w not in STOPWORDS and len(w) > 2]
                    if not words:
                        return
                    own = set().union(*word_terms(words))
                    sims = emb.pool(emb.ids(words), np.ones_like(weight)) @ vocab_vectors.T
                    extra = {
                        vocab[j]
                        for row in sims
                        for j in np.nonzero((row >= EXPAND_SIM) & (row < 0.999))[0]
                        if not set(word_terms([vocab[j]])[0]) & own
                    }
                    if not extra:
                        return
                    found = self.db.execute(
                        "SELECT rowid, -bm25(fts_word) FROM fts_word WHERE fts_word MATCH ?"
                        " ORDER BY bm25(fts_word) LIMIT ?",
                        (" OR ".join(fts_quote(w) for w in sorted(extra)), limit * 4),
                    ).fetchall()
                    top = max((s for _, s in found), default=0.0) or 1.0
                    for c, s in found:
                        out[c] = out.get(c, 0.0) + EXPAND_WEIGHT * s / top

            return Probe(db)

        qs = mq.questions(sample)
        for name, flags in variants.items():
            searcher = make(*flags)

            def search(q: str, searcher: Searcher = searcher) -> list[str]:
                return [h.text for h in searcher.search(q, mq.K)]

            scores[name] = mq.run_method(search, qs)
        wh.memory.close()
    return scores


def probe(samples: list[dict]) -> dict:
    emb = Embedder()
    variants = {
        "lexical": (False, False, False, False),
        "+dense": (True, False, False, False),
        "+dense-binary": (True, True, False, False),
        "+expansion": (False, False, True, False),
        "+heading": (False, False, False, True),
        "+dense +expansion +heading": (True, False, True, True),
        "+dense-binary +expansion +heading": (True, True, True, True),
    }
    results: dict[str, dict[str, list]] = {v: {} for v in variants}
    for sample in samples:
        results_of = probe_sample(sample, emb, variants)
        sid = sample["sample_id"]
        for name, scored in results_of.items():
            results[name][sid] = scored
        print(f"{sid}: done", file=sys.stderr)
    ids = [s["sample_id"] for s in samples]
    folds = {"fold_a": ids[0::2], "fold_b": ids[1::2]}
    out: dict = {"folds": folds, "variants": {}}
    for name, per in results.items():
        entry = mq.summary([r for s in ids for r in per[s][0]], [t for s in ids for t in per[s][1]])
        for fold, members in folds.items():
            fr = [r for s in members for r in per[s][0]]
            entry[fold] = mq.summary(fr, [t for s in members for t in per[s][1]])["score"]
        out["variants"][name] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=mq.DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    try:
        import wordllama  # noqa: F401
    except ImportError:
        print("skipped: wordllama is not installed (pip install -e '.[bench]')")
        return 0
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data}")
        return 0
    result = probe(json.loads(args.data.read_text(encoding="utf-8")))
    print("| variant | score | fold A | fold B | cat 1 | cat 2 | cat 3 | cat 4 | median ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, v in result["variants"].items():
        cats = " | ".join(f"{v['by_category'].get(str(c), 0):.3f}" for c in mq.CATEGORIES)
        print(
            f"| {name} | {v['score']:.3f} | {v['fold_a']:.3f} | {v['fold_b']:.3f} | {cats} |"
            f" {v['median_ms']:.2f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

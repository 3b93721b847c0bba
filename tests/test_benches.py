"""Every bench script still runs end to end (on tiny inputs) and writes its JSON.

Benches measure speed; these tests measure nothing. They catch a bench broken by a
change in the library (a signature, a renamed field) before someone needs its numbers.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_bench(script: str, out: Path, *args: str) -> Any:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    latest = json.loads(out.read_text())
    # Issue #20: every run is kept, not only the latest: one line per run beside it.
    history = out.with_name(out.stem + ".runs.jsonl").read_text().splitlines()
    assert json.loads(history[-1])["report"] == latest
    return latest


def test_sessions_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "sessions.py", tmp_path / "s.json", "--sizes", "1", "--runs", "1", "--tmp", str(tmp_path)
    )
    assert result["appends"]["ours_turn"]["events_per_s"] > 0
    assert result["resume"]["ours_snapshot"]["1"]["median_s"] > 0
    # Issue #20: each headline beside its like-for-like: fsync=always against the SDK's
    # commit per item, the no-snapshot load against a plain orjson parse of every line.
    lfl = result["like_for_like"]["ours_always/sqlite"]
    appends = result["appends"]
    assert lfl == appends["ours_always"]["events_per_s"] / appends["sqlite"]["events_per_s"]
    assert result["resume"]["plain_orjson"]["1"]["median_s"] > 0


def test_memory_scale_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "memory_scale.py",
        tmp_path / "m.json",
        *("--scales", "2000", "--runs", "1", "--build-runs", "1", "--terms", "3", "--reps", "1"),
        *("--tmp", str(tmp_path)),
    )
    ours = result["results"]["2000"]["ours"]
    assert ours["chunks"] >= 2000 and ours["size_ratio"] > 0
    assert set(ours["search"]) >= {"rare", "common", "cjk2_common", "cjk2_rare", "two_common"}


def test_agent_overhead_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "agent_overhead.py",
        tmp_path / "a.json",
        *("--steps", "20", "--runs", "1", "--startup-runs", "1", "--dir", str(tmp_path)),
        *("--stop-tries", "1"),
    )
    assert result["step_overhead_ms"]["ours"] > 0
    assert result["ours_rss_growth_mb"] == result["ours_rss_growth_mb"]  # measured (not NaN)
    assert result["startup"]["hearth_help_ms"] > 0
    # Issue #18: a stop ends the task at once, also while its model is silent (the
    # fake server pauses 30 s: a stop that waited for the next event would take that).
    assert set(result["stop_latency_ms"]) == {"silent", "streaming"}
    assert all(0 < ms < 20_000 for ms in result["stop_latency_ms"].values())


def tiny_locomo(tmp_path: Path) -> Path:
    """A tiny conversation in LoCoMo's format whose answers share rare words with the questions."""
    turns = [
        ("Ana", "I adopted a greyhound named Biscuit last spring."),
        ("Ben", "Nice! I started learning the cello this winter."),
        ("Ana", "My sister moved to Lisbon for a job in robotics."),
        ("Ben", "I finally fixed the leaking dishwasher myself."),
    ]
    conversation: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n in (1, 2):
        conversation[f"session_{n}_date_time"] = f"{n} May 2023"
        conversation[f"session_{n}"] = [
            {"speaker": s, "dia_id": f"D{n}:{i}", "text": f"{t} (part {n})"}
            for i, (s, t) in enumerate(turns, 1)
        ]
    qa = [
        {"question": "What is the name of Ana's greyhound?", "evidence": ["D1:1"], "category": 4},
        {
            "question": "Which instrument is Ben learning, the cello?",
            "evidence": ["D2:2"],
            "category": 4,
        },
        {
            "question": "Where did the sister move for robotics?",
            "evidence": ["D1:3"],
            "category": 1,
        },
        {
            "question": "Who fixed the dishwasher?",
            "evidence": ["D2:4"],
            "category": 5,
        },  # not scored
    ]
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([{"sample_id": "tiny", "conversation": conversation, "qa": qa}]))
    return data


def test_memory_quality_bench_scores_a_conversation_it_can_answer(tmp_path: Path) -> None:
    data = tiny_locomo(tmp_path)
    result = run_bench("memory_quality.py", tmp_path / "q.json", "--data", str(data))
    ours = result["methods"]["workhearth"]
    assert (ours["questions"], ours["evidence_ids"]) == (3, 3)
    assert ours["score"] == 1.0
    peers = {"trigram_or", "word_bm25", "trigram_or_all", "word_bm25_all"}
    assert set(result["methods"]) == {"workhearth", *peers}
    # Issue #20: the peers drop stop words and stem, so they answer these questions too.
    assert result["methods"]["word_bm25"]["score"] == 1.0
    assert result["meets_floor"] is True  # a perfect score is above any floor


def test_memory_semantic_probe_bench_runs(tmp_path: Path) -> None:
    """Optional bench: it needs ``wordllama`` (static embeddings shipped in its wheel)."""
    if importlib.util.find_spec("wordllama") is None:
        reason = "wordllama is not installed (pip install -e '.[bench]')"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI installs the bench extra, so every bench runs there")
        pytest.skip(reason)
    data = tiny_locomo(tmp_path)
    result = run_bench("memory_semantic_probe.py", tmp_path / "p.json", "--data", str(data))
    variants = result["variants"]
    assert {"lexical", "+dense", "+expansion", "+heading"} <= set(variants)
    assert all(v["questions"] == 3 for v in variants.values())
    assert variants["lexical"]["score"] == 1.0  # the library's own search, as in memory_quality


def test_adversary_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "adversary.py",
        tmp_path / "adv.json",
        *("--quick", "--kills", "1", "--seconds", "1", "--savers", "2", "--tmp", str(tmp_path)),
    )
    assert set(result["kills"]) == {"always", "turn", "never", "plain_buffered"}
    assert all(row["acked"] > 0 for row in result["kills"].values())
    assert result["savers"]["hearth"]["saves_acked"] > 0
    assert result["savers"]["naive_rewrite"]["hand_lines"] > 0
    for trial in ("full_disk", "read_only"):
        assert "skipped" in result[trial] or result[trial], trial
    # The side doors of issue #17 (bench/side_doors.py): every attack tried, none got through.
    doors = result["side_doors"]
    attacks = ("zip_chains", "folder_configs", "lying_servers", "quest_persistence", "nul")
    assert set(doors) == set(attacks)
    for attack, row in doors.items():
        if attack == "quest_persistence" and "skipped" in row:
            continue  # no bubblewrap here: said with the reason
        assert row["tries"] > 0 and row["failures"] == 0, (attack, row)


def test_memory_cli_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "memory_cli.py",
        tmp_path / "mc.json",
        "--entries",
        "50",
        "--runs",
        "1",
        "--tmp",
        str(tmp_path),
    )
    assert set(result["results"]) >= {"memory search", "memory save", "hearth --help"}
    assert result["entries_after_saves"] == 52  # 50 built, a warm-up save and one timed save
    assert all(row["median_s"] > 0 for row in result["results"].values())


def test_skills_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "skills.py",
        tmp_path / "sk.json",
        *("--skills", "5", "--runs", "1", "--cli-runs", "0", "--tmp", str(tmp_path)),
    )
    assert result["skills"] == 5
    assert set(result["median_ms"]) == {"ours_cold", "ours_warm_file", "ours_warm_memory", "naive"}
    assert all(ms > 0 for ms in result["median_ms"].values())


def test_mcp_latency_bench_runs(tmp_path: Path) -> None:
    result = run_bench(
        "mcp_latency.py",
        tmp_path / "mcp.json",
        *("--calls", "5", "--warmup", "1", "--entries", "8", "--tmp", str(tmp_path)),
    )
    assert set(result["results"]) == {"library", "stdio", "stdio_raw", "http"}
    assert all(row["p50_ms"] > 0 for row in result["results"].values())


def test_server_load_bench_runs(tmp_path: Path) -> None:
    if importlib.util.find_spec("datasette") is None:
        reason = "datasette (the bench's peer) is not installed (pip install -e '.[bench]')"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI installs the bench extra, so every bench runs there")
        pytest.skip(reason)
    result = run_bench(
        "server_load.py",
        tmp_path / "sl.json",
        *("--duration", "0.5", "--rate", "20", "--save-rate", "5", "--connections", "4"),
        *("--entries", "20", "--runs", "1"),
    )
    (run,) = result["runs"]
    assert run["saturation"]["bare"]["rps"] > 0 and run["library_search"]["rps"] > 0
    assert result["median"]["saturation.search"]["rps"] == run["saturation"]["search"]["rps"]
    assert result["saves"]["acknowledged"] > 0 and result["saves"]["lost"] == 0
    # Issue #20: the bare route is async like hearth's, and datasette's full-text search
    # over the same entries runs beside it, both ways (table API and ranked SQL).
    assert "async def bare" in (ROOT / "bench" / "server_load.py").read_text()
    for row in ("saturation.bare", "saturation.peer", "saturation.peer_ranked"):
        assert result["median"][row]["rps"] > 0 and result["median"][row]["errors"] == 0
    assert not result["runs"][0]["failures"]
    for ratio in ("search_vs_bare", "search_vs_peer", "search_vs_peer_ranked"):
        assert result["median_targets"][ratio] > 0


def test_team_load_bench_runs(tmp_path: Path) -> None:
    import glob
    import importlib.util
    import os

    import pytest

    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("the team extra (psycopg) is not installed")
    if not (os.environ.get("HEARTH_TEST_PG") or glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")):
        pytest.skip("no PostgreSQL: set HEARTH_TEST_PG or install Debian's postgresql")
    result = run_bench("team_load.py", tmp_path / "tl.json", "--duration", "0.5", "--users", "4")
    assert result["ok"] and result["saves"]["acknowledged"] > 0
    assert result["search"]["rps"] > 0 and result["saves"]["missing"] == 0


def test_team_crypto_bench_runs(tmp_path: Path) -> None:
    import glob
    import importlib.util
    import os

    import pytest

    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("the team extra (psycopg) is not installed")
    if not (os.environ.get("HEARTH_TEST_PG") or glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")):
        pytest.skip("no PostgreSQL: set HEARTH_TEST_PG or install Debian's postgresql")
    result = run_bench("team_crypto.py", tmp_path / "tc.json", "--filler", "5", "--reps", "1")
    quality = result["quality"]
    # The blind index finds what the plain search finds (tests/bank/test_crypto.py holds
    # the bar); the bench only has to count it.
    assert quality["expected_hits"] > 0 and quality["found_hits"] <= quality["expected_hits"]
    assert 0 < quality["same_ranking"] <= quality["queries"]
    assert result["blind_rows_per_entry"] > 0 and result["entries"] == result["corpus_entries"] + 5
    for phase in ("search", "search_before_analyze", "save"):
        assert all(row["median_ms"] > 0 for row in result[phase].values()), phase


def test_check_bench_runs(tmp_path: Path) -> None:
    import shutil

    if not (shutil.which("soffice") and shutil.which("pdftoppm")):
        pytest.skip("LibreOffice or poppler is not installed; .ci/run installs them")
    result = run_bench(
        "check.py",
        tmp_path / "ck.json",
        *("--pages", "1", "--runs", "1", "--formats", "docx,pdf", "--tmp", str(tmp_path)),
    )
    assert set(result["results"]) == {"docx", "pdf"}
    for fmt, row in result["results"].items():
        assert row["ok"] is True and row["pages"] >= 1, (fmt, row["problems"])
        assert row["hearth_check_s"] > 0 and row["bare_soffice_s"] > 0
        assert row["ratio"] == round(row["hearth_check_s"] / row["bare_soffice_s"], 2)
        assert set(row["where"]) == {
            "process_start_s",
            "check_file_s",
            "libreoffice_s",
            "our_checks_s",
            "after_render_s",
        }
    assert result["results"]["pdf"]["where"]["libreoffice_s"] == 0.0
    assert result["meets"]["docx_within_s"] in (True, False)


def test_rewind_bench_runs(tmp_path: Path) -> None:
    import shutil

    result = run_bench("rewind.py", tmp_path / "rw.json", "--quick", "--tmp", str(tmp_path))
    assert result["workspace"]["files"] == 300 and result["params"]["runs"] == 1
    # Issue 22: the three homes each ran their calls, and every number has its peer beside it.
    assert all(ms > 0 for ms in result["per_command_ms"]["steady"].values())
    assert set(result["ls_ms"]) == {"none", "off", "on"}
    assert result["baseline"]["bytes"] > 0 and result["storage"]["growth_bytes"] > 0
    assert result["rewind"]["files"] == 40 and result["rewind"]["all_restored"] is True
    if shutil.which("git"):  # the shadow-git peer
        assert result["git"]["all_restored"] is True and result["git"]["snapshot_ms"] > 0
    assert set(result["meets"]) == {"per_command", "ls", "growth", "baseline", "rewind"}


def test_team_bench_runs(tmp_path: Path) -> None:
    result = run_bench("team.py", tmp_path / "t.json", "--quick", "--tmp", str(tmp_path))
    assert result["params"]["steps"] == 3 and result["params"]["runs"] == 1
    # Issue 23: the team beside a plain run of the same steps, and where the difference goes.
    over = result["overhead"]
    assert over["team_ms"] > 0 and over["plain_ms"] > 0 and over["lead_call_ms"] > 0
    assert over["per_step_ms"] == pytest.approx((over["team_ms"] - over["plain_ms"]) / 3)
    assert all(over["parts_ms"][part] > 0 for part in ("scratch", "session", "merge"))
    assert over["parts_ms"]["state_saves"] > 0 and result["runs"][0]["overhead"]["profile"]
    # Wall time per pool size, each against its ideal (0.2 s steps in the quick run).
    assert set(result["wall"]) == {"1", "3"}
    assert result["wall"]["1"]["ideal_s"] == pytest.approx(0.6)
    assert result["wall"]["3"]["ideal_s"] == pytest.approx(0.2)
    assert all(row["steps_span_s"] >= row["ideal_s"] for row in result["wall"].values())
    assert set(result["meets"]) == {"per_step"}


def test_wiki_bench_runs(tmp_path: Path) -> None:
    result = run_bench("wiki.py", tmp_path / "w.json", "--quick", "--tmp", str(tmp_path))
    assert result["params"]["files"] == 200 and result["params"]["runs"] == 1
    (run,) = result["runs"]
    # Issue 24: the build's calls are its pages (overview included), a no-change update
    # makes none (library and command alike), one changed module rewrites exactly its pages.
    assert run["repo"]["files"] == 200 and run["build"]["pages"] > 1
    assert run["build"]["calls"] == run["build"]["requests"] == run["build"]["pages"]
    assert run["no_change"]["calls"] == [0, 0] and run["command"]["wiki_update_calls"] == 0
    change = run["one_change"]
    assert change["expected"] and change["written"] == change["expected"] and change["exact"]
    med = result["median"]
    assert all(med[k] > 0 for k in ("git_status_s", "stat_walk_s", "hash_walk_s", "command_s"))
    assert med["model_per_call_ms"] > 0 and run["build"]["model_calls"] == run["build"]["calls"]
    assert set(result["meets"]) == {
        "no_change_time",
        "no_change_calls",
        "one_change_exact",
        "build_calls_are_pages",
    }


def test_md_to_pdf_bench_runs(tmp_path: Path) -> None:
    import shutil

    if not shutil.which("soffice"):
        pytest.skip("LibreOffice is not installed; .ci/run installs it")
    result = run_bench("md_to_pdf.py", tmp_path / "m.json", "--runs", "1", "--tmp", str(tmp_path))
    med = result["median_s"]
    paths = {"md_to_pdf_first", "md_to_pdf", "md_to_docx", "soffice_pdf", "docx_then_pdf"}
    assert set(med) == paths
    assert all(v > 0 for v in med.values())
    assert med["docx_then_pdf"] == round(med["md_to_docx"] + med["soffice_pdf"], 3)
    # One page each way: the same report, so the times compare like with like.
    assert result["pages"] == {"md_to_pdf": 1, "libreoffice": 1}
    assert result["meets"]["md_to_pdf_within_s"] == (med["md_to_pdf"] <= result["target_s"])


def test_memory_save_bench_runs(tmp_path: Path) -> None:
    from workhearth.app import Workhearth

    sizes, saves = (20, 60), 5
    result = run_bench(
        "memory_save.py",
        tmp_path / "ms.json",
        *("--sizes", ",".join(map(str, sizes)), "--saves", str(saves), "--runs", "1"),
        *("--tmp", str(tmp_path), "--keep"),
    )
    paths = {"hearth", "file_fsync", "file_fsync_fts5"}
    (run,) = result["runs"]
    assert result["all_saved"] and set(result["median"]) == set(run["sizes"]) == {"20", "60"}
    for n in sizes:
        size = run["sizes"][str(n)]
        assert set(size["paths"]) == set(result["median"][str(n)]) == paths
        for path in paths:
            row = result["median"][str(n)][path]
            assert row["cpu_ms"] > 0 and row["wall_ms"] > 0 and row["p90_wall_ms"] >= row["wall_ms"]
            assert len(size["paths"][path]["wall_ms_each"]) == saves
        # Every save really made, counted afresh through the library: the seeded
        # entries, the warm-up save and each timed save, the last one found by search.
        wh = Workhearth(home=Path(size["home"]), workspace=Path(size["workspace"]))
        listed = []
        cursor = None
        while True:
            entries, cursor = wh.memory.list(limit=100, cursor=cursor)
            listed += entries
            if cursor is None:
                break
        texts = [e.content for e in listed]
        assert len(texts) == len(set(texts)) == n + 1 + saves
        assert sum(t.startswith("Saved note ") for t in texts) == saves
        assert texts[0].startswith(f"Saved note {saves - 1} at size {n}:")  # newest first
        hits = wh.memory.search(texts[0], limit=3)
        assert listed[0].id in {h.entry_id for h in hits}
        wh.memory.close()
    figures = result["figures"]
    assert figures["cpu_growth"] > 0 and figures["wall_growth"] > 0
    for name in ("vs_floor_wall", "vs_floor_cpu", "vs_file_fsync_wall"):
        assert set(figures[name]) == {"20", "60"} and all(v > 0 for v in figures[name].values())
    assert result["config"]["sizes"] == list(sizes) and result["cpus"] == os.cpu_count()

"""``hearth models list|test``: what models are configured, and whether one answers."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table

app = HearthTyper(
    help="Configured models (config.toml [models.NAME], HEARTH_MODEL).", no_args_is_help=True
)


@app.command("list")
def list_(json: JsonOpt = False) -> None:
    """Configured models with provider, tier and context window (keys never shown)."""
    from workhearth.models.registry import describe

    cfg = hearth().config.models
    rows = describe(cfg) if cfg.configured else []
    if json:
        print_json(rows)
        return
    if not rows:
        print(
            "no model configured: set HEARTH_MODEL=openai:NAME (with OPENAI_API_KEY) or add [models.NAME] to config.toml"
        )
        return
    columns = [
        Column("name", cut="never"),
        Column("provider", cut="never", drop=1),
        Column("model", main=True),
        Column("tier", cut="never"),
        Column("window", cut="never", align="right"),
        Column("key", cut="never"),
    ]
    print_table(
        columns,
        [
            [
                r["name"],
                r["provider"],
                r["model"],
                r["tier"],
                r["context_window"],
                "set" if r["api_key_set"] else "missing",
            ]
            for r in rows
        ],
    )


@app.command()
def test(
    name: Annotated[
        str,
        typer.Argument(metavar="NAME", help="A [models.NAME] or openai:MODEL / anthropic:MODEL."),
    ],
    json: JsonOpt = False,
) -> None:
    """Send one tiny request and report the answer and the latency."""
    from workhearth.models.base import ModelRequest
    from workhearth.models.messages import message_text, text_message
    from workhearth.models.registry import build_model

    model = build_model(name, hearth().config.models)
    started = time.monotonic()
    try:
        ask = [text_message("user", "Reply with the single word: ready")]
        completion = model.generate(ModelRequest(None, ask, max_tokens=16))
    finally:
        model.close()
    elapsed = time.monotonic() - started
    text = message_text(completion.message, " ").strip()
    result = {"name": name, "model": completion.model, "answer": text, "seconds": round(elapsed, 3)}
    if json:
        print_json(result)
    else:
        print(f"{name}: answered {text!r} in {elapsed:.2f} s")

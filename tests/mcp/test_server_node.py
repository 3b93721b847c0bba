"""A client other than the Python SDK's: the TypeScript SDK, over stdio to `hearth mcp`.

The SDK is installed with npm into a cache folder outside the repository (reused by
later runs); the test skips, saying why, only when npm cannot install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth

SDK = "@modelcontextprotocol/sdk@1"

CLIENT_MJS = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = JSON.parse(process.env.HEARTH_MCP_CMD);
const transport = new StdioClientTransport({ command, args, env: process.env, cwd: process.cwd() });
const client = new Client({ name: "ts-test", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const saved = await client.callTool({ name: "memory_save", arguments: { content: "记忆系统在崩溃后可以恢复" } });
const found = await client.callTool({ name: "memory_search", arguments: { query: "记忆" } });
const bad = await client.callTool({ name: "memory_search", arguments: { query: "x", limit: 0 } });
console.log(JSON.stringify({
  tools,
  saved: saved.structuredContent,
  found: found.structuredContent,
  bad: { isError: bad.isError, text: bad.content[0].text },
}));
await client.close();
"""


def sdk_folder() -> Path:
    """Where the TypeScript SDK is installed (outside the repo), installing it once."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "workhearth-tests" / "mcp-ts-sdk"
    if not (folder / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", SDK],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            pytest.skip(f"npm could not install {SDK}: {proc.stderr.strip()[-300:]}")
    return folder


@pytest.fixture
def h(tmp_path: Path) -> Hearth:
    return make_hearth(tmp_path)


def test_typescript_sdk_client_lists_saves_and_searches(h: Hearth) -> None:
    folder = sdk_folder()
    script = folder / "hearth-client.mjs"  # Why: ESM resolves packages next to the script
    script.write_text(CLIENT_MJS, encoding="utf-8")
    proc = subprocess.run(
        ["node", str(script)],
        cwd=h.workspace,
        env={**h.env, "HEARTH_MCP_CMD": json.dumps([*HEARTH_CMD, "mcp"])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"memory_save", "memory_search", "memory_delete", "skill_get"} <= set(out["tools"])
    assert out["saved"]["content"] == "记忆系统在崩溃后可以恢复"
    assert out["found"]["results"][0]["entry_id"] == out["saved"]["id"]
    assert out["bad"]["isError"] is True
    assert "between 1 and 50" in out["bad"]["text"]
    # and hearth's own CLI sees what the TypeScript client saved
    assert [hit["entry_id"] for hit in h.json("memory", "search", "记忆")] == [out["saved"]["id"]]

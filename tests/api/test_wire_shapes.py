"""Wire shapes are declared once, in ``workhearth.api``; REST and MCP answer with them.

Each REST route's response schema (from the app's OpenAPI) and each MCP tool's output
schema (from ``tools/list``) must be the JSON schema of the ``api`` model listed for it
here; and no module outside ``api/`` may declare a response model of its own. A shape
redefined in ``server/`` or ``mcp/``, or one surface drifting from the other (a field
missing, a ``Literal`` turned ``str``, a field required in one and optional in the
other), fails here.
"""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter

from mcp import Client
from workhearth.api.check_models import ReceiptOut
from workhearth.api.models import ContextIn, DeletedOut, EntryListOut, EntryOut, SearchOut
from workhearth.api.session_models import (
    FilesChangedOut,
    LatestOut,
    RewindPlanOut,
    SessionListOut,
    TaskOut,
    TaskStarted,
    TeamOut,
    TranscriptOut,
    TurnsOut,
)
from workhearth.api.skill_models import RenderOut, SkillDetailOut, SkillListOut, SkillOut
from workhearth.api.wiki_models import WikiPageInfoOut, WikiPageOut
from workhearth.api.workbench_models import (
    AuditListOut,
    ErrorOut,
    FilesOut,
    FileVersionOut,
    InfoOut,
    LoginUrlOut,
    TeamInfoOut,
    TrashItemOut,
    TrashListOut,
    TrustOut,
)
from workhearth.config import load_config
from workhearth.server.app import create_app

SRC = Path(__file__).resolve().parents[2] / "src" / "workhearth"

# (method, path) -> the api shape its success answer is; every JSON answer is listed.
REST: dict[tuple[str, str], Any] = {
    ("POST", "/v1/memory"): EntryOut,
    ("GET", "/v1/memory"): EntryListOut,
    ("GET", "/v1/memory/search"): SearchOut,
    ("PATCH", "/v1/memory/{entry_id}"): EntryOut,
    ("POST", "/v1/memory/{entry_id}/restore"): EntryOut,
    ("GET", "/v1/sessions"): SessionListOut,
    ("GET", "/v1/sessions/{session_id}/messages"): TranscriptOut,
    ("GET", "/v1/sessions/{session_id}/latest"): LatestOut,
    ("GET", "/v1/sessions/{session_id}/changes"): FilesChangedOut,
    ("POST", "/v1/sessions/{session_id}/rewind"): RewindPlanOut,
    ("GET", "/v1/sessions/{session_id}/turns"): TurnsOut,
    ("GET", "/v1/sessions/{session_id}/receipts"): list[ReceiptOut],
    ("POST", "/v1/check"): list[ReceiptOut],
    ("GET", "/v1/skills"): list[SkillOut],
    ("GET", "/v1/skills/{name}"): SkillDetailOut,
    ("POST", "/v1/skills/{name}/render"): RenderOut,
    ("GET", "/v1/trash"): TrashListOut,
    ("POST", "/v1/trash/{item_id}/restore"): TrashItemOut | FileVersionOut,
    ("GET", "/v1/audit"): AuditListOut,
    ("GET", "/v1/files"): FilesOut,
    ("GET", "/v1/trust"): TrustOut,
    ("POST", "/v1/trust"): TrustOut,
    ("DELETE", "/v1/trust"): TrustOut,
    ("POST", "/v1/tasks"): TaskStarted,
    ("GET", "/v1/tasks/{session_id}"): TaskOut,
    ("POST", "/v1/tasks/{session_id}/resume"): TaskStarted,
    ("POST", "/v1/tasks/{session_id}/stop"): TaskOut,
    ("GET", "/v1/tasks/{session_id}/team"): TeamOut,
    ("GET", "/v1/wiki"): list[WikiPageInfoOut],
    ("GET", "/v1/wiki/search"): SearchOut,
    ("GET", "/v1/wiki/{page}"): WikiPageOut,
    ("GET", "/v1/info"): InfoOut,
    ("POST", "/v1/logins"): LoginUrlOut,
}

# The team bank server (server/team.py): the local /v1/memory routes' shapes, its own info.
TEAM_REST: dict[tuple[str, str], Any] = {
    key: model for key, model in REST.items() if key[1].startswith("/v1/memory")
} | {("GET", "/v1/info"): TeamInfoOut}

MCP: dict[str, type[BaseModel]] = {
    "memory_save": EntryOut,
    "memory_search": SearchOut,
    "memory_list": EntryListOut,
    "memory_delete": DeletedOut,
    "wiki_search": SearchOut,
    "wiki_read": WikiPageOut,
    "session_list": SessionListOut,
    "session_read": TranscriptOut,
    "session_latest": LatestOut,
    "session_rewind": RewindPlanOut,
    "team_start": TaskStarted,
    "skill_list": SkillListOut,
    "skill_get": SkillDetailOut,
}
TEAM_MCP = {name: MCP[name] for name in ("memory_save", "memory_search", "memory_list")} | {
    "memory_delete": DeletedOut
}

# The same thing asked of both surfaces: (REST route, MCP tool).
SAME = [
    (("POST", "/v1/memory"), "memory_save"),
    (("GET", "/v1/memory/search"), "memory_search"),
    (("GET", "/v1/memory"), "memory_list"),
    (("GET", "/v1/sessions"), "session_list"),
    (("GET", "/v1/sessions/{session_id}/messages"), "session_read"),
    (("GET", "/v1/sessions/{session_id}/latest"), "session_latest"),
    (("POST", "/v1/sessions/{session_id}/rewind"), "session_rewind"),
    (("GET", "/v1/skills/{name}"), "skill_get"),
    (("GET", "/v1/wiki/search"), "wiki_search"),
    (("GET", "/v1/wiki/{page}"), "wiki_read"),
]


# ------------------------------------------------------------------ schemas
def resolved(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with every ``$ref`` replaced by what it names, and no titles or defaults.

    Why without titles and defaults: FastAPI titles a route's list or union answer after
    the route and leaves defaults out of answers; neither changes what goes on the wire.
    """
    if isinstance(schema, list):
        return [resolved(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if ref is not None:
        return resolved(defs[ref.rsplit("/", 1)[-1]], defs)
    return {
        key: resolved(value, defs)
        for key, value in schema.items()
        if key not in ("title", "default", "$defs")
    }


def api_schema(shape: Any, mode: typing.Literal["validation", "serialization"]) -> Any:
    schema = TypeAdapter(shape).json_schema(mode=mode)
    return resolved(schema, schema.get("$defs", {}))


def openapi_answers(app: FastAPI) -> dict[tuple[str, str], list[Any]]:
    """(method, path) -> the resolved JSON schemas of its 2xx answers."""
    spec = app.openapi()
    defs = spec.get("components", {}).get("schemas", {})
    found: dict[tuple[str, str], list[Any]] = {}
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            for code, answer in operation["responses"].items():
                body = answer.get("content", {}).get("application/json")
                if code.startswith("2") and body is not None:
                    found.setdefault((method.upper(), path), []).append(
                        resolved(body["schema"], defs)
                    )
    return found


def openapi_errors(app: FastAPI) -> Iterator[tuple[str, Any]]:
    spec = app.openapi()
    defs = spec.get("components", {}).get("schemas", {})
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            for code, answer in operation["responses"].items():
                body = answer.get("content", {}).get("application/json")
                if code[0] in "45" and body is not None:
                    yield f"{method.upper()} {path} {code}", resolved(body["schema"], defs)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    root = tmp_path_factory.mktemp("wire")
    (root / "workspace").mkdir()
    config = load_config({"HEARTH_HOME": str(root / "home")})
    return create_app(config, token="t" * 32, workspace=root / "workspace")


@pytest.fixture(scope="module")
def team_app() -> FastAPI:
    from workhearth.bank.server.store import PgBank
    from workhearth.server.team import create_team_app

    # Why no bank: building the app and its OpenAPI never calls one (only requests would).
    return create_team_app(cast(PgBank, None), close_bank=False)


def _list_tools(server: Any, schema: str = "output_schema") -> dict[str, dict[str, Any] | None]:
    async def go() -> dict[str, dict[str, Any] | None]:
        async with Client(server) as client:
            return {t.name: getattr(t, schema) for t in (await client.list_tools()).tools}

    return anyio.run(go)


def _mcp_server(root: Path) -> Any:
    from workhearth.mcp.server.tools import build_server

    (root / "workspace").mkdir()
    config = load_config({"HEARTH_HOME": str(root / "home")})
    return build_server(config, root / "workspace")


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any] | None]:
    return _list_tools(_mcp_server(tmp_path_factory.mktemp("wire-mcp")))


# -------------------------------------------------------------------- REST
@pytest.mark.parametrize(("table", "which"), [(REST, "app"), (TEAM_REST, "team_app")])
def test_every_rest_answer_is_its_api_shape(
    table: dict[tuple[str, str], Any], which: str, request: pytest.FixtureRequest
) -> None:
    answers = openapi_answers(request.getfixturevalue(which))
    assert set(answers) == set(table), "list a new route's api shape in REST here"
    for key, schemas in answers.items():
        want = api_schema(table[key], "serialization")
        for got in schemas:
            assert got == want, f"{key} answers a shape other than api's {table[key]}"


@pytest.mark.parametrize("which", ["app", "team_app"])
def test_every_rest_error_is_the_api_error_shape(
    which: str, request: pytest.FixtureRequest
) -> None:
    want = api_schema(ErrorOut, "serialization")
    wrong = [where for where, got in openapi_errors(request.getfixturevalue(which)) if got != want]
    assert not wrong, wrong


def _models_in(shape: Any) -> Iterator[type[BaseModel]]:
    if inspect.isclass(shape) and issubclass(shape, BaseModel):
        yield shape
        for field in shape.model_fields.values():
            yield from _models_in(field.annotation)
    for arg in typing.get_args(shape):
        yield from _models_in(arg)


def api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        # Why: FastAPI ≥ 0.130 keeps an included router as one entry holding its routes.
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from api_routes(inner.routes)


@pytest.mark.parametrize("which", ["app", "team_app"])
def test_every_response_model_is_declared_in_api(
    which: str, request: pytest.FixtureRequest
) -> None:
    routes = list(api_routes(request.getfixturevalue(which).routes))
    answering = {r.path for r in routes if r.response_model is not None}
    assert {path for _, path in REST if path.startswith("/v1/memory")} <= answering
    elsewhere = set()
    for route in routes:
        shapes = [route.response_model]
        shapes += [extra.get("model") for extra in route.responses.values()]
        for shape in shapes:
            for model in _models_in(shape):
                if not model.__module__.startswith("workhearth.api."):
                    elsewhere.add(f"{route.path}: {model.__module__}.{model.__qualname__}")
    assert not elsewhere, sorted(elsewhere)


def test_no_interface_module_declares_an_output_shape() -> None:
    """A class named ``…Out`` (pydantic or TypedDict) outside api/ is a second definition."""
    found = []
    for folder in ("server", "mcp", "cli"):
        for path in sorted((SRC / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name.endswith("Out"):
                    found.append(f"{path.relative_to(SRC)}: {node.name}")
    assert not found, found


# --------------------------------------------------------------------- MCP
def test_every_mcp_tool_answers_its_api_shape(tools: dict[str, dict[str, Any] | None]) -> None:
    assert set(tools) == set(MCP), "list a new tool's api shape in MCP here"
    for name, schema in tools.items():
        assert schema is not None, name
        got = resolved(schema, schema.get("$defs", {}))
        assert got == api_schema(MCP[name], "validation"), f"{name} drifted from {MCP[name]}"


def test_every_team_mcp_tool_answers_its_api_shape() -> None:
    from workhearth.bank.server.store import PgBank
    from workhearth.mcp.server.team import build_team_server

    # Why no bank: listing the tools never calls one (only a tool call would).
    tools = _list_tools(build_team_server(cast(PgBank, None)))
    assert set(tools) == set(TEAM_MCP)
    for name, schema in tools.items():
        assert schema is not None, name
        got = resolved(schema, schema.get("$defs", {}))
        assert got == api_schema(TEAM_MCP[name], "validation"), name


# ---------------------------------------------------------- both surfaces
@pytest.mark.parametrize(("route", "tool"), SAME, ids=[t for _, t in SAME])
def test_rest_and_mcp_answer_the_same_shape(
    app: FastAPI, tools: dict[str, dict[str, Any] | None], route: tuple[str, str], tool: str
) -> None:
    (rest,) = {repr(s): s for s in openapi_answers(app)[route]}.values()
    schema = tools[tool]
    assert schema is not None
    assert rest == resolved(schema, schema.get("$defs", {}))


def test_skill_list_items_are_the_rest_listing_items(
    app: FastAPI, tools: dict[str, dict[str, Any] | None]
) -> None:
    (rest,) = openapi_answers(app)[("GET", "/v1/skills")]
    schema = tools["skill_list"]
    assert schema is not None
    assert resolved(schema, schema["$defs"])["properties"]["skills"] == rest


def test_a_saved_sentences_provenance_is_one_shape(app: FastAPI, tmp_path: Path) -> None:
    """DESIGN §6: the tools' arguments mirror the REST bodies (``contexts`` items alike)."""
    want = api_schema(ContextIn, "validation")
    spec = app.openapi()
    body = resolved(spec["components"]["schemas"]["MemorySaveIn"], spec["components"]["schemas"])
    assert body["properties"]["contexts"]["items"] == want
    inputs = _list_tools(_mcp_server(tmp_path), "input_schema")["memory_save"]
    assert inputs is not None
    contexts = resolved(inputs, inputs.get("$defs", {}))["properties"]["contexts"]
    assert {"type": "array", "items": want} in contexts["anyOf"]

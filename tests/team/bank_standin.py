"""A stand-in for ``hearth serve --store`` at the network edge: the real PgBank behind
the real ``/v1/memory`` routes (DESIGN §6), Bearer tokens of team users.

Run as ``python -m tests.team.bank_standin --store URL --port N [--hold FILE]
[--content-limit N]``. ``--hold FILE``: while FILE exists, a save is committed,
its key appended to ``FILE.committed``, and the answer held back (the client can
be killed between the server's commit and its own bookkeeping).
``--content-limit``: a stricter limit than the client's, so the server refuses a
save the client let through (a 422, as from a server of another version).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from fastapi import FastAPI, Header, HTTPException, Request, Response
from fastapi.responses import JSONResponse

from workhearth.errors import NotFoundError, UsageError
from workhearth.team.store import PgBank


def make_app(bank: PgBank, hold: Path | None, content_limit: int | None) -> FastAPI:
    app = FastAPI()

    @app.exception_handler(NotFoundError)
    def not_found(_request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(UsageError)
    def usage(_request: Request, exc: UsageError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    def owner(authorization: str | None) -> str:
        token = (authorization or "").removeprefix("Bearer ").strip()
        user = bank.user_for_token(token) if token else None
        if user is None:
            raise HTTPException(401, "a valid token is needed")
        return user

    @app.post("/v1/memory", status_code=201)
    def save(
        body: dict[str, Any],
        response: Response,
        authorization: Annotated[str | None, Header()] = None,
        idempotency_key: Annotated[str | None, Header()] = None,
    ) -> dict[str, Any]:
        user = owner(authorization)
        content = str(body.get("content", ""))
        if content_limit is not None and len(content) > content_limit:
            raise HTTPException(422, f"content over this server's {content_limit} characters")
        entry = bank.save(
            user,
            content,
            body.get("level", "normal"),
            body.get("tags") or [],
            body.get("contexts") or [],
            redact=bool(body.get("redact")),
            idempotency_key=idempotency_key,
        )
        if hold is not None and hold.exists():
            with open(str(hold) + ".committed", "a") as fh:
                fh.write(f"{idempotency_key}\n")
            time.sleep(60)
        if entry.existed:
            response.status_code = 200
        return entry.as_dict()

    @app.get("/v1/memory/search")
    def search(
        q: str, limit: int = 6, authorization: Annotated[str | None, Header()] = None
    ) -> dict[str, Any]:
        return {"results": [h.as_dict() for h in bank.search(owner(authorization), q, limit)]}

    @app.get("/v1/memory")
    def list_entries(
        limit: int = 20,
        cursor: str | None = None,
        tag: str | None = None,
        authorization: Annotated[str | None, Header()] = None,
    ) -> dict[str, Any]:
        entries, next_cursor = bank.list(owner(authorization), limit, cursor, tag)
        return {"entries": [e.as_dict() for e in entries], "next_cursor": next_cursor}

    @app.patch("/v1/memory/{entry_id}")
    def edit(
        entry_id: str, body: dict[str, Any], authorization: Annotated[str | None, Header()] = None
    ) -> dict[str, Any]:
        user = owner(authorization)
        return bank.edit(user, entry_id, body["content"], bool(body.get("redact"))).as_dict()

    @app.delete("/v1/memory/{entry_id}", status_code=204)
    def delete(entry_id: str, authorization: Annotated[str | None, Header()] = None) -> Response:
        bank.delete(owner(authorization), entry_id)
        return Response(status_code=204)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--hold", type=Path)
    parser.add_argument("--content-limit", type=int)
    args = parser.parse_args()
    with PgBank(args.store) as bank:
        app = make_app(bank, args.hold, args.content_limit)
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()

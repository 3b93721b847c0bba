"""What every route needs: the caller checked, and the library built for the asked workspace."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from functools import cached_property
from pathlib import Path
from typing import Annotated, TypeVar
from urllib.parse import parse_qsl

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.routing import compile_path

from workhearth.api.args import checked_workspace
from workhearth.app import Workhearth
from workhearth.config import Config
from workhearth.memory.api import Memory
from workhearth.server.schemas import PATH_MAX, WORKSPACE_HELP

WorkspaceQuery = Annotated[str | None, Query(max_length=PATH_MAX, description=WORKSPACE_HELP)]
Q = TypeVar("Q", bound=BaseModel)


def query_of(model: type[Q], request: Request) -> Q:
    """The request's query string read into ``model``; a 422 like FastAPI's when it does not fit.

    Why by hand on the hottest route (search): FastAPI's own reading of three query
    fields cost more per request than the rest of its routing together. The route
    lists the model's fields in OpenAPI with :func:`schemas.query_openapi`.
    """
    # Why not request.query_params: the same pairs (Starlette's own parse, the last of a
    # repeated name wins), without its multi-dict, which cost a search ~5 µs.
    pairs = parse_qsl(request.scope["query_string"].decode("latin-1"), keep_blank_values=True)
    try:
        return model.model_validate(dict(pairs))
    except ValidationError as exc:
        problems = [{**e, "loc": ("query", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(problems) from None


def allowed_methods(app: FastAPI, path: str) -> set[str]:
    """Every method the documented route at ``path`` takes (read from the OpenAPI paths).

    Like the router, a literal path (``/v1/memory/search``) wins over a template that
    also matches it (``/v1/memory/{entry_id}``).
    """
    found: dict[int, set[str]] = {}
    for template, item in app.openapi()["paths"].items():
        if compile_path(template)[0].match(path):
            found.setdefault(template.count("{"), set()).update(m.upper() for m in item)
    return found[min(found)] if found else set()


def workspace_path(request: Request, workspace: str | None) -> Path:
    if workspace is None or workspace == "":
        default = request.app.state.workspace
        # Why the same object: a Path keeps its hash, and the pools look it up per request.
        return default if isinstance(default, Path) else Path(default)
    return checked_workspace(workspace, request.app.state.config.paths.home)


_Slot = tuple[threading.Semaphore, list[Memory]]


class MemoryPool:
    """Long-lived :class:`Memory` objects per workspace, each lent to one request at a time.

    Why: opening one per request (SQLite, pragmas, index refresh, meta parse) cost
    more than the search itself. Why not one shared object: a Memory caches meta and
    holds one SQLite connection, neither made for two threads at once; writers still
    exclude each other across objects (the layer lock is an ``flock`` per open file,
    which holds between threads too). Why at most ``READERS`` (and ``WRITERS``, apart,
    so a save waiting on its fsyncs holds up no search): memory work is CPU under
    one GIL, so more threads at it only trade the GIL back and forth, and every
    object re-reads the meta after each save. Each loan starts with
    :meth:`Memory.sync` (stat calls), so what the CLI or an editor changed is seen
    by the next request. Searches have a reader of their own, used on the event
    loop (:meth:`loop_reader`).
    """

    READERS = 1
    WRITERS = 1
    WORKSPACES = 16

    def __init__(self, config: Config) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._slots: OrderedDict[tuple[Path, bool], _Slot] = OrderedDict()
        self._writing: dict[Path, int] = {}  # writes in progress, per workspace
        self._loop_readers: OrderedDict[Path, Memory] = OrderedDict()
        self._closed = False

    def _slot(self, key: tuple[Path, bool]) -> _Slot:
        dropped: list[Memory] = []
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                gate = threading.Semaphore(self.WRITERS if key[1] else self.READERS)
                slot = self._slots[key] = (gate, [])
                while len(self._slots) > 2 * self.WORKSPACES:
                    # Why only idle objects: one on loan goes back to a slot nobody holds
                    # and is closed by the garbage collector with its connection.
                    _, (_, idle) = self._slots.popitem(last=False)
                    dropped += idle
                    idle.clear()
            self._slots.move_to_end(key)
        for m in dropped:
            m.close()
        return slot

    @contextlib.contextmanager
    def use(self, workspace: Path, *, write: bool = False) -> Iterator[Memory]:
        """Borrow a Memory of ``workspace``; ``write`` for a request that changes memory."""
        gate, idle = self._slot((workspace, write))
        with gate, self._counting(workspace, write):
            with self._lock:
                memory = idle.pop() if idle else None
            if memory is None:
                memory = Memory(self.config.paths, workspace, self.config.memory)
            try:
                memory.sync()
                yield memory
            except BaseException:
                # Why: a write that failed half-way may leave the object's caches behind the disk.
                memory.close()
                raise
            self._keep(idle, memory)

    @contextlib.contextmanager
    def _counting(self, workspace: Path, write: bool) -> Iterator[None]:
        if not write:
            yield
            return
        with self._lock:
            self._writing[workspace] = self._writing.get(workspace, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._writing[workspace] -= 1

    def loop_reader(self, workspace: Path) -> Memory | None:
        """The event loop's own reader of ``workspace``, synced; None until one is opened.

        Why the loop: a search is quick (~0.3 ms of CPU) and runs best on the event
        loop itself: a worker thread per search costs as much again in thread hops
        and GIL hand-offs, and a reader shared with threads is sometimes busy, which
        sent searches to threads in a cascade under load. Only the loop uses this
        object, one search at a time, so it needs no gate. Catching up after a save
        (meta re-read, index patch) costs a few ms more and is done here too:
        measured, moving it to a thread made the p99 worse. The first open (which
        may build the index) is :meth:`open_reader`'s, in a worker thread.
        """
        memory = self._loop_readers.get(workspace)
        if memory is None:
            return None
        self._loop_readers.move_to_end(workspace)
        if not self._writing.get(workspace):
            # Why skip while this server writes: the write is not acknowledged yet, so
            # the view before it is a right answer, and catching up now would race
            # the writer for the index (and wait for it, on the loop).
            try:
                memory.sync()
            except BaseException:
                del self._loop_readers[workspace]
                memory.close()
                raise
        return memory

    def open_reader(self, workspace: Path) -> Memory:
        """A new reader of ``workspace``, synced (run it in a worker thread), for :meth:`adopt`."""
        # Why no autorefresh: on the loop, a read must never wait on the layer lock
        # (a save in progress holds it); loop_reader syncs it when nobody writes.
        memory = Memory(self.config.paths, workspace, self.config.memory, autorefresh=False)
        try:
            memory.sync()
        except BaseException:
            memory.close()
            raise
        return memory

    def adopt(self, workspace: Path, memory: Memory) -> Memory:
        """Make ``memory`` the loop's reader of ``workspace`` (on the loop); returns the one to use.

        Two first searches may each have opened one: the second is closed.
        """
        current = self._loop_readers.get(workspace)
        if current is not None:
            memory.close()
            return current
        if self._closed:
            return memory  # Why: the server is stopping; the garbage collector closes it
        self._loop_readers[workspace] = memory
        while len(self._loop_readers) > self.WORKSPACES:
            _, dropped = self._loop_readers.popitem(last=False)
            dropped.close()
        return memory

    def _keep(self, idle: list[Memory], memory: Memory) -> None:
        with self._lock:
            if not self._closed:
                idle.append(memory)
                return
        memory.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            slots, self._slots = self._slots, OrderedDict()
        for _, idle in slots.values():
            for m in idle:
                m.close()
        readers, self._loop_readers = self._loop_readers, OrderedDict()
        for m in readers.values():
            m.close()


class _PooledHearth(Workhearth):
    """A request's library object whose memory is borrowed from the pool on first use."""

    def __init__(
        self,
        config: Config,
        workspace: Path,
        pool: MemoryPool,
        stack: contextlib.ExitStack,
        write: bool,
    ) -> None:
        super().__init__(config=config, workspace=workspace)
        self._pool = pool
        self._stack = stack
        self._write = write

    @cached_property
    def memory(self) -> Memory:
        return self._stack.enter_context(self._pool.use(self.workspace, write=self._write))


@contextlib.contextmanager
def open_hearth(
    request: Request, workspace: str | None, *, write: bool = False
) -> Iterator[Workhearth]:
    """A library object for this request's workspace; its memory goes back to the pool after.

    ``write``: the request changes memory (save, edit, delete, restore).
    """
    path = workspace_path(request, workspace)
    with contextlib.ExitStack() as stack:
        yield _PooledHearth(
            request.app.state.config, path, request.app.state.memories, stack, write
        )


async def hearth_dep(
    request: Request, workspace: WorkspaceQuery = None
) -> AsyncIterator[Workhearth]:
    """Why async: making the object costs one stat; the memory is borrowed (and synced)
    by the route's own thread on first use, so the dependency needs no thread hops."""
    with open_hearth(request, workspace) as wh:
        yield wh


async def writer_dep(
    request: Request, workspace: WorkspaceQuery = None
) -> AsyncIterator[Workhearth]:
    """As :func:`hearth_dep`, for a route that changes memory."""
    with open_hearth(request, workspace, write=True) as wh:
        yield wh

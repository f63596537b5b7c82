"""Parse a fetched page into resolved links, in this process or in worker processes (the other cores).

A crawl spends much of its CPU parsing HTML and resolving URLs. With `workers` >= 1 that work runs in
`python -m linkhound.parse_worker` processes that talk to the event loop over their stdin and stdout, with
no threads in this process (a ProcessPoolExecutor's feeder threads fought the loop for the GIL and gained
nothing). The result is the same either way.
"""

from __future__ import annotations

import asyncio
import itertools
import sys

from .links import LinkRules
from .parsed_page import HEADER, Flat, ParsedPage, frame, load_result, parse_page, unflatten

__all__ = ["PageParser", "ParsedPage", "parse_page", "WARMUP_PAGES"]

# Pages parsed in this process before workers are started, unless start() started them with the run: a small
# run never pays for their start-up.
WARMUP_PAGES = 50


async def read_result(reader: asyncio.StreamReader) -> tuple[int, Flat | None]:
    """A worker's next result frame (parsed_page.result_frame)."""
    size = HEADER.unpack(await reader.readexactly(HEADER.size))[0]
    return load_result(await reader.readexactly(size))


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: dict[int, asyncio.Future[Flat | None]] = {}
        self.reader_task: asyncio.Task[None] | None = None

    async def read_results(self) -> None:
        assert self.process.stdout is not None
        try:
            while True:
                request_id, flat = await read_result(self.process.stdout)
                future = self.pending.pop(request_id, None)
                if future is not None and not future.done():
                    future.set_result(flat)
        except (asyncio.IncompleteReadError, ConnectionError, EOFError) as e:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(RuntimeError(f"parse worker stopped: {e!r}"))
            self.pending.clear()


class PageParser:
    def __init__(self, rules: LinkRules, include_code: bool, workers: int) -> None:
        self._rules = rules
        self._include_code = include_code
        self._want = workers
        self._workers: list[_Worker] = []
        self._ids = itertools.count()
        self._starting: asyncio.Future[None] | None = None
        self._parsed = 0
        self.in_workers = 0  # pages parsed by workers so far

    def start(self) -> None:
        """Start the workers now (a crawl: many pages to come). A worker takes about a tenth of a second to
        start, in which a crawl parses a few hundred pages here; started when the 51st page came, they took
        their first page after about 300 of 10,000 (measured)."""
        if self._want >= 1:
            self._started()

    async def parse(self, body: bytes, url: str, content_type: str) -> ParsedPage | None:
        self._parsed += 1
        if self._want < 1 or self._starting is None and self._parsed <= WARMUP_PAGES or not self._started():
            return parse_page(self._rules, body, url, content_type, self._include_code)
        self.in_workers += 1
        worker = min(self._workers, key=lambda w: len(w.pending))
        request_id = next(self._ids)
        future: asyncio.Future[Flat | None] = asyncio.get_running_loop().create_future()
        worker.pending[request_id] = future
        stdin = worker.process.stdin
        assert stdin is not None
        stdin.write(frame((request_id, body, url, content_type)))
        return unflatten(await future)

    def _started(self) -> bool:
        """Whether the workers are up; the first call starts them, and pages are parsed here meanwhile."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._spawn())
        return self._starting.done() and self._starting.exception() is None and bool(self._workers)

    async def _spawn(self) -> None:
        for _ in range(self._want):
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "linkhound.parse_worker",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            )
            assert process.stdin is not None
            process.stdin.write(frame((self._rules, self._include_code)))
            worker = _Worker(process)
            worker.reader_task = asyncio.ensure_future(worker.read_results())
            self._workers.append(worker)

    def kill(self) -> None:
        """The second Ctrl+C: end the workers now."""
        for worker in self._workers:
            if worker.process.returncode is None:
                worker.process.kill()

    async def close(self) -> None:
        if self._starting is not None:
            await asyncio.gather(self._starting, return_exceptions=True)
        for worker in self._workers:
            if not self.in_workers and worker.process.returncode is None:
                worker.process.kill()  # started with the run and never given a page: no wait for its start-up
            elif worker.process.stdin is not None:
                worker.process.stdin.close()  # the worker ends at end of input
        for worker in self._workers:
            await worker.process.wait()
            if worker.reader_task is not None:
                await worker.reader_task
        self._workers.clear()

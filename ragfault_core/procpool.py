"""A process pool that owns its worker processes: one pipe and one thread per worker.

``concurrent.futures.ProcessPoolExecutor`` shares one call queue between its workers and feeds it
from a thread. On Python 3.11 before 3.11.5 (Debian 12 ships 3.11.2) a worker that dies while that
thread is writing a large task leaves the feeder blocked on a pipe the parent itself still holds
open (CPython gh-94777), and the interpreter never exits: it joins the executor's threads at exit.
Here each worker has its own socket pair, the parent keeps only its own end, and nothing is
joined at exit (the threads are daemons), so a dead worker is an ``EOFError`` or ``BrokenPipeError``
on that worker's pipe, on every Python.

The interface is the part of ``ProcessPoolExecutor`` the pools use: ``submit`` returns a
``Future``; the first worker to die breaks the pool (like the executor: every task queued or in
flight fails with ``BrokenProcessPool``, the remaining workers are stopped, and ``submit`` raises
``BrokenProcessPool``); ``shutdown(wait, cancel_futures)``. Each worker runs one task at a time;
callers bound how many they hand over.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

# a task: the future to complete, the function and its arguments (None stops a worker thread)
_Task = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None


def _worker_main(conn: Connection, initializer: Callable[..., Any] | None, initargs: Sequence[Any]) -> None:
    """In the worker: run tasks received on ``conn`` until ``None`` or the parent's end closes."""
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        fn, args = msg
        try:
            reply: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # sent back and raised again in the parent
            reply = (False, exc)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # the result or exception does not pickle
            conn.send((False, RuntimeError(f"worker result could not be sent: {exc!r}")))


class WorkerPool:
    """``workers`` processes started from ``ctx``; see the module docstring."""

    def __init__(
        self,
        workers: int,
        ctx: BaseContext,
        initializer: Callable[..., Any] | None = None,
        initargs: Sequence[Any] = (),
        name: str = "ragfault-worker",
    ) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self._tasks: queue.SimpleQueue[_Task] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._broken: str | None = None
        self._closed = False
        self._processes: dict[int, Any] = {}
        self._threads: list[threading.Thread] = []
        for i in range(workers):
            parent, child = ctx.Pipe(duplex=True)
            proc = ctx.Process(  # type: ignore[attr-defined]
                target=_worker_main,
                args=(child, initializer, tuple(initargs)),
                name=f"{name}-{i}",
                daemon=True,
            )
            proc.start()
            child.close()  # the worker holds the only other end: its death is EOF / EPIPE here
            self._processes[proc.pid] = proc
            t = threading.Thread(target=self._serve, args=(parent, proc), name=f"{name}-io-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    # in the parent, one thread a worker

    def _serve(self, conn: Connection, proc: Any) -> None:
        try:
            while True:
                task = self._tasks.get()
                if task is None or self._broken is not None:
                    if task is not None:
                        task[0].set_exception(BrokenProcessPool(self._broken or "pool broken"))
                    break
                fut, fn, args = task
                if not fut.set_running_or_notify_cancel():
                    continue
                try:
                    conn.send((fn, args))
                    del task, fn, args  # sent: the worker has them (a request body need not wait here)
                    ok, value = conn.recv()
                except (EOFError, OSError) as exc:
                    fut.set_exception(BrokenProcessPool(f"a worker process died ({type(exc).__name__})"))
                    self._break(f"worker {proc.pid} died")
                    return
                except BaseException as exc:  # the task does not pickle: that task fails, the worker lives
                    fut.set_exception(exc)
                    continue
                if ok:
                    fut.set_result(value)
                else:
                    fut.set_exception(value)
            try:
                conn.send(None)
            except OSError:
                pass
        finally:
            conn.close()
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
                proc.join(5)

    def _break(self, reason: str) -> None:
        with self._lock:
            if self._broken is not None:
                return
            self._broken = reason
        for proc in self._processes.values():
            if proc.is_alive():
                proc.terminate()
        self._fail_queued(BrokenProcessPool(reason))
        for _ in self._threads:
            self._tasks.put(None)

    def _fail_queued(self, exc: BaseException | None) -> None:
        """Fail (or, with ``exc`` None, cancel) every task not yet taken by a worker thread."""
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                return
            if task is None:
                continue
            if exc is None:
                task[0].cancel()
            elif task[0].set_running_or_notify_cancel():
                task[0].set_exception(exc)

    # the executor's interface

    @property
    def broken(self) -> bool:
        return self._broken is not None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        with self._lock:
            if self._broken is not None:
                raise BrokenProcessPool(self._broken)
            if self._closed:
                raise RuntimeError("cannot submit to a pool that is shut down")
            fut: Future[Any] = Future()
            self._tasks.put((fut, fn, args))
        return fut

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if cancel_futures:
            self._fail_queued(None)
        for _ in self._threads:
            self._tasks.put(None)
        if not wait:
            return
        for t in self._threads:
            t.join(30)
        for proc in self._processes.values():
            proc.join(5)

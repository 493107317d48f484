"""Where a batch runs: here, one job after another (the default); on N local worker processes
(``local:N``); or on a running Dask scheduler (``tcp://HOST:PORT``).

``local:N`` is a Dask LocalCluster when the ``excerpt[dask]`` extra is installed (N worker
processes of one thread each, listening on loopback only, no dashboard) and a standard-library
process pool (spawned, never forked) otherwise: the same jobs, the same results. An address
needs the extra. Whatever runs them, the results come back in the order the jobs were given;
``done`` hears of each as it finishes (a progress display).
"""

from __future__ import annotations

import logging
import multiprocessing
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Literal, TypeVar

from excerpt.batch import SCHEDULER_HELP
from excerpt.errors import EnvironmentFault, UsageError

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["SERIAL", "Scheduler", "dask_installed", "fan_out", "parse_scheduler", "require_dask"]

T = TypeVar("T")
R = TypeVar("R")

_MAX_LOCAL = 1024
_ADDRESS = re.compile(r"(?:tcp|tls)://(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")
_CONNECT_TIMEOUT = "10s"


@dataclass(frozen=True, slots=True, kw_only=True)
class Scheduler:
    """Where a batch runs: ``serial`` here, ``local`` on ``workers`` processes, or
    ``address`` on the Dask scheduler at ``address``."""

    kind: Literal["serial", "local", "address"]
    workers: int = 1
    address: str = ""

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("a scheduler has at least one worker")
        if (self.kind == "address") != bool(self.address):
            raise ValueError("an address belongs to an address scheduler alone")

    @property
    def fans_out(self) -> bool:
        return self.kind != "serial"


SERIAL = Scheduler(kind="serial")


def parse_scheduler(text: str | None) -> Scheduler:
    """The scheduler ``--scheduler TEXT`` names (None: serial).

    Raises:
        UsageError: TEXT is neither ``local:N`` (N from 1 to 1024) nor ``tcp://HOST:PORT``.
    """
    if text is None:
        return SERIAL
    wanted = f"--scheduler wants {SCHEDULER_HELP}"
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not (count.isascii() and count.isdigit()):
            raise UsageError(f"{wanted}; got {text!r}")
        workers = int(count)
        if not 1 <= workers <= _MAX_LOCAL:
            raise UsageError(f"--scheduler local:N wants N from 1 to {_MAX_LOCAL}; got {text!r}")
        return Scheduler(kind="local", workers=workers)
    match = _ADDRESS.fullmatch(text)
    if match is None:
        raise UsageError(f"{wanted}; got {text!r}")
    if not 1 <= int(match.group(1)) <= 65535:
        raise UsageError(f"--scheduler: the port of {text!r} is not 1 to 65535")
    return Scheduler(kind="address", address=text)


def _distributed() -> ModuleType | None:
    """``distributed`` when the ``excerpt[dask]`` extra is installed, else None."""
    try:
        import distributed
    except ImportError:
        return None
    return distributed


def dask_installed() -> bool:
    return _distributed() is not None


def require_dask(scheduler: Scheduler) -> None:
    """Refuse an address when Dask is missing, before any job starts.

    Raises:
        UsageError: an address scheduler without the ``excerpt[dask]`` extra.
    """
    if scheduler.kind == "address" and not dask_installed():
        raise UsageError(
            f"--scheduler {scheduler.address} runs on Dask, which is not installed: "
            "pip install 'excerpt[dask]' (or use --scheduler local:N)"
        )


def fan_out(
    job: Callable[[T], R],
    items: Sequence[T],
    scheduler: Scheduler,
    *,
    done: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``[job(item) for item in items]`` on ``scheduler``; ``done(index, result)`` as each
    finishes. ``job`` must be a module-level function (or a ``functools.partial`` of one) and
    the items and results picklable, for every scheduler but ``serial``. The first job that
    raises stops the batch, and its exception is raised here.

    Raises:
        UsageError: an address without the ``excerpt[dask]`` extra.
        EnvironmentFault: the scheduler cannot be reached, or a worker process died.
    """
    require_dask(scheduler)
    results: dict[int, R] = {}

    def finished(index: int, result: R) -> None:
        results[index] = result
        if done is not None:
            done(index, result)

    if scheduler.kind == "serial" or not items:
        for index, item in enumerate(items):
            finished(index, job(item))
    elif scheduler.kind == "local" and not dask_installed():
        _on_pool(job, items, min(scheduler.workers, len(items)), finished)
    else:
        _on_dask(job, items, scheduler, finished)
    return [results[i] for i in range(len(items))]


def _on_pool(
    job: Callable[[T], R], items: Sequence[T], workers: int, finished: Callable[[int, R], None]
) -> None:
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    try:
        futures = {pool.submit(job, item): index for index, item in enumerate(items)}
        for future in as_completed(futures):
            finished(futures[future], future.result())
    except BrokenProcessPool:
        raise EnvironmentFault("a worker process died (killed, or out of memory)") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _on_dask(
    job: Callable[[T], R],
    items: Sequence[T],
    scheduler: Scheduler,
    finished: Callable[[int, R], None],
) -> None:
    import distributed

    with _client(scheduler) as client:
        futures = [client.submit(job, item, pure=False) for item in items]
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for future in distributed.as_completed(futures):
                finished(index[future.key], future.result())
        except distributed.client.FutureCancelledError:
            raise EnvironmentFault("the Dask scheduler cancelled the run's jobs") from None
        except distributed.KilledWorker:
            raise EnvironmentFault(
                "a Dask worker died running a job (killed, or out of memory), "
                "and so did the workers that retried it"
            ) from None
        finally:
            client.cancel([f for f in futures if not f.done()])


@contextmanager
def _client(scheduler: Scheduler) -> Iterator[Client]:
    """A client of the scheduler's address, or of a LocalCluster started for this run."""
    with _quiet("distributed"), _dask_client(scheduler) as client:
        yield client


@contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Only warnings and errors of logger ``name`` (Dask tells of every worker it starts
    and stops, on the lead's stderr)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextmanager
def _dask_client(scheduler: Scheduler) -> Iterator[Client]:
    import dask
    import distributed

    if scheduler.kind == "address":
        try:
            client = distributed.Client(scheduler.address, timeout=_CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise EnvironmentFault(
                f"cannot reach the Dask scheduler at {scheduler.address}: {exc}"
            ) from None
        with client:
            yield client
        return
    # workers that may start processes of their own (the indexer's parsers), with no memory
    # limit of Dask's: a job holds no data Dask could spill, only the index it is building
    with dask.config.set({"distributed.worker.daemon": False}):
        try:
            cluster = distributed.LocalCluster(
                n_workers=scheduler.workers, threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None, memory_limit=0,
            )  # fmt: skip
        except RuntimeError as exc:  # its workers could not start (a main module they cannot
            # import again, as spawned processes must: see "Using the library")
            raise EnvironmentFault(f"the local Dask cluster did not start: {exc}") from None
        with cluster, distributed.Client(cluster) as client:
            yield client

"""The store under concurrent use: processes (DuckDB's file lock, retried) and one process's
threads (the dashboard's sessions, its warm-up and its buttons), which take turns by mode."""

import multiprocessing as mp
import threading
import time

import pytest

from backend import store as store_module
from backend.errors import UserError
from backend.records import Sample
from backend.store import Store


def _writer(path: str, batches: int) -> None:
    store = Store(path, migrate=False)
    for b in range(batches):
        store.put(
            [Sample(experiment_id="e", checkpoint_id="c", problem_id=f"p{b}", sample_idx=i) for i in range(20)],
            replace=False,
        )
        time.sleep(0.01)


def _reader(path: str, stop_after_count: int, result) -> None:
    store = Store(path, migrate=False)
    errors, reads, last = 0, 0, 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            last = store.count(Sample)
            reads += 1
        except Exception:
            errors += 1
        if last >= stop_after_count:
            break
    result.put((errors, reads, last))


@pytest.mark.slow
def test_writer_and_reader_processes_concurrently(db_path):
    Store(db_path)
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    reader = ctx.Process(target=_reader, args=(str(db_path), 50 * 20, result))
    writer = ctx.Process(target=_writer, args=(str(db_path), 50))
    reader.start()
    writer.start()
    writer.join(120)
    errors, reads, last = result.get(timeout=120)
    reader.join(10)
    assert writer.exitcode == 0
    assert errors == 0
    assert reads > 1
    assert last == 1000


# One process, several threads (the dashboard's sessions, its warm-up, a Launch button): DuckDB
# refuses a read-only and a read-write connection to one file at once, so they must take turns.


def _sample(problem: str) -> Sample:
    return Sample(experiment_id="e", checkpoint_id="c", problem_id=problem, sample_idx=0)


def _in_thread(target) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(target()))
    thread.start()
    return thread, out


def _until_waiting(gate, threads: int) -> None:
    """Until `threads` threads wait for their turn at the gate (not merely started: on a loaded
    machine a thread may start late and find the way clear, and the test would prove nothing)."""
    deadline = time.monotonic() + 10
    while len(gate._cond._waiters) < threads:
        if time.monotonic() > deadline:
            pytest.fail(f"{threads} threads never waited at the gate")
        time.sleep(0.01)


def test_a_write_waits_for_another_threads_read(store):
    opened, release = threading.Event(), threading.Event()

    def read() -> int:
        with store.connect(read_only=True) as con:
            opened.set()
            release.wait(30)
            return con.execute("SELECT count(*) FROM samples").fetchone()[0]

    reader, seen = _in_thread(read)
    assert opened.wait(10)
    # DuckDB alone: "Can't open a connection to same database file with a different configuration"
    writer, wrote = _in_thread(lambda: store.put([_sample("p0")]))
    _until_waiting(store_module._gate(store.path), 1)
    release.set()
    for thread in (reader, writer):
        thread.join(10)
    assert seen == [0] and wrote == [1] and store.count(Sample) == 1  # the read ended before the write began


def test_a_read_waits_for_another_threads_transaction_and_sees_it(store):
    with store.transaction() as con:
        thread, seen = _in_thread(lambda: store.count(Sample))
        _until_waiting(store_module._gate(store.path), 1)
        store.put([_sample("p0"), _sample("p1")], con=con)
    thread.join(10)
    assert seen == [2]


def hold_a_read(store) -> tuple[threading.Thread, threading.Event]:
    """A thread holding a read-only connection until the returned event is set."""
    opened, release = threading.Event(), threading.Event()

    def read() -> None:
        with store.connect(read_only=True):
            opened.set()
            release.wait(30)

    thread = threading.Thread(target=read)
    thread.start()
    assert opened.wait(10)
    return thread, release


def test_a_waiting_write_goes_before_later_reads_and_a_nested_read_does_not_wait(store):
    gate = store_module._gate(store.path)
    opened, writer_waits, nested = threading.Event(), threading.Event(), []

    def long_read() -> None:
        with store.connect(read_only=True):
            opened.set()
            assert writer_waits.wait(10)
            nested.append(store.count(Sample))  # this thread's second connection: no deadlock with the writer

    first, _ = _in_thread(long_read)
    assert opened.wait(10)  # the writer must come second (it once started first and took the gate at once)
    writer, _ = _in_thread(lambda: store.put([_sample("p0")]))
    _until_waiting(gate, 1)
    later, seen = _in_thread(lambda: store.count(Sample))
    _until_waiting(gate, 2)
    writer_waits.set()
    for thread in (first, writer, later):
        thread.join(10)
    assert nested == [0] and seen == [1]  # the later read waited for the writer that was waiting


def test_readers_held_back_by_a_writer_go_as_soon_as_it_gives_up(store):
    """A writer that times out wakes the readers it held back; they need not wait for the reader
    it was waiting for (up to the store's 15 s)."""
    gate = store_module._gate(store.path)
    holder, release = hold_a_read(store)

    def impatient_write() -> str:
        try:
            with gate.turn(False, 0.5, store.path):
                return "got the turn"
        except UserError as err:
            return str(err)

    writer, gave_up = _in_thread(impatient_write)
    _until_waiting(gate, 1)
    later, seen = _in_thread(lambda: store.count(Sample))
    _until_waiting(gate, 2)
    writer.join(10)
    later.join(5)
    still_holding = holder.is_alive()
    release.set()
    holder.join(10)
    assert "stayed busy with this process's reads" in gave_up[0]
    assert seen == [0] and still_holding  # the later read went while the first one still held its connection

"""The Dask engine on a real distributed.LocalCluster (two worker processes on loopback) gives
the local engine's numbers: on the bundled configs it takes, and on random data whose files list
the samples in other orders, in blocks and groups of every size; its errors name the file, the
row and the sample, as a local run's do."""

from __future__ import annotations

import http.server
import json
import math
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path

import dask
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from distributed import LocalCluster
from distributed.diagnostics.plugin import SchedulerPlugin

import evalkit
from evalkit.api import plan
from evalkit.errors import ConfigError, DataError, EngineError

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
CLASSES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as local:
        yield local.scheduler_address


def values(results):
    return {(r.system, r.measure): (r.value, r.ci_low, r.ci_high) for r in results.rows}


def assert_same(dask, local, rel=1e-12):
    """The same measures; values equal up to the order of the sums (groups add up in a tree)."""
    assert dask.keys() == local.keys()
    for key, expected in local.items():
        for got, want in zip(dask[key], expected):
            assert (got is None and want is None) or (math.isnan(want) and math.isnan(got)) or \
                got == pytest.approx(want, rel=rel, abs=1e-15), key


@pytest.mark.slow
@pytest.mark.parametrize("name", ["quickstart", "maestro"])  # taggers' map and omap keep every score: refused
@pytest.mark.parametrize("partition_rows", [1_000_000, 97])
def test_bundled_configs_give_the_local_engines_numbers(cluster, monkeypatch, name, partition_rows):
    monkeypatch.chdir(CONFIGS)
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    config.pop("report", None)
    local = evalkit.run(config)
    dask = evalkit.run({**config, "engine": {"name": "dask", "address": cluster, "partition_rows": partition_rows}})
    # Even one block is not bit for bit: the workers run BLAS on one thread (Dask's default), this
    # process on every core, and a matrix product's blocking may follow the thread count.
    assert_same(values(dask), values(local))
    assert dask.notes[:-1] == local.notes
    assert dask.notes[-1].startswith("Dask: ") and cluster in dask.notes[-1]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 5_000
    ids = np.array([f"clip{i:05d}" for i in rng.permutation(n)])  # not sorted
    reference = (rng.random((n, 3)) < 0.3) * rng.random((n, 3)).round(2)
    prediction = rng.random((n, 3)).round(3)
    return ids, reference, prediction


def parquet(path, ids, values, row_group=1_000, columns=CLASSES):
    pq.write_table(pa.table({"id": ids, **{c: values[:, i] for i, c in enumerate(columns)}}), path, row_group_size=row_group)
    return str(path)


def csv(path, ids, values, columns=CLASSES):
    pd.DataFrame(values, columns=columns, index=pd.Index(ids, name="id")).to_csv(path)
    return str(path)


SETTINGS = {
    "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"],
    "averaging": ["micro", "macro", "samples", "none"],
    "metrics": ["precision", "recall", "f1", "hamming_loss", "kld"],
}


def both(cluster, data_section, partition_rows, **extra):
    config = {"name": "d", "data": data_section, **SETTINGS, **extra}
    local = evalkit.run(config)
    dask = evalkit.run({**config, "engine": {"name": "dask", "address": cluster, "partition_rows": partition_rows}})
    return dask, local


@pytest.mark.slow
@pytest.mark.parametrize("partition_rows", [5_000, 1_234, 400])
def test_files_in_other_orders_give_the_local_numbers(cluster, tmp_path, data, partition_rows):
    ids, reference, prediction = data
    order = np.random.default_rng(partition_rows).permutation(len(ids))
    shuffled = prediction[order][:, ::-1]  # other rows order, other column order, and a CSV
    section = {
        "reference": parquet(tmp_path / "ref.parquet", ids, reference, row_group=777),
        "systems": {
            "parquet": parquet(tmp_path / "p.parquet", ids[order], prediction[order], row_group=1_500),
            "csv": csv(tmp_path / "p.csv", ids[order], shuffled, columns=CLASSES[::-1]),
        },
        "classes": ["c", "a"],
    }
    dask, local = both(cluster, section, partition_rows)
    assert_same(values(dask), values(local))
    assert len(dask.rows) == len(local.rows) > 100


@pytest.mark.slow
def test_float32_values_travel_the_shuffle_exactly(cluster, tmp_path, data):
    ids, reference, prediction = data
    order = np.random.default_rng(3).permutation(len(ids))
    for name, rows, side in (("ref", np.arange(len(ids)), reference), ("p", order, prediction)):
        single = side.astype(np.float32)[rows]  # read as float32 and scored so in memory: float64 holds it exactly
        table = pa.table({"id": ids[rows], **{c: single[:, i] for i, c in enumerate(CLASSES)}})
        pq.write_table(table, tmp_path / f"{name}.parquet")
    section = {"reference": str(tmp_path / "ref.parquet"), "systems": {"p": str(tmp_path / "p.parquet")}}
    dask, local = both(cluster, section, len(ids))  # one block and one group: the same sums in the same order
    assert values(dask) == values(local)


@pytest.mark.slow
def test_missing_empty_and_clip_as_in_memory(cluster, tmp_path, data):
    ids, reference, prediction = data
    over = prediction.copy()
    over[::250, 0] = 1.5
    kept = np.arange(len(ids)) % 7 != 3  # samples the system does not list
    section = {
        "reference": parquet(tmp_path / "ref.parquet", ids, reference),
        "systems": {"p": csv(tmp_path / "p.csv", ids[kept], over[kept])},
        "missing": "empty", "clip": True,
    }
    dask, local = both(cluster, section, 600)
    assert_same(values(dask), values(local))
    assert dask.notes[:-1] == local.notes
    assert any("clipped" in note for note in local.notes)


@pytest.mark.slow
def test_bca_intervals_do_not_depend_on_the_partitions(cluster, tmp_path, data):
    ids, reference, prediction = data
    order = np.random.default_rng(1).permutation(len(ids))
    section = {
        "reference": parquet(tmp_path / "ref.parquet", ids, reference),
        "systems": {"p": parquet(tmp_path / "p.parquet", ids[order], prediction[order])},
    }
    boot = {"statistics": {"bootstrap": {"resamples": 40, "seed": 5}}}  # BCa: keyed counts and groups
    dask, local = both(cluster, section, 900, **boot)
    assert_same(values(dask), values(local))
    assert all(r.ci_low <= r.value <= r.ci_high for r in dask.rows if not math.isnan(r.value))


@pytest.mark.slow
def test_files_without_ids_are_matched_by_position(cluster, tmp_path, data):
    _, reference, prediction = data
    np.save(tmp_path / "ref.npy", reference > 0)  # crisp targets, as the ranking metrics want
    np.save(tmp_path / "p.npy", prediction.astype(np.float32))
    section = {"reference": str(tmp_path / "ref.npy"), "systems": {"p": str(tmp_path / "p.npy")},
               "classes": ["speech", "music", "car"]}  # names for the .npy columns, as in memory
    ranking = {"metrics": [*SETTINGS["metrics"], {"name": "map_binned", "bins": 30}]}  # map: refused, it keeps every score
    dask, local = both(cluster, section, 1_100, **ranking)
    assert_same(values(dask), values(local))
    assert {r.class_ for r in dask.rows} >= {"speech", "music", "car"}
    assert "p: rows aligned with the reference by position: neither file has sample ids" in dask.notes


def dask_run(cluster, reference, system, partition_rows=1_000, **engine):
    return evalkit.run({
        "name": "d", "data": {"reference": reference, "systems": {"p": system}},
        "engine": {"name": "dask", "address": cluster, "partition_rows": partition_rows, **engine},
    })


@pytest.mark.slow
def test_an_id_twice_in_two_blocks_is_an_error_naming_both_rows(cluster, tmp_path, data):
    ids, reference, prediction = data
    twice = ids.copy()
    twice[4_321] = twice[12]  # rows 13 and 4,322: blocks 1 and 5
    system = parquet(tmp_path / "p.parquet", twice, prediction)
    with pytest.raises(DataError, match=f"p.parquet: row 4322: sample id '{ids[12]}' appears twice \\(first on row 13\\)"):
        dask_run(cluster, parquet(tmp_path / "ref.parquet", ids, reference), system)


@pytest.mark.slow
def test_a_missing_sample_and_a_bad_value_are_named(cluster, tmp_path, data):
    ids, reference, prediction = data
    ref = parquet(tmp_path / "ref.parquet", ids, reference)
    with pytest.raises(DataError, match=f"missing 1 reference id\\(s\\): '{ids[2_500]}'.*one group of ids"):
        dask_run(cluster, ref, parquet(tmp_path / "p.parquet", np.delete(ids, 2_500), np.delete(prediction, 2_500, 0)))
    bad = prediction.copy()
    bad[3_210, 1] = np.nan
    with pytest.raises(DataError, match=f"bad.parquet: 1 value\\(s\\) are NaN or infinite, first at sample '{ids[3_210]}' "
                                        "\\(row 3211\\), class 'b'.*read by the Dask task for rows 3,001 to 4,000 of the file"):
        dask_run(cluster, ref, parquet(tmp_path / "bad.parquet", ids, bad))


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_clear_error(tmp_path, data):
    ids, reference, _ = data
    ref = parquet(tmp_path / "ref.parquet", ids, reference)
    with pytest.raises(EngineError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'.*dask scheduler"):
        dask_run("tcp://127.0.0.1:9", ref, ref)


@pytest.mark.slow
def test_the_local_cluster_keeps_a_chunk_on_the_heap(monkeypatch):
    """Dask's nanny gives its workers MALLOC_TRIM_THRESHOLD_=65536, which also fixes glibc's mmap
    threshold at 128 KiB (every chunk's arrays mapped and unmapped: 2.2x the CPU), and leaves it
    in the starting process's environment, where it outranks Dask's config. The LocalCluster
    evalkit starts gives its workers WORKER_MALLOC even then, keeps Dask's other settings, and
    leaves this process's environment as it found it."""
    from evalkit.dask_engine import WORKER_MALLOC, _client
    from evalkit.settings import Engine

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as an earlier LocalCluster leaves it
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    with _client(Engine("dask", None, 1, 1_000_000, 60)) as (client, _):
        (environ,) = client.run(lambda: dict(os.environ)).values()
    assert {name: environ.get(name) for name in WORKER_MALLOC} == WORKER_MALLOC
    assert environ.get("OPENBLAS_NUM_THREADS") == "1"  # Dask's own setting, kept
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536" and "MALLOC_MMAP_THRESHOLD_" not in os.environ


def test_the_local_cluster_leaves_the_dashboard_port_to_the_user(recwarn):
    """A user's own Dask dashboard holds port 8787: the cluster a run starts serves nothing there
    and prints no "Port 8787 is already in use" (CI saw it when a test's cluster held the port)."""
    from evalkit.dask_engine import _client
    from evalkit.settings import Engine

    with socket.socket() as user:
        with suppress(OSError):  # already held: by someone else, which is the case tested
            user.bind(("127.0.0.1", 8787))
            user.listen()
        with _client(Engine("dask", None, 1, 1_000_000, 60)) as (client, _):
            port = client.cluster.scheduler.http_server.port
    assert port != 8787
    assert not [w for w in recwarn if "8787" in str(w.message)]


@pytest.mark.slow
def test_the_cli_starts_a_local_cluster_with_engine_dask(tmp_path):
    def run(*extra):
        done = subprocess.run(
            [sys.executable, "-m", "evalkit", "run", str(CONFIGS / "quickstart.yaml"), "--no-report",
             "--format", "json", *extra],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        return done

    local, dask = run(), run("--engine", "dask")
    rows = json.loads(dask.stdout)["rows"]
    expected = json.loads(local.stdout)["rows"]  # to rounding: BLAS runs on one thread on a worker
    assert rows == [{**row, "value": pytest.approx(row["value"], rel=1e-12, abs=1e-15)} for row in expected]
    assert "note: Dask: 300 samples" in dask.stderr and "LocalCluster of" in dask.stderr
    wrong = subprocess.run([sys.executable, "-m", "evalkit", "validate", str(CONFIGS / "quickstart.yaml"),
                            "--engine", "spark"], capture_output=True, text=True)
    assert wrong.returncode == 1 and "--engine spark: give `local`, `dask` or `dask=ADDRESS`" in wrong.stderr


@pytest.mark.slow
def test_a_bad_csv_line_is_named_with_the_task_that_read_it(cluster, tmp_path, data):
    ids, reference, prediction = data
    path = csv(tmp_path / "p.csv", ids, prediction)
    lines = Path(path).read_text().splitlines()
    lines[2_501] = lines[2_501].rsplit(",", 1)[0] + ",oops"  # line 2,502: row 2,501
    Path(path).write_text("\n".join(lines) + "\n")
    # a CSV is parsed from its start (a line cannot be found otherwise): a later block may meet the line first
    with pytest.raises(DataError, match="p.csv:2502: 'oops' in column 'c' is not a number.*read by the Dask task for rows "):
        dask_run(cluster, parquet(tmp_path / "ref.parquet", ids, reference), path)


@pytest.mark.slow
def test_missing_empty_fills_samples_on_either_side_as_in_memory(cluster, tmp_path, data):
    ids, reference, prediction = data
    listed = reference.any(axis=1)  # a sparse reference: only samples with a label
    kept = np.arange(len(ids)) % 5 != 1  # and a system without some samples
    section = {
        "reference": parquet(tmp_path / "ref.parquet", ids[listed], reference[listed]),
        "systems": {"p": csv(tmp_path / "p.csv", ids[kept], prediction[kept])},
        "missing": "empty",
    }
    dask, local = both(cluster, section, 700)
    assert_same(values(dask), values(local))
    assert dask.notes[:-1] == local.notes and "only systems list are empty in the reference" in local.notes[0]


def test_without_distributed_the_engine_says_how_to_install_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    with pytest.raises(ConfigError, match="^--engine dask: the Dask engine needs Dask's distributed scheduler: "
                                          "pip install 'evalkit\\[dask\\]'$"):
        plan(CONFIGS / "quickstart.yaml", writes=False, engine="dask")


# Faults: what the cluster cannot finish is one EngineError within `engine.timeout`, and lost work is run again.

TIMEOUT = 2  # seconds: engine.timeout in these tests; each must end well within TIMEOUT + start-up


def timed_run(address, reference, system, **engine):
    started = time.monotonic()
    try:
        return dask_run(address, reference, system, **{"timeout": TIMEOUT, **engine})
    finally:
        assert time.monotonic() - started < TIMEOUT + 15, "no hang past the stated timeout"


@contextmanager
def serving(handler):
    """A TCP server on 127.0.0.1 that hands each connection to ``handler`` in its own thread,
    for the test's duration."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def replying(data):
    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.sendall(data)
            time.sleep(TIMEOUT + 1)  # then silent, as a server waiting for more
    return Handler


@pytest.mark.slow
@pytest.mark.parametrize("handler, said", [
    (http.server.SimpleHTTPRequestHandler,  # waits for a request line that never ends: Dask's frames have none
     f"it accepted the connection but did not answer in Dask's protocol within {TIMEOUT} s"),
    (replying(b"HTTP/1.1 400 Bad Request\r\n\r\n"),  # read as a frame of 3.07 EiB
     "it answered with something else \\(MemoryError"),
    (replying(bytes(range(256)) * 4), "it answered with something else"),
])
def test_an_address_that_is_not_a_dask_scheduler_fails_within_the_timeout(tmp_path, data, handler, said):
    ids, reference, _ = data
    ref = parquet(tmp_path / "ref.parquet", ids, reference)
    with serving(handler) as address, pytest.raises(EngineError, match=f"^'{address}' is not a Dask scheduler: {said}"):
        timed_run(address, ref, ref)


@pytest.mark.slow
def test_a_workers_address_is_not_a_schedulers(cluster, tmp_path, data):
    from distributed import Client

    ids, reference, _ = data
    with Client(cluster) as client:
        worker = next(iter(client.scheduler_info()["workers"]))
    ref = parquet(tmp_path / "ref.parquet", ids, reference)
    with pytest.raises(EngineError, match=f"^'{worker}' is not a Dask scheduler but a Dask Worker; give the scheduler"):
        timed_run(worker, ref, ref)


@pytest.mark.slow
def test_a_scheduler_without_workers_is_one_error_after_the_timeout(tmp_path, data):
    ids, reference, _ = data
    ref = parquet(tmp_path / "ref.parquet", ids, reference)
    with LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=":0") as empty:
        address = empty.scheduler_address
        with pytest.raises(EngineError, match=f"^the Dask scheduler at {address} has no worker, and none joined within "
                                              f"{TIMEOUT} s; start workers \\(`dask worker {address}`\\)"):
            timed_run(address, ref, ref)


class At(SchedulerPlugin):
    """Calls ``act`` when the scheduler sees the ``nth`` task reach ``state``, and again when that
    task reaches it again, ``times`` calls in all; ``done`` holds what each call returned."""

    def __init__(self, state, act, nth=1, times=1):
        self.state, self.act, self.nth, self.times, self.seen, self.key, self.done = state, act, nth, times, 0, None, []

    def transition(self, key, start, finish, *args, **kwargs):
        if finish != self.state or len(self.done) >= self.times:
            return
        self.seen += 1
        if self.seen == self.nth:
            self.key = key
        if key == self.key:
            self.done.append(self.act())


def kill(pid):
    """SIGKILL of the process ``pid()`` names: a real kill, as the OOM killer's or a nanny's."""
    def act():
        target = pid()
        os.kill(target, signal.SIGKILL)
        return target
    return act


@contextmanager
def one_worker(**config):
    """A LocalCluster of one worker process under a nanny (which restarts it when it dies), and
    the worker's process id now."""
    with dask.config.set(config), LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                               dashboard_address=":0") as local:
        yield local, lambda: next(iter(local.workers.values())).pid


def ids_section(tmp_path, data):
    ids, reference, prediction = data
    order = np.random.default_rng(2).permutation(len(ids))
    return {"reference": parquet(tmp_path / "ref.parquet", ids, reference),
            "systems": {"p": parquet(tmp_path / "p.parquet", ids[order], prediction[order])}}


@pytest.mark.slow
def test_killing_the_only_worker_mid_run_loses_no_work(tmp_path, data):
    section = ids_section(tmp_path, data)
    config = {"name": "d", "data": section, **SETTINGS}
    with one_worker() as (local, pid):
        killer = At("memory", kill(pid), nth=4)  # after a few results: the plan and blocks held there are lost
        local.scheduler.add_plugin(killer)
        dask = evalkit.run({**config, "engine": {"name": "dask", "address": local.scheduler_address,
                                                 "partition_rows": 700, "timeout": 60}})
        assert killer.done and pid() not in killer.done  # the nanny started another worker
    assert_same(values(dask), values(evalkit.run(config)))


@pytest.mark.slow
def test_a_task_that_keeps_killing_its_worker_is_one_error(tmp_path, data):
    section = ids_section(tmp_path, data)
    with one_worker(**{"distributed.scheduler.allowed-failures": 1}) as (local, pid):
        local.scheduler.add_plugin(At("processing", kill(pid), nth=2, times=2))  # as a nanny restarting it for memory
        with pytest.raises(EngineError, match=f"^the Dask cluster at {local.scheduler_address} \\(1 worker\\(s\\)\\): the "
                                              "workers died 2 times while running one task, so Dask gave up on it; a "
                                              "worker past its memory limit is restarted by its nanny: lower "
                                              "`engine.partition_rows`"):
            timed_run(local.scheduler_address, section["reference"], section["systems"]["p"], timeout=60)


@pytest.mark.slow
def test_workers_lost_for_good_are_one_error_after_the_timeout(tmp_path, data):
    from distributed import Client

    section = ids_section(tmp_path, data)
    with LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=":0") as empty:
        address = empty.scheduler_address
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                   "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with Client(address) as client:
                client.wait_for_workers(1, timeout=60)
            empty.scheduler.add_plugin(At("memory", kill(lambda: worker.pid), nth=3))  # no nanny: gone for good
            with pytest.raises(EngineError, match=f"^the Dask cluster at {address} \\(1 worker\\(s\\)\\) lost its workers "
                                                  f"during the run and none came back within {TIMEOUT} s; start workers"):
                dask_run(address, section["reference"], section["systems"]["p"], timeout=TIMEOUT)
        finally:
            worker.kill()
            worker.wait(30)


@pytest.mark.slow
def test_a_cluster_restarted_under_the_run_is_one_error(tmp_path, data):
    import asyncio

    section = ids_section(tmp_path, data)
    with one_worker() as (local, _):
        restart = At("memory", lambda: asyncio.ensure_future(local.scheduler.restart(stimulus_id="test")), nth=3)
        local.scheduler.add_plugin(restart)  # as client.restart() from another client: every task is forgotten
        with pytest.raises(EngineError, match=f"^the Dask cluster at {local.scheduler_address} \\(1 worker\\(s\\)\\) cancelled "
                                              "the run's work \\(reason: scheduler-restart\\): was it restarted\\? Run again$"):
            timed_run(local.scheduler_address, section["reference"], section["systems"]["p"], timeout=60)

"""The provenance of a streamed run (issue 25, item 5): every file's sha256 is that of its whole
bytes, whether the loader hashed them as it read them (.npy: one pass) or the run read the file
again (Parquet, a column-major .npy, the same file read twice)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalkit
from evalkit.errors import DataError
from evalkit.provenance import BLOCK, hashing, opened

ROWS, CLASSES = 100_000, 17  # 6.8 MB a side as float32: many chunks, many hashed blocks


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def arrays() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(25)
    return rng.random((ROWS, CLASSES), dtype=np.float32), rng.random((ROWS, CLASSES), dtype=np.float32)


def streamed(reference: Path, systems: dict[str, Path]) -> dict[str, dict]:
    results = evalkit.run({"name": "p", "data": {"reference": str(reference), "stream": True,
                                                 "systems": {name: str(path) for name, path in systems.items()}}},
                          write_reports=False)
    return {(f["role"], f["system"]): f for f in results.provenance["data"]}


def rchar() -> int:
    """Bytes this process has read by read() calls so far (Linux)."""
    return int(Path("/proc/self/io").read_text().split("rchar:")[1].split()[0])


def test_npy_is_hashed_as_it_is_read_once(tmp_path, arrays):
    """The hashes are those of the whole files, and each file is read once: the plan decides
    that the .npy stream hashes them (its loader's ``hashes_as_read``), so no thread reads them
    again (one used to, until the stream claimed the file: 1.2x to 1.6x the bytes, by a race)."""
    ref, pred = tmp_path / "ref.npy", tmp_path / "pred.npy"
    np.save(ref, arrays[0])
    np.save(pred, arrays[1])
    streamed(ref, {"s": pred})  # imports and registry first: they read files too
    before = rchar()
    files = streamed(ref, {"s": pred})
    read = rchar() - before
    for (role, system), path in {("reference", None): ref, ("prediction", "s"): pred}.items():
        assert files[role, system]["sha256"] == sha256(path)
        assert files[role, system]["bytes"] == path.stat().st_size
    total = ref.stat().st_size + pred.stat().st_size
    assert total <= read <= total + (1 << 20), (read, total)  # 1 MiB: the run's other reads


def test_files_not_read_in_one_pass_are_read_again(tmp_path, arrays):
    """Parquet (pyarrow reads its pages column by column), a column-major .npy (read whole,
    not streamed) and a file read as the reference and as a system (hashed by the first
    reading only) all give the sha256 of their whole bytes."""
    parquet, fortran, ref = tmp_path / "pred.parquet", tmp_path / "fortran.npy", tmp_path / "ref.npy"
    pq.write_table(pa.table({str(i): arrays[1][:, i] for i in range(CLASSES)}), parquet, row_group_size=30_000)
    np.save(fortran, np.asfortranarray(arrays[1]))
    np.save(ref, arrays[0])
    files = streamed(ref, {"parquet": parquet, "fortran": fortran, "same": ref})
    expected = {("reference", None): ref, ("prediction", "parquet"): parquet, ("prediction", "fortran"): fortran,
                ("prediction", "same"): ref}
    assert files.keys() == expected.keys()
    for key, path in expected.items():
        assert files[key]["sha256"] == sha256(path), key
        assert files[key]["bytes"] == path.stat().st_size, key


def test_a_run_that_fails_midway_says_why(tmp_path, arrays):
    """A bad value in the last chunk stops the run with its message, hashing or not."""
    bad = arrays[1].copy()
    bad[-1, 3] = 1.5
    ref, pred = tmp_path / "ref.npy", tmp_path / "pred.npy"
    np.save(ref, arrays[0])
    np.save(pred, bad)
    with pytest.raises(DataError, match=r"pred\.npy.*1\.5"):
        streamed(ref, {"s": pred})


def test_opened_outside_a_run_is_the_file(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"evalkit" * 1000)
    with opened(path) as handle:
        assert handle.read() == path.read_bytes()


def test_a_loader_that_reads_into_one_buffer_gets_the_whole_files_hash(tmp_path, arrays):
    """``readinto`` a buffer the loader fills again at once: the block still being hashed is
    hashed before the buffer is refilled, so the hash is the file's."""
    path = tmp_path / "ref.npy"
    np.save(path, arrays[0])
    buffer = bytearray(3 * BLOCK + 17)  # blocks for the hashing thread (> SMALL), and a short last one
    with hashing([(path, "ref.npy", "reference", None)], claimed={path}) as hashes:
        with opened(path) as handle:
            while handle.readinto(buffer):
                pass
        (found,) = hashes.described()
    assert found["sha256"] == sha256(path) and found["bytes"] == path.stat().st_size

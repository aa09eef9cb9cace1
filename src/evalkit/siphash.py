"""SipHash-2-4 of many short texts at once, with numpy: the hash pandas' ``hash_array`` gives
sample ids (its fixed key, then SplitMix64's finaliser), without importing pandas (a quarter of
a second, most of a small run's start-up).

SipHash is Aumasson & Bernstein's "SipHash: a fast short-input PRF" (INDOCRYPT 2012): the
message in 8-byte little-endian words, the last one holding the remaining bytes and the length
in its top byte, each word mixed in by two rounds, then four. Here every text is one row and
the rounds run on whole columns; the texts are sorted by length, longest first, so the texts
still taking words are always the first rows and each column is a slice, not a mask.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: pandas' ``hash_key`` (``pandas.core.util.hashing._default_hash_key``).
KEY = b"0123456789123456"

#: Texts hashed at once: a block's words stay a few MB however many ids a run has.
BLOCK = 1 << 16

_INIT = (0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573)


def sip_hashes(texts: Sequence[str], key: bytes = KEY) -> np.ndarray:
    """The SipHash-2-4 of each text's UTF-8 bytes under the 16-byte ``key``, uint64."""
    out = np.empty(len(texts), np.uint64)
    for start in range(0, len(texts), BLOCK):
        out[start : start + BLOCK] = _block([t.encode() for t in texts[start : start + BLOCK]], key)
    return out


def _block(data: list[bytes], key: bytes) -> np.ndarray:
    n = len(data)
    lengths = np.fromiter(map(len, data), np.int64, count=n)
    last = lengths // 8  # the index of each text's last word (the one that holds its length)
    order = np.argsort(-last, kind="stable")
    words = _words(data, lengths, last, order)
    k0, k1 = (int.from_bytes(key[i : i + 8], "little") for i in (0, 8))
    v = [np.full(n, init ^ k, np.uint64) for init, k in zip(_INIT, (k0, k1, k0, k1))]
    taking = np.searchsorted(-last[order], -np.arange(words.shape[1]), side="right")  # texts with a word at each column
    for column, rows in enumerate(taking):
        m = words[:rows, column]
        part = [x[:rows] for x in v]
        part[3] ^= m
        _rounds(part, 2)
        part[0] ^= m
    v[2] ^= np.uint64(0xFF)
    _rounds(v, 4)
    hashes = np.empty(n, np.uint64)
    hashes[order] = v[0] ^ v[1] ^ v[2] ^ v[3]
    return hashes


def _words(data: list[bytes], lengths: np.ndarray, last: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each text's message words, a row each in ``order``: its bytes, zero-padded, with its
    length's low byte as the last byte of its last word."""
    n, width = len(data), 8 * (int(last.max(initial=0)) + 1)
    padded = np.zeros((n, width), np.uint8)
    row_lengths = lengths[order]
    flat = np.frombuffer(b"".join(data[i] for i in order), np.uint8)
    rows = np.repeat(np.arange(n), row_lengths)
    starts = np.cumsum(row_lengths) - row_lengths
    padded[rows, np.arange(flat.size) - np.repeat(starts, row_lengths)] = flat
    padded[np.arange(n), 8 * last[order] + 7] = (row_lengths & 0xFF).astype(np.uint8)
    return padded.view("<u8").astype(np.uint64, copy=False)


def _rotated(x: np.ndarray, bits: int) -> np.ndarray:
    return (x << np.uint64(bits)) | (x >> np.uint64(64 - bits))


def _rounds(v: list[np.ndarray], count: int) -> None:
    """``count`` SipRounds on the state ``v`` (four uint64 arrays, changed in place)."""
    v0, v1, v2, v3 = v
    for _ in range(count):
        v0 += v1
        v1[...] = _rotated(v1, 13) ^ v0
        v0[...] = _rotated(v0, 32)
        v2 += v3
        v3[...] = _rotated(v3, 16) ^ v2
        v0 += v3
        v3[...] = _rotated(v3, 21) ^ v0
        v2 += v1
        v1[...] = _rotated(v1, 17) ^ v2
        v2[...] = _rotated(v2, 32)

"""Sample ids' keys without pandas: evalkit.siphash gives, bit for bit, what pandas'
``hash_array`` gave the keyed draws (SipHash-2-4 under pandas' fixed key, then SplitMix64's
finaliser), so every keyed interval and p-value stays as it was."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.util import hash_array
from run_depth import examples

from evalkit import siphash, stats


def pandas_keys(ids: list[str]) -> np.ndarray:
    return hash_array(np.asarray(ids, dtype=object)).astype(np.uint64)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(max_size=40), max_size=60))
def test_the_keys_are_pandas_hash_array_bit_for_bit(ids):
    """Any text (empty, multi-byte UTF-8, astral characters), of every length around the 8-byte
    words, in any mix of lengths."""
    assert stats.sample_keys(ids, len(ids)).tobytes() == pandas_keys(ids).tobytes()


def test_every_length_across_several_words_and_blocks(monkeypatch):
    """Lengths 0 to 300 (the length byte's wrap at 256 included), hashed in blocks of 7 texts so
    that blocks of unlike lengths meet."""
    ids = ["é" * (n // 2) + "x" * (n % 2) for n in range(301)]  # n bytes of UTF-8
    monkeypatch.setattr(siphash, "BLOCK", 7)
    assert stats.sample_keys(ids, len(ids)).tobytes() == pandas_keys(ids).tobytes()


def test_the_reference_vector_of_the_siphash_paper():
    """Aumasson & Bernstein, "SipHash: a fast short-input PRF", appendix A: key 00..0f, message
    00..0e (15 bytes), SipHash-2-4 = 0xa129ca6149be45e5. Texts of code points below 128 are
    their bytes."""
    message = "".join(map(chr, range(15)))
    assert int(siphash.sip_hashes([message], bytes(range(16)))[0]) == 0xA129CA6149BE45E5

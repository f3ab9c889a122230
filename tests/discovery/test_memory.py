"""The memory channel on its own: exact scoring, the residual over the tool's own text,
and that removals and the approximate path agree with a channel built afresh."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from plugyard.discovery import memory
from plugyard.discovery.memory import MIN_SIMILARITY, TOP, MemoryChannel, standardise

DIM = 16


def unit(rng: np.random.Generator, n: int) -> NDArray[np.float32]:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)


def filled(rng: np.random.Generator, tools: int = 8, per_tool: int = 5) -> MemoryChannel:
    channel = MemoryChannel(DIM, weight=1.0)
    names = [f"t{t}" for t in range(tools) for _ in range(per_tool)]
    channel.add_many(list(range(len(names))), names, unit(rng, len(names)))
    return channel


def brute_force(
    channel: MemoryChannel, query: NDArray[np.float32], cosines: dict[str, float] | None
) -> dict[str, float]:
    tools = sorted(t for t in (f"t{i}" for i in range(channel.tools * 2)) if channel.count(t))
    scores = []
    for tool in tools:
        cos = sorted(float(v @ query) for v in channel.vectors(channel.keys_of(tool)).values())
        scores.append(np.mean(cos[::-1][:TOP]))
    s = np.asarray(scores, dtype=np.float32)
    c = None if cosines is None else np.asarray([cosines[t] for t in tools], dtype=np.float32)
    z = standardise(s, c)
    return {t: float(z[i]) for i, t in enumerate(tools) if z[i] > 0 and s[i] >= MIN_SIMILARITY}


def test_every_tool_is_scored_by_the_mean_of_its_best_three_requests() -> None:
    rng = np.random.default_rng(1)
    channel = filled(rng)
    for query in unit(rng, 20):
        got = {t: r.lift for t, r in channel.recall(query).items()}
        want = brute_force(channel, query, None)
        assert got.keys() == want.keys()
        for tool, lift in want.items():
            assert got[tool] == pytest.approx(lift, rel=1e-4)


def test_the_residual_uses_the_cosine_the_engine_passes() -> None:
    rng = np.random.default_rng(2)
    channel = filled(rng)
    cosines = {f"t{t}": float(rng.uniform(-0.2, 0.6)) for t in range(8)}

    def cosine(tools: object) -> NDArray[np.float32]:
        return np.asarray([cosines[t] for t in tools], dtype=np.float32)  # type: ignore[attr-defined]

    for query in unit(rng, 20):
        got = {t: r.lift for t, r in channel.recall(query, cosine).items()}
        want = brute_force(channel, query, cosines)
        assert got.keys() == want.keys()
        for tool, lift in want.items():
            assert got[tool] == pytest.approx(lift, rel=1e-4)


def test_memory_that_only_echoes_the_tools_own_text_lifts_nothing() -> None:
    # Near-twin tools: each one's requests resemble the query exactly as much as its
    # description does, so memory knows nothing the dense channel did not.
    cosine = np.asarray([0.1, 0.3, 0.5, 0.62, 0.64, 0.2], dtype=np.float32)
    scores = (0.15 + 0.9 * cosine).astype(np.float32)
    assert not np.any(standardise(scores, cosine) > 1e-5)
    # Without the cosine, the twins with the highest scores would be lifted.
    assert standardise(scores, None)[4] > 1.0


def test_memory_beyond_the_tools_own_text_lifts_that_tool_most() -> None:
    cosine = np.asarray([0.1, 0.3, 0.5, 0.62, 0.64, 0.2], dtype=np.float32)
    scores = (0.15 + 0.9 * cosine).astype(np.float32)
    scores[3] += 0.2  # its requests are like the query, more than its text is
    z = standardise(scores, cosine)
    assert int(np.argmax(z)) == 3
    assert z[4] < z[3]


def test_tools_the_index_does_not_hold_are_still_standardised() -> None:
    cosine = np.asarray([0.1, np.nan, 0.5, 0.62, 0.64, 0.2], dtype=np.float32)
    scores = np.asarray([0.2, 0.9, 0.6, 0.7, 0.72, 0.3], dtype=np.float32)
    z = standardise(scores, cosine)
    assert np.all(np.isfinite(z))
    assert int(np.argmax(z)) == 1


def test_a_channel_after_removals_recalls_like_one_built_afresh() -> None:
    rng = np.random.default_rng(3)
    channel = filled(rng, tools=9, per_tool=4)
    gone = list(range(0, 36, 3))
    channel.remove(gone)
    kept = [k for k in range(36) if k not in gone]
    fresh = MemoryChannel(DIM, weight=1.0)
    held = channel.vectors(kept)
    fresh.add_many(kept, [f"t{k // 4}" for k in kept], np.vstack([held[k] for k in kept]))
    for query in unit(rng, 10):
        a = {t: round(r.lift, 5) for t, r in channel.recall(query).items()}
        b = {t: round(r.lift, 5) for t, r in fresh.recall(query).items()}
        assert a == b


def test_the_neighbourhood_path_agrees_when_it_sees_every_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(4)
    exact = filled(rng, tools=10, per_tool=6)
    monkeypatch.setattr(memory, "ANN_THRESHOLD", 20)
    monkeypatch.setattr(memory, "PREFILTER", 60)
    near = MemoryChannel(DIM, weight=1.0)
    keys = list(range(60))
    near.add_many(keys, [f"t{k // 6}" for k in keys], exact_vectors(exact, keys))
    assert near._ann is not None
    for query in unit(rng, 10):
        a = {t: round(r.lift, 4) for t, r in exact.recall(query).items()}
        b = {t: round(r.lift, 4) for t, r in near.recall(query).items()}
        assert a == b


def exact_vectors(channel: MemoryChannel, keys: list[int]) -> NDArray[np.float32]:
    held = channel.vectors(keys)
    return np.vstack([held[k] for k in keys])


def test_fewer_than_five_tools_with_memory_say_nothing() -> None:
    rng = np.random.default_rng(5)
    channel = filled(rng, tools=4)
    assert all(channel.recall(q) == {} for q in unit(rng, 5))


def test_a_key_given_twice_in_one_batch_keeps_its_last_vector() -> None:
    rng = np.random.default_rng(6)
    v = unit(rng, 2)
    channel = MemoryChannel(DIM)
    channel.add_many(["k", "k"], ["a", "b"], v)
    assert len(channel) == 1
    assert channel.keys_of("b") == ["k"] and channel.count("a") == 0
    np.testing.assert_array_equal(channel.vectors(["k"])["k"], v[1])

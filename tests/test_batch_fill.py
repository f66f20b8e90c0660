"""TokensDFA's batch step (`tokensdfa.fill_masks`, `tokensdfa.next_states`): many
sequences, each an (index, state) pair of its own spec, in one call on a thread pool.
Row i must be the mask the pair's own `fill_mask` writes, bit for bit, at any thread
count, with eager, lazy and naive indexes mixed in one batch; a batch of the wrong shape
is a ValueError naming what is wrong, never a crash or a partial write passed off as a
mask."""

from __future__ import annotations

import numpy as np
import pytest

from harness import vocab as vocabularies
from harness.language import reference

tokensdfa = pytest.importorskip("tokensdfa")

REGEXES = (r'\{"id": [0-9]{1,6}, "name": "[a-z ]{0,12}"\}', r"(19|20)[0-9]{2}-[01][0-9]", "yes|no")


@pytest.fixture(scope="module")
def batch() -> tuple[list[object], list[int], int]:
    """Indexes of every kind over llama3 and, for each, states along a path, first visits
    of the lazy ones included (they are filled by the batch before any single fill)."""
    vocab = vocabularies.load("llama3")
    native = reference.native_vocabulary(vocab)
    indexes: list[object] = []
    states: list[int] = []
    for regex in REGEXES:
        for index in (
            tokensdfa.Index(regex, native),
            tokensdfa.LazyIndex(regex, native),
            tokensdfa.NaiveIndex(regex, native),
        ):
            state = index.initial_state
            for byte in regex.replace("\\", "")[:6].encode():
                indexes.append(index)
                states.append(state)
                nxt = index.next_state(state, vocab.tokens.index(bytes([byte])))
                if nxt is None:
                    break
                state = nxt
    return indexes, states, vocab.mask_words


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_batch_rows_equal_single_fills(
    batch: tuple[list[object], list[int], int], threads: int
) -> None:
    indexes, states, words = batch
    out = np.full((len(states), words), -1, dtype=np.int32)
    tokensdfa.fill_masks(indexes, states, out, threads)
    single = np.zeros(words, dtype=np.int32)
    for row, (index, state) in enumerate(zip(indexes, states, strict=True)):
        index.fill_mask(state, single)  # type: ignore[attr-defined]
        assert np.array_equal(out[row], single), (row, state)
    tokens = [17, 90, 1] * (len(states) // 3) + [17] * (len(states) % 3)
    expected = [i.next_state(s, t) for i, s, t in zip(indexes, states, tokens, strict=True)]  # type: ignore[attr-defined]
    assert tokensdfa.next_states(indexes, states, tokens, threads) == expected


def test_first_visits_of_one_lazy_index_share_out_to_helpers() -> None:
    """A batch on 3 threads of one lazy index's first visits: the index makes 2 helper
    engines, and every row equals the mask a fresh index computes alone."""
    vocab = vocabularies.load("gpt2")
    native = reference.native_vocabulary(vocab)
    regex = r'\{"name": "[a-zA-Z ]{1,30}", "tags": \["[a-z]{1,10}"(, "[a-z]{1,10}"){0,4}\]\}'
    text = b'{"name": "Ada Lovelace Byron", "tags": ["alpha", "beta", "gamma"]}'
    shared, alone = tokensdfa.LazyIndex(regex, native), tokensdfa.LazyIndex(regex, native)
    states, state = [shared.initial_state], shared.initial_state
    for byte in text:
        state = shared.next_state(state, vocab.tokens.index(bytes([byte])))
        states.append(state)
    out = np.zeros((len(states), vocab.mask_words), dtype=np.int32)
    tokensdfa.fill_masks([shared] * len(states), states, out, 3)
    assert shared.stats()["helpers"] == 2
    single = np.zeros(vocab.mask_words, dtype=np.int32)
    state = alone.initial_state
    for row, byte in enumerate([None, *text]):
        if byte is not None:
            state = alone.next_state(state, vocab.tokens.index(bytes([byte])))
        alone.fill_mask(state, single)
        assert np.array_equal(out[row], single), row


def test_a_batch_of_the_wrong_shape_is_a_value_error(
    batch: tuple[list[object], list[int], int],
) -> None:
    indexes, states, words = batch
    with pytest.raises(ValueError, match="shape"):
        tokensdfa.fill_masks(indexes, states, np.zeros((len(states), words - 1), np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        wide = np.zeros((len(states), 2 * words), np.int32)
        tokensdfa.fill_masks(indexes, states, wide[:, ::2], 2)
    with pytest.raises(ValueError, match="indexes for a batch"):
        tokensdfa.fill_masks(indexes[:-1], states, np.zeros((len(states), words), np.int32))
    with pytest.raises(ValueError, match="no state"):
        tokensdfa.fill_masks(indexes[:1], [10**6], np.zeros((1, words), np.int32))
    with pytest.raises(TypeError, match="Index, LazyIndex or NaiveIndex"):
        tokensdfa.fill_masks(["not an index"], [0], np.zeros((1, words), np.int32))
    with pytest.raises(ValueError, match="tokens for a batch"):
        tokensdfa.next_states(indexes, states, [1], 2)


def test_a_batch_mixing_vocabulary_widths_is_a_value_error() -> None:
    small = tokensdfa.Vocabulary([b"<eos>", b"a", b"b"], 0, [0])
    big = tokensdfa.Vocabulary([b"<eos>"] + [bytes([b]) for b in range(256)], 0, [0])
    indexes = [tokensdfa.Index("a+", small), tokensdfa.Index("a+", big)]
    with pytest.raises(ValueError, match="mask words among"):
        tokensdfa.fill_masks(indexes, [0, 0], np.zeros((2, 1), np.int32), 2)


def test_a_standing_batch_steps_as_its_indexes_do_and_resets() -> None:
    """`tokensdfa.Batch`: eager, lazy and naive sequences in one batch, stepped along a
    token list at 1 and 2 threads (negative tokens: none taken), equal single steps of
    each sequence's own index after every step, including refusals (EOS, a token the
    state does not allow); reset rows start over."""
    vocab = vocabularies.load("llama3")
    native = reference.native_vocabulary(vocab)
    regex = r'\{"id": [0-9]{1,6}\}'
    kinds = (tokensdfa.Index, tokensdfa.LazyIndex, tokensdfa.NaiveIndex)
    indexes = [kind(regex, native) for kind in kinds for _ in range(5)]
    text = [vocab.tokens.index(bytes([b])) for b in b'{"id": 42}']
    for threads in (1, 2):
        batch = tokensdfa.Batch(indexes)
        states = [i.initial_state for i in indexes]
        out = np.zeros((len(indexes), vocab.mask_words), dtype=np.int32)
        single = np.zeros(vocab.mask_words, dtype=np.int32)
        plans = [None, *[[t] * len(indexes) for t in text]]
        plans[3] = [-1 if r % 2 else text[2] for r in range(len(indexes))]
        plans.append([vocab.eos_id] * len(indexes))
        for plan in plans:
            moved = batch.step(plan, out, threads)
            for row, index in enumerate(indexes):
                token = -1 if plan is None else plan[row]
                nxt = None if token < 0 else index.next_state(states[row], token)
                assert moved[row] == (nxt is not None), (threads, plan, row)
                states[row] = states[row] if nxt is None else nxt
                index.fill_mask(states[row], single)
                assert np.array_equal(out[row], single), (threads, row)
            assert batch.states == states
        batch.reset([0, 7])
        assert batch.states[0] == indexes[0].initial_state
        assert batch.states[7] == indexes[7].initial_state


def test_a_standing_batch_refuses_bad_calls_with_value_errors() -> None:
    vocab = vocabularies.load("gpt2")
    native = reference.native_vocabulary(vocab)
    index = tokensdfa.Index("a+", native)
    batch = tokensdfa.Batch([index, index])
    out = np.zeros((2, vocab.mask_words), np.int32)
    with pytest.raises(ValueError, match="tokens for a batch"):
        batch.step([1], out)
    with pytest.raises(ValueError, match="shape"):
        batch.step(None, np.zeros((3, vocab.mask_words), np.int32))
    with pytest.raises(ValueError, match="no token"):
        batch.step([2**40, 1], out)
    with pytest.raises(ValueError, match="no row"):
        batch.reset([2])
    with pytest.raises(TypeError, match="Index, LazyIndex or NaiveIndex"):
        tokensdfa.Batch(["not an index"])
    small = tokensdfa.Vocabulary([b"<eos>", b"a", b"b"], 0, [0])
    with pytest.raises(ValueError, match="mask words among"):
        tokensdfa.Batch([index, tokensdfa.Index("a+", small)])

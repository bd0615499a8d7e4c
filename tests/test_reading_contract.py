"""The reading contract: two readers' agreement, the one self-correction rule, the registry."""

from __future__ import annotations

import pytest

from personasim.simulation import (
    Reading,
    agree,
    corrected,
    independent_reader,
    register_reader,
)


def test_two_readers_that_read_the_same_value_give_it_with_both_named() -> None:
    both = agree(Reading.of(18.0, "grammar"), Reading.of(18, "math-verify"))
    assert both == Reading.of(18.0, "grammar+math-verify")


def test_two_readers_that_disagree_give_no_value() -> None:
    split = agree(Reading.of(18.0, "grammar"), Reading.of(9.0, "math-verify"))
    assert split.status == "ambiguous" and split.value is None
    assert split.candidates == (18.0, 9.0)
    assert "grammar reads 18.0" in split.reason and "math-verify reads 9.0" in split.reason


def test_one_reader_abstaining_leaves_the_other_marked_as_a_single_reader() -> None:
    single = agree(Reading.of(18.0, "grammar"), Reading.unreadable("no anchor", "math-verify"))
    assert single.ok and single.value == 18.0
    assert single.by == "grammar (single reader; math-verify: no anchor)"
    other = agree(Reading.unreadable("no marker", "grammar"), Reading.of(7.0, "lib"))
    assert other.ok and other.value == 7.0 and other.by.startswith("lib (single reader")


def test_an_ambiguous_reading_on_either_side_stays_ambiguous() -> None:
    found = agree(Reading.ambiguous("two answers", "grammar", (1, 2)), Reading.of(1.0, "lib"))
    assert found.status == "ambiguous" and found.reason == "two answers"
    neither = agree(Reading.unreadable("none", "g"), Reading.unreadable("nothing", "lib"))
    assert neither.status == "unreadable" and neither.reason == "none"


def test_a_correction_marker_makes_the_last_statement_win() -> None:
    text = "Final Answer: 41 ... Wait, it is actually 42."
    reading = corrected([(0, 41.0), (text.index("42"), 42.0)], text)
    assert reading == Reading.of(42.0, "corrected")


def test_differing_statements_without_a_correction_are_ambiguous() -> None:
    text = "The answer is 41. Later: the answer is 42."
    reading = corrected([(0, 41.0), (text.index("42"), 42.0)], text)
    assert reading.status == "ambiguous" and reading.candidates == (41.0, 42.0)


def test_the_marker_must_stand_between_the_last_two_statements() -> None:
    text = "Actually, the answer is 41. The answer is 42."
    reading = corrected([(text.index("41"), 41.0), (text.index("42"), 42.0)], text)
    assert reading.status == "ambiguous"


def test_agreeing_statements_and_no_statement() -> None:
    assert corrected([(0, 5.0), (9, 5)], "5 ... so 5") == Reading.of(5, "")
    assert corrected([], "nothing") is None


def test_a_reader_name_cannot_be_registered_twice_with_different_functions() -> None:
    def first(text: str, context: object) -> Reading:
        return Reading.unreadable("never", "first")

    def second(text: str, context: object) -> Reading:
        return Reading.unreadable("never", "second")

    register_reader("test-contract-reader", first)
    register_reader("test-contract-reader", first)  # the same function again is fine
    with pytest.raises(ValueError, match=r"two independent readers are named.*first.*second"):
        register_reader("test-contract-reader", second)
    assert independent_reader("test-contract-reader") is first
    assert independent_reader("no-such-reader") is None


def test_a_value_stated_twice_after_a_correction_is_one_statement() -> None:
    text = "Final Answer: 26. Wait, I mis-added: Final Answer: \\boxed{18}"
    positions = [(0, 26.0), (text.index("Final Answer: \\"), 18.0), (text.index("18}"), 18.0)]
    assert corrected(positions, text) == Reading.of(18.0, "corrected")

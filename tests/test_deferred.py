"""A class that composes collaborators answers for their parts and methods under the
same names, and what was built is still asked of it."""

from __future__ import annotations

from plugyard.deferred import built, forward, part


class Holder:
    def __init__(self) -> None:
        self.builds = 0

    @part
    def thing(self) -> list[str]:
        """A thing built once."""
        self.builds += 1
        return ["built"]

    def greet(self, name: str, *, punctuation: str = "!") -> str:
        return f"hi {name}{punctuation}"


class Composed:
    def __init__(self) -> None:
        self.holder = Holder()

    thing = forward("holder", Holder.thing)
    greet = forward("holder", Holder.greet)


def test_a_forwarded_part_is_the_holders_built_once() -> None:
    composed = Composed()
    assert composed.thing is composed.holder.thing
    assert composed.thing is composed.thing
    assert composed.holder.builds == 1


def test_a_forwarded_method_is_the_holders_bound_method() -> None:
    assert Composed().greet("Ada", punctuation=".") == "hi Ada."


def test_built_follows_a_forward_to_the_holder() -> None:
    composed = Composed()
    assert built(composed, "thing") is None
    thing = composed.holder.thing
    assert built(composed, "thing") is thing


def test_a_forward_keeps_the_holders_documentation() -> None:
    assert Composed.thing.__doc__ == "A thing built once."

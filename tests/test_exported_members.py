"""The public API is declared once, in ``plugyard.__all__``, and kept honest."""

import plugyard


def test_all_is_sorted_and_unique() -> None:
    assert list(plugyard.__all__) == sorted(set(plugyard.__all__))


def test_every_name_in_all_exists() -> None:
    missing = [name for name in plugyard.__all__ if not hasattr(plugyard, name)]
    assert missing == []


def test_every_public_attribute_is_in_all() -> None:
    public = {
        name
        for name, value in vars(plugyard).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("plugyard")
    }
    assert public <= set(plugyard.__all__)

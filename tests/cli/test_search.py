"""``plugyard search`` and ``plugyard index rebuild`` on the embedded store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from plugyard.cli.main import cli

ENV = {"PLUGYARD_EMBEDDER": "hashing"}


def run(db: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], env=env or ENV)
    return result.exit_code, result.stdout, result.stderr


def test_search_prints_ranked_plugins_with_operation_and_why(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "s.db", "search", "convert 10 km to miles", "-k", "2", "--all")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["1.", lines[0].split()[1], "unit-convert"]
    assert "convert" in lines[0]
    assert "keywords" in lines[1]
    assert len([line for line in lines if line[:3].strip().endswith(".")]) == 2


def test_search_json_lists_matches(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "s.db", "search", "what time is it in Tokyo", "--json", "--all")
    matches = json.loads(out)
    assert code == 0
    assert matches[0]["plugin"] == "time-zones"
    assert len(matches) == 5
    code, out, _ = run(tmp_path / "s.db", "search", "what time is it in Tokyo", "--json")
    floored = json.loads(out)
    assert floored[0]["plugin"] == "time-zones" and all(m["relevant"] for m in floored)
    assert set(matches[0]) >= {"plugin", "operation", "score", "why", "family", "available"}


def test_search_filters_by_family_and_capability(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "s.db", "search", "notes", "--family", "kb", "--json", "--all")
    assert code == 0
    assert sorted(m["plugin"] for m in json.loads(out)) == ["kb-embed", "kb-lexical"]
    code, out, _ = run(
        tmp_path / "s.db",
        "search",
        "cache",
        "--capability",
        "CACHING",
        "-k",
        "10",
        "--json",
        "--all",
    )
    found = {m["plugin"] for m in json.loads(out)}
    assert code == 0
    assert {"cache-memory", "observer-passthrough"} <= found  # ALL stands under CACHING
    assert "calculator" not in found


def test_search_says_nothing_relevant_instead_of_the_nearest_k(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path / "s.db", "search", "weather in lisbon")
    assert code == 0 and out.startswith("nothing relevant")
    code, out, _ = run(tmp_path / "s.db", "search", "weather in lisbon", "--json")
    assert json.loads(out) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["   "], "empty"),
        (["weather", "-k", "0"], "between 1 and 100"),
        (["x", "-k", "101"], "101"),
    ],
)
def test_bad_input_exits_2_with_invalid_query(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    code, out, err = run(tmp_path / "s.db", "search", *args)
    assert code == 2
    assert "invalid_query" in err and fragment in err
    code, out, _ = run(tmp_path / "s.db", "search", *args, "--json")
    assert code == 2
    assert json.loads(out)["error"]["code"] == "invalid_query"


def test_an_unknown_embedder_setting_is_reported(tmp_path: Path) -> None:
    code, _, err = run(tmp_path / "s.db", "search", "x", env={"PLUGYARD_EMBEDDER": "bogus"})
    assert code == 1
    assert "unknown embedder 'bogus'" in err


def test_index_rebuild_embeds_everything_and_shows_progress(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    code, out, err = run(db, "index", "rebuild", "--json")
    summary = json.loads(out)
    assert code == 0
    assert summary["plugins"] >= 18
    assert summary["embedded"] == summary["entries"] > summary["plugins"]
    assert summary["embedder"].startswith("hashing")
    assert "embedding" in err
    code, out, _ = run(db, "index", "rebuild")
    assert code == 0
    assert out.startswith(f"indexed {summary['plugins']} plugins")


def test_index_memory_lists_and_forgets_what_was_learned(tmp_path: Path) -> None:
    from plugyard.yard import Settings, Yard

    db = tmp_path / "m.db"
    with Yard.from_settings(Settings(database=str(db), embedder="hashing", governed=False)) as y:
        found = y.search("how long to read my essay", k=3, subject="ana")
        y.feedback(found.search_id, "text-stats", "execute", subject="ana")
    code, out, _ = run(db, "index", "memory", "text-stats", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["subject"], row["query"], row["operation"]) == (
        "ana", "how long to read my essay", "execute",
    )  # fmt: skip
    code, out, _ = run(db, "index", "memory", "text-stats", "--forget", "--json")
    assert (code, json.loads(out)) == (0, {"purged": 1})
    code, out, _ = run(db, "index", "memory", "text-stats")
    assert "nothing learned" in out

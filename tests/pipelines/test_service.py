"""The service a REST layer sits on: store, validate, run, read traces — on every store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import URL

from plugyard.errors import PipelineError, PlugyardError
from plugyard.pipelines import (
    PipelineService,
    PipelineStore,
    SqlPipelineStore,
    StoredPipeline,
)
from plugyard.pipelines.trace import PipelineRun, TraceEntry
from plugyard.store import testing
from plugyard.store.store import Store
from plugyard.yard import Yard

DOC: dict[str, Any] = {
    "name": "shout",
    "description": "Upper-cases the question.",
    "capabilities": [{"capability": "MODEL", "flow": ["t-model"]}],
}


@pytest.fixture(scope="module")
def postgres() -> Iterator[URL]:
    server = testing.server_url()
    reason = testing.unreachable(server)
    if reason is not None:
        if testing.on_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    with testing.temporary_database(server) as database:
        yield database


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PipelineStore]:
    if request.param == "memory":
        target = ":memory:"
    elif request.param == "sqlite":
        target = str(tmp_path / "p.db")
    else:
        database: URL = request.getfixturevalue("postgres")
        testing.reset_database(database)
        target = database.render_as_string(hide_password=False)
    with Store.open(target) as opened:
        yield SqlPipelineStore(opened)


@pytest.fixture
def service(yard: Yard, store: PipelineStore) -> PipelineService:
    return PipelineService(yard.registry, yard.executor, store)


def test_save_validates_then_stores_the_document_as_written(service: PipelineService) -> None:
    stored = service.save(DOC)
    assert (stored.name, stored.dialect, stored.description) == (
        "shout",
        "plugyard",
        DOC["description"],
    )
    assert stored.document == DOC and len(stored.content_hash) == 64
    assert service.get("shout").document == DOC
    assert [p.name for p in service.list()] == ["shout"]


def test_saving_again_replaces_and_keeps_the_creation_time(service: PipelineService) -> None:
    first = service.save(DOC)
    second = service.save({**DOC, "description": "new"})
    assert second.description == "new" and second.created_at == first.created_at
    assert second.content_hash != first.content_hash


def test_an_invalid_document_is_refused_with_every_fault(service: PipelineService) -> None:
    bad = {"capabilities": [{"capability": "MODEL", "flow": ["nope", "cache-memory"]}]}
    with pytest.raises(PipelineError) as caught:
        service.save(bad)
    assert caught.value.code == "pipeline_invalid" and caught.value.http_status == 422
    assert [p.code for p in caught.value.problems] == ["unknown_plugin", "capability_not_allowed"]
    assert service.list() == ()


def test_runs_of_a_stored_pipeline_are_recorded_without_their_context(
    service: PipelineService,
) -> None:
    service.save(DOC)
    run = asyncio.run(
        service.run_stored("shout", {"question": "secret"}, subject="bob", roles=("reader",))
    )
    assert run.ok and run.context["answer"] == "SECRET"
    kept = service.trace(run.run_id)
    assert kept.context == {} and kept.subject == "bob"
    assert [e.to_dict() for e in kept.trace] == [e.to_dict() for e in run.trace]
    assert [r.run_id for r in service.runs("shout")] == [run.run_id]


def test_missing_things_answer_their_codes(service: PipelineService) -> None:
    for call, code in (
        (lambda: service.get("nope"), "pipeline_not_found"),
        (lambda: service.delete("nope"), "pipeline_not_found"),
        (lambda: service.trace("nope"), "pipeline_run_not_found"),
        (lambda: asyncio.run(service.run(DOC, pipeline="other")), "pipeline_not_found"),
    ):
        with pytest.raises(PipelineError) as caught:
            call()
        assert caught.value.code == code


def test_delete_removes_a_stored_pipeline(service: PipelineService) -> None:
    service.save(DOC)
    service.delete("shout")
    assert service.list() == ()


def test_runs_are_listed_newest_first_and_by_pipeline(store: PipelineStore) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    entry = TraceEntry(0, None, "stage", "/x", "x", "success", 0.0, 1.0, "p", None, 3)
    for n, name in enumerate(["a", "b", "a"]):
        run = PipelineRun(f"r{n}", name, "success", {"secret": 1}, (entry,), f"q{n}",
                          started_at=start + timedelta(seconds=n))  # fmt: skip
        store.save_run(run)
    assert [r.run_id for r in store.runs()] == ["r2", "r1", "r0"]
    assert [r.run_id for r in store.runs("a", limit=1)] == ["r2"]
    found = store.get_run("r0")
    assert found is not None and found.context == {} and found.trace == (entry,)


def test_a_pipeline_document_round_trips_the_store(store: PipelineStore) -> None:
    stored = store.put(StoredPipeline("p", {"x": [1, {"y": None}]}, "olo", "d"))
    assert store.get("p") == stored
    assert store.delete("p") and not store.delete("p")


def test_palette_and_diagram_views(service: PipelineService) -> None:
    view = service.palette(["MODEL"])
    names = [s["capability"] for s in view["sections"]]
    assert names == ["MODEL", "Undefined"]
    assert service.diagram(DOC).startswith("flowchart TD\n")


ALICE = {"subject": "alice", "roles": ("admin",)}
BOB = {"subject": "bob", "roles": ("reader",)}
CAROL = {"subject": "carol", "roles": ()}


def test_a_save_records_who_saved_it(service: PipelineService) -> None:
    stored = service.save(DOC, **ALICE)
    assert stored.saved_by == "alice" and service.get("shout").saved_by == "alice"
    assert service.get("shout").to_dict()["saved_by"] == "alice"


def test_only_a_holder_of_the_right_saves_or_deletes(service: PipelineService) -> None:
    for who in (BOB, CAROL):
        with pytest.raises(PlugyardError) as caught:
            service.save(DOC, **who)
        assert caught.value.code == "permission_denied" and caught.value.http_status == 403
        assert caught.value.details == {"right": "pipeline.save"}  # type: ignore[attr-defined]
    assert service.list() == ()
    service.save(DOC, **ALICE)
    with pytest.raises(PlugyardError) as caught:
        service.delete("shout", **BOB)
    assert caught.value.details == {"right": "pipeline.delete"}  # type: ignore[attr-defined]
    assert [p.name for p in service.list()] == ["shout"]


def test_runs_belong_to_their_subject_and_admins_see_all(service: PipelineService) -> None:
    mine = asyncio.run(service.run(DOC, {"question": "a"}, **BOB)).run_id
    theirs = asyncio.run(service.run(DOC, {"question": "b"}, **CAROL)).run_id
    assert service.trace(mine, **BOB).run_id == mine
    with pytest.raises(PipelineError) as caught:
        service.trace(theirs, **BOB)
    assert caught.value.code == "pipeline_run_not_found"
    assert [r.run_id for r in service.runs(**BOB)] == [mine]
    assert [r.run_id for r in service.runs("shout", **CAROL)] == [theirs]
    assert {r.run_id for r in service.runs(**ALICE)} == {mine, theirs}
    assert service.trace(theirs, **ALICE).subject == "carol"
    assert {r.run_id for r in service.runs()} == {mine, theirs}  # the application's view


def test_a_run_of_a_pipeline_saved_by_another_shows_who_saved_it(
    service: PipelineService,
) -> None:
    stored = service.save(DOC, **ALICE)
    run = asyncio.run(service.run_stored("shout", {"question": "x"}, **BOB))
    expected = {"name": "shout", "saved_by": "alice", "content_hash": stored.content_hash}
    assert run.to_dict()["stored"] == expected
    kept = service.trace(run.run_id, **BOB)
    assert kept.to_dict(context=False)["stored"] == expected
    inline = asyncio.run(service.run(DOC, {"question": "x"}, **BOB))
    assert inline.to_dict()["stored"] is None

"""The migrations build exactly the schema the code queries, and move both ways."""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from plugyard.store import migrate
from plugyard.store.schema import metadata
from plugyard.store.store import Store
from plugyard.store.testing import on_ci

from .rows import row


def test_the_migrated_schema_is_the_schema_the_code_uses(store: Store) -> None:
    with store.reading() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, metadata) == []


def test_downgrading_to_base_and_up_again_works(store: Store) -> None:
    with store.writing() as conn:
        migrate.downgrade(conn, "base")
    with store.reading() as conn:
        assert set(inspect(conn).get_table_names()) <= {"alembic_version"}
    store.migrate()
    store.plugins.upsert(row("back"))
    assert store.revision() == migrate.head()


def test_revisions_are_numbered_in_one_line() -> None:
    scripts = list(ScriptDirectory.from_config(migrate.config()).walk_revisions())
    numbers = sorted(int(s.revision) for s in scripts)
    assert numbers == list(range(1, len(scripts) + 1))
    for script in scripts:
        expected = None if script.revision == "0001" else f"{int(script.revision) - 1:04d}"
        assert script.down_revision == expected
        assert re.fullmatch(rf"r{script.revision}_\w+\.py", script.path.rsplit("/", 1)[-1])
    assert migrate.next_revision_id() == f"{len(scripts) + 1:04d}"


def test_the_head_read_from_file_names_is_alembics() -> None:
    directory = ScriptDirectory.from_config(migrate.config())
    assert migrate.head() == directory.get_current_head()


def test_the_developer_command_reports_and_applies_the_revision(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    migrate.main(["current", database_url])
    assert capsys.readouterr().out.strip() == "None"
    migrate.main(["upgrade", database_url])
    assert capsys.readouterr().out.strip() == migrate.head()


def test_ci_is_told_apart_from_a_developer_machine() -> None:
    assert on_ci({"CI": "true"})
    assert not on_ci({})
    assert not on_ci({"CI": "false"})


def test_migrating_concurrently_with_writes_is_safe(database_url: str) -> None:
    Store.open(database_url).close()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            with Store.open(database_url) as store:
                store.plugins.upsert(row(f"p{n}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_a_new_revision_is_numbered_and_chained_after_head(tmp_path: Path) -> None:
    scripts = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    written = migrate.new_revision("add the vectors table", scripts)
    following = f"{int(migrate.head()) + 1:04d}"
    assert written.name == f"r{following}_add_the_vectors_table.py"
    directory = ScriptDirectory.from_config(migrate.config(scripts=scripts))
    assert directory.get_heads() == [following]
    new = directory.get_revision(following)
    assert new is not None and new.down_revision == migrate.head()
    compile(written.read_text(), str(written), "exec")

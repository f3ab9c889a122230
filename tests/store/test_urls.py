"""Where the store lives: URLs, paths, the settings variable and the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.errors import StoreError
from plugyard.store import urls


def test_a_path_becomes_a_sqlite_file_whose_folder_is_created(tmp_path: Path) -> None:
    url = urls.resolve(tmp_path / "a" / "b" / "yard.db")
    assert url.get_backend_name() == "sqlite"
    assert url.database == str(tmp_path / "a" / "b" / "yard.db")
    assert (tmp_path / "a" / "b").is_dir()


def test_the_default_is_plugyard_db_in_the_data_folder(tmp_path: Path) -> None:
    url = urls.from_environment({"PLUGYARD_HOME": str(tmp_path / "home")})
    assert url.database == str(tmp_path / "home" / "plugyard.db")
    assert (tmp_path / "home").is_dir()


def test_the_settings_variable_names_the_database(tmp_path: Path) -> None:
    env = {urls.DATABASE_URL_ENV: f"sqlite:///{tmp_path}/x.db"}
    assert urls.from_environment(env).database == str(tmp_path / "x.db")
    env = {urls.DATABASE_URL_ENV: str(tmp_path / "y.db")}
    assert urls.from_environment(env).database == str(tmp_path / "y.db")


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+psycopg"])
def test_postgresql_urls_use_psycopg_3(scheme: str) -> None:
    url = urls.resolve(f"{scheme}://u:secret@db.example:5433/yard")
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database) == ("db.example", 5433, "yard")


def test_the_displayed_url_hides_the_password() -> None:
    shown = urls.display(urls.resolve("postgresql://u:secret@h/yard"))
    assert "secret" not in shown
    assert "u:***@h" in shown


@pytest.mark.parametrize("target", ["mysql://root@localhost/x", "not a url://"])
def test_other_databases_are_refused(target: str) -> None:
    with pytest.raises(StoreError) as caught:
        urls.resolve(target)
    assert caught.value.code == "store_error"


@pytest.mark.parametrize("target", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_memory_names_an_in_memory_database(target: str) -> None:
    assert urls.resolve(target).database == ":memory:"


def test_an_uncreatable_folder_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError) as caught:
        urls.resolve(blocker / "sub" / "yard.db")
    assert caught.value.code == "store_error"

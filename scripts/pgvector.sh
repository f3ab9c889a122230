#!/usr/bin/env bash
# Makes sure the PostgreSQL server the tests use has the pgvector extension installed.
# Debian 12 ships no pgvector package, so when a packaged one (PGDG's
# postgresql-<major>-pgvector) cannot be installed either, this builds it from source:
# the server's development headers from apt, the source from PGVECTOR_SRC (a checkout)
# or a clone of PGVECTOR_GIT at PGVECTOR_TAG. It needs root for apt and `make install`;
# without it, or without the network, it says why and the PostgreSQL tests that need
# the extension fail on CI (CI=true).
set -uo pipefail

host="${PLUGYARD_TEST_POSTGRES_HOST:-127.0.0.1}"
tag="${PGVECTOR_TAG:-v0.8.1}"
repo="${PGVECTOR_GIT:-https://github.com/pgvector/pgvector.git}"

available() {
  psql -h "$host" -U "${PGUSER:-postgres}" -d postgres -Atc \
    "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'" 2>/dev/null | grep -q 1
}

if ! command -v pg_config >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/pg_config >/dev/null 2>&1; then
  echo "pgvector: no PostgreSQL installation found; skipping" >&2
  exit 0
fi
if available; then
  exit 0
fi
major="$(psql -h "$host" -U "${PGUSER:-postgres}" -d postgres -Atc 'SHOW server_version_num' 2>/dev/null | cut -c1-2)"
if [ -z "$major" ]; then
  echo "pgvector: PostgreSQL on $host is not reachable; skipping" >&2
  exit 0
fi
sudo_=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_="sudo -n"; else
    echo "pgvector: not root and no sudo: install postgresql-$major-pgvector by hand" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if $sudo_ apt-get install -y -q "postgresql-$major-pgvector" >/dev/null 2>&1 && available; then
  echo "pgvector: installed postgresql-$major-pgvector" >&2
  exit 0
fi
echo "pgvector: building $tag from source for PostgreSQL $major" >&2
$sudo_ apt-get install -y -q "postgresql-server-dev-$major" make gcc >/dev/null 2>&1 || true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -n "${PGVECTOR_SRC:-}" ]; then
  cp -r "$PGVECTOR_SRC"/. "$work/"
elif ! git clone -q --depth 1 --branch "$tag" "$repo" "$work" 2>/dev/null; then
  echo "pgvector: cannot fetch the source ($repo $tag); set PGVECTOR_SRC" >&2
  exit 0
fi
pg_config_bin="/usr/lib/postgresql/$major/bin/pg_config"
[ -x "$pg_config_bin" ] || pg_config_bin="$(command -v pg_config)"
if ! (cd "$work" && make -s PG_CONFIG="$pg_config_bin" OPTFLAGS="" >/dev/null &&
      $sudo_ make -s install PG_CONFIG="$pg_config_bin" >/dev/null); then
  echo "pgvector: the build failed" >&2
  exit 0
fi
available && echo "pgvector: built and installed $tag" >&2
exit 0

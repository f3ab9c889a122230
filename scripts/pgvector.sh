#!/usr/bin/env bash
# Makes sure the PostgreSQL server the tests use has the pgvector extension installed.
# Debian 12 ships no pgvector package, so when a packaged one (postgresql-<major>-pgvector)
# cannot be installed either, this builds it from source: the server's development headers
# from apt, and the source from PGVECTOR_SRC (a checkout) or else Debian's own source
# package of pgvector (from the next release's deb-src, fetched and verified by apt against
# Debian's archive keyring into a private folder; the machine's apt sources are not
# changed). It needs root for apt and `make install`; without it, or without the network,
# it says why and the PostgreSQL tests that need the extension fail on CI (CI=true).
set -uo pipefail

host="${PLUGYARD_TEST_POSTGRES_HOST:-127.0.0.1}"
suite="${PGVECTOR_DEBIAN_SUITE:-trixie}"

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
echo "pgvector: building it from source for PostgreSQL $major" >&2
$sudo_ apt-get install -y -q "postgresql-server-dev-$major" make gcc >/dev/null 2>&1 || true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
debian_source() {
  # apt checks the suite's signed index and every file's hash; nothing is installed.
  local apt="$work/apt"
  mkdir -p "$apt/lists/partial" "$apt/parts" "$work/dl"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$suite" > "$apt/parts/pgvector.sources"
  local opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/parts"
              -o "Dir::State::Lists=$apt/lists" -o Debug::NoLocking=1 -q)
  apt-get "${opts[@]}" update >/dev/null 2>&1 &&
    (cd "$work/dl" && apt-get "${opts[@]}" source --download-only pgvector >/dev/null 2>&1) &&
    tar -xzf "$work"/dl/pgvector_*.orig.tar.gz -C "$work/src" --strip-components=1
}
mkdir -p "$work/src"
if [ -n "${PGVECTOR_SRC:-}" ]; then
  cp -r "$PGVECTOR_SRC"/. "$work/src/"
elif ! debian_source; then
  echo "pgvector: cannot fetch Debian's source package (suite $suite); set PGVECTOR_SRC" >&2
  exit 0
fi
pg_config_bin="/usr/lib/postgresql/$major/bin/pg_config"
[ -x "$pg_config_bin" ] || pg_config_bin="$(command -v pg_config)"
if ! (cd "$work/src" && make -s PG_CONFIG="$pg_config_bin" OPTFLAGS="" >/dev/null &&
      $sudo_ make -s install PG_CONFIG="$pg_config_bin" >/dev/null); then
  echo "pgvector: the build failed" >&2
  exit 0
fi
available && echo "pgvector: built and installed" >&2
exit 0

#!/usr/bin/env bash
# Makes sure the services the tests use are up: PostgreSQL on 127.0.0.1:5432 (the store
# suite runs on it as well as on SQLite). On this machine kind the server is installed
# and normally already running; if it is not accepting connections, start the cluster
# and wait up to 20 s. It never fails the run itself: when PostgreSQL stays down, the
# PostgreSQL tests fail on CI (CI=true) with the reason, and are skipped elsewhere.
set -uo pipefail

host="${PLUGYARD_TEST_POSTGRES_HOST:-127.0.0.1}"

if ! command -v pg_isready >/dev/null 2>&1; then
  echo "services: pg_isready not found; PostgreSQL tests will report it" >&2
  exit 0
fi
if pg_isready -q -h "$host"; then
  exit 0
fi
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  for version in $(ls /etc/postgresql); do
    echo "services: starting PostgreSQL $version" >&2
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
fi
for _ in $(seq 1 40); do
  if pg_isready -q -h "$host"; then
    exit 0
  fi
  sleep 0.5
done
echo "services: PostgreSQL on $host is not accepting connections" >&2
exit 0

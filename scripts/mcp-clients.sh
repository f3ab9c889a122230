#!/usr/bin/env bash
# Installs the official MCP clients the tests drive (docs/mcp.md): the TypeScript SDK and
# the Inspector CLI — and axe-core, the accessibility checker of the console's browser
# tests (docs/console.md) — exactly as tests/clients/node/package-lock.json pins them, once
# per change of that lock file. Run by test.sh only: serving plugyard never needs Node. Without
# npm their tests are skipped, except on CI (CI=true), where that is an error here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
folder="$root/tests/clients/node"
stamp="$folder/node_modules/.plugyard-installed"
want="$(sha256sum "$folder/package-lock.json" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  case "$(echo "${CI:-}" | tr '[:upper:]' '[:lower:]')" in
    true | 1 | yes)
      echo "mcp-clients: npm not found; CI needs Node.js (>= 20) and npm for the MCP client tests" >&2
      exit 1
      ;;
  esac
  echo "mcp-clients: npm not found; the tests with the official MCP clients will be skipped" >&2
  exit 0
fi
# No install scripts: none of these packages needs one to run, and none runs unasked.
npm ci --prefix "$folder" --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
echo "$want" > "$stamp"

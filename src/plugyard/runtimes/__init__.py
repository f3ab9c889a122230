"""Where plugin code runs: in-process Python today; subprocess, HTTP and MCP beside it."""

// Drives an MCP server with the official TypeScript SDK's Client, as an application
// would: connect, list the tools (which caches their output schemas), call each tool
// the plan names. The SDK validates every structured result against the tool's output
// schema and throws when it does not fit: such a throw is reported, never hidden.
//
// Usage: node sdk_client.mjs '<plan as JSON>'
//   plan: {"server": {"command", "args", "env"} | {"url", "headers"},
//          "calls": [{"name", "arguments", "_meta"?}]}
// Prints one JSON line: {"tools": [Tool], "calls": [{"result"} | {"thrown": {code, message}}]}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);
const server = plan.server;
const transport = server.url
  ? new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers ?? {} },
    })
  : new StdioClientTransport({
      command: server.command,
      args: server.args ?? [],
      env: server.env,
      stderr: "inherit",
    });

const client = new Client({ name: "plugyard-tests", version: "0" });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  const calls = [];
  for (const call of plan.calls) {
    try {
      calls.push({ result: await client.callTool(call) });
    } catch (error) {
      calls.push({ thrown: { code: error.code ?? null, message: String(error.message) } });
    }
  }
  process.stdout.write(JSON.stringify({ tools, calls }) + "\n");
} finally {
  await client.close();
}

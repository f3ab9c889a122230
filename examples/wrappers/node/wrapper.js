const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {  // one request per line; exit when stdin closes
  const req = JSON.parse(line);
  const reply = req.method === "execute"
    ? { id: req.id, result: { data: {
        status: "success", responseMarkdown: String(req.params.parameters.prompt).toUpperCase() } } }
    : { id: req.id, error: { code: "invalid_request", message: "unknown" } };
  process.stdout.write(JSON.stringify(reply) + "\n");
});

#!/usr/bin/env node
// A stdio MCP server (newline-delimited JSON-RPC on stdin and stdout, as the
// MCP stdio transport frames it) with one tool, echo {text}, and no
// dependency. It also says where it runs: the tool's answer names its uid,
// so a test sees it ran as the sandbox's agent.
"use strict";
const readline = require("node:readline");

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // a notification: nothing to answer
  const ok = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  switch (m.method) {
    case "initialize":
      return ok({ protocolVersion: (m.params && m.params.protocolVersion) || "2025-06-18",
        capabilities: { tools: {} }, serverInfo: { name: "mcp-stdio-echo", version: "1.0.0" } });
    case "ping":
      return ok({});
    case "tools/list":
      return ok({ tools: [{ name: "echo", description: "Echo the given text back",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }] });
    case "tools/call": {
      const text = String((m.params && m.params.arguments && m.params.arguments.text) || "");
      return ok({ content: [{ type: "text", text: `stdio echo: ${text} (uid ${process.getuid()})` }] });
    }
    default:
      return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
  }
});

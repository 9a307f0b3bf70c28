#!/usr/bin/env node
// The official MCP SDK client calling tools by name, for the bridge's tool
// rules ([route] tools, deny_tools): connects, lists the tools, calls each
// one named on the command line, and prints one JSON line per step:
//   {"step":"list","tools":[...]}
//   {"step":"call","tool":"echo","ok":true,"text":"..."} or {"...","ok":false,"code":-32602,"message":"..."}
//
//   node mcp-tools.mjs URL TOOL[,KEY=VALUE...] ...   (a VALUE of digits is a number)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, ...calls] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "tools-client", version: "0.1.0" });
const out = (o) => console.log(JSON.stringify(o));

await client.connect(transport);
const listed = await client.listTools();
out({ step: "list", tools: listed.tools.map((t) => t.name) });
for (const c of calls) {
  const [name, ...kv] = c.split(",");
  const args = Object.fromEntries(kv.map((p) => {
    const [k, v] = p.split("=");
    return [k, /^[0-9]+$/.test(v) ? Number(v) : v];
  }));
  try {
    const r = await client.callTool({ name, arguments: args });
    out({ step: "call", tool: name, ok: !r.isError, text: (r.content || []).map((x) => x.text).join(" ") });
  } catch (e) {
    out({ step: "call", tool: name, ok: false, code: e.code, message: e.message });
  }
}
await transport.terminateSession().catch(() => {});
await client.close();

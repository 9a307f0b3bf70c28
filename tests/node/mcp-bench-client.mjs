#!/usr/bin/env node
// Tool calls timed, side by side (tests/bench/mcp_bench.py): the official
// MCP SDK client (Streamable HTTP) connected straight to a server, a second
// one connected through ward's route to the same server, and (RELAY_URL
// given) a third through a general-purpose relay (socat) to it; the
// sessions' calls alternate, call by call.
//
//   node mcp-bench-client.mjs DIRECT_URL TOKEN BRIDGE_URL N [RELAY_URL]
//
// The direct client sends the bearer token itself (TLS by Node, its CA from
// NODE_EXTRA_CA_CERTS), and so does the relayed one (socat only carries
// the bytes, with TLS on its far side); the bridged one sends none (the
// bridge adds it). Prints one JSON line: {"direct": [ms...], "bridge":
// [ms...], "relay": [ms...]} (relay only with RELAY_URL).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [directUrl, token, bridgeUrl, n, relayUrl] = process.argv.slice(2);

async function connect(url, headers) {
  const client = new Client({ name: "bench-client", version: "0.1.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

async function call({ client }, i) {
  const t0 = performance.now();
  const r = await client.callTool({ name: "add", arguments: { a: i, b: 1 } });
  const ms = performance.now() - t0;
  if (r.content?.[0]?.text !== String(i + 1)) throw new Error(`add(${i}, 1) answered ${JSON.stringify(r)}`);
  return ms;
}

const direct = await connect(directUrl, { Authorization: `Bearer ${token}` });
const bridge = await connect(bridgeUrl, {});
const relay = relayUrl ? await connect(relayUrl, { Authorization: `Bearer ${token}` }) : null;
const ways = relay ? { direct, bridge, relay } : { direct, bridge };
// warm each: the connections, the server's JIT, the bridge's name cache
for (let i = 0; i < 20; i++) for (const s of Object.values(ways)) await call(s, i);
const out = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
for (let i = 0; i < Number(n); i++) for (const [k, s] of Object.entries(ways)) out[k].push(await call(s, i));
for (const s of Object.values(ways)) {
  await s.transport.terminateSession().catch(() => {});
  await s.client.close();
}
console.log(JSON.stringify(out));

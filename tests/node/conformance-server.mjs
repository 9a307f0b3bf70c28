#!/usr/bin/env node
// An MCP server for the MCP conformance suite's server scenarios
// (@modelcontextprotocol/conformance `server`): the tools, resources and
// prompts those scenarios call, by the names they use, on the SDK's
// low-level Server over Streamable HTTP. Written for ward's tests (the
// suite's own example server is not published); tests/bridge/conformance.py
// runs the suite against it directly and through ward's bridge.
//
//   node conformance-server.mjs SOCKET-PATH|PORT [path]      default path /mcp
//   CONF_ALLOWED_HOSTS=h:p,...   Host header allow-list (DNS rebinding protection)
//
// Stateful (Mcp-Session-Id), an event store so a closed SSE stream can be
// resumed (Last-Event-ID), a retry interval for SSE polling.
import http from "node:http";
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema, CompleteRequestSchema, ElicitResultSchema, GetPromptRequestSchema,
  ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema,
  McpError, ReadResourceRequestSchema, SetLevelRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema,
  CreateMessageResultSchema, isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";

const arg = process.argv[2] || "18095";
const socketPath = arg.includes("/") ? arg : undefined;
const port = socketPath ? 0 : Number(arg);
const mcpPath = process.argv[3] || "/mcp";
const allowedHosts = (process.env.CONF_ALLOWED_HOSTS || `127.0.0.1:${port},localhost:${port}`).split(",");

// a 1x1 PNG and a minimal WAV, as the scenarios expect some base64 of each
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
const EMPTY = { type: "object", properties: {} };
const text = (t) => ({ content: [{ type: "text", text: t }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
  properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
  additionalProperties: false,
};

const TOOLS = [
  ["test_simple_text", "Tests simple text content response", EMPTY],
  ["test_image_content", "Tests image content response", EMPTY],
  ["test_audio_content", "Tests audio content response", EMPTY],
  ["test_embedded_resource", "Tests embedded resource content response", EMPTY],
  ["test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", EMPTY],
  ["test_tool_with_logging", "Tests tool that emits log messages during execution", EMPTY],
  ["test_tool_with_progress", "Tests tool that reports progress notifications", EMPTY],
  ["test_error_handling", "Tests error response handling", EMPTY],
  ["test_reconnection", "Closes its SSE stream mid-call; the result comes after the client reconnects", EMPTY],
  ["test_sampling", "Tests server-initiated sampling (LLM completion request)",
    { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] }],
  ["test_elicitation", "Tests server-initiated elicitation (user input request)",
    { type: "object", properties: { message: { type: "string" } }, required: ["message"] }],
  ["test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", EMPTY],
  ["test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", EMPTY],
  ["json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features (SEP-1613)", SCHEMA_2020_12],
].map(([name, description, inputSchema]) => ({ name, description, inputSchema }));

const elicit = (extra, params) => extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema);
const elicited = (r) => text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content || {})}`);

// what each tool does; extra is the SDK's request context
const CALLS = {
  test_simple_text: async () => text("This is a simple text response for testing."),
  test_image_content: async () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }),
  test_audio_content: async () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }),
  test_embedded_resource: async () => ({ content: [{ type: "resource", resource: {
    uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }] }),
  test_multiple_content_types: async () => ({ content: [
    { type: "text", text: "Multiple content types test:" },
    { type: "image", data: PNG, mimeType: "image/png" },
    { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json",
      text: JSON.stringify({ test: "data", value: 123 }) } }] }),
  test_tool_with_logging: async (_a, extra) => {
    for (const data of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
      await extra.sendNotification({ method: "notifications/message", params: { level: "info", data } });
      await sleep(50);
    }
    return text("Tool with logging executed successfully");
  },
  test_tool_with_progress: async (_a, extra) => {
    const progressToken = extra._meta?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) {
      await extra.sendNotification({ method: "notifications/progress",
        params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } });
      await sleep(50);
    }
    return text(String(progressToken));
  },
  test_error_handling: async () => ({ isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }] }),
  test_reconnection: async (_a, extra) => {
    sessions.get(extra.sessionId)?.transport.closeSSEStream?.(extra.requestId);
    await sleep(100);
    return text("Reconnection test completed successfully. If you received this, the client properly reconnected " +
      "after stream closure.");
  },
  test_sampling: async (a, extra) => {
    const r = await extra.sendRequest({ method: "sampling/createMessage", params: {
      messages: [{ role: "user", content: { type: "text", text: a.prompt } }], maxTokens: 100 } },
    CreateMessageResultSchema);
    return text(`LLM response: ${r.content?.text ?? "No response"}`);
  },
  test_elicitation: async (a, extra) => {
    const r = await elicit(extra, { message: a.message, requestedSchema: { type: "object",
      properties: { response: { type: "string", description: "User's response" } }, required: ["response"] } });
    return text(`User response: action=${r.action}, content=${JSON.stringify(r.content || {})}`);
  },
  test_elicitation_sep1034_defaults: async (_a, extra) => elicited(await elicit(extra, {
    message: "Please review and update the form fields with defaults", requestedSchema: { type: "object",
      properties: {
        name: { type: "string", description: "User name", default: "John Doe" },
        age: { type: "integer", description: "User age", default: 30 },
        score: { type: "number", description: "User score", default: 95.5 },
        status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", description: "Verification status", default: true },
      }, required: [] } })),
  test_elicitation_sep1330_enums: async (_a, extra) => elicited(await elicit(extra, {
    message: "Please select options from the enum fields", requestedSchema: { type: "object", required: [],
      properties: {
        untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
        titledSingle: { type: "string", description: "Select one option with titles", oneOf: [
          { const: "value1", title: "First Option" }, { const: "value2", title: "Second Option" },
          { const: "value3", title: "Third Option" }] },
        legacyEnum: { type: "string", description: "Select one option (legacy)", enum: ["opt1", "opt2", "opt3"],
          enumNames: ["Option One", "Option Two", "Option Three"] },
        untitledMulti: { type: "array", description: "Select multiple options", minItems: 1, maxItems: 3,
          items: { type: "string", enum: ["option1", "option2", "option3"] } },
        titledMulti: { type: "array", description: "Select multiple options with titles", minItems: 1, maxItems: 3,
          items: { anyOf: [{ const: "value1", title: "First Choice" }, { const: "value2", title: "Second Choice" },
            { const: "value3", title: "Third Choice" }] } },
      } } })),
  json_schema_2020_12_tool: async (a) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(a)}`),
};

const RESOURCES = [
  { uri: "test://static-text", name: "static-text", title: "Static Text Resource", mimeType: "text/plain",
    read: () => ({ text: "This is the content of the static text resource." }) },
  { uri: "test://static-binary", name: "static-binary", title: "Static Binary Resource", mimeType: "image/png",
    read: () => ({ blob: PNG }) },
  { uri: "test://watched-resource", name: "watched-resource", title: "Watched Resource", mimeType: "text/plain",
    read: () => ({ text: "Watched resource content" }) },
];
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;

const PROMPTS = {
  test_simple_prompt: { description: "A simple prompt without arguments", arguments: [],
    get: () => [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }] },
  test_prompt_with_arguments: { description: "A prompt with required arguments",
    arguments: [{ name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true }],
    get: (a) => [{ role: "user", content: { type: "text",
      text: `Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'` } }] },
  test_prompt_with_embedded_resource: { description: "A prompt that includes an embedded resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    get: (a) => [
      { role: "user", content: { type: "resource", resource: { uri: a.resourceUri, mimeType: "text/plain",
        text: "Embedded resource content for testing." } } },
      { role: "user", content: { type: "text", text: "Please process the embedded resource above." } }] },
  test_prompt_with_image: { description: "A prompt that includes image content", arguments: [],
    get: () => [{ role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } }] },
};

function buildServer() {
  const s = new Server({ name: "ward-conformance-server", version: "1.0.0" }, { capabilities: {
    tools: { listChanged: true }, resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true }, logging: {}, completions: {} } });
  const log = (data) => s.notification({ method: "notifications/message",
    params: { level: "info", logger: "ward-conformance-server", data } }).catch(() => {});
  s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  s.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const fn = CALLS[req.params.name];
    if (!fn) throw new McpError(-32602, `unknown tool ${req.params.name}`);
    return fn(req.params.arguments || {}, extra);
  });
  s.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: RESOURCES.map(({ read, ...r }) => r) }));
  s.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [{
    uriTemplate: "test://template/{id}/data", name: "template", title: "Resource Template",
    mimeType: "application/json" }] }));
  s.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri, r = RESOURCES.find((x) => x.uri === uri), t = uri.match(TEMPLATE);
    if (r) return { contents: [{ uri, mimeType: r.mimeType, ...r.read() }] };
    if (t) return { contents: [{ uri, mimeType: "application/json",
      text: JSON.stringify({ id: t[1], templateTest: true, data: `Data for ID: ${t[1]}` }) }] };
    throw new McpError(-32002, `resource not found: ${uri}`);
  });
  s.setRequestHandler(SubscribeRequestSchema, async (req) => { log(`Subscribed to resource: ${req.params.uri}`); return {}; });
  s.setRequestHandler(UnsubscribeRequestSchema, async (req) => { log(`Unsubscribed from resource: ${req.params.uri}`); return {}; });
  s.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: Object.entries(PROMPTS).map(([name, p]) => ({ name, description: p.description, arguments: p.arguments })) }));
  s.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const p = PROMPTS[req.params.name];
    if (!p) throw new McpError(-32602, `unknown prompt ${req.params.name}`);
    return { messages: p.get(req.params.arguments || {}) };
  });
  s.setRequestHandler(SetLevelRequestSchema, async (req) => { log(`Log level set to: ${req.params.level}`); return {}; });
  s.setRequestHandler(CompleteRequestSchema, async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return s;
}

// every event of every stream, so a client that reconnects with Last-Event-ID gets what it missed
const events = new Map();
const eventStore = {
  async storeEvent(streamId, message) {
    const id = `${streamId}::${String(events.size).padStart(8, "0")}`;
    events.set(id, { streamId, message });
    return id;
  },
  async replayEventsAfter(last, { send }) {
    const streamId = last.split("::")[0];
    for (const [id, e] of [...events].filter(([id, e]) => e.streamId === streamId && id > last).sort())
      await send(id, e.message);
    return streamId;
  },
};

const sessions = new Map(); // id -> { transport }
const readJson = async (req) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
};

const httpServer = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://x");
  if (url.pathname !== mcpPath) { res.writeHead(404).end("not found"); return; }
  let body;
  if (req.method === "POST") {
    try { body = await readJson(req); } catch { res.writeHead(400).end("bad json"); return; }
  }
  const sid = req.headers["mcp-session-id"];
  let s = sid ? sessions.get(sid) : undefined;
  if (!s) {
    if (req.method !== "POST" || sid || !isInitializeRequest(body)) {
      res.writeHead(sid ? 404 : 400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0",
        id: null, error: { code: -32000, message: sid ? "Session not found" : "Bad Request: no session" } }));
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(), eventStore, retryInterval: 1000,
      enableDnsRebindingProtection: true, allowedHosts,
      onsessioninitialized: (id) => sessions.set(id, s),
    });
    s = { transport };
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    await buildServer().connect(transport);
  }
  await s.transport.handleRequest(req, res, body);
});
if (socketPath) {
  try { fs.unlinkSync(socketPath); } catch {}
  httpServer.listen(socketPath, () => console.error(`conformance server on unix:${socketPath}`));
} else {
  httpServer.listen(port, "127.0.0.1", () => console.error(`conformance server on http://127.0.0.1:${port}${mcpPath}`));
}
process.on("SIGTERM", () => process.exit(0));

#!/usr/bin/env node
// Fake model provider speaking the real wire formats of Pi's built-in providers, so Pi's
// OWN provider code (official SDKs: anthropic, openai, @google/genai; Pi's native mistral
// client) can hold a session against it: anthropic, openai, google, mistral, openrouter,
// groq, xai, deepseek, with only baseUrl (and a placeholder apiKey) overridden.
// No dependencies (node: built-ins only).
//
//   node fake-provider.mjs
//
// Environment:
//   FAKE_LISTEN=HOST:PORT        where to listen: 127.0.0.2:8443 or [::1]:8443 (default 127.0.0.1:18443)
//   FAKE_CERT=cert.pem FAKE_KEY=key.pem   serve HTTPS when both are set, else plain HTTP
//   FAKE_LOG=requests.jsonl      append one JSON line per request:
//                                {"method","path","headers":{...all, lowercased...},"body":<JSON or null>}
//   FAKE_OAUTH_STATE=state.json  a subscription's login (fake-oauth.mjs's state): a request
//                                whose "authorization: Bearer" is not the state's access token
//                                gets 401, as the API answers an expired or revoked one
// Prints "listening HOST:PORT" on stdout once ready. Without FAKE_OAUTH_STATE no request is
// rejected because of its key.
//
// Endpoints, matched on the path's END so any base-URL prefix works (/v1/…, /api/v1/… for
// openrouter, /openai/v1/… for groq, /v1beta/… for google, none for deepseek's bare host):
//   POST …/messages              Anthropic Messages API (SSE when "stream": true, else JSON);
//                                Pi's SDK calls it as /v1/messages?beta=true
//   POST …/responses             OpenAI Responses API (SSE when stream: true, else JSON): openai, xai
//   POST …/chat/completions      OpenAI chat completions (SSE or JSON): openrouter, groq, deepseek;
//                                also Mistral's chat completions (Pi's mistral-conversations client
//                                POSTs <base>/v1/chat/completions, same SSE chunks) -- told apart
//                                by not coming from the OpenAI SDK (no x-stainless-* headers)
//                                and accepting text/event-stream
//   POST …/models/M:streamGenerateContent[?alt=sse]   Google Gemini API (@google/genai), SSE
//   POST …/models/M:generateContent                   Google Gemini API, JSON
//   GET  …/models                a one-model list (shape accepted by the SDKs, Google's included)
//
// Scripted behaviour, the same for every format (looks at the last user message / tool result;
// trailing system/developer/configuration items that Pi appends are skipped):
//   - last input is a tool result                  -> text "TOOL RESULT: <first 200 chars of the result>"
//   - last user text contains  CALL <tool> <json>  -> one tool call to <tool> with <json> as arguments
//   - anything else                                -> text "Hello from fake-<format>."
//                                                     (anthropic | openai | google | mistral;
//                                                     chat completions and Responses say openai)
// Streamed text always arrives in several deltas.
import http from "node:http";
import https from "node:https";
import fs from "node:fs";

const listen = process.env.FAKE_LISTEN || "127.0.0.1:18443";
const m = listen.match(/^\[(.+)\]:(\d+)$/) || listen.match(/^([^:]+):(\d+)$/);
if (!m) {
  console.error(`fake-provider: bad FAKE_LISTEN ${JSON.stringify(listen)} (want HOST:PORT or [V6]:PORT)`);
  process.exit(2);
}
const [host, port] = [m[1], Number(m[2])];
const logPath = process.env.FAKE_LOG;
const tls = process.env.FAKE_CERT && process.env.FAKE_KEY
  ? { cert: fs.readFileSync(process.env.FAKE_CERT), key: fs.readFileSync(process.env.FAKE_KEY) }
  : null;

let counter = 0;
const newId = (prefix) => `${prefix}${Date.now().toString(36)}${(++counter).toString(36)}`;
const now = () => Math.floor(Date.now() / 1000);

// Text of a content value in any of the formats: a string, or an array of
// blocks/parts ({text}, {type:"input_text",text}, tool_result {content}, ...).
function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((c) => (typeof c === "string" ? c : c?.text ?? (c?.content !== undefined ? textOf(c.content) : ""))).join("");
  }
  return "";
}

// The scripted decision from the request's last user-side input:
// { text } or { toolCall: { name, args } } (args is a JSON string).
function decideFrom({ toolResult, userText }, format) {
  if (toolResult !== undefined) return { text: `TOOL RESULT: ${toolResult.slice(0, 200)}` };
  const c = (userText ?? "").match(/CALL\s+(\S+)\s*(\{.*\})?/s);
  if (c) return { toolCall: { name: c[1], args: c[2] ?? "{}" } };
  return { text: `Hello from fake-${format}.` };
}

// Split text into at least two pieces so streaming is really exercised.
function pieces(text) {
  const size = Math.max(1, Math.min(8, Math.ceil(text.length / 2)));
  return text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [""];
}

function sse(res) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  return {
    event: (name, obj) => res.write(`event: ${name}\ndata: ${JSON.stringify(obj)}\n\n`),
    data: (obj) => res.write(`data: ${typeof obj === "string" ? obj : JSON.stringify(obj)}\n\n`),
    end: () => res.end(),
  };
}

function json(res, status, obj) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(obj));
}

// ---------------------------------------------------------------- Anthropic Messages
function anthropicMessages(body, res) {
  // Pi appends a {role:"system", output_config} message after the conversation
  // (its thinking level), so use the last *user* message.
  const last = (body.messages ?? []).findLast((msg) => msg?.role === "user") ?? {};
  let input = { userText: textOf(last.content) };
  if (Array.isArray(last.content)) {
    const results = last.content.filter((b) => b?.type === "tool_result");
    if (results.length > 0) input = { toolResult: textOf(results[results.length - 1].content) };
  }
  const d = decideFrom(input, "anthropic");
  const id = newId("msg_fake");
  const model = body.model ?? "fake-model";
  const usage = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const toolId = newId("toolu_fake");
  const stopReason = d.text !== undefined ? "end_turn" : "tool_use";

  if (!body.stream) {
    const content = d.text !== undefined
      ? [{ type: "text", text: d.text }]
      : [{ type: "tool_use", id: toolId, name: d.toolCall.name, input: JSON.parse(d.toolCall.args) }];
    return json(res, 200, { id, type: "message", role: "assistant", model, content,
      stop_reason: stopReason, stop_sequence: null, usage });
  }
  const s = sse(res);
  s.event("message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model,
    content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  if (d.text !== undefined) {
    s.event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    for (const p of pieces(d.text)) {
      s.event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } });
    }
  } else {
    s.event("content_block_start", { type: "content_block_start", index: 0,
      content_block: { type: "tool_use", id: toolId, name: d.toolCall.name, input: {} } });
    for (const p of pieces(d.toolCall.args)) {
      s.event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: p } });
    }
  }
  s.event("content_block_stop", { type: "content_block_stop", index: 0 });
  s.event("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens } });
  s.event("message_stop", { type: "message_stop" });
  s.end();
}

// ---------------------------------------------------------------- OpenAI Responses
function openaiResponses(body, res) {
  const items = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input ?? [];
  // Pi surrounds the conversation with non-conversation items (additional_tools,
  // developer messages, a trailing configuration_update), so use the last item
  // that is a tool result or a user message.
  const isToolResult = (i) => i?.type === "function_call_output" || i?.type === "custom_tool_call_output";
  const last = items.findLast((i) => isToolResult(i) || i?.role === "user") ?? {};
  const input = isToolResult(last)
    ? { toolResult: textOf(last.output) }
    : { userText: textOf(last.content) };
  const d = decideFrom(input, "openai");
  const respId = newId("resp_fake");
  const model = body.model ?? "fake-model";
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  const base = { id: respId, object: "response", created_at: now(), model, error: null, incomplete_details: null,
    instructions: null, metadata: {}, parallel_tool_calls: true, tool_choice: "auto", tools: [], store: false };

  let item;
  if (d.text !== undefined) {
    item = { id: newId("msg_fake"), type: "message", status: "completed", role: "assistant",
      content: [{ type: "output_text", text: d.text, annotations: [] }] };
  } else {
    item = { id: newId("fc_fake"), type: "function_call", status: "completed", call_id: newId("call_fake"),
      name: d.toolCall.name, arguments: d.toolCall.args };
  }
  const done = { ...base, status: "completed", output: [item], usage };
  if (!body.stream) return json(res, 200, done);

  const s = sse(res);
  let seq = 0;
  const send = (obj) => s.event(obj.type, { ...obj, sequence_number: seq++ });
  send({ type: "response.created", response: { ...base, status: "in_progress", output: [], usage: null } });
  send({ type: "response.in_progress", response: { ...base, status: "in_progress", output: [], usage: null } });
  if (d.text !== undefined) {
    const part = { type: "output_text", text: "", annotations: [] };
    send({ type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } });
    send({ type: "response.content_part.added", item_id: item.id, output_index: 0, content_index: 0, part });
    for (const p of pieces(d.text)) {
      send({ type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta: p, logprobs: [] });
    }
    send({ type: "response.output_text.done", item_id: item.id, output_index: 0, content_index: 0, text: d.text, logprobs: [] });
    send({ type: "response.content_part.done", item_id: item.id, output_index: 0, content_index: 0, part: item.content[0] });
  } else {
    send({ type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", arguments: "" } });
    for (const p of pieces(d.toolCall.args)) {
      send({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: 0, delta: p });
    }
    send({ type: "response.function_call_arguments.done", item_id: item.id, output_index: 0, arguments: d.toolCall.args });
  }
  send({ type: "response.output_item.done", output_index: 0, item });
  send({ type: "response.completed", response: done });
  s.end();
}

// ---------------------------------------------------------------- OpenAI chat completions
// Also Mistral's (format "mistral"): Pi's native client reads the same chunks (content string
// deltas, tool_calls deltas keyed by index, finish_reason, usage) and sends tool results as
// {role:"tool", content:[{type:"text",text}]}.
function openaiChat(body, res, format = "openai") {
  const last = (body.messages ?? []).findLast((msg) => msg?.role === "user" || msg?.role === "tool") ?? {};
  const d = decideFrom(last.role === "tool" ? { toolResult: textOf(last.content) } : { userText: textOf(last.content) }, format);
  const id = newId("chatcmpl-fake");
  const model = body.model ?? "fake-model";
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const callId = newId("call_fake");
  const finish = d.text !== undefined ? "stop" : "tool_calls";
  if (!body.stream) {
    const message = d.text !== undefined
      ? { role: "assistant", content: d.text }
      : { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: d.toolCall.name, arguments: d.toolCall.args } }] };
    return json(res, 200, { id, object: "chat.completion", created: now(), model,
      choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const s = sse(res);
  const chunk = (delta, finish_reason = null) => s.data({ id, object: "chat.completion.chunk", created: now(), model,
    choices: [{ index: 0, delta, finish_reason }] });
  chunk({ role: "assistant", content: "" });
  if (d.text !== undefined) {
    for (const p of pieces(d.text)) chunk({ content: p });
  } else {
    chunk({ tool_calls: [{ index: 0, id: callId, type: "function", function: { name: d.toolCall.name, arguments: "" } }] });
    for (const p of pieces(d.toolCall.args)) chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] });
  }
  chunk({}, finish);
  s.data({ id, object: "chat.completion.chunk", created: now(), model, choices: [], usage });
  s.data("[DONE]");
  s.end();
}

// ---------------------------------------------------------------- Google Gemini API (generateContent)
// @google/genai POSTs <base>/models/<model>:streamGenerateContent?alt=sse (key in x-goog-api-key);
// each SSE event is one GenerateContentResponse. Tool calls are functionCall parts (args an
// object), tool results come back as functionResponse parts {name, response:{output|error}}.
function googleGenerate(body, res, model, stream) {
  const contents = body.contents ?? [];
  const last = contents.findLast((c) => (c?.role ?? "user") === "user") ?? {};
  const parts = Array.isArray(last.parts) ? last.parts : [];
  const responses = parts.filter((p) => p?.functionResponse);
  let input;
  if (responses.length > 0) {
    const r = responses[responses.length - 1].functionResponse.response ?? {};
    const v = r.output ?? r.error ?? r;
    input = { toolResult: typeof v === "string" ? v : JSON.stringify(v) };
  } else {
    input = { userText: parts.map((p) => (typeof p?.text === "string" && !p.thought ? p.text : "")).join("") };
  }
  const d = decideFrom(input, "google");
  const responseId = newId("fakegoog");
  const modelVersion = model || "fake-model";
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  const response = (parts, final) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(final && { finishReason: "STOP" }) }],
    ...(final && { usageMetadata }),
    modelVersion, responseId,
  });
  const allParts = d.text !== undefined
    ? [{ text: d.text }]
    : [{ functionCall: { name: d.toolCall.name, args: JSON.parse(d.toolCall.args) } }];
  if (!stream) return json(res, 200, response(allParts, true));
  const s = sse(res);
  if (d.text !== undefined) {
    const ps = pieces(d.text);
    ps.forEach((p, i) => s.data(response([{ text: p }], i === ps.length - 1)));
  } else {
    s.data(response(allParts, true));
  }
  s.end();
}

// ---------------------------------------------------------------- server
function handle(req, res) {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks).toString("utf8");
    let body = null;
    try { body = raw ? JSON.parse(raw) : null; } catch { body = null; }
    if (logPath) {
      fs.appendFileSync(logPath, JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body }) + "\n");
    }
    const path = req.url.split("?")[0].replace(/\/+$/, "");
    if (process.env.FAKE_OAUTH_STATE) {
      const { access } = JSON.parse(fs.readFileSync(process.env.FAKE_OAUTH_STATE, "utf8"));
      if (req.headers.authorization !== `Bearer ${access}`)
        return json(res, 401, { type: "error", error: { type: "authentication_error", message: "OAuth token has expired" } });
    }
    try {
      if (req.method === "GET" && /\/models$/.test(path)) {
        return json(res, 200, { object: "list", has_more: false, first_id: "fake-model", last_id: "fake-model",
          data: [{ id: "fake-model", object: "model", type: "model", display_name: "Fake model",
            created: now(), created_at: new Date().toISOString(), owned_by: "fake" }],
          models: [{ name: "models/fake-model", displayName: "Fake model",
            supportedGenerationMethods: ["generateContent", "streamGenerateContent"] }] });
      }
      const g = path.match(/\/models\/([^/]+):(streamGenerateContent|generateContent)$/);
      const route = req.method !== "POST" ? null
        : g ? "google"
        : path.endsWith("/messages") ? "anthropic"
        : path.endsWith("/responses") ? "responses"
        : path.endsWith("/chat/completions") ? "chat"
        : null;
      if (route) {
        if (body === null || typeof body !== "object") return json(res, 400, { error: { type: "invalid_request_error", message: "bad json" } });
        if (route === "google") return googleGenerate(body, res, decodeURIComponent(g[1]), g[2] === "streamGenerateContent");
        if (route === "anthropic") return anthropicMessages(body, res);
        if (route === "responses") return openaiResponses(body, res);
        // The OpenAI SDK (openrouter, groq, deepseek, ...) always sends x-stainless-* headers and
        // accept: application/json; Pi's own Mistral client sends no x-stainless-* header and
        // accept: text/event-stream. Anything else (curl, ...) is answered as openai.
        const fromOpenAISdk = Object.keys(req.headers).some((h) => h.startsWith("x-stainless-"));
        const mistral = !fromOpenAISdk && /text\/event-stream/.test(req.headers.accept ?? "");
        return openaiChat(body, res, mistral ? "mistral" : "openai");
      }
      json(res, 404, { error: { type: "not_found_error", message: `no route ${req.method} ${req.url}` } });
    } catch (e) {
      if (!res.headersSent) json(res, 500, { error: { type: "api_error", message: String(e?.message ?? e) } });
      else res.end();
    }
  });
}

const server = tls ? https.createServer(tls, handle) : http.createServer(handle);
server.listen(port, host, () => {
  console.log(`listening ${host.includes(":") ? `[${host}]` : host}:${server.address().port}`);
});
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));

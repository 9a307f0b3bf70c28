#!/usr/bin/env node
// Minimal fake OpenAI-compatible chat-completions server for testing Pi offline.
// No dependencies. Listens on 127.0.0.1 only.
//
//   node fake-openai.mjs [port]            (default port 18080, env FAKE_PORT also works)
//   FAKE_LOG=requests.jsonl node fake-openai.mjs   (append every request body as one JSON line)
//
// Endpoints:
//   GET  /v1/models              -> one model "fake-model"
//   POST /v1/chat/completions    -> streamed (SSE) or plain JSON reply
//
// Scripted behaviour (looks at the last message of the request):
//   - last message is a tool result (role "tool")   -> text "TOOL RESULT: <first 200 chars>"
//   - last user text contains  CALL <tool> <json>    -> one tool call to <tool> with <json> args
//   - last user text contains  LIST TOOLS            -> text listing the tool names the client declared
//   - anything else                                  -> text "Hello from fake-model."
import http from "node:http";
import fs from "node:fs";

// An argument with a "/" is a unix socket path to listen on instead (ward's tests).
const listenArg = process.argv[2] || process.env.FAKE_PORT || "18080";
const socketPath = listenArg.includes("/") ? listenArg : undefined;
const port = socketPath ? 0 : Number(listenArg);
const logPath = process.env.FAKE_LOG;

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c === "string" ? c : c.text ?? "")).join("");
  return "";
}

function decide(body) {
  const msgs = body.messages ?? [];
  const last = msgs[msgs.length - 1] ?? {};
  const toolNames = (body.tools ?? []).map((t) => t.function?.name ?? t.name).filter(Boolean);
  if (last.role === "tool") {
    return { text: `TOOL RESULT: ${textOf(last.content).slice(0, 200)}` };
  }
  const userText = textOf(last.content);
  const m = userText.match(/CALL\s+(\S+)\s*(\{.*\})?/s);
  if (m) return { toolCall: { name: m[1], args: m[2] ?? "{}" } };
  if (/LIST TOOLS/.test(userText)) return { text: `TOOLS: ${toolNames.join(", ")}` };
  return { text: "Hello from fake-model." };
}

function chunk(id, delta, finish = null) {
  return { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model",
    choices: [{ index: 0, delta, finish_reason: finish }] };
}

const server = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    if (req.method === "GET" && req.url.startsWith("/v1/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model", owned_by: "fake" }] }));
      return;
    }
    if (req.method !== "POST" || !req.url.startsWith("/v1/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    let body;
    try { body = JSON.parse(raw); } catch { res.writeHead(400); res.end("bad json"); return; }
    if (logPath) fs.appendFileSync(logPath, JSON.stringify({ t: Date.now(), headers: req.headers, body }) + "\n");
    const d = decide(body);
    const id = "chatcmpl-" + Math.random().toString(36).slice(2);
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!body.stream) {
      const message = d.text !== undefined
        ? { role: "assistant", content: d.text }
        : { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: d.toolCall.name, arguments: d.toolCall.args } }] };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id, object: "chat.completion", created: Math.floor(Date.now() / 1000), model: "fake-model",
        choices: [{ index: 0, message, finish_reason: d.text !== undefined ? "stop" : "tool_calls" }], usage }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    send(chunk(id, { role: "assistant", content: "" }));
    if (d.text !== undefined) {
      for (const piece of d.text.match(/.{1,8}/gs) ?? []) send(chunk(id, { content: piece }));
      send(chunk(id, {}, "stop"));
    } else {
      send(chunk(id, { tool_calls: [{ index: 0, id: "call_" + Date.now(), type: "function", function: { name: d.toolCall.name, arguments: "" } }] }));
      send(chunk(id, { tool_calls: [{ index: 0, function: { arguments: d.toolCall.args } }] }));
      send(chunk(id, {}, "tool_calls"));
    }
    send({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model", choices: [], usage });
    res.write("data: [DONE]\n\n");
    res.end();
  });
});
if (socketPath) {
  try { fs.unlinkSync(socketPath); } catch {}
  server.listen(socketPath, () => console.error(`fake-openai listening on unix:${socketPath}`));
} else {
  server.listen(port, "127.0.0.1", () => console.error(`fake-openai listening on http://127.0.0.1:${port}/v1`));
}
process.on("SIGTERM", () => process.exit(0));

#!/usr/bin/env node
// Fake OAuth provider for a subscription login, Anthropic's as Pi 1.6 speaks
// it (@earendil-works/pi-ai auth/oauth/anthropic.js): the token endpoint
// (POST /v1/oauth/token, JSON: grant_type refresh_token or
// authorization_code, Pi's client_id) and the authorize page (GET
// /oauth/authorize: redirects at once to redirect_uri with a code and the
// state, as a browser would after the person agreed). No dependencies.
//
//   node fake-oauth.mjs
//
// Environment:
//   FAKE_LISTEN=HOST:PORT         where to listen (default 127.0.0.1:18444)
//   FAKE_CERT, FAKE_KEY           serve HTTPS when both are set
//   FAKE_STATE=state.json         the provider's state, shared with fake-provider.mjs
//                                 (FAKE_OAUTH_STATE there): {"access": the one access token
//                                 the API accepts, "refresh": the one refresh token this
//                                 endpoint accepts, "refreshes": how many it granted,
//                                 "revoked": true refuses every refresh, "delay_ms": answers
//                                 this late, over FAKE_DELAY_MS}
//   FAKE_EXPIRES_IN=3600          expires_in of each new access token, seconds
//   FAKE_DELAY_MS=0               the token endpoint answers this late
//   FAKE_LOG=requests.jsonl       one JSON line per request: method, path, headers, body
//   FAKE_TOKEN_PATH=/v1/oauth/token  the token endpoint's path
//   FAKE_CLIENT_ID, FAKE_CLIENT_SECRET  the client it knows (default Pi's id, no secret); a
//                                 form-encoded request (an MCP server's sign-in, as pi-mcp
//                                 refreshes it) may give them in the form or by HTTP Basic
// Prints "listening HOST:PORT" once ready.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

const CLIENT_ID = process.env.FAKE_CLIENT_ID || "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const CLIENT_SECRET = process.env.FAKE_CLIENT_SECRET || "";
const TOKEN_PATH = process.env.FAKE_TOKEN_PATH || "/v1/oauth/token";
const listen = process.env.FAKE_LISTEN || "127.0.0.1:18444";
const [, host, port] = listen.match(/^([^:]+):(\d+)$/) || [];
const statePath = process.env.FAKE_STATE;
const expiresIn = Number(process.env.FAKE_EXPIRES_IN || 3600);
const delay = Number(process.env.FAKE_DELAY_MS || 0);
const tls = process.env.FAKE_CERT && process.env.FAKE_KEY
  ? { cert: fs.readFileSync(process.env.FAKE_CERT), key: fs.readFileSync(process.env.FAKE_KEY) }
  : null;

const load = () => JSON.parse(fs.readFileSync(statePath, "utf8"));
const save = (s) => fs.writeFileSync(statePath, JSON.stringify(s));
const json = (res, status, o) => {
  const b = JSON.stringify(o);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(b) });
  res.end(b);
};
const grant = (s) => {
  s.refreshes = (s.refreshes || 0) + 1;
  s.access = `sk-ant-oat01-fake-access-${s.refreshes}`;
  s.refresh = `sk-ant-ort01-fake-refresh-${s.refreshes}`;
  save(s);
  return { token_type: "Bearer", access_token: s.access, refresh_token: s.refresh, expires_in: expiresIn };
};

function handle(req, res) {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks).toString("utf8");
    let body = null;
    const form = (req.headers["content-type"] || "").startsWith("application/x-www-form-urlencoded");
    if (form) {
      body = Object.fromEntries(new URLSearchParams(raw));
      const basic = /^Basic (.+)$/.exec(req.headers.authorization || "");
      if (basic) {
        const pair = Buffer.from(basic[1], "base64").toString("utf8");
        const i = pair.indexOf(":");
        body.basic_client_id = pair.slice(0, i);
        body.basic_client_secret = pair.slice(i + 1);
      }
    } else {
      try { body = raw ? JSON.parse(raw) : null; } catch { body = null; }
    }
    if (process.env.FAKE_LOG)
      fs.appendFileSync(process.env.FAKE_LOG, JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body }) + "\n");
    const url = new URL(req.url, "https://fake");
    if (req.method === "GET" && url.pathname === "/oauth/authorize") {
      // the person agreed: back to the login's callback with a code
      const to = new URL(url.searchParams.get("redirect_uri"));
      to.searchParams.set("code", "fake-authorization-code");
      to.searchParams.set("state", url.searchParams.get("state") || "");
      res.writeHead(302, { location: to.toString(), "content-length": 0 });
      return res.end();
    }
    if (req.method !== "POST" || url.pathname !== TOKEN_PATH)
      return json(res, 404, { error: "not_found" });
    const wait = statePath ? load().delay_ms ?? delay : delay;
    setTimeout(() => {
      const s = load();
      const id = body && (body.basic_client_id ?? body.client_id);
      const secret = body && (body.basic_client_secret ?? body.client_secret ?? "");
      if (!body || id !== CLIENT_ID || secret !== CLIENT_SECRET)
        return json(res, form ? 401 : 400, { error: "invalid_client", error_description: "unknown client" });
      if (body.grant_type === "authorization_code") {
        if (body.code !== "fake-authorization-code" || !body.code_verifier)
          return json(res, 400, { error: "invalid_grant", error_description: "bad code" });
        return json(res, 200, grant(s));
      }
      if (body.grant_type !== "refresh_token")
        return json(res, 400, { error: "unsupported_grant_type" });
      if (s.revoked || body.refresh_token !== s.refresh)
        return json(res, 400, { error: "invalid_grant", error_description: "Refresh token not found or invalid" });
      json(res, 200, grant(s));
    }, wait);
  });
}

const server = tls ? https.createServer(tls, handle) : http.createServer(handle);
server.listen(Number(port), host, () => console.log(`listening ${host}:${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));

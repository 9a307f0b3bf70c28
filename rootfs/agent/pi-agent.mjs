// The reference image's agent command: Pi, pointed at the model route ward
// gives it, then run in this same process (no second Node).
//
//   node pi-agent.mjs [pi arguments...]
//
// With a provider preset (WARD_PROVIDER=anthropic ... in ward's environment),
// ward makes a route to the provider that adds the key, and tells the agent
// WARD_PROVIDER and WARD_PROVIDER_BASE_URL (nothing secret). This writes that
// provider's entry into Pi's models.json: its baseUrl is the bridge's
// loopback port and its key a placeholder, which the bridge replaces. The
// model is WARD_MODEL (passed through by ward.conf's env_pass), else Pi's own
// default for that provider. Without a preset, Pi talks to the image's
// "fake" provider: the model server the host runs on /run/ward/model.sock.
// Other entries of models.json (a person's own) are kept.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const PI = process.env.WARD_PI_CLI || "/opt/pi/node_modules/@earendil-works/pi-coding-agent/dist/cli.js";
const PLACEHOLDER = "ward-placeholder-the-bridge-sends-the-key";
// A subscription's login (WARD_PROVIDER_AUTH=oauth: the route has a
// credential the bridge refreshes): Pi speaks as it does with its own
// OAuth token (Bearer, its subscription headers), which it tells by this
// prefix; the bridge puts the login's access token in its place.
const OAUTH_PLACEHOLDER = "sk-ant-oat01-ward-placeholder-the-bridge-sends-the-login";
// the image's local model route (ward.conf [route model])
const FAKE = {
  baseUrl: "http://127.0.0.1:7900/v1",
  api: "openai-completions",
  apiKey: "not-a-secret-the-bridge-adds-any-key",
  models: [{ id: "fake-model", name: "Fake Model", contextWindow: 32000, maxTokens: 1024 }],
};

function fail(msg) {
  process.stderr.write(`pi-agent: ${msg}\n`);
  process.exit(2);
}

const dir = process.env.PI_CODING_AGENT_DIR || fail("PI_CODING_AGENT_DIR is not set");
const provider = process.env.WARD_PROVIDER || "";
const base = process.env.WARD_PROVIDER_BASE_URL || "";
let model = process.env.WARD_MODEL || "";
if (model && !/^[A-Za-z0-9._:@/+-]{1,200}$/.test(model)) fail(`WARD_MODEL '${model}': not a model id`);
if (provider && !/^http:\/\/127\.0\.0\.1:\d+(\/[A-Za-z0-9._~\/-]*)?$/.test(base))
  fail(`WARD_PROVIDER=${provider} without the bridge's WARD_PROVIDER_BASE_URL (ward sets it for a provider route)`);

// The host's Pi resources, when ward-pi mounted a copy of them: added to the
// agent dir (newer files replace older ones, nothing is deleted). ward-pi
// copies by an allow list; here again only those entries are taken, and at
// any depth no name that may hold a key (the same list as ward-pi's
// resources.sh), whatever the copy holds.
const HOST_AGENT = "/usr/local/share/ward-pi/host-agent";
const RESOURCES = new Set(["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "SYSTEM.md", "settings.json",
  "keybindings.json", "skills", "prompts", "themes", "extensions"]);
const SECRET = new RegExp("^(\\..*|.*\\.(key|pem|p12|pfx|jks|keystore|kdbx|token|bak|orig)|id_(rsa|dsa|ecdsa|ed25519).*" +
  "|.*credential.*|.*secret.*|.*tokens?\\.json|(auth|mcp-auth|models|mcp)\\.json.*|.*~|sessions|APPEND_SYSTEM\\.md)$", "i");
function syncFrom(src, dst, top) {
  for (const ent of fs.readdirSync(src, { withFileTypes: true })) {
    if (SECRET.test(ent.name) || (top && !RESOURCES.has(ent.name))) continue;
    const from = path.join(src, ent.name), to = path.join(dst, ent.name);
    if (ent.isDirectory()) {
      fs.mkdirSync(to, { recursive: true, mode: 0o700 });
      syncFrom(from, to, false);
    } else if (ent.isFile()) {
      const tmp = `${to}.${crypto.randomBytes(8).toString("hex")}.tmp`;
      fs.copyFileSync(from, tmp, fs.constants.COPYFILE_EXCL);
      fs.renameSync(tmp, to);
    }
  }
}
if (fs.existsSync(HOST_AGENT)) {
  try {
    syncFrom(HOST_AGENT, dir, true);
  } catch (e) {
    process.stderr.write(`pi-agent: the host's Pi resources: ${e.message}\n`);
  }
}

// An agent dir that no runtime seeded from the image (a Kubernetes claim
// starts empty, unlike a docker volume) gets the image's settings: without
// them Pi would trust a project's own .pi settings, among other defaults.
const SETTINGS = "/usr/local/lib/ward/settings.json";
try {
  fs.copyFileSync(SETTINGS, path.join(dir, "settings.json"), fs.constants.COPYFILE_EXCL);
} catch (e) {
  if (e.code !== "EEXIST" && e.code !== "ENOENT") process.stderr.write(`pi-agent: settings.json: ${e.message}\n`);
}

// The image's hardened keys win over the host's settings.json (synced above)
// and over whatever an earlier session of the agent's left in the volume:
// Pi must never trust a project's own .pi settings, nor report installs.
// The host's other keys stay as they are.
const HARDENED = ["defaultProjectTrust", "enableInstallTelemetry"];
try {
  const image = JSON.parse(fs.readFileSync(SETTINGS, "utf8"));
  const target = path.join(dir, "settings.json");
  let cur = {};
  try {
    const st = fs.lstatSync(target);
    if (st.isFile() && st.size <= 1 << 20) cur = JSON.parse(fs.readFileSync(target, "utf8"));
  } catch (e) {
    if (e.code !== "ENOENT") process.stderr.write(`pi-agent: settings.json: ${e.message}; written anew\n`);
  }
  if (typeof cur !== "object" || cur === null || Array.isArray(cur)) cur = {};
  if (HARDENED.some((k) => k in image && cur[k] !== image[k])) {
    for (const k of HARDENED) if (k in image) cur[k] = image[k];
    const tmp = `${target}.${crypto.randomBytes(8).toString("hex")}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(cur, null, 2) + "\n", { mode: 0o600, flag: "wx" });
    fs.renameSync(tmp, target);
  }
} catch (e) {
  if (e.code !== "ENOENT") process.stderr.write(`pi-agent: the image's settings: ${e.message}\n`);
}

const file = path.join(dir, "models.json");
// Only a regular file of a sane size is read (a FIFO or a symlink left in the
// volume by an earlier session would hang or redirect this); else it is new.
let cfg = {};
try {
  const st = fs.lstatSync(file);
  if (!st.isFile() || st.size > 1 << 20) throw new Error("not a regular file under 1 MiB");
  cfg = JSON.parse(fs.readFileSync(file, "utf8"));
} catch (e) {
  if (e.code !== "ENOENT") process.stderr.write(`pi-agent: ${file}: ${e.message}; written anew\n`);
}
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
if (!isObject(cfg)) cfg = {};
if (!isObject(cfg.providers)) cfg.providers = {};

if (provider) {
  const oauth = process.env.WARD_PROVIDER_AUTH === "oauth";
  const entry = { ...(cfg.providers[provider] || {}), baseUrl: base, apiKey: oauth ? OAUTH_PLACEHOLDER : PLACEHOLDER };
  if (provider === "openai-compatible") {
    if (!model) fail("WARD_PROVIDER=openai-compatible needs WARD_MODEL: the model id the server knows");
    entry.api = "openai-completions";
    entry.models = [{ id: model, name: model }];
  } else if (!model) {
    // Pi's own default for the provider, from Pi itself
    const { defaultModelPerProvider } = await import(path.join(path.dirname(PI), "core", "model-resolver.js"));
    model = defaultModelPerProvider[provider] || fail(`Pi has no default model for ${provider}; set WARD_MODEL`);
  }
  cfg.providers[provider] = entry;
} else {
  cfg.providers.fake = FAKE;
}
// a new file of an unguessable name (never one planted there), then renamed
// over models.json (rename replaces a symlink, never follows it)
const tmp = `${file}.${crypto.randomBytes(8).toString("hex")}.tmp`;
fs.writeFileSync(tmp, JSON.stringify(cfg, null, 2) + "\n", { mode: 0o600, flag: "wx" });
fs.renameSync(tmp, file);

const args = process.argv.slice(2);
// a session's model; Pi's own subcommands (`mcp list --json`, a daemon's
// probe of each MCP server's tools) take no --model
const SUBCOMMANDS = new Set(["mcp", "auth", "install", "remove", "update", "list", "config"]);
if (!args.includes("--model") && !SUBCOMMANDS.has(args[0]))
  args.push("--model", provider ? `${provider}/${model}` : "fake/fake-model");
process.argv = [process.argv[0], PI, ...args];
await import(PI);

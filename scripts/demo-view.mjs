// The main job's session, as a person reads it: the prompts, Pi's answers,
// each tool call with its output, the bridge's line for each MCP call; then
// a table of what the kernel reported for the agent (the evidence).
//
//   node demo-view.mjs TRANSCRIPT EVIDENCE.json
//
// TRANSCRIPT is what tests/node/rpc-driver.mjs wrote: "[+ms] -> JSON" for a
// line sent to Pi, "[+ms] <- JSON" for one Pi sent, "[+ms] !! TEXT" for
// ward's stderr.
import fs from "node:fs";

const [transcriptPath, evidencePath] = process.argv.slice(2);
const out = [];
const say = (who, text) => {
  const lines = String(text).split("\n");
  out.push(`${who.padEnd(6)}| ${lines[0]}`);
  for (const l of lines.slice(1)) out.push(`${"".padEnd(6)}| ${l}`);
};
const short = (s, n = 110) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

for (const line of fs.readFileSync(transcriptPath, "utf8").split("\n")) {
  const m = line.match(/^\[\+(\d+)\] (->|<-|!!) (.*)$/);
  if (!m) continue;
  const [, , dir, rest] = m;
  if (dir === "!!") {
    // the bridge's audit line for an MCP tool call: the token was added there
    const a = rest.match(/bridge: route=(mcp-\S+) method=(\S+) target=(\S+) status=(\d+).* rpc=(\S+)/);
    if (a) say("bridge", `${a[2]} ${a[3]} -> ${a[4]} (${a[5]}, route ${a[1]}: the bridge added the token)`);
    continue;
  }
  let msg;
  try {
    msg = JSON.parse(rest);
  } catch {
    continue;
  }
  if (dir === "->" && msg.type === "prompt") say("you", msg.message);
  if (dir === "<-" && msg.type === "message_end" && msg.message?.role === "assistant") {
    for (const c of msg.message.content ?? []) {
      if (c.type === "text" && c.text) say("pi", c.text.replace(/\n+$/, ""));
      if (c.type === "toolCall") say("tool", short(`${c.name} ${JSON.stringify(c.arguments)}`));
    }
  }
  if (dir === "<-" && msg.type === "tool_execution_end") {
    const text = (msg.result?.content ?? []).map((c) => c.text ?? "").join("");
    say("output", text.replace(/\n+$/, "").split("\n").slice(0, 12).join("\n"));
  }
}
console.log(out.join("\n"));

// the evidence, as a table: what the kernel says of the agent, and of ward
const ev = JSON.parse(fs.readFileSync(evidencePath, "utf8"));
const a = ev.agent ?? {};
const ll = ev.landlock ?? {};
const rows = [
  ["agent user", `${ev.user?.name ?? "?"} (uid ${String(a.Uid ?? "?").split(/\s+/)[0]})`],
  ["capabilities", a.CapEff === "0000000000000000" && a.CapBnd === "0000000000000000" ? "none (effective, bounding)" : `CapEff ${a.CapEff}`],
  ["no_new_privs", String(a.NoNewPrivs)],
  ["seccomp", `mode ${a.Seccomp} (filter), ${ev.seccomp?.denied?.length ?? 0} system calls denied`],
  ["landlock", ll.enabled ? `ABI ${ll.abi}, ${ll.mode}, ${ll.rules?.length ?? 0} path rules, scopes: ${(ll.scoped ?? []).join(", ")}` : "off"],
  ["tcp connect", (ll.connect_tcp ?? []).join(", ") || "none"],
  ["egress", `${ev.egress?.mode ?? "?"}: ${ev.egress?.enforced_by ?? ""}`],
  ["ward itself", `uid ${String(ev.ward_self?.status?.Uid ?? "?").split(/\s+/)[0]}, CapEff ${ev.ward_self?.status?.CapEff ?? "?"}, Seccomp ${ev.ward_self?.status?.Seccomp ?? "?"}`],
];
const w = Math.max(...rows.map((r) => r[0].length));
console.log("\nevidence (read back from the kernel):");
for (const [k, v] of rows) console.log(`  ${k.padEnd(w)}  ${v}`);

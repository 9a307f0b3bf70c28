// ward-pi's relay of the host's loopback ports: run by ward-pi in a container
// of its own on the host's network (never the agent's), as the bridge's user,
// it listens on DIR/PORT.sock for each PORT given and carries each
// connection to that port on the host's loopback, nothing else. The
// session's ward reaches an mcp.json server at http://127.0.0.1:PORT by that
// socket ([mcp] loopback), mounted where the agent cannot reach it (mode
// 0600, the bridge's). It ends when its stdin ends: ward-pi holds it open
// for the session, so a ward-pi killed takes its relay with it.
//
//   node ward-pi-relay.mjs DIR PORT...
import fs from "node:fs";
import net from "node:net";

const [dir, ...ports] = process.argv.slice(2);
if (!dir || !ports.length || ports.some((p) => !/^[0-9]{1,5}$/.test(p) || +p < 1 || +p > 65535)) {
  console.error("ward-pi-relay: usage: ward-pi-relay.mjs DIR PORT...");
  process.exit(2);
}
process.umask(0o077);

// one connection: to 127.0.0.1, else ::1 (a server bound to one of them)
function carry(client, port) {
  client.pause();
  const tryAt = (hosts) => {
    const up = net.connect({ port, host: hosts[0] });
    up.once("connect", () => {
      up.removeAllListeners("error");
      client.pipe(up).on("error", () => client.destroy());
      up.pipe(client).on("error", () => up.destroy());
      up.on("error", () => client.destroy());
      client.on("error", () => up.destroy());
      client.resume();
    });
    up.once("error", () => (hosts.length > 1 ? tryAt(hosts.slice(1)) : client.destroy()));
  };
  tryAt(["127.0.0.1", "::1"]);
}

for (const p of ports) {
  const path = `${dir}/${p}.sock`;
  try { fs.unlinkSync(path); } catch {}
  net.createServer((c) => carry(c, +p)).listen(path, () => fs.chmodSync(path, 0o600));
}
process.stdin.on("data", () => {});
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));

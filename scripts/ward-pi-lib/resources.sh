# shellcheck shell=sh disable=SC2154
# ward-pi: the host's Pi resources (sourced by ward-pi; POSIX sh).
#
# What Pi reads from ~/.pi/agent for skills, prompts, themes, extensions, its
# instructions and its settings reaches the agent as a copy made by an allow
# list (nothing else of the directory: not auth.json, models.json, mcp.json,
# mcp-auth.json, mcp-oauth/, sessions/, keys or backups), and inside it no
# file whose name says it holds a secret. The copy lives under ward-pi's
# directory for the project (mode 0700: no other user of the host enters
# it; inside, readable by the agent's uid), is mounted read-only, and is
# deleted after the session and by --reset. pi-agent.mjs adds it to the
# volume at each start and deletes nothing there.

RESOURCES="AGENTS.md AGENTS.override.md CLAUDE.md SYSTEM.md settings.json keybindings.json skills prompts themes extensions"

# the names never copied, at any depth: dotfiles (.env, .env.local, .npmrc,
# .netrc, .git), keys and certificates, credential and token stores,
# Pi's auth files and their backups
resources_excludes() {
	for p in '.*' '*.key' '*.pem' '*.p12' '*.pfx' '*.jks' '*.keystore' '*.kdbx' 'id_rsa*' 'id_dsa*' 'id_ecdsa*' \
		'id_ed25519*' '*credential*' '*secret*' '*token.json' '*tokens.json' '*.token' 'auth.json*' \
		'mcp-auth.json*' 'models.json*' 'mcp.json*' '*.bak' '*.orig' '*~'; do
		printf '%s\n' "--exclude=$p"
	done
}

# resources_copy HOST_AGENT_DIR DEST: DEST made anew (the person's own
# symbolic links followed: a skill linked in from elsewhere is a skill)
resources_copy() {
	rm -rf "$2"
	mkdir -p "$2"
	set -f
	names=""
	for r in $RESOURCES; do
		[ ! -e "$1/$r" ] || names="$names $r"
	done
	[ -n "$names" ] || { set +f; return 0; }
	# shellcheck disable=SC2046,SC2086
	if ! (cd "$1" && tar -chf - $(resources_excludes) -- $names) | tar -C "$2" -xf - --no-same-owner; then
		say "the host's Pi resources were copied only in part (above)"
	fi
	set +f
	chmod -R u+rwX,go+rX,go-w "$2"
}

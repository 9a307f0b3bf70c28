# shellcheck shell=sh disable=SC2154
# ward-pi: the npm packages the person's stdio MCP servers launch (sourced by
# ward-pi; POSIX sh). A stdio server runs in the sandbox as the agent, which
# reaches no registry: `npx -y PKG` works there once PKG is in the agent's
# npm cache, which the image's npm takes without asking the registry
# (NPM_CONFIG_PREFER_OFFLINE). ward-pi lists the packages by ward's own
# parser (ward --mcp-packages) and fetches those this project does not have
# yet, once, after the person agrees at the terminal (as .pi-packages are
# approved), into the project's home volume: npm exec --ignore-scripts in a
# container of the image, as the agent's uid, on the host's network (as
# .pi-packages' apt runs), nothing of the packages run: npm exec's install,
# which is where npx looks. What was fetched is
# noted in ward-pi's own files for the project ($pstate/mcp-npx), which
# --reset deletes with the home.
#
# Uses: mcp, dry, engine, image, home_volume, pstate.

# In the image, as the agent's uid: each package as npx itself will ask for
# it (npm exec's own install, under ~/.npm/_npx, and the registry's answers
# in npm's cache), its install scripts not run; /bin/true is run, not the
# package. The home is the agent's to write: npm reads no config of it
# (~/.npmrc, the prefix's etc/npmrc), runs scripts by /bin/sh alone, and
# the command is a path (a 'true' among the agent's bins is never found),
# with PATH the image's own: nothing the agent planted runs here, on the
# host's network. (npm install -g would not do: npx asks the registry again for a
# PKG@VERSION, which the sandbox cannot reach.)
# shellcheck disable=SC2016
MCP_FETCH='for s; do npm exec --yes --ignore-scripts --script-shell=/bin/sh --no-audit --no-fund --package "$s" -- /bin/true || exit 1; done'

# ward, which reads the file as its start does (mcp.sh finds it the same way)
mcp_ward() {
	ward=${WARD_PI_WARD:-}
	for w in "$here/../sbin/ward" "$here/../build/ward" "$(command -v ward 2>/dev/null || :)"; do
		[ -n "$ward" ] || { [ -n "$w" ] && [ -x "$w" ] && ward=$w; } || :
	done
	[ -n "$ward" ]
}

# mcp_fetch: the packages not fetched yet for this project, asked about
# and fetched; one line for each server whose launcher is not fetched
# (uvx, a path or URL), and for packages left unfetched.
mcp_fetch() {
	[ -n "$mcp" ] || return 0
	LC_ALL=C grep -q '"command"' -- "$mcp" || return 0
	if ! mcp_ward; then
		say "mcp: ward (which lists the stdio servers' packages) is not installed here: their packages are not fetched (make install)"
		return 0
	fi
	list=$("$ward" --mcp-packages "$mcp" 2>&1) || { say "mcp: $(printf '%s' "$list" | head -c 300)"; return 0; }
	want=""
	tab=$(printf '\t')
	while IFS=$tab read -r kind server spec; do
		case "$kind" in
		skip) say "mcp: server $server: $spec; it runs as given and may fail in the sandbox" ;;
		npx) [ -f "$pstate/mcp-npx" ] && LC_ALL=C grep -Fxq -- "$spec" "$pstate/mcp-npx" || want="$want $spec" ;;
		esac
	done <<LIST
$list
LIST
	want=${want# }
	[ -n "$want" ] || return 0
	registry=${NPM_CONFIG_REGISTRY:-https://registry.npmjs.org/}
	if [ -n "$dry" ]; then
		say "mcp: would ask to fetch $want from $registry into $home_volume (npm exec --ignore-scripts, the host's network)"
		return 0
	fi
	if ! [ -t 0 ] || ! [ -t 2 ]; then
		say "mcp: your stdio MCP servers' npm packages ($want) are not in this project's home yet; fetching them needs your approval at a terminal: run ward-pi there once (until then those servers fail)"
		return 0
	fi
	{
		printf 'ward-pi: your MCP servers launch these npm packages in the sandbox, which reaches no registry:\n\n    %s\n\n' "$want"
		printf 'fetch them once from %s into this project'"'"'s home (%s), with npm exec --ignore-scripts (nothing of them runs now)? [y/N] ' "$registry" "$home_volume"
	} | clean >&2
	IFS= read -r answer 9>&- || answer=""
	case "$answer" in y | Y | yes | YES) ;; *) say "mcp: nothing fetched: those servers fail in the sandbox"; return 0 ;; esac
	userns=""
	[ "$engine" = podman ] && [ "$(id -u)" -ne 0 ] && userns=--userns=keep-id:uid=1000,gid=1000
	set -f
	# shellcheck disable=SC2086  # (the specs: words ward judged, no blank in any)
	if "$engine" run --rm --pull=never --network host $userns --user 1000:1000 -v "$home_volume:/home/pi" -w / \
		-e HOME=/home/pi -e PATH=/usr/local/bin:/usr/bin:/bin -e NPM_CONFIG_USERCONFIG=/nonexistent/user-npmrc \
		-e NPM_CONFIG_GLOBALCONFIG=/nonexistent/global-npmrc -e NPM_CONFIG_UPDATE_NOTIFIER=false \
		-e NPM_CONFIG_REGISTRY="$registry" --entrypoint /bin/sh "$image" -c "$MCP_FETCH" ward-pi-fetch $want >&2 9>&-; then
		printf '%s\n' $want >> "$pstate/mcp-npx"
		say "mcp: fetched into $home_volume: $want"
	else
		say "mcp: npm could not fetch $want (above): those servers fail in the sandbox"
	fi
	set +f
}

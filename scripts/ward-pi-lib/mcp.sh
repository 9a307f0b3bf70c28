# shellcheck shell=sh disable=SC2154
# ward-pi: the person's MCP servers (sourced by ward-pi; POSIX sh). ward reads
# the mcp.json once, as root, and sends each server where its URL says (the
# image's [mcp]); what ward-pi adds on the host:
# - the file chosen, and never one the agent could have written;
# - the variables its headers name (${NAME}, $env:NAME, {env:NAME},
#   bearerTokenEnv), passed by name to ward, whose bridge alone holds them;
# - a relay of each port on the host's loopback its servers use (inside the
#   container 127.0.0.1 is the agent's own): ward-pi-relay.mjs, in a
#   container of its own on the host's network, as the bridge's user, on a
#   socket the session mounts at /run/ward/host/PORT.sock.
# ward judges the file itself: a server it cannot serve is left out with one
# line saying why, the others work.

mcp_vars="" mcp_ports="" mcp_remote="" mcp_relay_pid="" mcp_auth=""

# mcp_pick: the file (--mcp, else ~/.pi/agent/mcp.json when there), as a
# real path, or none. What the agent could write (the project, a path lent
# read-write) is refused: a header naming ${ANY_VAR} would hand that host
# variable to a server of the agent's choosing.
mcp_pick() {
	[ -n "$mcp" ] || { [ -f "${HOME:-/nonexistent}/.pi/agent/mcp.json" ] && mcp="$HOME/.pi/agent/mcp.json"; } || return 0
	[ -f "$mcp" ] || die "--mcp: '$mcp' is not a file"
	# as given (made absolute, no link followed), then where it leads: a
	# link the agent planted in the project points anywhere
	case "$mcp" in /*) given=$mcp ;; *) given=$(pwd)/$mcp ;; esac
	mcp=$(readlink -f -- "$mcp") || die "--mcp: '$mcp' cannot be resolved"
	# one engine word: no line break (ward-pi's words are split on them),
	# no ':' (docker's -v separator)
	case "$given$mcp" in
	*"
"* | *:*) die "--mcp: the file's path holds a line break or a ':': refused (give it a plain path)" ;;
	esac
	for m in "$given" "$mcp"; do
		mcp_writable "$m" "$project"
		oldifs=$IFS
		IFS=:
		set -f
		for w in $extra_rw; do
			mcp_writable "$m" "$w"
		done
		set +f
		IFS=$oldifs
		# what other agents write: ward-pi's own state (sessions' git,
		# what others lent), the engines' volumes
		for w in "$cache" "${logins:-$cache}" /var/lib/docker /var/lib/containers "${XDG_DATA_HOME:-${HOME:-/nonexistent}/.local/share}/containers"; do
			mcp_writable "$m" "$w"
		done
	done
	mcp_scan
	mcp_auth_pick
}

# mcp_auth_pick: the host's Pi keeps its MCP servers' OAuth sign-ins in
# mcp-auth.json beside its mcp.json. ward's bridge alone gets it,
# read-write (/run/ward/mcp-auth.json: it sends a signed-in server's access
# token and writes refreshed tokens back here, in place). Given only when it
# is a regular file of the person's, no link, outside anything an agent
# writes; else one line, and ward leaves out the servers that need it.
mcp_auth_pick() {
	f="${PI_CODING_AGENT_DIR:-${HOME:-/nonexistent}/.pi/agent}/mcp-auth.json"
	[ -e "$f" ] || [ -L "$f" ] || return 0
	why=""
	case "$f" in
	*"
"* | *:* | [!/]*) why="its path is not absolute or holds a ':' or a line break" ;;
	esac
	[ -n "$why" ] || ! [ -L "$f" ] || why="it is a symbolic link"
	[ -n "$why" ] || [ -f "$f" ] || why="it is not a regular file"
	[ -n "$why" ] || [ -O "$f" ] || why="it is not yours"
	if [ -z "$why" ]; then
		oldifs=$IFS
		IFS=:
		set -f
		for w in "$project" $extra_rw "$cache" "${logins:-$cache}"; do
			case "$f/" in "$w"/*) why="it is in $w, which an agent can write" ;; esac
		done
		set +f
		IFS=$oldifs
	fi
	if [ -n "$why" ]; then
		say "mcp: $f (your MCP servers' sign-ins) is not given to ward: $why; servers signed in there are left out"
		return 0
	fi
	mcp_auth=$f
	# the sign-ins' token endpoints on the host's loopback (a server of the
	# person's machine signs in there too): relayed as the servers' ports
	tp=$(LC_ALL=C grep -oE '"token_endpoint"[[:space:]]*:[[:space:]]*"http://(127\.0\.0\.1|localhost):[0-9]{1,5}/' -- "$f" |
		sed -E 's/.*:([0-9]+)\/$/\1/; s/^0+//' | sort -un | head -n 32 | tr '\n' ' ')
	mcp_ports=$(printf '%s %s\n' "$mcp_ports" "$tp" | tr ' ' '\n' | LC_ALL=C grep -E '^[0-9]+$' | sort -un | head -n 32 | tr '\n' ' ')
	# a server on the loopback whose sign-in refreshes elsewhere: the
	# bridge needs a network for it (the agent's sockets still reach only ward's ports)
	[ -n "$mcp_remote" ] || [ -z "$mcp_ports" ] ||
		mcp_remote=$(LC_ALL=C grep -oE '"token_endpoint"[[:space:]]*:[[:space:]]*"https://[^"/?:]*' -- "$f" | head -n 1)
}

# mcp_writable PATH DIR: refused when PATH is in DIR
mcp_writable() {
	case "$1/" in "$2"/*) die "--mcp: '$1' is in $2, which an agent can write: it would choose the servers and the variables they are sent; keep the MCP config outside (~/.pi/agent/mcp.json)" ;; esac
}

# mcp_scan: the variables and loopback ports the file names (the file is the
# person's; ward parses it, this only looks for names and ports)
mcp_scan() {
	names=$(LC_ALL=C grep -oE '\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$env:[A-Za-z0-9_]+|\{env:[A-Za-z0-9_]+\}|"bearerTokenEnv"[[:space:]]*:[[:space:]]*"[A-Za-z0-9_]+"' -- "$mcp" |
		sed -e 's/^"bearerTokenEnv".*:[[:space:]]*"//' -e 's/"$//' -e 's/^[$]{//' -e 's/}$//' -e 's/^[$]env://' -e 's/^{env://' | sort -u)
	for n in $names; do
		case "$n" in
		# ward's own settings, its C library's and resolver's, the image's
		WARD_* | LD_* | GLIBC_TUNABLES | MALLOC_* | LOCALDOMAIN | RES_OPTIONS | HOSTALIASES | LOCPATH | GCONV_PATH | NLSPATH | TZDIR)
			say "mcp: \${$n} in $mcp is not passed (ward's own setting or its C library's): a server whose header needs it is left out"
			continue ;;
		esac
		case " $EXTRA_IMAGE_NAMES " in
		*" $n "*)
			say "mcp: \${$n} in $mcp is not passed (the image sets it): a server whose header needs it is left out"
			continue ;;
		esac
		eval "set=\${$n+x}"
		[ -z "$set" ] || mcp_vars="$mcp_vars $n"
	done
	mcp_commands
	# a server by name or address elsewhere: the session needs a network
	# (the bridge's alone: the agent's sockets reach only ward's ports)
	# shellcheck disable=SC2034  # (ward-pi's)
	mcp_remote=$(LC_ALL=C grep -oiE '"url"[[:space:]]*:[[:space:]]*"https?://[^"/?:]*' -- "$mcp" |
		LC_ALL=C grep -viE '//(127\.[0-9.]+|localhost\.?|\[|0\.0\.0\.0)$' | head -n 1)
	# "url": "http://127.0.0.1:PORT/...", localhost, 0.0.0.0: the host's
	# loopback as ward sends it to a relay (https there, ::1 and other
	# 127/8 addresses ward refuses); the port 80 when none, as a number
	mcp_ports=$(LC_ALL=C grep -oiE '"url"[[:space:]]*:[[:space:]]*"http://(127\.0\.0\.1|localhost\.?|0\.0\.0\.0)(:[0-9]{1,5})?[/?"]' -- "$mcp" |
		sed -E 's/.*\/\/[^:/?"]+(:([0-9]+))?.*/\2/; s/^0+//; s/^$/80/' | sort -un | head -n 32 | tr '\n' ' ')
}

# mcp_commands: a header "!COMMAND" (pi-mcp-adapter runs it for the value)
# runs here, on the host, as the adapter would run it (by the shell, no
# stdin, at most 10 s, what it prints trimmed), and its output goes to ward
# by the name ward looks it up under. Which values are commands, ward itself
# says (ward --mcp-commands: the same parser as its start; a stdio server's
# args are never one); without ward here, those servers are left out.
mcp_commands() {
	LC_ALL=C grep -q '"!' -- "$mcp" || return 0
	if ! mcp_ward; then
		say "mcp: $mcp has !command headers, and ward (which says which values are commands) is not installed here: those servers are left out (make install)"
		return 0
	fi
	cmds=$(mktemp -d "${TMPDIR:-/tmp}/ward-pi-mcp.XXXXXX") || die "mcp: cannot make a temporary directory"
	if ! "$ward" --mcp-commands "$mcp" "$cmds" 2> "$cmds.err"; then
		say "mcp: $(head -c 300 "$cmds.err" | tr -d '\n'): its !command headers are not run"
		rm -rf "$cmds" "$cmds.err"
		return 0
	fi
	rm -f "$cmds.err"
	for f in "$cmds"/WARD_MCP_CMD_*; do
		[ -f "$f" ] || continue
		n=${f##*/}
		# --dry-run runs nothing: the name alone says what would be passed
		if [ -n "$dry" ]; then
			mcp_vars="$mcp_vars $n"
			continue
		fi
		rc=0
		out=$(timeout 10 sh -c "$(cat "$f")" < /dev/null 2> /dev/null) || rc=$?
		# trimmed as the adapter trims (blanks and line breaks at both ends)
		out=$(printf '%s' "$out" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
		if [ "$rc" -ne 0 ] || [ -z "$out" ]; then
			say "mcp: a !command header of $mcp ($n) $([ "$rc" -eq 124 ] && echo "took over 10 s" || echo "exited $rc or printed nothing"): its server is left out"
			continue
		fi
		case "$out" in
		*"
"*) say "mcp: a !command header of $mcp ($n) printed more than one line: its server is left out"; continue ;;
		esac
		export "$n=$out"
		mcp_vars="$mcp_vars $n"
	done
	rm -rf "$cmds"
}

# mcp_words: the engine's words for the session (newline-separated): the
# file, the variables by name, the relays' directory
mcp_words() {
	[ -n "$mcp" ] || return 0
	printf '%s\n' -v "$mcp:/run/ward/mcp.json:ro"
	# read-write, for the bridge: PID 1 opens it as root, the agent has no path to it
	[ -z "$mcp_auth" ] || printf '%s\n' -v "$mcp_auth:/run/ward/mcp-auth.json" -e WARD_MCP_AUTH=/run/ward/mcp-auth.json
	# (called as $(mcp_words) with IFS a line break: the names are blank-separated)
	IFS=' '
	for n in $mcp_vars; do
		printf '%s\n' -e "$n"
	done
	# read-only: the sockets are connected to, and nothing in the session
	# (the agent's uid may own the directory) can put or remove one
	[ -z "$mcp_ports" ] || printf '%s\n' -v "$state/relay:/run/ward/host:ro"
}

# mcp_relay_start: the relay of the loopback ports, when there are any; its
# stdin is a pipe ward-pi holds (fd 7) until it ends. Every socket there
# before the session starts, or one line naming the ports that are not.
mcp_relay_start() {
	[ -n "$mcp" ] && [ -n "$mcp_ports" ] || return 0
	# the bridge's user writes its sockets here: the directory is inside
	# the session's own (the person's alone), sticky so none replaces another
	mkdir -m 1777 "$state/relay"
	chmod 1777 "$state/relay"
	mkfifo -m 0600 "$state/relay.in"
	# the bridge's uid 999 as the session's container maps it
	userns=""
	[ "$engine" = podman ] && [ "$(id -u)" -ne 0 ] && userns=--userns=keep-id:uid=1000,gid=1000
	# shellcheck disable=SC2086
	"$engine" run --rm -i --pull=never $userns --network host --user 999:999 --cap-drop ALL \
		--security-opt no-new-privileges --read-only --label "org.ward.pi.relay=$hash" \
		-v "$state/relay:/run/ward/host" --entrypoint /usr/local/bin/node "$image" \
		/usr/local/lib/ward/ward-pi-relay.mjs /run/ward/host $mcp_ports \
		< "$state/relay.in" > /dev/null 2> "$state/relay.err" 7>&- 8>&- 9>&- &
	mcp_relay_pid=$!
	exec 7> "$state/relay.in"
	i=0
	while [ "$i" -lt 100 ]; do
		missing=""
		for p in $mcp_ports; do
			[ -S "$state/relay/$p.sock" ] || missing="$missing $p"
		done
		[ -n "$missing" ] || return 0
		kill -0 "$mcp_relay_pid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	say "mcp: the relay of the host's loopback port(s)$missing did not start ($(head -c 300 "$state/relay.err" 2>/dev/null | tr '\n' ' ')): those servers' calls fail"
}

# mcp_relay_stop: its stdin closed, it ends (and the engine removes it)
mcp_relay_stop() {
	[ -n "$mcp_relay_pid" ] || return 0
	exec 7>&-
	wait "$mcp_relay_pid" 2>/dev/null || :
	mcp_relay_pid=""
}

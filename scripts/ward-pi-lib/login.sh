# shellcheck shell=sh disable=SC2154
# ward-pi's subscription logins (sourced by ward-pi): `ward-pi login
# anthropic` runs Pi's own login (pi auth login) from the image, at the
# person's terminal, with the browser and its callback the person's; the
# credential lands in ward-pi's own state on the host, never in a project
# or a volume. A session on that provider then hands the file to ward's
# bridge alone (/run/ward/login.json, which the agent has no path to): the
# bridge sends its access token and refreshes it, and the agent's Pi holds a
# placeholder (docs/providers.md, "Subscriptions").

# Where the logins live: the person's alone (0700), refused as --ro, --rw
# and --mcp (extras.sh, mcp.sh), as the engines' volumes are.
logins="${XDG_STATE_HOME:-${HOME:-/nonexistent}/.local/state}/ward-pi/login"
case "$logins" in
*"
"* | *:* | [!/]*) logins="" ;; # not one of the engine's words: no login (login_run says why)
esac

# The providers whose login ward's bridge refreshes (its presets with a
# token endpoint: init/config/providers.c).
login_provider_ok() {
	case "$1" in anthropic) return 0 ;; *) return 1 ;; esac
}

# ward-pi login PROVIDER: Pi's login in a container of the image, on the
# host's network (the browser's callback comes to the host's loopback), as
# the person's uid, writing $logins/auth.json (Pi's own format).
login_run() {
	login_provider_ok "$login_what" ||
		die "login: '$login_what': ward's bridge refreshes the login of anthropic (a Claude Pro or Max subscription) only; other providers take an API key (ward-pi --help)"
	[ -n "$logins" ] || die "login: XDG_STATE_HOME or HOME is not an absolute path without ':' or a line break: no place for the login"
	set -- run --rm -i --pull=never --network host --user "$(id -u):$(id -g)"
	[ -z "$dry" ] && ! [ -t 0 ] && die "login needs a terminal: Pi asks you to open a URL and may ask for a code"
	[ -t 0 ] && set -- "$@" -t
	[ "$engine" = podman ] && [ "$(id -u)" -ne 0 ] && set -- "$@" --userns=keep-id
	set -- "$@" -v "$logins:/login" -e PI_CODING_AGENT_DIR=/login -e HOME=/tmp -e PI_TELEMETRY=0 -e PI_OFFLINE=1 \
		--entrypoint /usr/local/bin/node "$image" \
		/opt/pi/node_modules/@earendil-works/pi-coding-agent/dist/cli.js auth login "$login_what"
	if [ -n "$dry" ]; then
		quote "$engine" "$@"
		return 0
	fi
	[ ! -L "$logins" ] && [ ! -L "$logins/auth.json" ] || die "login: $logins or its auth.json is a symbolic link: refused"
	mkdir -p "$logins" && chmod 0700 "$logins" || die "login: cannot make $logins"
	"$engine" image inspect "$image" > /dev/null 2>&1 ||
		die "the image '$image' is not in $engine: make it with 'make image' in ward's source, then '$engine load -i build/image/ward-pi.tar' (ward-pi never pulls an image)"
	say "login: Pi's own login for $login_what, from the image; the credential goes to $logins/auth.json (yours alone; a session hands it to ward's bridge, never to the agent)"
	"$engine" "$@" || die "login: Pi's login ended with an error (above); nothing was saved"
	[ -f "$logins/auth.json" ] && grep -q "\"$login_what\"" "$logins/auth.json" ||
		die "login: Pi saved no $login_what login in $logins/auth.json"
	chmod 0600 "$logins/auth.json"
	say "login: saved; sessions with --provider $login_what (or no provider key in the environment) use it"
}

# Whether a session on provider $1 has a login here to use.
login_there() {
	[ -n "$logins" ] && login_provider_ok "$1" && [ -f "$logins/auth.json" ] && [ ! -L "$logins/auth.json" ] &&
		grep -q "\"$1\"" "$logins/auth.json" 2> /dev/null
}

# The engine's words for a session on the login: the file to ward alone,
# read-write (its bridge writes refreshed tokens back in place, under the
# file's lock), where the image's [route provider] finds it.
login_words() {
	printf '%s\n' -v "$logins/auth.json:/run/ward/login.json" -e WARD_CREDENTIAL=/run/ward/login.json
}

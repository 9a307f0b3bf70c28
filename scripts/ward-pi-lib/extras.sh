# shellcheck shell=sh disable=SC2154
# ward-pi: what the person adds to a session (sourced by ward-pi; POSIX sh):
# variables for the agent (--env, --env-file) and host paths at the same
# path (--ro, --rw). Everything is judged while the options are read, before
# anything runs: a refusal is one line naming the option and why.
#
# Results, for ward-pi: extra_env (NAME=VALUE lines), extra_names (the
# names, blank-separated: WARD_AGENT_ENV, ward's [agent] env_pass), extra_ro
# and extra_rw (real paths, ':'-separated: WARD_PI_RO, WARD_PI_RW, the image's
# Landlock read and write rules).

extra_env="" extra_names="" extra_ro="" extra_rw=""

# The names the image's ward.conf sets itself ([agent] env wins over a
# passed one), ward sets (the proxy's), or ward reads (WARD_*): refused
# rather than silently lost, or let into ward's own settings.
EXTRA_IMAGE_NAMES="PATH HOME TMPDIR LANG PI_CODING_AGENT_DIR PI_OFFLINE PI_TELEMETRY NPM_CONFIG_PREFIX NPM_CONFIG_NODEDIR NPM_CONFIG_UPDATE_NOTIFIER NPM_CONFIG_PREFER_OFFLINE PIP_BREAK_SYSTEM_PACKAGES TERM HTTPS_PROXY HTTP_PROXY NO_PROXY"

# extra_var WHERE NAME VALUE: one variable for the agent, judged by its name
extra_var() {
	case "$2" in
	"" | [0-9]* | *[!A-Za-z0-9_]*) die "$1: '$2': expected a variable's name (letters, digits, _)" ;;
	esac
	up=$(printf '%s' "$2" | tr 'a-z' 'A-Z')
	# a secret never enters the sandbox: the bridge holds it and sends it
	case "$up" in
	*_KEY | KEY | *_TOKEN | TOKEN | *SECRET* | *PASSWORD* | *PASSWD* | *CREDENTIAL* | *_PAT | *_AUTH)
		die "$1: $2 looks like a secret (*_KEY, *_TOKEN, *SECRET*, *PASSWORD*): none enters the sandbox; a model's key goes to ward's bridge with --provider, an MCP server's token as a header \${VAR} of its entry in --mcp's file (docs/mcp.md)"
		;;
	WARD_* | LD_* | ANTHROPIC_* | OPENAI_* | GEMINI_*) die "$1: $2 is ward's own setting or a provider's, not the agent's" ;;
	# read by ward's own C library and resolver when it starts, before it
	# can keep them for the agent alone
	GLIBC_TUNABLES | MALLOC_* | LOCALDOMAIN | RES_OPTIONS | HOSTALIASES | LOCPATH | GCONV_PATH | NLSPATH | TZDIR)
		die "$1: $2 would reach ward's own C library or resolver (it starts with the agent's variables in its environment): not settable"
		;;
	esac
	for n in $EXTRA_IMAGE_NAMES; do
		[ "$up" != "$n" ] || die "$1: $2 is set by the image (its ward.conf's [agent] env, or ward's proxy): not settable"
	done
	case "$3" in
	*[[:cntrl:]]*) die "$1: $2's value holds a control character (a line break, a tab, an escape): refused" ;;
	esac
	# beyond ASCII: UTF-8 only, and no C1 control (U+0080-U+009F: a
	# terminal's CSI among them), since --dry-run prints the value
	if printf '%s' "$3" | LC_ALL=C grep -q '[^ -~]'; then
		command -v iconv > /dev/null 2>&1 && printf '%s' "$3" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1 ||
			die "$1: $2's value is not UTF-8 text: refused"
		! printf '%s' "$3" | LC_ALL=C grep -q "$(printf '\302[\200-\237]')" ||
			die "$1: $2's value holds a C1 control character: refused"
	fi
	extra_env="$extra_env$2=$3
"
	case " $extra_names " in *" $2 "*) ;; *) extra_names="${extra_names:+$extra_names }$2" ;; esac
}

# extra_env_arg NAME=VALUE | NAME (the latter from ward-pi's environment)
extra_env_arg() {
	case "$1" in
	*=*) extra_var --env "${1%%=*}" "${1#*=}" ;;
	*)
		case "$1" in "" | [0-9]* | *[!A-Za-z0-9_]*) die "--env: '$1': expected NAME=VALUE or NAME" ;; esac
		eval "isset=\${$1+x}"
		[ -n "$isset" ] || die "--env $1: $1 is not set here (--env NAME=VALUE gives a value)"
		eval "val=\$$1"
		extra_var --env "$1" "$val"
		;;
	esac
}

# extra_env_file FILE: NAME=VALUE lines ('#' comments, blank lines, an
# optional "export ", one pair of quotes around a value taken off). A name
# alone is refused: the file may be the agent's (a .env in the project), and
# a name alone would hand it a variable of ward-pi's environment.
extra_env_file() {
	# read once, from the file's own directory pinned first (cd): no link
	# on the way can move the read elsewhere after the check, the file
	# itself opened without following a link (an agent's .env -> /proc/
	# self/environ would hand it ward-pi's environment), 64 KiB at most
	envtmp=$(mktemp) || die "--env-file: no temporary file"
	rc=0
	(
		cd -P -- "$(dirname -- "$1")" 2> /dev/null || exit 3
		case "$(pwd -P)/" in /proc/* | /sys/* | /dev/*) exit 4 ;; esac
		b=$(basename -- "$1")
		[ -f "$b" ] && [ ! -L "$b" ] || exit 3
		dd if="$b" iflag=nofollow,nonblock bs=65537 count=1 2> /dev/null
	) > "$envtmp" || rc=$?
	size=$(wc -c < "$envtmp")
	if [ "$rc" -ne 0 ] || [ "$size" -gt 65536 ] || [ "$(tr -d '\000' < "$envtmp" | wc -c)" -ne "$size" ]; then
		rm -f "$envtmp"
		[ "$rc" -ne 4 ] || die "--env-file: '$1' is in /proc, /sys or /dev: refused"
		[ "$rc" -eq 0 ] || die "--env-file: '$1' is not a readable file (a symbolic link is refused)"
		die "--env-file: '$1' is over 64 KiB or holds a NUL byte: not an env file"
	fi
	ln=0
	while IFS= read -r line || [ -n "$line" ]; do
		ln=$((ln + 1))
		line=${line#"${line%%[! ]*}"}
		case "$line" in "" | "#"*) continue ;; "export "*) line=${line#export } ;; esac
		case "$line" in
		*=*) ;;
		*) die "--env-file $1:$ln: expected NAME=VALUE (a name alone is refused in a file; --env NAME takes it from here)" ;;
		esac
		v=${line#*=}
		case "$v" in
		\"*\" | \'*\') [ "${#v}" -lt 2 ] || { v=${v#?}; v=${v%?}; } ;;
		esac
		extra_var "--env-file $1:$ln" "${line%%=*}" "$v"
	done < "$envtmp"
	rm -f "$envtmp"
	envtmp=""
}

# extra_path --ro|--rw PATH: the path's real form, judged; added to the list
extra_path() {
	[ -e "$2" ] || die "$1: '$2' does not exist"
	real=$(readlink -f -- "$2" && echo /) || die "$1: '$2' cannot be resolved"
	real=${real%?}
	real=${real%?}
	case "$real" in
	*"
"* | *:*) die "$1: '$2': a path with a line break or ':' cannot be mounted" ;;
	/*) ;;
	*) die "$1: '$2' cannot be resolved" ;;
	esac
	[ "$real" != / ] || die "$1: '$2' is /: refused (the whole host)"
	h=$(readlink -f -- "${HOME:-/nonexistent}" 2>/dev/null) || h=${HOME:-/nonexistent}
	# the home itself, and all above it (/home, /), would be every secret
	# of the person's; above the project it would be the project again
	for above in "$h" "$project"; do
		case "$above/" in "$real"/*) die "$1: '$2' is or holds $above: refused (name a directory inside it)" ;; esac
	done
	case "$real/" in "$project"/*) die "$1: '$2' is inside the project, which is mounted already" ;; esac
	# never these, nor inside them, nor above them: the person's keys and
	# logins, ward-pi's own files, the engines' sockets, the host's system
	# (each as spelt and by its real path: ~/.ssh may be a link elsewhere)
	for s in "$h/.ssh" "$h/.pi" "$h/.gnupg" "$h/.aws" "$h/.docker" "$h/.kube" "$h/.config" \
		"$h/.local/share/containers" "$h/.password-store" "$cache" "${logins:-$cache}" "${XDG_RUNTIME_DIR:-/run/user}" /run /var/run \
		/var/lib/docker /var/lib/containers /proc /sys /dev /boot /etc /usr /bin /sbin /lib /lib64 /root /home; do
		for t in "$s" "$(readlink -f -m -- "$s")"; do
			[ "$t" = /home ] || case "$real/" in "$t"/*) die "$1: '$2' is or is inside $s: refused (keys, logins, engine sockets and the host's system stay out)" ;; esac
			case "$t/" in "$real"/*) die "$1: '$2' holds $s: refused (keys, logins, engine sockets and the host's system stay out)" ;; esac
		done
	done
	# a login store by its name, wherever it is (another user's home, when
	# ward-pi runs as root)
	case "$real/" in */.ssh/* | */.gnupg/* | */.aws/* | */.kube/* | */.docker/* | */.pi/* | */.password-store/*)
		die "$1: '$2' is in a login store (.ssh, .gnupg, .aws, .kube, .docker, .pi): refused" ;;
	esac
	[ ! -S "$real" ] || die "$1: '$2' is a socket: refused (an engine's socket would be the host)"
	if [ -d "$real" ]; then
		sock=$(find "$real" -xdev -maxdepth 3 -type s -print -quit 2>/dev/null) || sock=""
		[ -z "$sock" ] || die "$1: '$2' holds a socket ($sock): refused (an engine's socket would be the host)"
		store=$(find "$real" -xdev -maxdepth 3 \( -name .ssh -o -name .gnupg -o -name .aws -o -name .kube \
			-o -name .docker -o -name .pi -o -name .password-store \) -print -quit 2>/dev/null) || store=""
		[ -z "$store" ] || die "$1: '$2' holds a login store ($store): refused"
	fi
	if [ "$1" = --rw ]; then
		# what the agent writes there is never checked: nothing the person
		# runs by itself may be there. A repository (its next git would run
		# the agent's hook), a directory of the person's PATH, a shell's or
		# a tool's start-up file, direnv's .envrc
		d=$real
		while :; do
			[ ! -e "$d/.git" ] || die "$1: '$2' is in the git repository $d: the agent could make your next git there run its code; give it --ro, or run ward-pi in it"
			[ "$d" != / ] && [ -n "$d" ] || break
			d=$(dirname "$d")
		done
		if [ -d "$real" ]; then
			g=$(find "$real" -xdev -maxdepth 4 \( -name .git -o -name .envrc \) -print -quit 2>/dev/null) || g=""
			[ -z "$g" ] || die "$1: '$2' holds $g: the agent could make your next git or cd there run its code; give it --ro"
		fi
		case "$(basename -- "$real")" in
		.bashrc | .bash_profile | .bash_login | .bash_logout | .profile | .zshrc | .zprofile | .zshenv | .zlogin | \
			.inputrc | .gitconfig | .npmrc | .pypirc | .netrc | .envrc | .vimrc | .exrc)
			die "$1: '$2' is a start-up file the person's own tools run or read: refused (give it --ro)" ;;
		esac
		oldifs=$IFS
		IFS=:
		set -f
		for p in $PATH; do
			[ -n "$p" ] || continue
			pr=$(readlink -f -m -- "$p")
			case "$pr/" in "$real"/*) die "$1: '$2' holds $p, on your PATH: the agent's files there would be your commands; refused" ;; esac
			case "$real/" in "$pr"/*) die "$1: '$2' is in $p, on your PATH: the agent's files there would be your commands; refused" ;; esac
		done
		set +f
		IFS=$oldifs
	fi
	oldifs=$IFS
	IFS=:
	set -f
	for p in $extra_ro $extra_rw; do
		case "$real/" in "$p"/*) die "$1: '$2' overlaps $p, given already" ;; esac
		case "$p/" in "$real"/*) die "$1: '$2' overlaps $p, given already" ;; esac
	done
	set +f
	IFS=$oldifs
	if [ "$1" = --ro ]; then
		extra_ro="${extra_ro:+$extra_ro:}$real"
	else
		extra_rw="${extra_rw:+$extra_rw:}$real"
	fi
}

# extra_words: the engine's words for them, a word a line
extra_words() {
	oldifs=$IFS
	IFS=:
	set -f
	for p in $extra_ro; do printf '%s\n' -v "$p:$p:ro"; done
	for p in $extra_rw; do printf '%s\n' -v "$p:$p"; done
	set +f
	IFS=$oldifs
	[ -z "$extra_ro" ] || printf '%s\n' -e "WARD_PI_RO=$extra_ro"
	[ -z "$extra_rw" ] || printf '%s\n' -e "WARD_PI_RW=$extra_rw"
}

# shellcheck shell=sh
# shellcheck disable=SC2154  # (pstate, project, allow: ward-pi's)
# ward-pi's part of approval as it happens (docs/proxy.md, "Asking"):
# - --ask: ward asks you at the TUI's terminal when the agent's request
#   goes to a host no --allow names ([proxy] ask = terminal: ward, PID 1,
#   relays Pi's terminal and owns the question's row);
# - --approver SOCKET: a daemon of yours answers instead, on that unix
#   socket (docs/approver.md);
# - the answers of "always" (a at the terminal) are kept in ward-pi's own
#   directory for the project, never in the project or its volumes, and
#   allowed at every later start; --policy shows them, --policy-remove
#   takes one away.
# The file is written by ward (PID 1, never the agent: /run/ward is out of
# its reach) and read here as any file ward-pi did not write: a line is
# taken only as HOST:PORT or *.SUFFIX:PORT of a DNS name's letters.

ask="" approver=""

policy_file() { printf '%s\n' "$pstate/policy/always"; }

# policy_entries: the kept answers that are well formed, one a line, at most 256
policy_entries() {
	f=$(policy_file)
	[ -f "$f" ] || return 0
	n=0
	while IFS= read -r l || [ -n "$l" ]; do
		case "$l" in "" | *[!A-Za-z0-9.:*-]*) continue ;; esac
		h=${l%:*} p=${l##*:}
		case "$p" in "" | *[!0-9]* | 0*) continue ;; esac
		if [ "${#p}" -gt 5 ] || [ "$p" -gt 65535 ]; then continue; fi
		case "$h" in '*.'*) h=${h#??} ;; esac
		case "$h" in "" | *[!A-Za-z0-9.-]* | .* | *..* | -*) continue ;; esac
		printf '%s\n' "$l"
		n=$((n + 1))
		[ "$n" -lt 256 ] || break
	done < "$f"
}

# policy_allow: the kept answers added to --allow's hosts (port 443 named as the host alone)
policy_allow() {
	set -f # (*.SUFFIX is a word, not a pattern)
	for e in $(policy_entries); do
		case "$e" in *:443) e=${e%:443} ;; esac
		case " $allow " in *" $e "*) ;; *) allow="${allow:+$allow }$e" ;; esac
	done
	set +f
}

# ward-pi --policy: what is kept for this project
policy_show() {
	entries=$(policy_entries)
	if [ -z "$entries" ]; then
		printf 'ward-pi: nothing is always allowed for %s (answer a when ward-pi --ask asks)\n' "$project" | clean
		return 0
	fi
	printf 'ward-pi: always allowed for %s (kept in %s):\n' "$project" "$(policy_file)" | clean
	printf '%s\n' "$entries" | sed 's/^/  /'
	printf 'ward-pi --policy-remove HOST:PORT takes one away\n'
}

# ward-pi --policy-remove ENTRY: that line out of the file (a new file, renamed over it)
policy_remove() {
	f=$(policy_file)
	want=$1
	case "$want" in *:*) ;; *) want="$want:443" ;; esac
	policy_entries | grep -qxF -- "$want" || die "--policy-remove: '$1' is not kept for $project (ward-pi --policy lists what is)"
	tmp=$(mktemp "$f.XXXXXX") || die "--policy-remove: cannot write in $(dirname "$f")"
	policy_entries | grep -vxF -- "$want" > "$tmp" || :
	mv -f "$tmp" "$f"
	say "policy: $want is no longer always allowed for $project"
}

# ask_words: the engine's words for the session's approver
ask_words() {
	if [ -n "$ask" ]; then
		printf '%s\n' -e WARD_PROXY_ASK=terminal -e WARD_PROXY_ASK_STORE=/run/ward/policy/always \
			-v "$pstate/policy:/run/ward/policy"
	elif [ -n "$approver" ]; then
		printf '%s\n' -e WARD_PROXY_ASK=unix:/run/ward/approver.sock -v "$approver:/run/ward/approver.sock"
	fi
}

# ask_prepare: the directory ward writes the answers to, the person's own
ask_prepare() {
	[ -n "$ask" ] || return 0
	mkdir -p "$pstate/policy"
	f=$(policy_file)
	[ -f "$f" ] || : > "$f"
}

# The sessions' logs (ward's [ward] log_copy: each session's own file in
# ward-pi's directory for the project, the last 10 kept), for --denials:
# what was refused, grouped, with the setting that would allow each (ward
# --denials, run in the image with no network; nothing is added for you).
log_words() {
	printf '%s\n' -e WARD_LOG_COPY=/run/ward/log.txt -v "$pstate/logs/$sid.log:/run/ward/log.txt"
}

log_prepare() {
	mkdir -p "$pstate/logs"
	: > "$pstate/logs/$sid.log"
	# the newest 10 kept (names sort by their start's time)
	set -f
	# shellcheck disable=SC2012  # (names of ward-pi's own making)
	for old in $(ls -1 "$pstate/logs" | sort -r | tail -n +11); do
		rm -f "$pstate/logs/$old"
	done
	set +f
}

# ward-pi --denials: the last 5 sessions' refusals
denials_show() {
	set -f
	# shellcheck disable=SC2012
	logs=$(ls -1 "$pstate/logs" 2> /dev/null | sort | tail -n 5)
	set +f
	if [ -z "$logs" ]; then
		printf 'ward-pi: no session of %s has a log yet\n' "$project" | clean
		return 0
	fi
	if [ -n "$dry" ]; then
		echo "cat $pstate/logs/... | $engine run --rm -i --pull=never --network none --entrypoint /sbin/ward $image --denials -"
		return 0
	fi
	# shellcheck disable=SC2086  # (names of ward-pi's own making, split on purpose)
	(cd "$pstate/logs" && set -f && cat $logs) |
		"$engine" run --rm -i --pull=never --network none --entrypoint /sbin/ward "$image" --denials - | clean
}

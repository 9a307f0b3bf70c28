# shellcheck shell=sh disable=SC2154,SC2034
# ward-pi: a project's sessions, and their end (sourced by ward-pi; POSIX sh):
# which containers of the project still run, what its .git is, and the
# check of what the agents left (the epilogue, then the git import) for
# each session that ended. Uses: engine, image, hash, project, pstate,
# state; sandbox_words, say, git_import (git.sh).

# the containers of this project's sessions that still run (by their label),
# or of one session
# ("?" when the engine cannot say: counted as running, never as none)
running() { "$engine" ps -q --filter "label=org.ward.pi.${2:-project}=${1:-$hash}" 9>&- 2>/dev/null || echo "?"; }

# a session that ended unchecked (its marks are there)
pending_any() {
	for f in "$pstate"/sessions/*/pending; do
		[ ! -e "$f" ] || return 0
	done
	return 1
}

# what the project's .git is (none, or its device, inode and kind): a
# session that joins others takes git only from the .git they started
# with, never from one a running agent made since (unchecked until the
# last of them ends)
git_mark() {
	if [ -e "$project/.git" ] || [ -L "$project/.git" ]; then
		stat -c '%d:%i:%F' -- "$project/.git" 2>/dev/null || echo unreadable
	else
		echo none
	fi
}

# The epilogue: what the last session's agent left, read in a container
# (ward-pi-epilogue.mjs), a repository it changed quarantined, its git
# imported (ward-pi-lib/git.sh). Run after each session, and at the next
# start when one was never finished (ward-pi killed).
finish() {
	# the session's own marks: when it started, how it had git
	# (gitmode, gitobjects: git.sh's git_mounts reads them)
	# shellcheck disable=SC2034
	{ IFS= read -r since; IFS= read -r gitmode; IFS= read -r gitobjects || :; } < "$state/pending"
	set -- --since "$since"
	[ "$gitmode" = none ] || set -- "$@" --git
	# (one word a line: no path here holds a newline)
	IFS='
'
	set -f
	# shellcheck disable=SC2046
	set -- $(sandbox_words no-home) --network none "$image" -- /usr/local/bin/node /usr/local/lib/ward/ward-pi-epilogue.mjs "$@"
	set +f
	IFS=' 	
'
	rc=0
	# (bounded: the agent's files could not hold the check, but nothing
	# here waits for ever; its container goes with it)
	timeout -k 10 120 "$engine" run --rm --label "org.ward.pi.epilogue=$hash" "$@" < /dev/null \
		> "$state/bundle" 2> "$state/epilogue.err" 9>&- || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		ids=$("$engine" ps -q --filter "label=org.ward.pi.epilogue=$hash" 9>&- 2>/dev/null) || ids=""
		# shellcheck disable=SC2086
		[ -z "$ids" ] || "$engine" rm -f $ids > /dev/null 2>&1 9>&- || :
	fi
	sed -n 's/^ward-pi-epilogue: //p' "$state/epilogue.err" | while IFS= read -r l; do say "$l"; done
	# 0: checked; 4: checked, the agent's git not taken (said above);
	# anything else (3: a repository it could not quarantine) is no check
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		say "the check of what the agent left did not complete (exit $rc: $(grep -v '^ward-pi-epilogue: ' "$state/epilogue.err" | tail -n 1)); it runs again at the next start: until then, run no git in $project"
		return 0
	fi
	if [ "$gitmode" != none ] && [ "$rc" -eq 0 ] && [ -s "$state/bundle" ]; then
		git_import "$state/bundle"
	fi
	rm -f "$state/pending" "$state/bundle"
}

# Every session that ended unchecked, in the order they started (the first's
# time covers the rest), each in a subshell of its own where -e holds: a step
# that fails stops it before the session is marked checked, and ward-pi says
# so. Only with the lock exclusive (no session of the project runs), so a
# directory without marks is a start a killed ward-pi left. Non-zero: one
# could not be checked (its directory kept, for the next time).
finish_all() {
	fall=0
	for d in "$pstate"/sessions/*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		if [ -f "$d/pending" ]; then
			state=$d
			set +e
			(
				set -e
				finish
			)
			frc=$?
			set -e
			if [ "$frc" -ne 0 ] || [ -f "$d/pending" ]; then
				[ "$frc" -eq 0 ] || say "the end of a session stopped early (exit $frc): it runs again at the next start; until then, run no git in $project"
				fall=1
				continue
			fi
		fi
		rm -rf "$d"
	done
	return "$fall"
}

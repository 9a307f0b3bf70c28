# shellcheck shell=sh disable=SC2154
# ward-pi: what the agent's note says of this session (sourced by ward-pi;
# POSIX sh). ward writes the sandbox's rules into Pi's APPEND_SYSTEM.md from
# what it put in force (paths, routes, hosts, limits, tools); it adds this
# file, which ward-pi mounts at /run/ward/ward-pi-note.md (the image's
# [agent] policy_note_add): what persists, the person's paths and variables,
# and how to ask for what the sandbox lacks. Only names the person gave and
# fixed words go in: never a value of a variable.

# session_note FILE
session_note() {
	{
		echo "## This session (ward-pi)"
		echo
		echo "The person started you with ward-pi, in the project \`$project\` (mounted at its own path)."
		echo
		echo "- What persists to the next session of this project: the project's files; your home \`/home/pi\` (what \`npm install -g\` and \`pip install --user\` put there, your shell's files); Pi's sessions and state in \`/var/lib/pi\`. Everything else, \`/tmp\` included, is gone when the session ends. The person can wipe the home and the state with \`ward-pi --reset\`."
		if [ "$gitmode" != none ]; then
			echo "- Git: you work on a copy of the repository's state. When the session ends, your commits, branches and index come back to the person's repository (fast-forwards only; anything else is kept aside for the person to look at). No remote is reachable unless the person allowed its host."
		fi
		[ -z "$extra_ro" ] || echo "- Host paths the person lent you read-only (at the same path): \`$(printf '%s' "$extra_ro" | sed 's/:/`, `/g')\`."
		[ -z "$extra_rw" ] || echo "- Host paths the person lent you read-write (at the same path): \`$(printf '%s' "$extra_rw" | sed 's/:/`, `/g')\`."
		[ -z "$extra_names" ] || echo "- Variables the person set for you: \`$(printf '%s' "$extra_names" | sed 's/ /`, `/g')\`."
		if [ -n "$presets$allow" ]; then
			echo "- Hosts: the person allowed \`$(printf '%s' "$presets $allow" | sed 's/^ //; s/ $//; s/ /`, `/g')\` through the proxy (listed above). For another host, tell the person which and why: they start ward-pi with \`--allow HOST\`."
		else
			echo "- No package registry or other host is reachable in this session: \`npm install\` or \`pip install\` from a registry fails. Tell the person which host you need and why: they can start ward-pi with \`--allow npm\` (or \`pypi\`, \`github\`, \`debian\`, a host name)."
		fi
		echo "- A Debian package the image lacks: add its exact name to \`.pi-packages\` in the project (a line each, \`#\` comments) and tell the person; at their next start ward-pi shows them what apt would install and builds an image with it only if they approve. You cannot install system packages yourself."
	} > "$1"
}

#!/bin/sh
# The main job, for now: ward as PID 1 of a fresh pid namespace supervising a
# small demo agent that leaves work behind, so every duty shows in the log.
set -eu
WARD=${1:-build/ward}
conf=$(mktemp /tmp/ward-demo.XXXXXX.conf)
trap 'rm -f "$conf"' EXIT
cat > "$conf" <<'CONF'
[ward]
log_level = debug
[supervise]
grace = 2s
restart = on-failure
restart_delay = 200ms
restart_limit = 3
signal_rewrite = INT:TERM
CONF
echo "== ward $("$WARD" --version | head -n 1) as PID 1, config:"
"$WARD" -c "$conf" --check | sed 's/^/   /'
echo "== run: the agent starts an orphan that ignores TERM, fails once, then succeeds"
state=$(mktemp -d /tmp/ward-demo.XXXXXX)
unshare -fp --mount-proc "$WARD" -c "$conf" -- sh -c '
	if [ ! -e '"$state"'/ran ]; then
		touch '"$state"'/ran
		echo "agent: first run, failing with 1"; exit 1
	fi
	( trap "" TERM; sleep 30 ) &
	echo "agent: second run as pid $$ in pgrp $(cut -d" " -f5 /proc/$$/stat); left a TERM-ignoring orphan"
	exit 0' && rc=0 || rc=$?
rm -rf "$state"
echo "== ward exited with $rc (the agent's status, after killing what it left behind)"

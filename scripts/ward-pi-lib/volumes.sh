# shellcheck shell=sh disable=SC2154
# ward-pi: export and import of a project's volumes (sourced by ward-pi; POSIX
# sh). Uses: engine, image, volume, home_volume, hash, sid, state, pstate,
# project, xfile, mode, dry; image_there, quote, finish_all, running.

# export, import: the project's two volumes to or from a file, by tar in the
# sandbox (what the agent wrote is read there, never on the host). tar runs
# as the agent under ward, with the volumes at /tmp/ward-pi-volumes/state and
# .../home (Landlock lets it reach /tmp, not / or /var/lib); the file holds
# state/ and home/, nothing else is unpacked from it.
volumes_transfer() {
	image_there
	at=/tmp/ward-pi-volumes
	IFS='
'
	set -f
	# shellcheck disable=SC2046
	set -- $( [ "$engine" = podman ] && [ "$(id -u)" -ne 0 ] && echo --userns=keep-id:uid=1000,gid=1000) \
		--network none --label "org.ward.pi.project=$hash" --label "org.ward.pi.session=$sid"
	set +f
	IFS=' 	
'
	if [ "$mode" = export ]; then
		[ ! -e "$xfile" ] && [ ! -L "$xfile" ] || die "export: '$xfile' exists: name a new file"
		# never where an agent writes (the project, a running session's
		# --rw path): it could plant a link the file would be written through
		xdir=$(cd -P -- "$(dirname -- "$xfile")" 2>/dev/null && pwd -P) || die "export: '$xfile': no such directory"
		case "$xdir/" in "$project"/*) die "export: '$xfile' is in the project, which the agent writes: name a file elsewhere" ;; esac
		for other in "$pstate"/sessions/*/rw; do
			[ -f "$other" ] || continue
			oldifs=$IFS
			IFS=:
			set -f
			for t in $(cat "$other"); do
				case "$xdir/" in "$t"/*) die "export: '$xfile' is in $t, which a running session lent read-write: name a file elsewhere" ;; esac
			done
			set +f
			IFS=$oldifs
		done
		set -- "$@" -v "$volume:$at/state" -v "$home_volume:$at/home" -w "$at" "$image" -- tar -C "$at" -czf - state home
		[ -z "$dry" ] || { quote "$engine" run --rm --pull=never "$@"; exit 0; }
		tmp=$(mktemp "$xdir/.ward-pi-export.XXXXXX") || die "export: cannot write in $xdir"
		rc=0
		"$engine" run --rm --pull=never "$@" < /dev/null > "$tmp" 2> "$state/xfer.err" 9>&- || rc=$?
		if [ "$rc" -ne 0 ] || ! gzip -t "$tmp" 2>/dev/null; then
			rm -f "$tmp"
			die "export failed (exit $rc: $(grep -v '^ward' "$state/xfer.err" | tail -n 1 | cut -c1-200)): nothing written"
		fi
		# (a link: never over a file that appeared meanwhile)
		ln -- "$tmp" "$xdir/$(basename -- "$xfile")" 2>/dev/null || { rm -f "$tmp"; die "export: '$xfile' appeared meanwhile: nothing written"; }
		rm -f "$tmp"
		rm -rf "$state"
		# the check a session that ended meanwhile left to the last one
		if flock -n 9 && [ -z "$(running)" ]; then finish_all || :; fi
		echo "ward-pi: exported $volume and $home_volume (Pi's sessions and state, the agent's home, for $project) to $xfile" | clean
		exit 0
	fi
	[ -f "$xfile" ] && [ -r "$xfile" ] || die "import: '$xfile' is not a readable file"
	gzip -t "$xfile" 2>/dev/null || die "import: '$xfile' is not a ward-pi export (not gzip): nothing imported"
	[ -z "$dry" ] || {
		quote "$engine" run --rm --pull=never "$@" -v "$volume:/var/lib/pi" -v "$home_volume:/home/pi" "$image" -- true
		quote "$engine" run --rm -i --pull=never "$@" -v "$volume:$at/state" -v "$home_volume:$at/home" -w "$at" \
			"$image" -- tar -C "$at" -xzf - --no-same-owner state home
		exit 0
	}
	# the volumes made as a session makes them (the image's files and
	# owners in them), then the file unpacked into them
	rc=0
	"$engine" run --rm --pull=never "$@" -v "$volume:/var/lib/pi" -v "$home_volume:/home/pi" "$image" -- true \
		< /dev/null > /dev/null 2> "$state/xfer.err" 9>&- || rc=$?
	[ "$rc" -ne 0 ] || "$engine" run --rm -i --pull=never "$@" -v "$volume:$at/state" -v "$home_volume:$at/home" \
		-w "$at" "$image" -- tar -C "$at" -xzf - --no-same-owner state home \
		< "$xfile" > /dev/null 2> "$state/xfer.err" 9>&- || rc=$?
	[ "$rc" -eq 0 ] ||
		die "import of $xfile failed (exit $rc: $(grep -v '^ward' "$state/xfer.err" | tail -n 1 | cut -c1-200)): what it unpacked before stays in $volume and $home_volume"
	rm -rf "$state"
	echo "ward-pi: imported $xfile into $volume and $home_volume (for $project): ward-pi -- --continue resumes its last session" | clean
	exit 0
}

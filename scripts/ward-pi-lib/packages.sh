# shellcheck shell=sh disable=SC2154
# ward-pi: .pi-packages, the Debian packages a project asks for (sourced by
# ward-pi; POSIX sh).
#
# They come in a derived image, built once after the person approves at the
# terminal what apt would install; its tag is a hash of the list and of the
# base image's id, so an edited list or a new base asks again. The agent can
# write the file, but approval needs the host's terminal, which it never has.
#
# Uses: project, image, engine, dry; sets pkgs, and image to the derived one.

# The file, opened once without following a symbolic link (O_NOFOLLOW) or
# waiting on a FIFO (O_NONBLOCK), at most 64 KiB read (GNU dd), then parsed:
# one name a word, '#' comments. Every name must be spelt as Debian spells
# one, without an action apt would read off its end ('git-' removes git);
# a refusal names the line, never prints what the agent wrote.
packages_read() {
	pkgs=""
	pkgfile="$project/.pi-packages"
	[ -e "$pkgfile" ] || [ -L "$pkgfile" ] || return 0
	[ ! -L "$pkgfile" ] || die "$pkgfile is a symbolic link: ward-pi reads only a file of the project's own"
	text=$(dd if="$pkgfile" iflag=nofollow,nonblock bs=65536 count=1 status=none 2> /dev/null) ||
		die "$pkgfile: not a regular file of the project's own (a symbolic link or a directory is refused)"
	words=$(printf '%s\n' "$text" | LC_ALL=C awk '{ sub(/\r$/, ""); sub(/#.*/, ""); for (i = 1; i <= NF; i++) print NR "\t" $i }')
	badline=$(printf '%s\n' "$words" | LC_ALL=C awk -F '\t' 'NF && ($2 !~ /^[a-z0-9][a-z0-9+.-]+$/ || $2 ~ /-$/) { print $1; exit }')
	[ -z "$badline" ] ||
		die "$pkgfile, line $badline: not a Debian package name (lower-case letters, digits and + - . only: no option, version, path, pattern or trailing -)"
	pkgs=$(printf '%s\n' "$words" | cut -f 2 | grep -v '^$' | LC_ALL=C sort -u | tr '\n' ' ') || true
	pkgs=${pkgs% }
}

# In the base image, as its build would: apt's lists fetched, then each name
# looked up exactly among apt's package names (apt would take 'python3.1' as
# a pattern, 'procps+' as procps), then what `apt-get -s install` would do.
# shellcheck disable=SC2016
APT_CHECK='apt-get update -qq > /dev/null 2>&1 || { echo "ERR apt-get update failed in the image"; exit 0; }
names=$(apt-cache pkgnames)
for n; do printf "%s\n" "$names" | grep -Fxq -- "$n" || echo "NOTEXACT $n"; done
apt-get -s install --no-install-recommends -- "$@" 2>&1 | sed "s/^/SIM /"'

packages_approve() { # from $image, $pkgs, $base, $derived, $pkgfile
	if ! [ -t 0 ] || ! [ -t 2 ]; then
		die "$pkgfile asks for packages ($pkgs) that need your approval at a terminal: run ward-pi there once (nothing built, Pi not started)"
	fi
	# shellcheck disable=SC2086
	sim=$("$engine" run --rm --network host --entrypoint /bin/sh "$image" -c "$APT_CHECK" sh $pkgs 2>&1 9>&-) ||
		die "asking apt in $image what it would install failed: $(printf '%s\n' "$sim" | tail -n 1)"
	nx=$(printf '%s\n' "$sim" | sed -n 's/^NOTEXACT //p' | head -n 1)
	[ -z "$nx" ] || die "$pkgfile: '$nx' is not the exact name of a package in $image's apt lists (apt would take it as a pattern or an action): nothing built"
	err=$(printf '%s\n' "$sim" | sed -n 's/^ERR //p; s/^SIM E: //p' | head -n 1)
	[ -z "$err" ] || die "apt would not install $pkgs: $err"
	inst=$(printf '%s\n' "$sim" | sed -n 's/^SIM Inst \([^ ]*\).*/\1/p' | tr '\n' ' ')
	remv=$(printf '%s\n' "$sim" | sed -n 's/^SIM Remv \([^ ]*\).*/\1/p' | tr '\n' ' ')
	{
		printf 'ward-pi: %s asks for these Debian packages in its image:\n\n    %s\n\n' "$pkgfile" "$pkgs"
		printf 'apt would install (%s):\n\n    %s\n\n' "$(printf '%s' "$inst" | wc -w)" "${inst:-nothing new}"
		[ -z "$remv" ] || printf 'and REMOVE:\n\n    %s\n\n' "$remv"
		printf 'build %s with them (apt-get install as root in a build container)? [y/N] ' "$derived"
	} | clean >&2
	read -r answer || answer=""
	case "$answer" in
	y | Y | yes | YES) ;;
	*) die "not approved: nothing built, Pi not started" ;;
	esac
	ctx=$(mktemp -d "${TMPDIR:-/tmp}/ward-pi-build.XXXXXX")
	# the build's network is the host's: the packages come from Debian's
	# archive as the host reaches it; the context is empty (nothing of the
	# project is in the image); no set-user-ID file is left (as in the base)
	printf '%s\n' "FROM $image" \
		"RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -- $pkgs && apt-get clean && rm -rf /var/lib/apt/lists/* && find / -xdev -type f -perm /6000 -exec chmod ug-s {} +" \
		"LABEL org.ward.pi-packages=\"$pkgs\" org.ward.base=\"$base\"" > "$ctx/Containerfile"
	if ! "$engine" build --network host -t "$derived" -f "$ctx/Containerfile" "$ctx" >&2 9>&-; then
		rm -rf "$ctx"
		die "building $derived failed (above); Pi not started"
	fi
	rm -rf "$ctx"
}

# the derived image, built if it is not yet (a dry run says it would be)
packages_image() {
	packages_read
	[ -n "$pkgs" ] || return 0
	base=$("$engine" image inspect -f '{{.Id}}' "$image" 2> /dev/null) || base=""
	[ -n "$base" ] || die "the image '$image' is not in $engine (load or build it first)"
	derived="ward-pi-packages:$(printf '%s\n%s\n' "$base" "$pkgs" | sha256sum | cut -c1-16)"
	if ! "$engine" image inspect "$derived" > /dev/null 2>&1; then
		if [ -n "$dry" ]; then
			echo "# ward-pi would build $derived from $image with: $pkgs (after approval at a terminal)"
		else
			packages_approve
		fi
	fi
	image=$derived
}

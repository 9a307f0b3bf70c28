# shellcheck shell=sh disable=SC2154
# ward-pi: the agent's git (sourced by ward-pi; POSIX sh).
#
# The host's repository is never mounted into the container. The agent gets
# a git directory of its own, made here before each session from the
# repository's state (HEAD, refs, index, the person's name), whose objects
# borrow the repository's through a read-only alternate. Whatever the agent
# writes there (a hook, core.fsmonitor, a commondir, a rename of .git) stays
# in that copy, which no git on the host ever opens. After the session
# ward-pi's epilogue, in a container, hands its commits back as a git bundle;
# the host fetches it with git's checks for an untrusted peer and applies
# what a person would: fast-forwards, new branches and tags, HEAD and the
# index, when nothing of the person's moved meanwhile. See docs/ward-pi.md.
#
# Uses: project, state, dry; sets gitmode (none, dir, file), gitobjects.

# git on the host, as the person, in the project: their config, but never a
# hook or an fsmonitor, which a repository's config may find in the work tree
# the agent wrote (core.hooksPath = .husky/_); ward-pi's own git runs nothing
# of the project's
hgit() { git -c core.hooksPath=/dev/null -c core.fsmonitor=false -C "$project" "$@"; }

# The person's config can make their own git run files of the project (a
# hooks path, an include, an fsmonitor there): the agent can change those,
# and ward-pi says so before the session (their next git would run them).
git_warn_config() {
	for k in core.hooksPath core.fsmonitor include.path; do
		v=$(hgit config --get-all "$k" 2>/dev/null | head -n 1) || continue
		case "$v" in
		"" | false | true) ;;
		/*) case "$v" in "$project"/*) say "warning: your git's $k ($v) is in the project: the agent can change what your next git runs there" ;; esac ;;
		*) say "warning: your git's $k ($v) is a path in the project: the agent can change what your next git runs there" ;;
		esac
	done
}

# .git decides how the agent gets git: absent (no git, whatever a parent
# directory holds: none is mounted), a directory (a main worktree), or a
# gitfile whose both ends agree (a linked worktree). Anything else is
# refused: a symbolic link, a gitfile naming another repository, a .git
# with a commondir (what an agent writes to borrow another repository).
git_classify() {
	gitmode=none gitobjects=""
	g="$project/.git"
	if [ -L "$g" ]; then
		die "$g is a symbolic link: ward-pi takes no repository from it (remove it, or run git there to see)"
	elif [ -d "$g" ]; then
		[ ! -e "$g/commondir" ] && [ ! -L "$g/commondir" ] ||
			die "$g has a commondir (it borrows another repository, as only a linked worktree's metadata does): refused; look at it before any git runs there"
		gitmode=dir
	elif [ -f "$g" ]; then
		git_linked_worktree "$g"
		gitmode="file"
	elif [ -e "$g" ]; then
		die "$g is neither a directory nor a file: refused"
	else
		return 0
	fi
	command -v git >/dev/null 2>&1 || die "the project is a git repository and git is not installed here"
	gitobjects=$(hgit rev-parse --path-format=absolute --git-path objects) ||
		die "git cannot read the repository in $project"
	[ -d "$gitobjects" ] || die "the repository's objects ($gitobjects) are not a directory"
	# (submodules' repositories are not mounted: their configs may hold a
	# token in a remote URL; the copy's git ignores submodules)
	git_warn_config
}

# one line of a file, byte for byte (a trailing newline taken off)
line1() { IFS= read -r l < "$1" || [ -n "$l" ]; printf '%s' "$l"; }

# A linked worktree's gitfile says `gitdir: COMMON/worktrees/NAME`; that
# directory's `gitdir` must name this .git back and its `commondir` COMMON,
# every path its own real path (no symbolic link on the way).
git_linked_worktree() {
	content=$(line1 "$1")
	wd=${content#gitdir: }
	real() { (cd -P -- "$1" 2>/dev/null && pwd -P); }
	case "$content" in "gitdir: /"*) ;; *) die "$1 is a gitfile that names no absolute git directory: refused" ;; esac
	[ -d "$wd" ] && [ "$(real "$wd")" = "$wd" ] ||
		die "$1 names $wd, which is not a directory by its real path: refused"
	common=${wd%/worktrees/*}
	[ "$common/worktrees/${wd##*/}" = "$wd" ] && [ -n "${wd##*/}" ] ||
		die "$1 names $wd, which is not a linked worktree's (COMMON/worktrees/NAME): refused"
	[ -f "$wd/gitdir" ] && [ ! -L "$wd/gitdir" ] && [ "$(line1 "$wd/gitdir")" = "$1" ] ||
		die "$1 names $wd, whose gitdir does not name $1 back: not this project's linked worktree, refused"
	[ -f "$wd/commondir" ] && [ ! -L "$wd/commondir" ] ||
		die "$wd has no commondir: not a linked worktree's, refused"
	cd_common=$(line1 "$wd/commondir")
	case "$cd_common" in /*) c=$cd_common ;; *) c=$wd/$cd_common ;; esac
	[ "$(real "$c")" = "$common" ] ||
		die "$wd's commondir does not name $common: refused"
}

# The agent's git directory, $state/git, made anew from the repository's
# state: HEAD, the branches, tags and remote-tracking refs (packed), the
# index as it is (staged work included), info/exclude, the person's name
# and the few settings that shape a checkout; objects through the alternate
# /usr/local/share/ward-pi/objects (the repository's, mounted read-only).
# No hook, no other config, no remote URL (a token may be in one).
git_make_copy() {
	sd="$state/git"
	rm -rf "$sd"
	mkdir -p "$sd/objects/info" "$sd/objects/pack" "$sd/refs/heads" "$sd/refs/tags" "$sd/info"
	cf="$sd/config"
	git config --file "$cf" core.repositoryformatversion 0
	git config --file "$cf" core.bare false
	git config --file "$cf" core.logallrefupdates true
	# submodules' repositories are not there (git.sh, git_classify)
	git config --file "$cf" diff.ignoreSubmodules all
	git config --file "$cf" status.submoduleSummary false
	if [ "$(hgit rev-parse --show-object-format)" = sha256 ]; then
		git config --file "$cf" core.repositoryformatversion 1
		git config --file "$cf" extensions.objectformat sha256
	fi
	for k in user.name user.email core.autocrlf core.eol core.filemode core.symlinks core.ignorecase \
		init.defaultBranch; do
		if v=$(hgit config --get "$k"); then git config --file "$cf" "$k" "$v"; fi
	done
	if ref=$(hgit symbolic-ref -q HEAD); then
		printf 'ref: %s\n' "$ref" > "$sd/HEAD"
	else
		hgit rev-parse --verify -q HEAD > "$sd/HEAD"
	fi
	hgit for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags refs/remotes > "$sd/packed-refs"
	{ hgit for-each-ref --format='%(objectname)' refs/heads refs/tags refs/remotes
	  hgit rev-parse --verify -q HEAD || true; } | sort -u > "$sd/ward-pi-start"
	idx=$(hgit rev-parse --path-format=absolute --git-path index)
	if [ -f "$idx" ]; then
		cp "$idx" "$sd/index"
		for s in "${idx%/index}"/sharedindex.*; do [ ! -f "$s" ] || cp "$s" "$sd/"; done
	fi
	ex=$(hgit rev-parse --path-format=absolute --git-path info/exclude)
	[ ! -f "$ex" ] || cp "$ex" "$sd/info/exclude"
	echo /usr/local/share/ward-pi/objects > "$sd/objects/info/alternates"
	# what the import compares with: the person's HEAD and index as the
	# session found them, and the paths that were submodules then
	hgit symbolic-ref -q HEAD > "$state/start.head" || hgit rev-parse --verify -q HEAD > "$state/start.head" || :
	hgit rev-parse --verify -q HEAD > "$state/start.commit" || echo none > "$state/start.commit"
	git_index_sum > "$state/start.index"
	hgit ls-files -s | awk -F '\t' '$1 ~ /^160000 / { print $2 }' | LC_ALL=C sort > "$state/start.gitlinks"
	# a linked worktree's .git, in the container: a gitfile naming the copy
	echo "gitdir: /var/lib/ward-pi/git" > "$state/gitfile"
	# the agent (uid 1000 inside) reads and writes the copy: it is the
	# person's when their uid is the agent's (rootless podman maps it so),
	# the agent's uid's when ward-pi runs as root (a rootful engine); no
	# other user of the host enters ward-pi's 0700 directory above it
	chmod -R a+rX "$sd" "$state/gitfile"
	if [ "$(id -u)" -eq 0 ]; then chown -R 1000:1000 "$sd" "$state/gitfile"; fi
}

# the engine's words for the agent's git (a dry run names the same paths)
git_mounts() {
	case "$gitmode" in
	dir) at=$project/.git ;;
	file) at=/var/lib/ward-pi/git ;;
	*) return 0 ;;
	esac
	printf '%s\n' -v "$state/git:$at" -v "$gitobjects:/usr/local/share/ward-pi/objects:ro"
	[ "$gitmode" = dir ] || printf '%s\n' -v "$state/gitfile:$project/.git:ro" -e WARD_GIT_DIR=$at
}

git_index_sum() {
	i=$(hgit rev-parse --path-format=absolute --git-path index)
	if [ -f "$i" ]; then cksum < "$i"; else echo none; fi
}

# the gitlink (submodule) paths of a tree, one a line, as git quotes them
git_gitlinks() {
	[ "$1" = none ] || hgit ls-tree -r "$1" | awk -F '\t' '$1 ~ /^160000 / { print $2 }' | LC_ALL=C sort
}

short() { printf '%.10s' "$1"; }

# The bundle the epilogue made from the agent's git ($1): fetched into
# refs/ward-pi/incoming/ (git checks every object, as from any untrusted
# peer), then applied as a person would, and the incoming refs deleted.
# The bundle's pack, read by git index-pack --strict in a scratch repository
# that borrows the person's objects: every object checked as fsck does (a
# tree with a .git entry, a bad .gitmodules, a malformed object), which git
# before 2.46 does not do for a bundle's fetch, whatever fetch.fsckObjects
# says. 0 when the pack is sound.
git_bundle_strict() {
	sc="$state/strict.git"
	rm -rf "$sc"
	git init -q --bare "$sc" || return 1
	echo "$gitobjects" > "$sc/objects/info/alternates"
	hdr=$(sed -n '1,/^$/p' "$1" | wc -c)
	tail -c +"$((hdr + 1))" "$1" | git -c core.hooksPath=/dev/null -C "$sc" index-pack --strict --fix-thin --stdin \
		> /dev/null 2> "$state/strict.err"
	r=$?
	rm -rf "$sc"
	return "$r"
}

git_import() {
	b=$1
	if ! git_bundle_strict "$b"; then
		say "the agent's git was not taken (its objects failed git's strict checks: $(tail -n 1 "$state/strict.err")); nothing of it applied"
		return 0
	fi
	if ! hgit -c fetch.fsckObjects=true -c transfer.fsckObjects=true -c gc.auto=0 fetch -q --no-tags \
		--no-write-fetch-head --no-recurse-submodules "$b" '+refs/heads/*:refs/ward-pi/incoming/heads/*' \
		'+refs/tags/*:refs/ward-pi/incoming/tags/*' '+refs/ward-pi/*:refs/ward-pi/incoming/ward-pi/*' \
		2> "$state/fetch.err"; then
		say "the agent's git was not taken (git refused its bundle: $(tail -n 1 "$state/fetch.err")); nothing of it applied"
		return 0
	fi
	# the agent's refs whose commits the person has already (a bundle
	# leaves them out): named in the index commit, each checked by git
	if hgit rev-parse -q --verify refs/ward-pi/incoming/ward-pi/index > /dev/null; then
		hgit log -1 --format=%B refs/ward-pi/incoming/ward-pi/index | sed -n 's/^REF //p' | head -n 1000 |
			while read -r sha ref; do
				case "$ref" in refs/heads/* | refs/tags/*) ;; *) continue ;; esac
				printf '%s' "$sha" | grep -qE '^[0-9a-f]{40,64}$' || continue
				hgit check-ref-format "$ref" || continue
				hgit show-ref -q --verify "refs/ward-pi/incoming/${ref#refs/}" && continue
				hgit cat-file -e "$sha^{commit}" 2> /dev/null || continue
				hgit update-ref "refs/ward-pi/incoming/${ref#refs/}" "$sha" || :
			done
	fi
	stamp=$(date +%Y%m%d-%H%M%S)
	# branches checked out in another worktree are that worktree's to move
	others=$(hgit worktree list --porcelain | awk -v me="$project" '
		/^worktree / { w = substr($0, 10) } /^branch / && w != me { print substr($0, 8) }')
	set -f
	for ref in $(hgit for-each-ref --format='%(refname)' refs/ward-pi/incoming/heads refs/ward-pi/incoming/tags); do
		name=${ref#refs/ward-pi/incoming/}
		new=$(hgit rev-parse "$ref")
		busy=""
		for o in $others; do [ "$o" != "refs/$name" ] || busy=1; done
		# A new name must not shadow one of the person's: git resolves a
		# short name as a tag before a branch before a remote-tracking ref
		# (a branch "origin/main", a tag "v1.2" or "deadbeef"). New tags
		# and such names are kept aside, named, never made.
		# (unchanged: nothing to do, whatever it is)
		[ "$(hgit show-ref -s --verify "refs/$name" 2>/dev/null)" != "$new" ] || continue
		shadow=""
		case "${name%%/*}" in tags) shadow="a tag (the agent's tags are never made yours)" ;; esac
		short=${name#*/}
		if ! hgit show-ref -q --verify "refs/$name"; then
			case "$short" in
			HEAD | refs/* | heads/* | tags/* | remotes/*) shadow="a name git reads as another ref" ;;
			esac
			[ -n "$shadow" ] || ! printf '%s' "$short" | grep -qE '^[0-9a-fA-F]{4,}$' || shadow="a name that reads as a hash"
			[ -n "$shadow" ] || ! hgit rev-parse -q --verify "$short^{object}" > /dev/null 2>&1 || shadow="a name another ref of yours has"
		fi
		if [ -n "$shadow" ]; then
			hgit update-ref "refs/ward-pi/kept/$stamp/$name" "$new"
			say "$name: $shadow, kept as refs/ward-pi/kept/$stamp/$name"
		elif old=$(hgit show-ref -s --verify "refs/$name" 2>/dev/null); then
			if [ "$old" = "$new" ]; then
				:
			elif [ "${name%%/*}" = heads ] && [ -z "$busy" ] && hgit merge-base --is-ancestor "$old" "$new"; then
				hgit update-ref -m "ward-pi: the agent's commits" "refs/$name" "$new" "$old"
				say "$name: the agent's commits, $(short "$old")..$(short "$new")"
			else
				hgit update-ref "refs/ward-pi/kept/$stamp/$name" "$new"
				say "$name: the agent's $(short "$new") does not simply follow yours$([ -z "$busy" ] || echo " (checked out in another worktree)"): kept as refs/ward-pi/kept/$stamp/$name"
			fi
		elif [ -n "$busy" ]; then
			hgit update-ref "refs/ward-pi/kept/$stamp/$name" "$new"
			say "$name: kept as refs/ward-pi/kept/$stamp/$name (checked out in another worktree)"
		else
			hgit update-ref -m "ward-pi: the agent's ${name%%/*}" "refs/$name" "$new" ""
			say "$name: new, from the agent ($(short "$new"))"
		fi
	done
	set +f
	git_import_head_index "$others" || git_index_follow_head
	hgit for-each-ref --format='delete %(refname)' refs/ward-pi/incoming | hgit update-ref --stdin
}

# When the agent's index is not taken, but ward-pi moved the person's HEAD
# (a fast-forward of its branch, or HEAD itself) and the person's index is
# as the session found it: the index follows HEAD, the agent's changes stay
# in the work tree, unstaged (an index left at the old HEAD would stage the
# agent's commits in reverse, for the person's next commit to undo).
git_index_follow_head() {
	[ "$(hgit rev-parse --verify -q HEAD || echo none)" != "$(cat "$state/start.commit")" ] || return 0
	[ "$(git_index_sum)" = "$(cat "$state/start.index")" ] || return 0
	if hgit read-tree --reset HEAD; then
		say "index: follows HEAD; the agent's uncommitted changes are in the work tree, unstaged"
	fi
}

# HEAD and the index, from the index commit's message and tree: only when
# the person's HEAD and index are as the session found them (else theirs
# stand and the agent's are named), and never a new gitlink (a submodule
# whose .git the agent made would be run by the person's git status).
git_import_head_index() {
	ic=refs/ward-pi/incoming/ward-pi/index
	hgit rev-parse -q --verify "$ic" > /dev/null || return 0
	msg=$(hgit log -1 --format=%B "$ic")
	head=$(printf '%s\n' "$msg" | sed -n 's/^HEAD //p' | head -n 1)
	starthead=$(cat "$state/start.head" 2>/dev/null || :)
	nowhead=$(hgit symbolic-ref -q HEAD || hgit rev-parse --verify -q HEAD || :)
	target=""
	case "$head" in
	"ref: refs/heads/"*)
		target=${head#ref: }
		hgit check-ref-format "$target" && hgit show-ref -q --verify "$target" || target=""
		;;
	*)
		d=$(hgit rev-parse -q --verify refs/ward-pi/incoming/ward-pi/head || :)
		[ -z "$d" ] || [ "$d" != "$head" ] || target=$d
		;;
	esac
	if [ -n "$target" ] && [ "$target" != "$nowhead" ]; then
		busy=""
		for o in $1; do [ "$o" != "$target" ] || busy=1; done
		if [ "$nowhead" != "$starthead" ]; then
			say "HEAD: yours moved during the session; the agent's ($target) not taken"
			return 0
		elif [ -n "$busy" ]; then
			say "HEAD: the agent's $target is checked out in another worktree; yours stays"
			return 0
		fi
		case "$target" in
		refs/*) hgit symbolic-ref -m "ward-pi: the agent's HEAD" HEAD "$target" ;;
		*) hgit update-ref --no-deref -m "ward-pi: the agent's HEAD" HEAD "$target" ;;
		esac
		say "HEAD: now $target, as the agent left it"
	fi
	case "$msg" in *"INDEX tree"*) ;; *) say "index: the agent's had unmerged entries; not taken"; return 1 ;; esac
	hc=$(printf '%s\n' "$msg" | sed -n 's/^HEADCOMMIT //p' | head -n 1)
	if [ "$hc" != "$(hgit rev-parse -q --verify HEAD || echo none)" ]; then
		say "index: the agent's belongs to a HEAD yours is not at ($(short "$hc")); not taken"
		return 1
	fi
	tree=$(hgit rev-parse "$ic^{tree}")
	[ "$tree" != "$(hgit write-tree 2>/dev/null)" ] || return 0
	if [ "$(git_index_sum)" != "$(cat "$state/start.index")" ]; then
		say "index: yours changed during the session; the agent's staged work not taken (its tree: $(short "$tree"))"
		return 0
	fi
	git_gitlinks "$tree" > "$state/end.gitlinks"
	new=$(LC_ALL=C comm -13 "$state/start.gitlinks" "$state/end.gitlinks" | head -n 3 | tr '\n' ' ')
	if [ -n "$new" ]; then
		say "index: the agent staged a new submodule ($new): not taken"
		return 1
	fi
	# (--reset: the person's index is older than the work tree the agent
	# left; stat data is kept where an entry matches)
	if ! hgit read-tree --reset "$tree"; then
		say "index: git would not read the agent's ($(short "$tree")); not taken"
		return 1
	fi
	# (no refresh here: it would run the person's clean filters on the
	# agent's files; their next git status refreshes as it always does)
	say "index: as the agent left it (staged work included)"
}

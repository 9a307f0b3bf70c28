#!/bin/sh
# The two set-up commands of README.md, for a fresh Debian 12 machine (as root):
#   ./dev.sh demo    install the dependencies, build ward and the reference image, run the
#                    main job: a real sandboxed Pi session (prompt, bash tool, MCP tool)
#   ./dev.sh check   install build and test dependencies, build, run every test
set -eu
cd "$(dirname "$0")"
case "${1:-}" in
demo)
	scripts/install-deps.sh build image
	make -j2
	make demo
	;;
check)
	scripts/install-deps.sh build test image
	make -j2 check-build
	make check
	;;
*)
	echo "usage: ./dev.sh demo | check" >&2
	exit 2
	;;
esac

#!/bin/sh
# Installs what ward needs from Debian 12's packages (the CI machine is bare).
#   scripts/install-deps.sh build        compiler and static libraries
#   scripts/install-deps.sh build test   also the test tools and the anchors
#   scripts/install-deps.sh image        what building and running the reference image takes
set -eu
pkgs=""
for what in "$@"; do
	case "$what" in
	build) pkgs="$pkgs make gcc lld libc6-dev libinih-dev libjansson-dev libseccomp-dev libcap-ng-dev
	             libmbedtls-dev libhttp-parser-dev libc-ares-dev libyajl-dev pkg-config" ;;
	test) pkgs="$pkgs python3 util-linux procps bash coreutils gawk tini dumb-init catatonit
	            clang libclang-rt-14-dev valgrind runc crun runsc podman uidmap umoci docker.io tar strace qemu-system-x86 cpio
	            jq man-db cppcheck clang-tidy shellcheck git tmux containerd python3-yaml curl openssl" ;;
	bench) pkgs="$pkgs hyperfine socat runc runsc umoci gnuplot-nox" ;;
	image) pkgs="$pkgs mmdebstrap skopeo docker.io openssl ca-certificates tar" ;;
	*) echo "install-deps: unknown set '$what' (build, test, bench)" >&2; exit 2 ;;
	esac
done
# npm fetches the pinned Node 22 for the tests; Debian's is fine for that
case " $* " in *" test "* | *" image "*) command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm" ;; esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null

#!/bin/sh
# Downloads (does not install) Debian's current kernel package into DIR, for
# the VM test: its vmlinuz and vsock modules are extracted from the .deb.
set -eu
dir=${1:-build/vm}
mkdir -p "$dir"
ls "$dir"/linux-image-*.deb >/dev/null 2>&1 && exit 0
pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$pkg" ] || { echo "fetch-kernel: no linux-image package known to apt (apt-get update?)" >&2; exit 1; }
cd "$dir" && apt-get download -q "$pkg" 2>/dev/null

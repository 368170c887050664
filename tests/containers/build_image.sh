#!/usr/bin/env bash
# Fixture: gives this build folder its own podman state (storage, run and
# temporary folders under PODMAN_DIR, set up by lib.sh's use_own_podman), so
# that the checks see only their own containers and images, whatever else
# uses podman on the machine, and builds hysim's own image there once.
# usage: build_image.sh CONTAINERS_DIR PODMAN_DIR
set -euo pipefail
CONTAINERS_DIR=$1 PODMAN_DIR=$2
. "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || fail "podman is not installed (tools/install-deps.sh installs it)"
use_own_podman
if podman image exists localhost/hysim-host; then
  echo "image localhost/hysim-host already built in $PODMAN_DIR"
else
  "$CONTAINERS_DIR/build-image.sh" localhost/hysim-host
fi
require_podman
echo ok

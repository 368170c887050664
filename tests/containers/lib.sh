# Helpers for the container checks (sourced).

fail() { echo "FAIL: $*"; exit 1; }

# use_own_podman: points podman at PODMAN_DIR (storage, run and temporary folders)
# with hysim's settings, so that nothing outside this build folder is seen or touched.
use_own_podman() {
  mkdir -p "$PODMAN_DIR"
  cat > "$PODMAN_DIR/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$PODMAN_DIR/storage"
runroot = "$PODMAN_DIR/run"
CONF
  { cat "$CONTAINERS_DIR/containers.conf"; printf '\n# this build folder only\ntmp_dir = "%s/tmp"\n' "$PODMAN_DIR"; } \
    > "$PODMAN_DIR/containers.conf"
  export CONTAINERS_CONF=$PODMAN_DIR/containers.conf CONTAINERS_STORAGE_CONF=$PODMAN_DIR/storage.conf
}

# require_podman: fails (never skips) with the reason when podman cannot run containers here.
require_podman() {
  command -v podman >/dev/null || fail "podman is not installed (tools/install-deps.sh installs it)"
  use_own_podman
  local out
  out=$(podman run --rm --network none -v /usr:/usr:ro localhost/hysim-host /bin/true 2>&1) ||
    fail "podman cannot run a container here: $out"
}

# podman_state: what a run may leave behind — containers, networks, images.
podman_state() {
  podman ps -a --format '{{.ID}} {{.Names}}' | sort
  podman network ls --format '{{.Name}}' | sort
  podman images --format '{{.ID}} {{.Repository}}:{{.Tag}}' | sort
}

# running_hysim_containers: names of the running containers hysim started (label hysim.run).
running_hysim_containers() {
  podman ps --filter label=hysim.run --filter status=running --format '{{.Names}}'
}

#!/usr/bin/env bash
# Make a Docker engine answer on this machine, for the docker-marked tests and `make images`.
#
# Idempotent: does nothing when an engine already answers. Otherwise installs Debian's
# docker.io when dockerd is missing (root only), starts dockerd in the background and waits
# for it to answer on its socket. Exit 0 when an engine answers; otherwise exit 1 with the
# reason on stderr (the tests then skip, quoting it). Honours DOCKER_HOST.
#
#   ENVGEN_DOCKERD_LOG      dockerd's log file (default /tmp/envgen-dockerd.log)
#   ENVGEN_DOCKER_WAIT_S    how long to wait for a started dockerd (default 60)
set -uo pipefail

LOG=${ENVGEN_DOCKERD_LOG:-/tmp/envgen-dockerd.log}
WAIT_S=${ENVGEN_DOCKER_WAIT_S:-60}
SOCK=/var/run/docker.sock

say() { echo "ensure-docker: $*" >&2; }

dockerd_running() {  # /proc rather than pgrep: procps may not be installed
    local comm
    for comm in /proc/[0-9]*/comm; do
        [[ "$(cat "$comm" 2>/dev/null)" == dockerd ]] && return 0
    done
    return 1
}

engine_answers() {
    command -v docker >/dev/null 2>&1 && timeout 10 docker version >/dev/null 2>&1
}

if engine_answers; then
    exit 0
fi

if [[ -n "${DOCKER_HOST:-}" && "${DOCKER_HOST}" != "unix://${SOCK}" ]]; then
    say "no engine answers at DOCKER_HOST=${DOCKER_HOST}; not starting a local dockerd for it"
    exit 1
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]]; then
        say "dockerd is not installed and this is not root: install docker.io (apt-get install docker.io) or start an engine"
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        say "dockerd is not installed and apt-get is not available to install docker.io"
        exit 1
    fi
    say "installing Debian's docker.io (about 20 s)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null; }; then
        say "apt-get install docker.io failed"
        exit 1
    fi
    hash -r
fi

if engine_answers; then  # the package's service may have started it
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    say "no engine answers and only root can start dockerd here: run 'sudo dockerd &' or start the docker service"
    exit 1
fi

if ! dockerd_running; then
    say "starting dockerd in the background (log: ${LOG})"
    # setsid: dockerd must outlive make and the shell that started it.
    setsid nohup dockerd >"${LOG}" 2>&1 </dev/null &
fi

for ((i = 0; i < WAIT_S * 4; i++)); do
    if [[ -S "${SOCK}" ]] && engine_answers; then
        exit 0
    fi
    if ! dockerd_running; then
        say "dockerd exited; last lines of ${LOG}:"
        tail -n 20 "${LOG}" >&2 2>/dev/null
        exit 1
    fi
    sleep 0.25
done
say "dockerd did not answer on ${SOCK} within ${WAIT_S} s; last lines of ${LOG}:"
tail -n 20 "${LOG}" >&2 2>/dev/null
exit 1

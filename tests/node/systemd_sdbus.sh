#!/usr/bin/env bash
# shimkeeper's sd-bus edge against a real systemd user manager and a real containerd: runs the
# GoogleTest binary test_systemd_sdbus inside the node harness (it skips itself elsewhere), then
# checks from outside that containerd came through the restarts healthy.
# containerd-lines: 1.6
# (the sd-bus edge is the same whatever containerd runs behind the unit: one line is enough)
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_harness.sh"
node_reexec_in_namespace "$@"

test_binary=${SHIMKEEPER_BUILD_DIR:?}/tests/test_systemd_sdbus
[[ -x $test_binary ]] || node_skip "$test_binary is not built (cmake --build ... --target test_systemd_sdbus)"

node_up "$(mktemp -d /tmp/sknode.XXXXXX)"

units=$XDG_CONFIG_HOME/systemd/user
# Fails the way a containerd with a fatal config does: the main process exits before READY=1.
cat >"$units/sk-fail.service" <<'UNIT'
[Service]
Type=notify
ExecStart=/bin/sh -c 'exit 3'
UNIT
# Never sends READY=1: its start job stays running.
cat >"$units/sk-slow.service" <<'UNIT'
[Service]
Type=notify
NotifyAccess=none
ExecStart=/bin/sleep 600
TimeoutStartSec=infinity
UNIT
# A tiny start limit, hit by the third restart within the hour (systemd exempts oneshot units
# that exit at once, so this one keeps running).
cat >"$units/sk-limited.service" <<'UNIT'
[Unit]
StartLimitBurst=2
StartLimitIntervalSec=1h
[Service]
Type=simple
ExecStart=/bin/sleep 600
UNIT
systemctl --user daemon-reload

invocation_before=$(node_unit_prop InvocationID)
SHIMKEEPER_TEST_USER_BUS=1 \
    SHIMKEEPER_TEST_FAILING_UNIT=sk-fail.service \
    SHIMKEEPER_TEST_SLOW_UNIT=sk-slow.service \
    SHIMKEEPER_TEST_LIMITED_UNIT=sk-limited.service \
    "$test_binary" --gtest_brief=1
systemctl --user stop sk-slow.service sk-limited.service

# The test restarted containerd through sd-bus: systemd and containerd both agree it is back.
node_wait_active 20
if [[ $(node_unit_prop InvocationID) == "$invocation_before" ]]; then
    echo "FAIL: containerd.service kept its InvocationID across the sd-bus restart" >&2
    exit 1
fi
echo "ok: containerd restarted through sd-bus is active and answers on $NODE_SOCKET"

#!/usr/bin/env bash
# A bus that drops fresh connections (a loaded dbus-daemon was seen closing two in a row during
# the handshake): the apply opens the bus again and installs as usual, restarting containerd once,
# instead of rolling back. A relay in front of the harness's bus closes the first two connections.
# The sd-bus edge is the same whatever containerd runs behind the unit: one line is enough.
# containerd-lines: 1.6
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare demo v1
node_count_starts

relay=$T/dropping-bus
"$SHIMKEEPER_SOURCE_DIR/tests/support/dropping_bus_relay.py" "$relay" "$XDG_RUNTIME_DIR/bus" 2 \
    "$T/relay.accepted" >"$T/relay.log" 2>&1 &
sk_track $!
node_wait_for 10 test -S "$relay" || fail "the relay did not listen on $relay; see $T/relay.log"

DBUS_SESSION_BUS_ADDRESS=unix:path=$relay expect_exit 0 ski apply
expect_output_contains "Committed generation 1"
[[ "$(node_handler_binary demo)" == */containerd-shim-demo-v2 ]] ||
    fail "CRI does not serve handler demo after the apply: '$(node_handler_binary demo)'"
(($(node_starts) == 1)) || fail "containerd.service started $(node_starts) times, not once"
accepted=$(cat "$T/relay.accepted")
((accepted >= 3)) || fail "the apply connected $accepted times through the relay; the test needs" \
    "it to meet both dropped connections"
echo "ok: two dropped bus connections, the apply connected again and installed with one restart"

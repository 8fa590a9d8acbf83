#!/usr/bin/env python3
"""Writes each node's own Node three times, as its agent would, and nothing else.

    node_write_floor.py SERVER CA PKI NODES PID...

For node-0 .. node-(NODES-1): three merge patches of its Node's annotations (one set, one
changed, one removed: the Node ends as it began), each through that node's own kubelet-style
client certificate (PKI/node-node-<i>/kubelet-client-current.pem, key and certificate in one
file) over one kept-alive connection per node, all connected before the first patch (an agent's
connection outlives its rollouts: its TLS handshake is not a rollout's cost). Three is what a node writes per rollout in this
protocol (its slot request, the take with `installing`, the report with the release), and what
the starting revision wrote on its Node too: the bench sets kube-apiserver and etcd's CPU over
these writes against its starting figure, the floor this protocol cannot go below. The
annotation's key is no shimkeeper key, so no agent or coordinator acts on it; the value is about
the size of a slot entry. Prints "PATCHES SECONDS TICKS": the patches, their wall time and the
CPU ticks the processes PID... (kube-apiserver, etcd) used meanwhile; a refused patch fails it.
"""
import http.client
import json
import ssl
import sys
import time
import urllib.parse

KEY = "bench.shimkeeper.example/floor"


def connected(server, ca, pki, node):
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(certfile="%s/node-%s/kubelet-client-current.pem" % (pki, node))
    url = urllib.parse.urlsplit(server)
    connection = http.client.HTTPSConnection(url.hostname, url.port, context=context)
    connection.connect()
    return connection


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        with open("/proc/%s/stat" % pid) as stat:
            fields = stat.read().rpartition(")")[2].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def patch_three_times(connection, node):
    for value in ("x" * 200, "y" * 200, None):
        body = json.dumps({"metadata": {"annotations": {KEY: value}}})
        connection.request("PATCH", "/api/v1/nodes/" + node, body,
                           {"Content-Type": "application/merge-patch+json"})
        response = connection.getresponse()
        text = response.read()
        if response.status != 200:
            sys.exit("node_write_floor: PATCH of %s: HTTP %d: %s" % (node, response.status, text[:300]))


def main(server, ca, pki, nodes, pids):
    names = ["node-%d" % i for i in range(nodes)]
    connections = [connected(server, ca, pki, name) for name in names]
    ticks, started = cpu_ticks(pids), time.monotonic()
    for connection, name in zip(connections, names):
        patch_three_times(connection, name)
    print("%d %.3f %d" % (3 * nodes, time.monotonic() - started, cpu_ticks(pids) - ticks))
    for connection in connections:
        connection.close()


if __name__ == "__main__":
    if len(sys.argv) < 6:
        sys.exit("usage: node_write_floor.py SERVER CA PKI NODES PID...")
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:])

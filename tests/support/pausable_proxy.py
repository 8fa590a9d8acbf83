#!/usr/bin/env python3
"""A TCP proxy that can be paused, for tests that cut one client off from a server without
closing anything (the shape of a network partition: requests hang, nothing is refused).

    pausable_proxy.py TARGET_HOST TARGET_PORT PORT_FILE STATE_FILE [LISTEN_HOST]

Listens on LISTEN_HOST (default 127.0.0.1; an address that need not exist yet, as a bridge's that
CNI adds with the first Pod) on an ephemeral port, written to PORT_FILE once listening, and
forwards every
connection to TARGET_HOST:TARGET_PORT, bytes unchanged (TLS passes through). SIGUSR1 pauses it:
no byte moves in either direction and new connections wait; SIGUSR2 resumes, and what was held
goes on. SIGHUP severs the connections open at that moment, the way a peer gone without a reset
(a NAT or load balancer that forgot them) does: whatever either side sends on them is dropped
from then on, nothing is closed, and later connections are forwarded as usual. STATE_FILE says
"running", "paused" or "severed" once the signal has taken effect."""
import os
import select
import signal
import socket
import sys
import threading

# Linux's IP_FREEBIND (Python's socket module does not name it): bind before the address exists.
IP_FREEBIND = 15

running = threading.Event()
running.set()
# Connections are numbered as accepted; those numbered below `severed_below` are severed.
counter = {"next": 0, "severed_below": 0}


def say(state_file, state):
    tmp = state_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(state + "\n")
    os.rename(tmp, state_file)


def pump(source, sink, number):
    try:
        while True:
            running.wait()
            readable, _, _ = select.select([source], [], [], 0.2)
            if not readable:
                continue
            data = source.recv(65536)
            if not data:
                break
            running.wait()  # read just before a pause: held until the resume
            if number < counter["severed_below"]:
                continue  # severed: dropped, and the sender is told nothing
            sink.sendall(data)
    except OSError:
        pass
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, target, number):
    running.wait()
    try:
        upstream = socket.create_connection(target)
    except OSError:
        client.close()
        return
    threading.Thread(target=pump, args=(client, upstream, number), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client, number), daemon=True).start()


def main():
    host, port, port_file, state_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    listen_host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"

    def pause(*_):
        running.clear()
        say(state_file, "paused")

    def resume(*_):
        running.set()
        say(state_file, "running")

    def sever(*_):
        counter["severed_below"] = counter["next"]
        say(state_file, "severed")

    signal.signal(signal.SIGUSR1, pause)
    signal.signal(signal.SIGUSR2, resume)
    signal.signal(signal.SIGHUP, sever)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
    listener.bind((listen_host, 0))
    listener.listen()
    say(state_file, "running")
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(tmp, port_file)
    while True:
        client, _ = listener.accept()
        number = counter["next"]
        counter["next"] += 1
        threading.Thread(target=serve, args=(client, (host, port), number), daemon=True).start()


main()

#!/usr/bin/env python3
"""A unix-socket relay in front of a D-Bus socket that closes the first N connections it accepts
at once (the way a loaded dbus-daemon was seen to drop fresh connections) and relays the rest
byte for byte. Prints the number of connections accepted so far into COUNT_FILE.

usage: dropping_bus_relay.py LISTEN_PATH TARGET_PATH DROP_FIRST COUNT_FILE
"""
import os
import socket
import sys
import threading


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    listen_path, target_path, drop_first, count_file = sys.argv[1:5]
    drop_first = int(drop_first)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(listen_path)
    server.listen(16)
    accepted = 0
    while True:
        client, _ = server.accept()
        accepted += 1
        with open(count_file + ".tmp", "w") as f:
            f.write(f"{accepted}\n")
        os.replace(count_file + ".tmp", count_file)
        if accepted <= drop_first:
            client.close()
            continue
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(target_path)
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


main()

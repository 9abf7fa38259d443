#!/usr/bin/env python3
"""Relays one PostgreSQL Unix socket to another and counts what the server
sends: the bytes a client read from that server, measured rather than
estimated. Serves until killed; on SIGTERM writes the total to COUNT_FILE.

    byte_relay.py LISTEN_SOCKET SERVER_SOCKET COUNT_FILE
"""
import os
import selectors
import signal
import socket
import sys

listen_path, server_path, count_path = sys.argv[1:4]
received = 0


def stop(*_):
    with open(count_path, "w") as f:
        f.write(f"{received}\n")
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
if os.path.exists(listen_path):
    os.unlink(listen_path)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(listen_path)
listener.listen(16)
selector = selectors.DefaultSelector()
selector.register(listener, selectors.EVENT_READ, None)
peers = {}

while True:
    for key, _ in selector.select():
        if key.data is None:
            client, _ = listener.accept()
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(server_path)
            peers[client], peers[server] = server, client
            selector.register(client, selectors.EVENT_READ, "client")
            selector.register(server, selectors.EVENT_READ, "server")
            continue
        sock = key.fileobj
        data = sock.recv(1 << 16)
        other = peers.get(sock)
        if not data:
            for s in (sock, other):
                selector.unregister(s)
                peers.pop(s, None)
                s.close()
            continue
        if key.data == "server":
            received += len(data)
        other.sendall(data)

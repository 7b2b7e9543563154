#!/usr/bin/env python3
"""tests/impi/remote-exec.py: the remote launcher Intel MPI's hydra uses between two test guests,
which have no ssh (hydra: -bootstrap rsh -bootstrap-exec remote-exec.py).

  remote-exec.py --serve ADDRESS PORT    on the peer: run the commands sent to ADDRESS:PORT, until
                                         --quit (or the guest ends)
  remote-exec.py HOST COMMAND...         as hydra calls its rsh: run COMMAND (the words joined,
                                         read by sh, as rsh's remote shell reads them) on HOST's
                                         server, relaying its stdout and stderr; exits with its
                                         status. Connecting is retried for IMPI_REMOTE_WAIT
                                         seconds (default 300: the peer guest may still boot).
  remote-exec.py --quit HOST             stops HOST's server

The port is IMPI_REMOTE_PORT (default 7519) for the client forms. When the client's connection
ends before the command did (hydra killed its launcher), the server kills the command's process
group. A test harness only: no authentication, meant for a private link between two guests.
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

OUT, ERR, EXIT = 1, 2, 3  # frame channels: server -> client


def send_frame(sock, lock, channel, data):
    with lock:
        sock.sendall(struct.pack("!BI", channel, len(data)) + data)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def serve_one(conn):
    lock = threading.Lock()
    header = recv_exact(conn, 4)
    if header is None:
        conn.close()
        return False
    command = recv_exact(conn, struct.unpack("!I", header)[0])
    if command is None:
        conn.close()
        return False
    if command == b"\0quit":
        conn.close()
        return True
    proc = subprocess.Popen(["/bin/sh", "-c", command.decode()], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    def pump(stream, channel):
        for data in iter(lambda: os.read(stream.fileno(), 65536), b""):
            try:
                send_frame(conn, lock, channel, data)
            except OSError:
                break

    def watch_client():
        # the client sends nothing more: end of stream means it is gone
        try:
            conn.recv(1)
        except OSError:
            pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    pumps = [threading.Thread(target=pump, args=(proc.stdout, OUT)),
             threading.Thread(target=pump, args=(proc.stderr, ERR))]
    for t in pumps:
        t.start()
    threading.Thread(target=watch_client, daemon=True).start()
    status = proc.wait()
    for t in pumps:
        t.join()
    try:
        send_frame(conn, lock, EXIT, struct.pack("!i", status if status >= 0 else 128 - status))
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    conn.close()
    return False


def serve(address, port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(16)
    print(f"remote-exec: serving on {address}:{port}", flush=True)
    quit_event = threading.Event()

    def handle(conn):
        if serve_one(conn):
            quit_event.set()
            # wake the accept below
            socket.create_connection((address, port)).close()

    while not quit_event.is_set():
        conn, _ = listener.accept()
        if quit_event.is_set():
            conn.close()
            break
        threading.Thread(target=handle, args=(conn,), daemon=True).start()
    print("remote-exec: stopped", flush=True)


def connect(host, port):
    deadline = time.monotonic() + float(os.environ.get("IMPI_REMOTE_WAIT", "300"))
    while True:
        try:
            return socket.create_connection((host, port), timeout=10)
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit(f"remote-exec: cannot reach {host}:{port}: {e}")
            time.sleep(1)


def run(host, port, command):
    sock = connect(host, port)
    sock.settimeout(None)
    data = command.encode()
    sock.sendall(struct.pack("!I", len(data)) + data)
    if command == "\0quit":
        sock.close()
        return 0
    outs = {OUT: sys.stdout.buffer, ERR: sys.stderr.buffer}
    while True:
        header = recv_exact(sock, 5)
        if header is None:
            sys.stderr.write(f"remote-exec: {host} ended the connection without an exit status\n")
            return 255
        channel, length = struct.unpack("!BI", header)
        payload = recv_exact(sock, length)
        if payload is None:
            return 255
        if channel == EXIT:
            return struct.unpack("!i", payload)[0]
        outs[channel].write(payload)
        outs[channel].flush()


def main(argv):
    port = int(os.environ.get("IMPI_REMOTE_PORT", "7519"))
    if len(argv) == 4 and argv[1] == "--serve":
        serve(argv[2], int(argv[3]))
        return 0
    if len(argv) == 3 and argv[1] == "--quit":
        return run(argv[2], port, "\0quit")
    if len(argv) >= 3 and not argv[1].startswith("-"):
        return run(argv[1], port, " ".join(argv[2:]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

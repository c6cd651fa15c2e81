#!/usr/bin/env python3
"""A streaming-socket client with a small, fixed receive buffer (SO_RCVBUF set before connecting, which
also stops the kernel from growing it), for tests of what the gateway does when a client falls behind.
Node cannot set SO_RCVBUF on a TCP socket, and without it a client that stops reading lets its kernel
take megabytes before the gateway's side sees any backpressure.

  slow-ws-client.py <host> <port> <path?query>

It sends the customer's audio (`audio.input`, 100 ms of 440 Hz mu-law every 100 ms) from the start and
reads nothing until a line `read` arrives on stdin; from then on it prints one line per text message,
its JSON as received. A line `quit` closes the socket.
"""
import base64
import json
import math
import os
import select
import socket
import struct
import sys
import time

host, port, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
sock.connect((host, port))
key = base64.b64encode(os.urandom(16)).decode()
sock.sendall(
    (f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
head = b""
while b"\r\n\r\n" not in head:
    chunk = sock.recv(1)
    if not chunk:
        sys.exit("closed during the handshake")
    head += chunk
if not head.startswith(b"HTTP/1.1 101"):
    sys.exit(f"upgrade refused: {head.splitlines()[0]!r}")
print(json.dumps({"type": "client.connected"}), flush=True)


def send_text(text):
    data = text.encode()
    mask = os.urandom(4)
    n = len(data)
    header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n))
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def mulaw(sample):
    sign = 0x80 if sample < 0 else 0
    sample = min(abs(sample), 32635) + 0x84
    exponent = max(0, sample.bit_length() - 8)
    return ~(sign | (exponent << 4) | ((sample >> (exponent + 3)) & 0x0F)) & 0xFF


tone = bytes(mulaw(int(8000 * math.sin(2 * math.pi * 440 * i / 8000))) for i in range(800))
payload = base64.b64encode(tone).decode()

buffer = b""


def read_messages():
    """Prints every complete text frame received so far."""
    global buffer
    while True:
        if len(buffer) < 2:
            return
        length, offset = buffer[1] & 0x7F, 2
        if length == 126:
            if len(buffer) < 4:
                return
            length, offset = struct.unpack("!H", buffer[2:4])[0], 4
        elif length == 127:
            if len(buffer) < 10:
                return
            length, offset = struct.unpack("!Q", buffer[2:10])[0], 10
        if len(buffer) < offset + length:
            return
        opcode, body = buffer[0] & 0x0F, buffer[offset:offset + length]
        buffer = buffer[offset + length:]
        if opcode == 1:
            print(body.decode(), flush=True)
        elif opcode == 9:  # ping: answer, or the gateway's heartbeat drops us
            sock.sendall(bytes([0x8A, 0x80 | len(body)]) + b"\0\0\0\0" + body)
        elif opcode == 8:
            sys.exit(0)


reading = False
sequence = 0
next_send = time.monotonic()
while True:
    now = time.monotonic()
    if now >= next_send:
        sequence += 1
        send_text(json.dumps({"type": "audio.input", "sequence": sequence, "timestamp_ms": sequence * 100, "speaker": "customer",
                              "audio": {"encoding": "mulaw", "sample_rate_hz": 8000, "payload": payload}}))
        next_send += 0.1
    watch = [sys.stdin] + ([sock] if reading else [])
    ready, _, _ = select.select(watch, [], [], max(0.0, next_send - time.monotonic()))
    if sys.stdin in ready:
        line = sys.stdin.readline().strip()
        if line in ("read", "pause"):
            reading = line == "read"
        elif line in ("quit", ""):
            sock.close()
            sys.exit(0)
    if sock in ready:
        data = sock.recv(65536)
        if not data:
            sys.exit(0)
        buffer += data
        read_messages()

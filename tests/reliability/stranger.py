"""A stranger on hysimd's socket (HYSIM_ENDPOINT's path, or the first argument), not a part of the program:
  stranger.py churn N          opens and closes N connections one after another, each sending one frame that
                               is not a Register, so that hysimd reads and refuses each before the next opens
  stranger.py silent N SECONDS holds N connections that never send a byte, each replaced every second, for
                               SECONDS (hysimd may refuse some: past its open-file limit, or its cap)
  stranger.py flood N          N connections at once, each announcing a 16 MiB frame and sending all its
                               bytes but the last
Run it outside LD_PRELOAD's libhysim (env -u LD_PRELOAD): its sleeps and clocks are then the machine's."""
import os
import socket
import struct
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def churn(path, n):
    for _ in range(n):
        s = connect(path)
        s.sendall(struct.pack("<I", 1) + b"\x07")  # one frame hysimd cannot read as a Register: it closes
        s.settimeout(10)
        assert s.recv(1) == b"", "hysimd kept the connection"
        s.close()
    print(f"churn: {n} connections refused and closed", flush=True)


def silent(path, n, seconds):
    end = time.monotonic() + seconds
    held = []
    while time.monotonic() < end:
        for s in held:
            s.close()
        held = []
        for _ in range(n):
            try:
                held.append(connect(path))
            except OSError:
                break  # the run is over (its socket is gone), or the backlog is full
        time.sleep(1)


def flood(path, n):
    """Every connection stops one byte short of its frame and stays open: a reader that takes such frames holds
    all of them at once."""
    frame = 16 << 20
    conns = [connect(path) for _ in range(n)]
    chunk = b"\0" * (1 << 20)
    for s in conns:
        s.settimeout(5)
        try:
            s.sendall(struct.pack("<I", frame))
            for _ in range(frame // len(chunk) - 1):
                s.sendall(chunk)
            s.sendall(chunk[:-1])
        except OSError:
            pass  # hysimd closed it: what should happen
    closed = 0
    for s in conns:
        try:
            closed += s.recv(1) == b""
        except OSError:
            closed += 1
        s.close()
    print(f"flood: {closed} of {n} connections closed by hysimd", flush=True)


def main():
    args = sys.argv[1:]
    path = os.environ.get("HYSIM_ENDPOINT", "")
    if args and args[0].startswith("unix:"):
        path = args.pop(0)
    path = path[len("unix:"):]
    mode = args[0]
    if mode == "churn":
        churn(path, int(args[1]))
    elif mode == "silent":
        silent(path, int(args[1]), float(args[2]))
    elif mode == "flood":
        flood(path, int(args[1]))
    else:
        sys.exit(f"stranger.py: unknown mode {mode}")


if __name__ == "__main__":
    main()

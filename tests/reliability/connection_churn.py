"""Opens and closes 1,200 connections to hysimd (HYSIM_ENDPOINT), each sending one frame that is
not a Register, so that hysimd accepts, reads and refuses every one before the next opens."""
import os, socket, struct
path = os.environ["HYSIM_ENDPOINT"][len("unix:"):]
for i in range(1200):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(struct.pack("<I", 1) + b"\x07")  # one frame hysimd cannot read as a Register: it closes
    s.settimeout(10)
    assert s.recv(1) == b"", "hysimd kept the connection"
    s.close()
print("churn: 1200 connections refused and closed")

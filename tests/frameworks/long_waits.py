"""After a framework test failed: the longest waits of its processes' threads in hysim's trace (hysim run --out),
with when each began and what it waited for, to tell which wait moved a process's clock.
usage: long_waits.py RUN_DIR [COUNT]"""
import json
import sys

run, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
with open(f"{run}/trace.json") as f:
    events = json.load(f)["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
waits = [e for e in events if e.get("ph") == "X" and names.get(e["pid"], "").startswith("host")]
waits.sort(key=lambda e: -e["dur"])
print(f"long_waits: the {min(count, len(waits))} longest of {len(waits)} waits in {run}/trace.json")
for e in waits[:count]:
    print(f"  {e['dur'] / 1e3:10.3f} ms from {e['ts'] / 1e3:10.3f} ms  {names[e['pid']]}: {e['name']}")

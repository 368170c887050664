"""Merges hysim profile databases (the format of docs/compute.md, "The profile database") into one.

A key found in several takes the median of their times (each run measured the
same kernel at the same launch size). usage: merge_profiles.py OUT IN...
"""
import statistics
import sys


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    times = {}
    for path in inputs:
        with open(path) as f:
            first = f.readline().rstrip("\r\n")
            if first != "# hysim-profile 1":
                sys.exit(f"{path}: not a hysim profile database (first line {first!r})")
            for line in f:
                line = line.rstrip("\r\n")
                if not line or line.startswith("#"):
                    continue
                fields = line.split(",")
                if len(fields) != 10:
                    sys.exit(f"{path}: {line!r}: not 10 fields")
                times.setdefault(tuple(fields[:9]), []).append(float(fields[9]))
    with open(out, "w") as f:
        f.write("# hysim-profile 1\n")
        f.write("# gpu,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,shared_bytes,us\n")
        f.write(f"# merged from {len(inputs)} databases by bench/real/merge_profiles.py: the median of a key's times\n")
        for key in sorted(times):
            f.write(",".join(key) + f",{statistics.median(times[key]):.4f}\n")
    print(f"{out}: {len(times)} keys from {len(inputs)} databases")


if __name__ == "__main__":
    main()

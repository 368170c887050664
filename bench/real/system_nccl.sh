# Sourced by the bench/real scripts: finds the host's own NCCL, not a copy
# inside a Python package (torch's site-packages bundle one), and sets inc (its
# include folder) and lib (its library folder), with lib first on
# LD_LIBRARY_PATH, so that the programs built with nvcc run against it.
inc=$(dirname "$(find / -name nccl.h -path '*include*' -not -path '*/site-packages/*' 2>/dev/null | head -1)")
lib=$(dirname "$(find / -name 'libnccl.so.2*' -not -path '*/site-packages/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}

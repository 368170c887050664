# Helpers for the reliability checks (sourced).

# alive PID: the process exists and is not a zombie waiting to be reaped.
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# now: real seconds with fractions.
now() { date +%s.%N; }

# elapsed START: seconds since START, as a decimal.
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# wait_for_file PATH SECONDS: 0 once PATH exists, 1 after SECONDS.
wait_for_file() {
  local deadline=$(( $(date +%s) + $2 ))
  while [[ ! -s $1 ]]; do
    (( $(date +%s) < deadline )) || return 1
    sleep 0.05
  done
}

# wait_gone PID SECONDS: 0 once PID is no longer alive, 1 after SECONDS.
wait_gone() {
  local deadline
  deadline=$(awk -v a="$(now)" -v s="$2" 'BEGIN { printf "%.3f", a + s }')
  while alive "$1"; do
    awk -v a="$(now)" -v d="$deadline" 'BEGIN { exit !(a > d) }' && return 1
    sleep 0.02
  done
}

fail() { echo "FAIL: $*"; exit 1; }

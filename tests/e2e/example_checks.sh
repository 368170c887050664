# Shared by the training examples' checks (check_mlp_train.sh,
# check_pipeline_parallel.sh, check_tensor_parallel.sh, check_expert_parallel.sh);
# sourced, not run. Each check runs its example under `hysim run --report` on a
# scenario and on the same scenario at half the NVLink rate, then asserts the
# program's step lines, the report's counts against the program's structure,
# and its step time against the report's kernel and communication times.

fail() { echo "FAIL: $*"; exit 1; }

# run_example NAME SCENARIO PROGRAM ARGS...: output in $work/NAME.out, report in $work/NAME.json
run_example() {
    local name=$1 scenario=$2
    shift 2
    "$hysim" run --report "$work/$name.json" "$scenario" -- "$@" >"$work/$name.out" 2>"$work/$name.err" ||
        { cat "$work/$name.err"; fail "$name: hysim run exited $?"; }
}

# report_num NAME SECTION KEY: the number after "KEY": on the report's line that holds "SECTION"
report_num() {
    local v
    v=$(grep -m1 "\"$2\"" "$work/$1.json" | sed -n "s/.*\"$3\": \([-0-9.e]*\).*/\1/p")
    [[ -n $v ]] || fail "$1.json: no $3 in $2"
    echo "$v"
}
# gpu0_num NAME KEY: a number of GPU 0's row in the report
gpu0_num() {
    local v
    v=$(grep -m1 '{"gpu": 0,' "$work/$1.json" | sed -n "s/.*\"$2\": \([-0-9.e]*\).*/\1/p")
    [[ -n $v ]] || fail "$1.json: GPU 0 has no $2"
    echo "$v"
}

expect_eq() { # WHAT GOT WANT
    [[ $2 == "$3" ]] || fail "$1: $2, expected $3"
    echo "ok: $1 = $2"
}

# check_steps NAME STEPS: lines "step i ... host X ms" for i = 0..STEPS-1, each
# time positive, and the last line's mean step the mean of steps 1.. (or of
# step 0 alone); prints that mean in ms.
check_steps() {
    awk -v steps="$2" -v name="$1" '
      /^step / { if ($2 != n) { print name ": step line " n " reads " $0; exit 1 }
                 for (i = 1; i < NF; i++) if ($(i + 1) == "ms" && !($i > 0)) { print name ": time not positive: " $0; exit 1 }
                 for (i = 1; i < NF; i++) if ($i == "host") host = $(i + 1)
                 if (n > 0 || steps == 1) { sum += host; k++ }
                 n++ }
      / mean step / { for (i = 1; i < NF; i++) if ($i == "step") mean = $(i + 1) }
      END { if (n != steps) { print name ": " n " step lines, expected " steps; exit 1 }
            if (mean == "" || mean - sum / k > 0.002 || sum / k - mean > 0.002) {
                print name ": mean step " mean " ms, the steps average " sum / k; exit 1 }
            print mean }' "$work/$1.out" || fail "$1: step lines"
}

# check_half_rate FULL HALF STEPS: at half the NVLink rate the step is longer,
# by no more than the communication time of a step at full rate (halving the
# rate at most doubles it).
check_half_rate() {
    local full half comm
    full=$(check_steps "$1" "$3") half=$(check_steps "$2" "$3")
    comm=$(gpu0_num "$1" communication_s)
    awk -v f="$full" -v h="$half" -v c="$comm" -v s="$3" 'BEGIN {
        limit = c * 1e3 / s + 0.002
        if (!(h > f)) { print "half NVLink rate: step " h " ms, not longer than " f " ms"; exit 1 }
        if (h - f > limit) { print "half NVLink rate: step grows by " h - f " ms, more than a step of communication " limit; exit 1 }
        printf "ok: step %.3f ms, at half NVLink rate %.3f ms (+%.3f <= %.3f ms of communication per step)\n", f, h, h - f, limit
    }' || fail "half-rate scenario"
}

# per_step_compute_ms NAME SETUP_KERNELS GPUS STEPS: the mean over GPUs of the
# kernel time of one step: GEMMs (roofline) and own kernels (default duration),
# without the SETUP_KERNELS own kernels launched before the first step.
per_step_compute_ms() {
    local rt dk dt
    rt=$(grep -m1 '"kernels_by_time_source"' "$work/$1.json" | sed -n 's/.*"roofline": {"kernels": [0-9]*, "time_s": \([-0-9.e]*\)}.*/\1/p')
    dk=$(grep -m1 '"kernels_by_time_source"' "$work/$1.json" | sed -n 's/.*"default": {"kernels": \([0-9]*\), .*/\1/p')
    dt=$(grep -m1 '"kernels_by_time_source"' "$work/$1.json" | sed -n 's/.*"default": {"kernels": [0-9]*, "time_s": \([-0-9.e]*\)}.*/\1/p')
    [[ -n $rt && -n $dk && -n $dt ]] || fail "$1.json: kernels_by_time_source"
    awk -v rt="$rt" -v dk="$dk" -v dt="$dt" -v setup="$2" -v g="$3" -v s="$4" 'BEGIN {
        per = dk > 0 ? dt / dk : 0
        printf "%.6f\n", (rt + (dk - setup) * per) * 1e3 / (g * s) }'
}

# kernel_counts NAME TOTAL GEMMS COPIES COLLECTIVES: the report's counts
kernel_counts() {
    expect_eq "$1: kernels" "$(report_num "$1" counts kernels)" "$2"
    local roofline
    roofline=$(grep -m1 '"kernels_by_time_source"' "$work/$1.json" | sed -n 's/.*"roofline": {"kernels": \([0-9]*\),.*/\1/p')
    expect_eq "$1: GEMMs timed by the roofline" "$roofline" "$3"
    expect_eq "$1: copies" "$(report_num "$1" counts copies)" "$4"
    expect_eq "$1: collectives" "$(report_num "$1" counts collectives)" "$5"
}

# link_bytes NAME LINK: the bytes the report gives for LINK (e.g. gpu0>nvs0)
link_bytes() {
    local v
    v=$(grep -m1 "{\"name\": \"$2\"," "$work/$1.json" | sed -n 's/.*"bytes": \([0-9]*\),.*/\1/p')
    [[ -n $v ]] || fail "$1.json: no link $2"
    echo "$v"
}

# kernel_gap_ms: the launch gap of the scenario ($scenario, compute.kernel_gap_us, which it must state), in ms
kernel_gap_ms() {
    local us
    us=$(sed -n 's/.*kernel_gap_us: *\([0-9.]*\).*/\1/p' "$scenario")
    [[ -n $us ]] || fail "$scenario: no compute.kernel_gap_us"
    awk -v us="$us" 'BEGIN { printf "%.6f\n", us / 1e3 }'
}

# check_serial_step NAME SETUP_KERNELS GPUS STEPS MEMSETS COPIES: for a
# program with one stream per GPU and the same work on every GPU, a step is
# its kernels plus its collectives plus a launch gap before each of its
# kernels but perhaps the first (which may find its stream idle), nothing
# hidden: between that sum and it plus its MEMSETS memsets and COPIES copies
# per GPU (at most 6 us a memset of these sizes, 2.8-5.5 us + its bytes, and
# 4.5 us a copy, 4 us + its bytes; bridge/daemon/timeline.c) and 1 us.
check_serial_step() {
    local step compute comm kernels gap
    step=$(check_steps "$1" "$4")
    compute=$(per_step_compute_ms "$1" "$2" "$3" "$4")
    comm=$(gpu0_num "$1" communication_s)
    kernels=$(report_num "$1" counts kernels)
    gap=$(kernel_gap_ms)
    awk -v s="$step" -v c="$compute" -v m="$comm" -v n="$4" -v k="$(((kernels - $2) / ($3 * $4)))" -v gap="$gap" \
        -v extra="$(awk -v ms="$5" -v cp="$6" 'BEGIN { print ms * 0.006 + cp * 0.0045 + 0.001 }')" 'BEGIN {
        comm = m * 1e3 / n
        if (s < c + comm + (k - 1) * gap - 0.001 || s > c + comm + k * gap + extra) {
            print "step " s " ms, kernels " c " ms + collectives " comm " ms + " k " launch gaps of " gap " ms per step (+ up to " extra " ms of memsets and copies)"; exit 1 }
        printf "ok: step %.3f ms = kernels %.3f ms + collectives %.3f ms + %d launch gaps (+ memsets and copies)\n", s, c, comm, k }' ||
        fail "$1: step time"
}

# check_link_floor NAME LINK BYTES: LINK carried at least BYTES (the payload)
check_link_floor() {
    local got
    got=$(link_bytes "$1" "$2")
    [[ $got -ge $3 ]] || fail "$1: $2 carried $got bytes, less than the $3 bytes of payload"
    echo "ok: $2 carried $got bytes >= $3 bytes of payload"
}

/* How long copies and memsets take (copy_time.h; measurements in bench/RESULTS.md). */
#include "copy_time.h"

#define HS_TIME_MAX UINT64_MAX

/*
 * 2D copies and memsets (cudaMemcpy2D, cudaMemset2D) go row by row: besides
 * their bytes' time they take at least this long per row, which is what
 * bounds narrow rows (measured on an H100, bench/real/pitched_copies_real.sh,
 * bench/RESULTS.md "Pitched memory"). A row narrower than a 32-byte sector
 * written to the GPU costs more (the GPU reads and rewrites the sector).
 */
#define HS_COPY_ROW_PS        1400
#define HS_COPY_SECTOR_ROW_PS 3400
#define HS_COPY_SECTOR_BYTES  32
#define HS_MEMSET_ROW_PS      600

/*
 * Of a host copy's fixed cost (pcie.copy_latency_ns), what remains when it is
 * queued behind other work: a pinned H2D copy then takes 1.2-1.6 us less
 * than one between two events on an H100 and an H200 (4 KiB - 1 MiB,
 * bench/real/pitched_copies_real.sh), so of the 4 us 2.7 remain.
 */
#define HS_COPY_QUEUED_PS 2700000

/*
 * A memset is a kernel of the driver's: a fixed cost, 2.8 us up to 4 KiB and
 * 5.5 us beyond (a different kernel), then its bytes at 95 % of the HBM rate
 * (measured between two events on an H100 and an H200, 1 KiB to 256 MiB,
 * bench/RESULTS.md "Pitched memory"). Queued behind other work, all but
 * 1.5 us of the fixed cost is done while that work runs (back to back a
 * memset takes its bytes and 1.1 to 2.6 us more; behind a copy, 1.7 us:
 * "Driver API programs").
 */
#define HS_MEMSET_SMALL_BYTES 4096
#define HS_MEMSET_SMALL_PS    2800000
#define HS_MEMSET_PS          5500000
#define HS_MEMSET_QUEUED_PS   1500000
#define HS_MEMSET_HBM_SHARE   0.95

/*
 * A cudaMemcpy within one GPU's memory: at least 5.5 us (its kernel's fixed
 * cost), else its bytes read and written at 87 % of the HBM rate (measured
 * between two events on an H100 and an H200, 4 KiB to 256 MiB,
 * bench/real/memcpy_kinds_real.sh, bench/RESULTS.md "Host copies").
 */
#define HS_DEVICE_COPY_PS        5500000
#define HS_DEVICE_COPY_HBM_SHARE 0.87

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* bytes at `gbps` Gb/s, in ps */
static uint64_t bits_ps(uint64_t bytes, double gbps)
{
    if (bytes == 0 || gbps <= 0)
        return 0;
    double ps = (double)bytes * 8000.0 / gbps;
    return ps >= 1.8e19 ? HS_TIME_MAX : (uint64_t)(ps + 0.5);
}

/* bytes moved through HBM at `gBps` GB/s, in ps */
static uint64_t hbm_ps(uint64_t bytes, double gBps) { return bits_ps(bytes, gBps * 8.0); }

/* A 2D op's rows as the wire gives them: 0 or 1, or more rows than bytes, is one contiguous range. */
static uint64_t op_rows(uint64_t rows, uint64_t bytes) { return rows > 1 && rows <= bytes ? rows : 1; }

/* A 2D op's time: its bytes' time or its rows' floor, whichever is longer (rows from op_rows). */
static uint64_t rows_floor_ps(uint64_t bytes_ps, uint64_t rows, uint64_t row_ps)
{
    if (rows <= 1)
        return bytes_ps;
    uint64_t floor = rows > HS_TIME_MAX / row_ps ? HS_TIME_MAX : rows * row_ps;
    return max_u64(bytes_ps, floor);
}

hs_copy_time hs_copy_time_host(const hs_scenario *sc, bool to_device, bool pageable, uint64_t bytes, uint64_t rows)
{
    if (!bytes)
        return (hs_copy_time){0, 0};
    rows = op_rows(rows, bytes);
    /* a copy engine's DMA from pinned memory, or the host's staging of pageable memory, which is slower */
    uint64_t row_ps = to_device && bytes / rows < HS_COPY_SECTOR_BYTES ? HS_COPY_SECTOR_ROW_PS : HS_COPY_ROW_PS;
    uint64_t bytes_ps = bits_ps(bytes, pageable ? sc->pcie.pageable_gbps : sc->pcie.copy_gbps);
    uint64_t fixed = sc->pcie.copy_latency_ns > HS_TIME_MAX / 1000 ? HS_TIME_MAX : sc->pcie.copy_latency_ns * 1000;
    uint64_t queued = min_u64(fixed, HS_COPY_QUEUED_PS);
    return (hs_copy_time){rows_floor_ps(bytes_ps, rows, row_ps) + queued, fixed - queued};
}

uint64_t hs_copy_time_device(const hs_scenario *sc, uint64_t bytes, uint64_t rows)
{
    uint64_t bytes_ps = 2 * hbm_ps(bytes, HS_DEVICE_COPY_HBM_SHARE * sc->gpu.hbm_gbps);
    return max_u64(HS_DEVICE_COPY_PS, rows_floor_ps(bytes_ps, op_rows(rows, bytes), HS_COPY_ROW_PS));
}

hs_copy_time hs_copy_time_memset(const hs_scenario *sc, uint64_t bytes, uint64_t rows)
{
    if (!bytes)
        return (hs_copy_time){0, 0};
    uint64_t body =
        rows_floor_ps(hbm_ps(bytes, HS_MEMSET_HBM_SHARE * sc->gpu.hbm_gbps), op_rows(rows, bytes), HS_MEMSET_ROW_PS);
    uint64_t fixed = bytes <= HS_MEMSET_SMALL_BYTES ? HS_MEMSET_SMALL_PS : HS_MEMSET_PS;
    uint64_t queued = min_u64(fixed, HS_MEMSET_QUEUED_PS);
    return (hs_copy_time){body + queued, fixed - queued};
}

uint64_t hs_copy_time_local(const hs_scenario *sc, uint64_t bytes)
{
    return 2 * hbm_ps(bytes, sc->gpu.hbm_gbps); /* read + write */
}

/*
 * interpose/core/values.c and nccl_values.c on their own: what a program reads
 * back from device memory after copies, memsets, frees, kernels and
 * collectives (docs/values.md). Addresses are plain numbers: no device.
 */
#include <nccl.h>
#include <stdint.h>
#include <string.h>

#include "nccl_values.h"
#include "test_check.h"
#include "values.h"

static int all(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

int main(void)
{
    uint8_t buf[256], out[256];
    memset(buf, 0xab, sizeof buf);

    /* a write reads back; around it, zeros */
    hs_values_write(0x1000, buf, 64);
    hs_values_read(out, 0x0fe0, 128);
    CHECK(all(out, 32, 0) && all(out + 32, 64, 0xab) && all(out + 96, 32, 0), "a write reads back amid zeros");
    CHECK(hs_values_total() == 64, "64 bytes kept: %zu", hs_values_total());

    /* a memset of 0 in the middle splits the block */
    hs_values_fill(0x1010, 0, 16);
    hs_values_read(out, 0x1000, 64);
    CHECK(all(out, 16, 0xab) && all(out + 16, 16, 0) && all(out + 32, 32, 0xab), "a zero memset cuts a hole");
    CHECK(hs_values_total() == 48, "48 bytes kept after the hole: %zu", hs_values_total());

    /* a device copy carries what is known */
    hs_values_copy(0x2000, 0x1000, 64);
    hs_values_read(out, 0x2000, 64);
    CHECK(all(out, 16, 0xab) && all(out + 16, 16, 0) && all(out + 32, 32, 0xab), "a device copy keeps the values");

    /* too large to keep: the range reads zeros, and what it overwrote is gone */
    static uint8_t big[HS_VALUES_MAX_BYTES + 1];
    memset(big, 7, sizeof big);
    hs_values_write(0x1000, big, sizeof big);
    hs_values_read(out, 0x1000, 64);
    CHECK(all(out, 64, 0), "a write past HS_VALUES_MAX_BYTES is not kept and hides the old bytes");

    /* a block read and then followed by a kernel is forgotten */
    hs_values_write(0x3000, buf, 8);
    hs_values_read(out, 0x3000, 8);
    CHECK(all(out, 8, 0xab), "read before any kernel");
    hs_values_kernel_launched();
    hs_values_read(out, 0x3000, 8);
    CHECK(all(out, 8, 0), "read, then a kernel ran: forgotten");

    /* an unread block survives a few kernels, not HS_VALUES_KERNEL_WINDOW + 1 */
    hs_values_write(0x4000, buf, 8);
    for (unsigned i = 0; i < 3; i++)
        hs_values_kernel_launched();
    hs_values_copy(0x5000, 0x4000, 8); /* a copy reads it too */
    hs_values_read(out, 0x5000, 8);
    CHECK(all(out, 8, 0xab), "three kernels after the write: still there");
    hs_values_write(0x6000, buf, 8);
    for (unsigned i = 0; i <= HS_VALUES_KERNEL_WINDOW; i++)
        hs_values_kernel_launched();
    hs_values_read(out, 0x6000, 8);
    CHECK(all(out, 8, 0), "%u kernels after the write: forgotten", HS_VALUES_KERNEL_WINDOW + 1);

    /* part of a block: only before any kernel (after one, most likely a new tensor in reused memory) */
    hs_values_write(0x6800, buf, 8);
    hs_values_read(out, 0x6804, 4);
    CHECK(all(out, 4, 0xab), "part of a block before any kernel");
    hs_values_write(0x6900, buf, 8);
    hs_values_kernel_launched();
    hs_values_read(out, 0x6904, 4);
    CHECK(all(out, 4, 0), "part of a block after a kernel: zeros");
    hs_values_read(out, 0x6900, 8);
    CHECK(all(out, 8, 0xab), "the whole block after a kernel: still there");

    /* collectives: every rank taken to send what this one sent */
    int64_t meta[3] = {37, 4, -2}, got[12];
    hs_values_write(0x7000, meta, sizeof meta);
    hs_nccl_values(HS_COLL_ALL_GATHER, ncclInt64, 8, ncclSum, 3, 4, 1, -1, (void *)0x7000, (void *)0x8000);
    hs_values_read(got, 0x8000, sizeof got);
    CHECK(got[0] == 37 && got[3] == 37 && got[11] == -2, "all-gather: 4 copies of the rank's share");
    hs_nccl_values(HS_COLL_ALL_REDUCE, ncclInt64, 8, ncclSum, 3, 4, 1, -1, (void *)0x7000, (void *)0x9000);
    hs_values_read(got, 0x9000, 3 * sizeof(int64_t));
    CHECK(got[0] == 148 && got[1] == 16 && got[2] == -8, "sum over 4 ranks: 4 x the value (%lld)", (long long)got[0]);
    hs_nccl_values(HS_COLL_ALL_REDUCE, ncclInt64, 8, ncclMax, 3, 4, 1, -1, (void *)0x7000, (void *)0x9000);
    hs_values_read(got, 0x9000, 3 * sizeof(int64_t));
    CHECK(got[0] == 37 && got[2] == -2, "max over 4 ranks: the value");
    uint16_t h = 0x3c00; /* 1.0 in fp16 */
    hs_values_write(0xa000, &h, 2);
    hs_nccl_values(HS_COLL_ALL_REDUCE, ncclFloat16, 2, ncclSum, 1, 8, 0, -1, (void *)0xa000, (void *)0xb000);
    hs_values_read(&h, 0xb000, 2);
    CHECK(h == 0x4800, "fp16 sum over 8 ranks of 1.0: 8.0 (0x%04x)", h);
    hs_nccl_values(HS_COLL_RECV, ncclInt64, 8, ncclSum, 3, 4, 1, 0, NULL, (void *)0x8000);
    hs_values_read(got, 0x8000, 3 * sizeof(int64_t));
    CHECK(got[0] == 0 && got[2] == 0, "a receive's buffer is unknown: zeros");

    /* a free forgets */
    hs_values_forget(0x7000, 24);
    hs_values_read(got, 0x7000, 24);
    CHECK(got[0] == 0, "forgotten");
    puts("values: ok");
    return 0;
}

/*
 * interpose/core/values.c, kernel_values.c and nccl_values.c on their own:
 * what a program reads back from device memory after copies, memsets, frees,
 * kernels, the kernels hysim computes, and collectives (docs/values.md).
 * Addresses are plain numbers: no device.
 */
#include <nccl.h>
#include <stdint.h>
#include <string.h>

#include "kernel_values.h"
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

/* A Recv's bytes as hysimd would answer them: its peer's number, 8 times. */
static int fake_fetch(uint64_t comm_key, uint64_t seq, uint32_t rank, int peer, void *dst, size_t n)
{
    if (comm_key != 0x77 || seq != 5 || rank != 1 || peer < 0)
        return 0;
    memset(dst, peer, n);
    return 1;
}

/* ATen's TensorInfo<T, int64_t> of a 1-D tensor: data, sizes[25], strides[25], dims. */
static void tensor_info(uint8_t info[416], uintptr_t data, int64_t size)
{
    int64_t one = 1;
    int dims = 1;
    memset(info, 0, 416);
    memcpy(info, &data, 8);
    memcpy(info + 8, &size, 8);
    memcpy(info + 8 + 25 * 8, &one, 8);
    memcpy(info + 8 + 50 * 8, &dims, 4);
}

/* kernelHistogram1D<long, long, long, ...> of n elements at in into bins counts at out. */
static void histogram(uintptr_t in, int64_t n, int64_t bins, uintptr_t out, int64_t counts[])
{
    static const char name[] =
        "_ZN2at4cuda17kernelHistogram1DIlllLi1ELi2ELin1ELNS0_23CUDAHistogramMemoryTypeE0EZNS0_21CUDA_tensor_histogramI"
        "llLb0EEEbNS_6TensorES4_S4_lNS_14AccumulateTypeIT0_Lb1EE4typeES8_NS0_13TensorArgTypeES9_S9_EUllE0_EEvNS0_"
        "6detail"
        "10TensorInfoIT_T1_EESF_NSC_IKS6_SE_EElS8_S8_SE_T6_";
    uint8_t a[416], p[416], b[416];
    int64_t lo = 0, hi = bins;
    tensor_info(a, out, bins);
    tensor_info(p, 0, 0);
    tensor_info(b, in, n);
    void *args[8] = {a, p, b, &bins, &lo, &hi, &n, NULL};
    hs_kv_model m = hs_kv_model_of(name);
    hs_kv_result r;
    hs_kv_eval(&m, args, &r);
    hs_values_kernel_launched();
    hs_kv_apply(&r);
    memset(counts, 0, (size_t)bins * sizeof *counts);
    hs_values_read(counts, out, (size_t)bins * sizeof *counts);
}

static int64_t sum_of(const int64_t *v, int n)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

static void kernels_hysim_computes(void)
{
    CHECK(hs_kv_model_of("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIlNS0_14func_wrapper_tIlZNS0_11sum_"
                         "functorIlllEclERNS_14TensorIteratorEEUlllE_EEjlLi4ELi4EEEEEvT1_")
                  .kind == HS_KV_SUM,
          "torch's sum of int64 is a sum");
    CHECK(hs_kv_model_of("_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIlNS0_14func_wrapper_tIlZNS0_11sum_"
                         "functorIlllEclERNS_14TensorIteratorEEUlllE_EEjlLi4ELi4EEEEEvT1_")
                  .kind == HS_KV_SUM,
          "with other launch bounds too");
    CHECK(hs_kv_model_of("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11max_"
                         "functorIfEclERNS_14TensorIteratorEEUlffE_EEjfLi4ELi4EEEEEvT1_")
                  .kind == HS_KV_NONE,
          "a max is not");
    int64_t counts[16], idx[12] = {0, 3, 3, 1, 7, 3, 6, 6, 9, 2, 2, 2};
    hs_values_write(0xe000, idx, sizeof idx);
    histogram(0xe000, 12, 8, 0xe800, counts);
    CHECK(counts[0] == 1 && counts[1] == 1 && counts[2] == 3 && counts[3] == 3 && counts[6] == 2 && counts[7] == 1 &&
              sum_of(counts, 8) == 11,
          "histogram of known values: exact, 9 outside [0, 8] (%lld %lld %lld)", (long long)counts[0],
          (long long)counts[2], (long long)sum_of(counts, 8));
    histogram(0xf000, 6000, 16, 0xe800, counts);
    CHECK(counts[0] == 375 && counts[15] == 375, "balanced routing: 6000 / 16 each (%lld)", (long long)counts[0]);

    hs_kv_setup(HS_KV_ROUTING_ZIPF, 1.2, 7);
    int64_t first[16], again[16], other[16];
    histogram(0xf000, 6000, 16, 0xe800, first);
    histogram(0xf000, 6000, 16, 0xe900, again); /* the same input soon after: the same draw */
    histogram(0xf800, 6000, 16, 0xea00, other);
    int64_t top = 0, low = 6000;
    int same_order = 1;
    for (int b = 0; b < 16; b++) {
        top = first[b] > top ? first[b] : top;
        low = first[b] < low ? first[b] : low;
        same_order &= first[b] == other[b];
    }
    /* Zipf 1.2 over 16: the top expert takes 1 / H(16, 1.2) = 36.5 % (2191.7), the last 1 / (16^1.2 H) = 1.31 % (78.7) */
    CHECK(sum_of(first, 16) == 6000 && top >= 2191 && top <= 2192 && low >= 78 && low <= 79,
          "Zipf routing: %lld in all, top %lld, last %lld", (long long)sum_of(first, 16), (long long)top,
          (long long)low);
    CHECK(!memcmp(first, again, sizeof first), "a second histogram of the same input: the same counts");
    CHECK(!same_order && sum_of(other, 16) == 6000, "another input: another order of the experts");
    hs_kv_setup(HS_KV_ROUTING_BALANCED, 1.0, 1);
}

#define SCAN_INT                                                                                             \
    "_ZN14at_cuda_detail3cub6detail4scan16DeviceScanKernelINS2_10policy_hubIiiijSt4plusIiEE10Policy1000EPKi" \
    "PiNS0_13ScanTileStateIiLb1EEES6_NS0_8NullTypeEjiLb0ESE_EEvT0_T1_T2_iT3_T4_T5_"

/* cub's inclusive scan (torch.cumsum) of int32 at in into out, n elements, from tile `start`. */
static void scan(uintptr_t in, uintptr_t out, unsigned n, int start)
{
    hs_kv_model m = hs_kv_model_of(SCAN_INT);
    const void *pin = (const void *)in;
    void *pout = (void *)out;
    char tile_state[16] = {0}, op = 0, init = 0;
    void *args[7] = {&pin, &pout, tile_state, &start, &op, &init, &n};
    hs_kv_result r;
    hs_kv_eval(&m, args, &r);
    hs_values_kernel_launched();
    hs_kv_apply(&r);
}

static void cumsum(void)
{
    CHECK(hs_kv_model_of(SCAN_INT).kind == HS_KV_SCAN, "cub's inclusive int32 sum is a scan");
    CHECK(hs_kv_model_of("_ZN14at_cuda_detail3cub6detail4scan16DeviceScanKernelINS2_10policy_hubIiiijSt4plusIiEE10"
                         "Policy1000EPKiPiNS0_13ScanTileStateIiLb1EEES6_NS0_11FutureValueIiiEEjiLb0ESE_EEvT0_T1_T2_"
                         "iT3_T4_T5_")
                  .kind == HS_KV_NONE,
          "an exclusive scan (an initial value) is not");
    CHECK(hs_kv_model_of("_ZN14at_cuda_detail3cub6detail4scan16DeviceScanKernelINS2_10policy_hubIfffjSt4plusIfEE10"
                         "Policy1000EPKfPfNS0_13ScanTileStateIfLb1EEES6_NS0_8NullTypeEjfLb0ESE_EEvT0_T1_T2_iT3_T4_T5_")
                  .kind == HS_KV_NONE,
          "nor one of floats (cub's order of additions is not the host's)");
    int32_t in[5] = {3, 0, 7, 2147483647, 1}, out[5];
    hs_values_write(0x11000, in, sizeof in);
    scan(0x11000, 0x11800, 5, 0);
    CHECK(hs_values_read(out, 0x11800, sizeof out) == sizeof out && out[0] == 3 && out[1] == 3 && out[2] == 10 &&
              out[3] == (int32_t)(10u + 2147483647u) && out[4] == out[3] + 1,
          "known input: the running sums, wrapping as int32 does (%d %d %d %d)", out[0], out[2], out[3], out[4]);
    hs_values_write(0x11800, in, sizeof in);
    scan(0x12000, 0x11800, 5, 0);
    CHECK(hs_values_read(out, 0x11800, sizeof out) == 0, "unknown input: the output is unknown (what was there goes)");
    hs_values_write(0x11000, in, sizeof in);
    scan(0x11000, 0x11800, 5, 3);
    CHECK(hs_values_read(out, 0x11800, sizeof out) == 0, "a launch from a later tile computes nothing");
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

    /* a kernel's computed output may be read in part after later kernels; a plain write may not */
    hs_values_write_computed(0xc000, buf, 64);
    hs_values_write(0xc100, buf, 64);
    hs_values_kernel_launched();
    hs_values_read(out, 0xc020, 32);
    CHECK(all(out, 32, 0xab), "half of a computed block after a kernel");
    hs_values_read(out, 0xc120, 32);
    CHECK(all(out, 32, 0), "half of a written block after a kernel: zeros");

    /* a Recv's bytes are asked for by its peer */
    hs_values_set_fetch(fake_fetch);
    hs_nccl_part part;
    CHECK(hs_nccl_values_part(HS_COLL_RECV, ncclInt64, 8, ncclSum, 2, 4, NULL, &part) == 1 && !part.values.len,
          "a Recv carries no bytes");
    hs_nccl_values(HS_COLL_RECV, ncclInt64, 8, ncclSum, 2, 4, 1, 2, NULL, (void *)0xd000);
    hs_nccl_values_pending(&part, 0x77, 5, 1, 2, (void *)0xd000);
    hs_nccl_part_free(&part);
    hs_values_read(out, 0xd000, 16);
    CHECK(all(out, 16, 2), "a Recv from rank 2 reads its Send's bytes");
    hs_values_set_fetch(NULL);

    kernels_hysim_computes();
    cumsum();

    /* a free forgets */
    hs_values_forget(0x7000, 24);
    hs_values_read(got, 0x7000, 24);
    CHECK(got[0] == 0, "forgotten");
    puts("values: ok");
    return 0;
}

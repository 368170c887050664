/*
 * ncclRedOpCreatePreMulSum and ncclRedOpDestroy under hysim (FSDP2 divides its
 * gradients with one), checked by the program itself: an all-reduce with the
 * custom reduction completes; after ncclRedOpDestroy the same op, a second
 * destroy and destroying a built-in reduction are refused as NCCL refuses them.
 * Prints "premulsum ok" at the end.
 */
#include <stdio.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"

#define N 2

int main(void)
{
    int devs[N] = {0, 1};
    ncclComm_t comm[N];
    CHECK(ncclCommInitAll(comm, N, devs) == ncclSuccess, "ncclCommInitAll");
    float *buf[N], half = 0.5f;
    cudaStream_t st[N];
    ncclRedOp_t op[N];
    for (int r = 0; r < N; r++) {
        CHECK(cudaSetDevice(r) == cudaSuccess && cudaMalloc((void **)&buf[r], 1 << 20) == cudaSuccess, "malloc");
        CHECK(cudaStreamCreate(&st[r]) == cudaSuccess, "stream");
        CHECK(ncclRedOpCreatePreMulSum(&op[r], &half, ncclFloat, ncclScalarHostImmediate, comm[r]) == ncclSuccess,
              "ncclRedOpCreatePreMulSum on rank %d", r);
        CHECK((int)op[r] >= (int)ncclNumOps, "a custom reduction numbered %d, inside NCCL's own", (int)op[r]);
    }
    CHECK(ncclRedOpCreatePreMulSum(NULL, &half, ncclFloat, ncclScalarHostImmediate, comm[0]) == ncclInvalidArgument,
          "a NULL op accepted");
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int r = 0; r < N; r++)
        CHECK(ncclAllReduce(buf[r], buf[r], 1 << 18, ncclFloat, op[r], comm[r], st[r]) == ncclSuccess,
              "all-reduce with the PreMulSum on rank %d", r);
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    for (int r = 0; r < N; r++)
        CHECK(cudaSetDevice(r) == cudaSuccess && cudaStreamSynchronize(st[r]) == cudaSuccess, "sync %d", r);
    for (int r = 0; r < N; r++)
        CHECK(ncclRedOpDestroy(op[r], comm[r]) == ncclSuccess, "ncclRedOpDestroy on rank %d", r);
    CHECK(ncclAllReduce(buf[0], buf[0], 16, ncclFloat, op[0], comm[0], st[0]) == ncclInvalidArgument,
          "an all-reduce with a destroyed reduction accepted");
    CHECK(ncclRedOpDestroy(op[0], comm[0]) == ncclInvalidArgument, "a second destroy accepted");
    CHECK(ncclRedOpDestroy(ncclSum, comm[0]) == ncclInvalidArgument, "destroying ncclSum accepted");
    for (int r = 0; r < N; r++)
        ncclCommDestroy(comm[r]);
    printf("premulsum ok\n");
    return 0;
}

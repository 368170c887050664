/*
 * What the GPU-thread test programs share (barrier_gpus.c, sync_edges.c, nccl_barrier.c):
 * one hand-registered kernel (its time comes from the scenario's
 * compute.default_kernel_us), launches of it, and the program's own clock,
 * which under hysim reads simulated time. Include after test_check.h.
 */
#ifndef HYSIM_TESTS_GPU_THREAD_KIT_H
#define HYSIM_TESTS_GPU_THREAD_KIT_H

#include <time.h>

#include <cuda_runtime_api.h>

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

static inline void kernel_stub(void) {}

static inline void register_kernel(void)
{
    static char fatbin[64];
    void **module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterFunction(module, (const char *)kernel_stub, "_Z4workv", "_Z4workv", -1, NULL, NULL, NULL, NULL, NULL);
}

static inline long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* n launches of the kernel on stream s. */
static inline void launch(cudaStream_t s, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(cudaLaunchKernel((const void *)kernel_stub, (dim3){1, 1, 1}, (dim3){32, 1, 1}, NULL, 0, s) == cudaSuccess,
              "kernel %d", i);
}

#endif

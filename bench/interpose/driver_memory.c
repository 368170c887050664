/*
 * driver_memory: a program written against the CUDA driver API alone (C, no
 * runtime: cc ... -lcuda): a primary context, device and pinned memory, a
 * non-blocking stream and events, and CUDA-event times of 64 MiB copies each
 * way, a copy within the GPU, a memset and an empty kernel's launch, plus
 * the answers of stream, event and pointer queries. Runs on a real GPU
 * (bench/real/driver_launch_real.sh) and under hysim
 * (tests/interpose/check_driver_memory.sh).
 * usage: driver_memory
 */
#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry driver_empty() { ret; }\n";

#define CU(call)                                                               \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            const char *s_ = NULL;                                             \
            cuGetErrorName(r_, &s_);                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void say(const char *what, long long v) { printf("%-44s = %lld\n", what, v); }

static void CUDA_CB host_function(void *flag) { *(int *)flag += 1; }

static void CUDA_CB stream_callback(CUstream stream, CUresult status, void *flag)
{
    (void)stream;
    *(int *)flag += status == CUDA_SUCCESS ? 10 : 100;
}

int main(void)
{
    const size_t bytes = (size_t)64 << 20;
    CUdevice dev;
    CUcontext ctx;
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));

    CUdeviceptr a, b;
    void *pinned = NULL;
    CU(cuMemAlloc(&a, bytes));
    CU(cuMemAlloc(&b, bytes));
    CU(cuMemAllocHost(&pinned, bytes));
    size_t free_bytes = 0, total = 0;
    CU(cuMemGetInfo(&free_bytes, &total));
    say("cuMemGetInfo: free <= total", free_bytes <= total);
    CUdeviceptr mapped = 0;
    CU(cuMemHostGetDevicePointer(&mapped, pinned, 0));
    say("pinned memory's device pointer is its address", mapped == (CUdeviceptr)pinned);
    unsigned type = 0;
    CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a));
    say("memory type of cuMemAlloc memory", type);
    CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, mapped));
    say("memory type of cuMemAllocHost memory", type);

    void *fn = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CU(cuGetProcAddress("cuLaunchKernelEx", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    say("cuGetProcAddress finds cuLaunchKernelEx", fn != NULL && found == CU_GET_PROC_ADDRESS_SUCCESS);

    CUstream s;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    unsigned flags = 99;
    int priority = 99;
    CUdevice sdev = -1;
    CU(cuStreamGetFlags(s, &flags));
    CU(cuStreamGetPriority(s, &priority));
    CU(cuStreamGetDevice(s, &sdev));
    say("stream flags", flags);
    say("stream priority", priority);
    say("stream device", sdev);

    CUmodule mod;
    CUfunction empty;
    CU(cuModuleLoadData(&mod, ptx));
    CU(cuModuleGetFunction(&empty, mod, "driver_empty"));

    enum { STEPS = 5 };
    CUevent ev[STEPS + 1];
    for (int i = 0; i <= STEPS; i++)
        CU(cuEventCreate(&ev[i], CU_EVENT_DEFAULT));
    for (int round = 0; round < 2; round++) { // the first round warms up; the second is printed
        CU(cuEventRecord(ev[0], s));
        CU(cuMemcpyHtoDAsync(a, pinned, bytes, s));
        CU(cuEventRecord(ev[1], s));
        CU(cuMemcpyDtoHAsync(pinned, b, bytes, s));
        CU(cuEventRecord(ev[2], s));
        CU(cuMemcpyDtoDAsync(b, a, bytes, s));
        CU(cuEventRecord(ev[3], s));
        CU(cuMemsetD32Async(a, 0, bytes / 4, s));
        CU(cuEventRecord(ev[4], s));
        CU(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CU(cuEventRecord(ev[5], s));
        CU(cuEventSynchronize(ev[5]));
    }
    say("cuStreamQuery after the last event", cuStreamQuery(s));
    int ran = 0;
    CU(cuLaunchHostFunc(s, host_function, &ran));
    CU(cuStreamAddCallback(s, stream_callback, &ran, 0));
    CU(cuStreamSynchronize(s));
    say("host function and callback ran (1 + 10)", ran);
    say("cuEventQuery of the last event", cuEventQuery(ev[5]));
    const char *names[STEPS] = {"64 MiB host to device, pinned", "64 MiB device to host, pinned",
                                "64 MiB within the device", "64 MiB memset (D32)", "an empty kernel"};
    for (int i = 0; i < STEPS; i++) {
        float ms = 0;
        CU(cuEventElapsedTime(&ms, ev[i], ev[i + 1]));
        printf("time: %-36s %10.3f us\n", names[i], ms * 1000);
    }

    void *pageable = malloc(bytes);
    CU(cuMemcpyHtoD(a, pageable, bytes));
    CU(cuMemcpyDtoH(pageable, a, bytes));
    CU(cuCtxSynchronize());
    say("synchronous pageable copies", 1);

    for (int i = 0; i <= STEPS; i++)
        CU(cuEventDestroy(ev[i]));
    CU(cuModuleUnload(mod));
    CU(cuStreamDestroy(s));
    CU(cuMemFree(a));
    CU(cuMemFree(b));
    CU(cuMemFreeHost(pinned));
    free(pageable);
    CUcontext mine = NULL, current = NULL;
    CUdeviceptr scratch;
    CU(cuCtxCreate(&mine, NULL, 0, dev));
    CU(cuCtxGetCurrent(&current));
    say("cuCtxCreate makes its context current", current == mine);
    CU(cuMemAlloc(&scratch, 1 << 20));
    CU(cuMemFree(scratch));
    CU(cuCtxDestroy(mine));
    CU(cuCtxGetCurrent(&current));
    say("after cuCtxDestroy the primary is current", current == ctx);
    CU(cuDevicePrimaryCtxRelease(dev));
    printf("driver_memory: ok\n");
    return 0;
}

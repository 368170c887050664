// driver_launch: kernels loaded and launched through the driver API, as a
// program that builds its kernels at run time does (NVRTC, Triton, CuPy):
// a PTX module, its functions' attributes and occupancy, launches with
// cuLaunchKernel and cuLaunchKernelEx (a cluster) on a runtime stream, and a
// pointer query; CUDA events time each batch of launches. Runs on a real GPU
// (the PTX is compiled by the driver) and under hysim, which times each
// kernel by its name's profile or the scenario's default
// (tests/interpose/check_driver_launch.sh).
// usage: driver_launch [-n LAUNCHES]
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static const char ptx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry driver_kernel(.param .u64 out) { ret; }
.visible .entry driver_kernel_other(.param .u64 out) { ret; }
)";

#define CU(call)                                                                    \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                   \
            const char *s_ = nullptr;                                               \
            cuGetErrorName(r_, &s_);                                                \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

#define RT(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

// us per launch of n launches of f (132 blocks of 128 threads), by events around them
static float time_launches(CUfunction f, cudaStream_t s, int n, bool cluster)
{
    void *out = nullptr;
    void *args[] = {&out};
    cudaEvent_t a, b;
    RT(cudaEventCreate(&a));
    RT(cudaEventCreate(&b));
    RT(cudaEventRecord(a, s));
    for (int i = 0; i < n; i++) {
        if (!cluster) {
            CU(cuLaunchKernel(f, 132, 1, 1, 128, 1, 1, 0, (CUstream)s, args, nullptr));
            continue;
        }
        CUlaunchAttribute attr = {};
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim.x = 2, attr.value.clusterDim.y = 1, attr.value.clusterDim.z = 1;
        CUlaunchConfig config = {};
        config.gridDimX = 132, config.gridDimY = 1, config.gridDimZ = 1;
        config.blockDimX = 128, config.blockDimY = 1, config.blockDimZ = 1;
        config.hStream = (CUstream)s;
        config.attrs = &attr;
        config.numAttrs = 1;
        CU(cuLaunchKernelEx(&config, f, args, nullptr));
    }
    RT(cudaEventRecord(b, s));
    RT(cudaEventSynchronize(b));
    float ms = 0;
    RT(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1000 / n;
}

int main(int argc, char **argv)
{
    int n = argc > 2 && !std::strcmp(argv[1], "-n") ? std::atoi(argv[2]) : 20;
    RT(cudaSetDevice(0));
    CUmodule mod;
    CUfunction f, other, again;
    CU(cuModuleLoadData(&mod, ptx));
    CU(cuModuleGetFunction(&f, mod, "driver_kernel"));
    CU(cuModuleGetFunction(&other, mod, "driver_kernel_other"));
    CU(cuModuleGetFunction(&again, mod, "driver_kernel"));
    std::printf("same function twice: %d\n", f == again);
    int v = 0, blocks = 0;
    CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    std::printf("max threads per block: %d\n", v);
    CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
    CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    std::printf("max dynamic shared memory: %d\n", v);
    CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 100000));
    std::printf("blocks per SM at 100000 bytes of shared memory: %d\n", blocks);
    const char *name = nullptr;
    CU(cuFuncGetName(&name, other));
    std::printf("name: %s\n", name);

    void *p = nullptr;
    RT(cudaMalloc(&p, 1 << 20));
    int ordinal = -1;
    CU(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)p));
    std::printf("device of a cudaMalloc pointer: %d\n", ordinal);

    cudaStream_t s;
    RT(cudaStreamCreate(&s));
    time_launches(f, s, 2, false); // warm-up
    std::printf("cuLaunchKernel driver_kernel: %.3f us per launch\n", time_launches(f, s, n, false));
    std::printf("cuLaunchKernelEx driver_kernel, clusters of 2: %.3f us per launch\n", time_launches(f, s, n, true));
    std::printf("cuLaunchKernel driver_kernel_other: %.3f us per launch\n", time_launches(other, s, n, false));
    CU(cuCtxSynchronize());
    RT(cudaStreamDestroy(s));
    RT(cudaFree(p));
    CU(cuModuleUnload(mod));
    std::printf("driver_launch: ok\n");
    return 0;
}

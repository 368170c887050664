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

    // the JIT linker's image, a library's kernel, occupancy by clusters and block size, a tensor map
    CUlinkState link;
    void *image = nullptr;
    size_t image_bytes = 0;
    CU(cuLinkCreate(0, nullptr, nullptr, &link));
    CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "driver_launch.ptx", 0, nullptr, nullptr));
    CU(cuLinkComplete(link, &image, &image_bytes));
    CUmodule linked;
    CUfunction from_link;
    CU(cuModuleLoadData(&linked, image));
    CU(cuLinkDestroy(link));
    CU(cuModuleGetFunction(&from_link, linked, "driver_kernel"));
    std::printf("a linked module's function: %d\n", from_link != nullptr);
    CUlibrary lib;
    CUkernel kern;
    CUfunction from_lib;
    CU(cuLibraryLoadData(&lib, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU(cuLibraryGetKernel(&kern, lib, "driver_kernel"));
    CU(cuKernelGetFunction(&from_lib, kern));
    CU(cuFuncGetName(&name, from_lib));
    std::printf("a library kernel's function: %s\n", name);
    void *out = nullptr;
    void *args[] = {&out};
    CU(cuLaunchKernel((CUfunction)kern, 132, 1, 1, 128, 1, 1, 0, (CUstream)s, args, nullptr));
    CU(cuStreamSynchronize((CUstream)s));
    std::printf("launched a CUkernel as a CUfunction: 1\n");
    int min_grid = 0, block = 0, clusters = 0;
    CU(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, other, nullptr, 0, 0));
    std::printf("potential block size: %d, min grid %d\n", block, min_grid);
    CUlaunchAttribute attr = {};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 2, attr.value.clusterDim.y = 1, attr.value.clusterDim.z = 1;
    CUlaunchConfig config = {};
    config.gridDimX = 264, config.gridDimY = 1, config.gridDimZ = 1; // a multiple of every cluster size
    config.blockDimX = 128, config.blockDimY = 1, config.blockDimZ = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    for (unsigned threads : {128u, 256u, 1024u})
        for (unsigned size : {1u, 2u, 4u, 8u}) {
            attr.value.clusterDim.x = size;
            config.blockDimX = threads;
            CU(cuOccupancyMaxActiveClusters(&clusters, other, &config));
            std::printf("active clusters of %u x %u threads: %d\n", size, threads, clusters);
        }
    alignas(128) CUtensorMap map;
    cuuint64_t dims[2] = {1024, 1024}, strides[1] = {1024 * 2};
    cuuint32_t box[2] = {64, 64}, elem[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, elem,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::printf("cuTensorMapEncodeTiled 1024 x 1024 bf16, 64 x 64 boxes: %d\n", (int)r);
    r = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 0, p, dims, strides, box, elem,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::printf("cuTensorMapEncodeTiled of rank 0: %d\n", (int)r);
    CU(cuLibraryUnload(lib));
    CU(cuModuleUnload(linked));
    CU(cuCtxSynchronize());
    RT(cudaStreamDestroy(s));
    RT(cudaFree(p));
    CU(cuModuleUnload(mod));
    std::printf("driver_launch: ok\n");
    return 0;
}

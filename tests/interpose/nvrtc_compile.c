/*
 * NVRTC under hysim: a kernel compiled at run time (as torch's jiterator
 * compiles some of its kernels), loaded with cuModuleLoadData and launched
 * through the driver API. NVRTC's own copy of the CUDA runtime asks hysim's
 * driver for cuGetExportTable, which hysim refuses with a message that says
 * compiling needs no GPU; the compiled module must still load and run.
 */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const char *src = "extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }";
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, "twice.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return 1;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    nvrtcResult compiled = nvrtcCompileProgram(prog, 1, opts);
    size_t n = 0;
    nvrtcGetPTXSize(prog, &n);
    char *ptx = malloc(n ? n : 1);
    if (!ptx || nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS)
        return 1;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr x;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGet(&dev, 0);
    if (r == CUDA_SUCCESS)
        r = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS)
        r = cuModuleLoadData(&mod, ptx);
    if (r == CUDA_SUCCESS)
        r = cuModuleGetFunction(&fn, mod, "twice");
    if (r == CUDA_SUCCESS)
        r = cuMemAlloc(&x, 32 * sizeof(float));
    void *args[] = {&x};
    if (r == CUDA_SUCCESS)
        r = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    printf("nvrtc: %s, %s PTX, load and launch: %s\n", nvrtcGetErrorString(compiled), n > 1 ? "some" : "no",
           r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "failed");
    free(ptx);
    nvrtcDestroyProgram(&prog);
    return compiled != NVRTC_SUCCESS || r != CUDA_SUCCESS;
}

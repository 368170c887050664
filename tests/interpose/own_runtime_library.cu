// A program built with -cudart shared that calls cuSPARSE and cuFFT, CUDA
// libraries with their own copy of the runtime inside: hysim cannot simulate
// what they do, and must say so once each, naming the library, rather than
// print a line for each of the hundreds of driver entry points such a runtime
// looks up (cuSPARSE's, through cuGetProcAddress) or nothing (cuFFT's, which
// looks them up by name and then asks for cuGetExportTable).
#include <cstdio>

#include <cuda_runtime.h>
#include <cufft.h>
#include <cusparse.h>

int main()
{
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 1 << 20);
    cusparseHandle_t h;
    cusparseStatus_t s = cusparseCreate(&h);
    cufftHandle plan;
    cufftResult f = cufftPlan1d(&plan, 1024, CUFFT_C2C, 1);
    std::printf("malloc: %s, cusparseCreate: %s, cufftPlan1d: %s\n", cudaGetErrorName(e),
                s == CUSPARSE_STATUS_SUCCESS ? "success" : "failed", f == CUFFT_SUCCESS ? "success" : "failed");
    return e == cudaSuccess ? 0 : 1;
}

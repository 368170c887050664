// A program built with -cudart shared that calls cuSPARSE, a CUDA library with
// its own copy of the runtime inside: hysim cannot simulate what cuSPARSE
// does, and must say so once (naming the library) rather than print a line
// for each of the hundreds of driver entry points that runtime looks up, or
// nothing.
#include <cstdio>

#include <cuda_runtime.h>
#include <cusparse.h>

int main()
{
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 1 << 20);
    cusparseHandle_t h;
    cusparseStatus_t s = cusparseCreate(&h);
    std::printf("malloc: %s, cusparseCreate: %s\n", cudaGetErrorName(e),
                s == CUSPARSE_STATUS_SUCCESS ? "success" : "failed");
    return e == cudaSuccess ? 0 : 1;
}

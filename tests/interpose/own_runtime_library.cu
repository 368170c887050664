// A program built with -cudart shared that calls cuRAND, a CUDA library with
// its own copy of the runtime inside: hysim cannot simulate what cuRAND does,
// and must say so once (naming the library) rather than print a line for each
// of the hundreds of driver entry points that runtime looks up, or nothing.
#include <cstdio>

#include <cuda_runtime.h>
#include <curand.h>

int main()
{
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, 1 << 20);
    curandGenerator_t g;
    curandStatus_t s = curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    std::printf("malloc: %s, curandCreateGenerator: %s\n", cudaGetErrorName(e),
                s == CURAND_STATUS_SUCCESS ? "success" : "failed");
    return e == cudaSuccess ? 0 : 1;
}

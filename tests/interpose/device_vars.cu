// A user's CUDA program with __constant__ and __device__ variables, built by
// nvcc 13 with --default-stream per-thread against the real libraries: it
// reaches its variables by symbol and calls the per-thread-stream entry
// points (cudaMemcpyToSymbol_ptds, __cudaLaunchKernel_ptsz, ...).
#include <cstdio>

__constant__ float coeffs[16];
__device__ int hits;

__global__ void poly(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = coeffs[0] + coeffs[1] * x[i];
        atomicAdd(&hits, 1);
    }
}

int main()
{
    float host[16];
    for (int i = 0; i < 16; i++)
        host[i] = 1.0f + i;
    const int n = 1024;
    float *d = nullptr;
    void *hits_at = nullptr;
    size_t coeffs_size = 0;
    int h = -1;
    cudaError_t e[6];
    e[0] = cudaMalloc(&d, n * sizeof(float));
    e[1] = cudaMemcpyToSymbol(coeffs, host, sizeof host);
    e[2] = cudaGetSymbolAddress(&hits_at, hits);
    e[3] = cudaGetSymbolSize(&coeffs_size, coeffs);
    poly<<<n / 128, 128>>>(d, n);
    e[4] = cudaStreamSynchronize(0);
    e[5] = cudaMemcpyFromSymbol(&h, hits, sizeof h);
    int ok = 1;
    for (cudaError_t x : e)
        ok &= x == cudaSuccess;
    std::printf("symbols: %s, coeffs %zu bytes, hits %d, device address %s\n", ok ? "ok" : "failed",
                coeffs_size, h, hits_at ? "set" : "null");
    cudaFree(d);
    return ok ? 0 : 1;
}

// A user's CUDA program, built by nvcc 13 with -cudart shared against the real
// libraries; the test runs it on hysim's. Its own std::chrono timer reads the
// simulated clock (libstdc++'s clock_gettime reference is interposed too).
#include <chrono>
#include <cstdio>

__global__ void scale(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= 2.0f;
}

int main()
{
    auto t0 = std::chrono::steady_clock::now();
    const int n = 4096;
    float *d = nullptr;
    cudaError_t e = cudaMalloc(&d, n * sizeof(float));
    scale<<<n / 256, 256>>>(d, n);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    long long ns = (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    std::printf("malloc: %s, launch: %s, sync: %s, elapsed_ns=%lld\n", cudaGetErrorName(e),
                cudaGetErrorName(launch), cudaGetErrorName(sync), ns);
    cudaFree(d);
    return e == cudaSuccess && launch == cudaSuccess && sync == cudaSuccess ? 0 : 1;
}

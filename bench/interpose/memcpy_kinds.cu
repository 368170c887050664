// memcpy_kinds: what a host <-> device copy costs, by direction and by the
// kind of host memory: pinned (cudaMallocHost) or pageable (malloc, touched
// first, as a program's own buffers are); and a copy within one GPU's memory
// (device to device). For each it times
//   sync   cudaMemcpy, on the host's clock (the call blocks until done);
//   call   how long cudaMemcpyAsync on a created stream holds the host;
//   async  that call plus cudaStreamSynchronize, on the host's clock;
//   event  the copy between two events on the stream (the GPU's view);
// the median of R runs per size (more for small sizes). A pageable copy is
// staged by the driver through pinned buffers of its own, at the rate the
// host copies into them, and cudaMemcpyAsync of pageable memory returns only
// once its bytes are staged (H2D) or copied out (D2H). The same program runs
// under hysim.
// usage: memcpy_kinds [MAX_MIB [REPEATS]]   (sizes 4 KiB ... MAX_MIB, x16)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                                 \
    do {                                                                                            \
        cudaError_t err_ = (call);                                                                  \
        if (err_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "memcpy_kinds: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct figures {
    double sync_us, call_us, async_us, event_us;
};

// One direction and kind of host memory, `repeats` times each way of copying.
static figures measure(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s, int repeats)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> sync, call, async, event;
    CHECK(cudaMemcpy(dst, src, bytes, kind)); // warm-up
    for (int r = 0; r < repeats; r++) {
        double t0 = now_us();
        CHECK(cudaMemcpy(dst, src, bytes, kind));
        sync.push_back(now_us() - t0);

        CHECK(cudaEventRecord(a, s));
        t0 = now_us();
        CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
        double t1 = now_us();
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaStreamSynchronize(s));
        double t2 = now_us();
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        call.push_back(t1 - t0);
        async.push_back(t2 - t0);
        event.push_back(ms * 1e3);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return {median(sync), median(call), median(async), median(event)};
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
    int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
    if (max_mib < 1 || repeats < 1) {
        std::fprintf(stderr, "usage: memcpy_kinds [MAX_MIB [REPEATS]]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    size_t max_bytes = max_mib << 20;
    char *device, *pinned;
    CHECK(cudaMalloc(&device, max_bytes));
    char *device2; // a second buffer on the same GPU: device-to-device copies within its memory
    CHECK(cudaMalloc(&device2, max_bytes));
    CHECK(cudaMallocHost(&pinned, max_bytes));
    char *pageable = static_cast<char *>(std::malloc(max_bytes));
    if (!pageable) {
        std::fprintf(stderr, "memcpy_kinds: out of host memory\n");
        return 1;
    }
    std::memset(pinned, 1, max_bytes);
    std::memset(pageable, 1, max_bytes); // faulted in, as a buffer the program filled
    std::printf("# memcpy_kinds: medians of R runs, us; GB/s = bytes / sync (0: sync took no time)\n");
    std::printf("%11s %4s %9s %4s %11s %11s %11s %11s %8s\n", "bytes", "dir", "host", "R", "sync_us", "call_us",
                "async_us", "event_us", "GB/s");
    for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 16) {
        // small copies repeat more (their times are microseconds), at least `repeats`
        size_t more = (size_t)(64u << 20) / bytes;
        int r = (int)std::max<size_t>((size_t)repeats, std::min<size_t>(50, more));
        const struct {
            const char *dir, *host;
            void *dst;
            const void *src;
            cudaMemcpyKind kind;
        } cases[] = {
            {"H2D", "pinned", device, pinned, cudaMemcpyHostToDevice},
            {"H2D", "pageable", device, pageable, cudaMemcpyHostToDevice},
            {"D2H", "pinned", pinned, device, cudaMemcpyDeviceToHost},
            {"D2H", "pageable", pageable, device, cudaMemcpyDeviceToHost},
            {"D2D", "device", device2, device, cudaMemcpyDeviceToDevice},
        };
        for (const auto &c : cases) {
            figures f = measure(c.dst, c.src, bytes, c.kind, s, r);
            std::printf("%11zu %4s %9s %4d %11.2f %11.2f %11.2f %11.2f %8.2f\n", bytes, c.dir, c.host, r, f.sync_us,
                        f.call_us, f.async_us, f.event_us, f.sync_us > 0 ? (double)bytes / f.sync_us / 1e3 : 0.0);
        }
    }
    std::free(pageable);
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(device2));
    CHECK(cudaFree(device));
    CHECK(cudaStreamDestroy(s));
    return 0;
}

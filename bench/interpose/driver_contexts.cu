// driver_contexts: what the real CUDA answers when a program that uses the
// runtime fetches driver functions through cudaGetDriverEntryPoint (as
// PyTorch's c10 does, for every function of its list) and asks them about
// primary and current contexts: symbol lookups, a device's primary-context
// state before and after the runtime sets it up, the current context
// through set, push and pop, and device queries without its own cuInit.
// hysim's answers are checked against a real H100's
// (tests/interpose/check_runtime_answers.sh, one GPU per server).
// usage: driver_contexts   (prints NAME = VALUE (error) lines)
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>

typedef CUresult (*get_state_fn)(CUdevice, unsigned *, int *);
typedef CUresult (*get_current_fn)(CUcontext *);
typedef CUresult (*set_current_fn)(CUcontext);
typedef CUresult (*get_device_fn)(CUdevice *, CUcontext); // CUDA 13: cuCtxGetDevice_v2, NULL = the current
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*release_fn)(CUdevice);
typedef CUresult (*attribute_fn)(int *, CUdevice_attribute, CUdevice);

static const char *name_of(CUresult r)
{
    static char buf[32];
    switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    default: std::snprintf(buf, sizeof buf, "CUresult %d", (int)r); return buf;
    }
}

static void say_rt(const char *what, cudaError_t e, long long v)
{
    std::printf("%-52s = %lld (%s)\n", what, v, cudaGetErrorName(e));
}

static void say(const char *what, CUresult r, long long v) { std::printf("%-52s = %lld (%s)\n", what, v, name_of(r)); }

// A driver function through the runtime: its lookup's error and status are printed.
static void *entry(const char *name)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 13000, cudaEnableDefault, &q);
    char what[96];
    std::snprintf(what, sizeof what, "entry %s status", name);
    say_rt(what, e, (long long)q);
    std::snprintf(what, sizeof what, "entry %s found", name);
    say_rt(what, e, fn != nullptr);
    return fn;
}

int main()
{
    entry("cuNoSuchFunction");
    entry("cuMemCreate"); // a real driver has every function; hysim hands out its not-supported ones
    auto get_state = (get_state_fn)entry("cuDevicePrimaryCtxGetState");
    auto get_current = (get_current_fn)entry("cuCtxGetCurrent");
    auto set_current = (set_current_fn)entry("cuCtxSetCurrent");
    auto push = (set_current_fn)entry("cuCtxPushCurrent");
    auto pop = (get_current_fn)entry("cuCtxPopCurrent");
    auto get_device = (get_device_fn)entry("cuCtxGetDevice");
    auto retain = (retain_fn)entry("cuDevicePrimaryCtxRetain");
    auto release = (release_fn)entry("cuDevicePrimaryCtxRelease");
    auto attribute = (attribute_fn)entry("cuDeviceGetAttribute");
    if (!get_state || !get_current || !set_current || !push || !pop || !get_device || !retain || !release ||
        !attribute)
        return 1;

    unsigned flags = 99;
    int active = 99, v = 0;
    CUcontext ctx = nullptr, primary = nullptr, other = nullptr;
    CUdevice dev = -1;
    CUresult r = attribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0); // no cuInit of its own
    say("cuDeviceGetAttribute SMs, before any context", r, v);
    r = get_state(0, &flags, &active);
    say("primary state of 0 before cudaSetDevice: active", r, active);
    say("primary state of 0 before cudaSetDevice: flags", r, flags);
    r = get_state(64, &flags, &active);
    say("primary state of device 64", r, 0);
    r = get_current(&ctx);
    say("current context before cudaSetDevice is set", r, ctx != nullptr);
    r = get_device(&dev, nullptr);
    say("cuCtxGetDevice before cudaSetDevice", r, 0);

    say_rt("cudaSetDevice(0)", cudaSetDevice(0), 0);
    r = get_state(0, &flags, &active);
    say("primary state of 0 after cudaSetDevice: active", r, active);
    r = get_current(&primary);
    say("current context after cudaSetDevice is set", r, primary != nullptr);
    r = get_device(&dev, nullptr);
    say("cuCtxGetDevice after cudaSetDevice", r, dev);
    r = retain(&ctx, 0);
    say("cuDevicePrimaryCtxRetain(0) is the current", r, ctx == primary);
    say("cuDevicePrimaryCtxRelease(0)", release(0), 0);
    r = get_state(0, &flags, &active);
    say("primary state of 0 after retain + release: active", r, active);

    say("cuCtxPushCurrent(primary)", push(primary), 0);
    r = pop(&other);
    say("cuCtxPopCurrent gives it back", r, other == primary);
    r = get_current(&ctx);
    say("current context after push + pop is the primary", r, ctx == primary);
    say("cuCtxSetCurrent(NULL)", set_current(nullptr), 0);
    ctx = primary;
    r = get_current(&ctx);
    say("current context after cuCtxSetCurrent(NULL) is set", r, ctx != nullptr);
    r = get_device(&dev, nullptr);
    say("cuCtxGetDevice without a current context", r, 0);
    void *p = nullptr;
    say_rt("cudaMalloc without a current context", cudaMalloc(&p, 256), 0);
    r = get_current(&ctx);
    say("current context after cudaMalloc is the primary", r, ctx == primary);
    say("cuCtxSetCurrent(primary)", set_current(primary), 0);
    r = pop(&other);
    say("cuCtxPopCurrent of the primary", r, other == primary);
    r = get_current(&ctx);
    say("current context after popping it is set", r, ctx != nullptr);
    r = pop(&other);
    say("cuCtxPopCurrent of an empty stack", r, 0);
    cudaFree(p);
    return 0;
}

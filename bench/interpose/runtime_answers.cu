// runtime_answers: what the real CUDA runtime answers to calls whose result
// is a fact or a setting, not work: device limits and their bounds, cache and
// shared-memory configurations, stream ids, host-allocation flags, event
// record flags, cudaChooseDevice, cudaInitDevice. hysim's answers are checked
// against a real H100's (tests/interpose/check_runtime_answers.sh).
// usage: runtime_answers   (prints NAME = VALUE (error) lines)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>

// the shared-memory bank calls are deprecated, and still answered
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

__global__ void empty_kernel() {}

static void say(const char *what, cudaError_t e, long long v)
{
    std::printf("%-52s = %lld (%s)\n", what, v, cudaGetErrorName(e));
    cudaGetLastError();
}

// The call first, then its out value (arguments are evaluated in no set order).
#define ASK(what, call, value)                      \
    do {                                            \
        cudaError_t e_ = (call);                    \
        say(what, e_, (long long)(value));          \
    } while (0)

int main()
{
    cudaSetDevice(0);
    const struct {
        const char *name;
        cudaLimit limit;
    } limits[] = {{"cudaLimitStackSize", cudaLimitStackSize},
                  {"cudaLimitPrintfFifoSize", cudaLimitPrintfFifoSize},
                  {"cudaLimitMallocHeapSize", cudaLimitMallocHeapSize},
                  {"cudaLimitDevRuntimeSyncDepth", cudaLimitDevRuntimeSyncDepth},
                  {"cudaLimitDevRuntimePendingLaunchCount", cudaLimitDevRuntimePendingLaunchCount},
                  {"cudaLimitMaxL2FetchGranularity", cudaLimitMaxL2FetchGranularity},
                  {"cudaLimitPersistingL2CacheSize", cudaLimitPersistingL2CacheSize}};
    char buf[128];
    for (const auto &l : limits) {
        size_t v = 0;
        cudaError_t e = cudaDeviceGetLimit(&v, l.limit);
        std::snprintf(buf, sizeof buf, "get %s", l.name);
        say(buf, e, (long long)v);
    }
    size_t v = 0;
    ASK("get limit 99", cudaDeviceGetLimit(&v, (cudaLimit)99), (long long)v);
    // settings: what a set leaves, and the bounds
    const size_t tries[][2] = {{cudaLimitStackSize, 4096},         {cudaLimitStackSize, 3},
                               {cudaLimitMallocHeapSize, 1 << 30}, {cudaLimitPrintfFifoSize, 12345},
                               {cudaLimitMaxL2FetchGranularity, 128}, {cudaLimitMaxL2FetchGranularity, 100},
                               {cudaLimitMaxL2FetchGranularity, 0}, {cudaLimitMaxL2FetchGranularity, 1024},
                               {cudaLimitPersistingL2CacheSize, 1 << 20}, {cudaLimitPersistingL2CacheSize, 1ull << 40},
                               {cudaLimitDevRuntimeSyncDepth, 4}};
    for (const auto &t : tries) {
        cudaError_t e = cudaDeviceSetLimit((cudaLimit)t[0], t[1]);
        size_t got = 0;
        cudaDeviceGetLimit(&got, (cudaLimit)t[0]);
        std::snprintf(buf, sizeof buf, "set limit %zu to %zu, then get", t[0], t[1]);
        say(buf, e, (long long)got);
    }
    enum cudaFuncCache cc = (enum cudaFuncCache)77;
    ASK("cudaDeviceGetCacheConfig", cudaDeviceGetCacheConfig(&cc), cc);
    ASK("cudaDeviceSetCacheConfig(PreferL1)", cudaDeviceSetCacheConfig(cudaFuncCachePreferL1), 0);
    ASK("cudaDeviceGetCacheConfig after", cudaDeviceGetCacheConfig(&cc), cc);
    ASK("cudaDeviceSetCacheConfig(7)", cudaDeviceSetCacheConfig((enum cudaFuncCache)7), 0);
    enum cudaSharedMemConfig sc = (enum cudaSharedMemConfig)77;
    ASK("cudaDeviceGetSharedMemConfig", cudaDeviceGetSharedMemConfig(&sc), sc);
    ASK("cudaDeviceSetSharedMemConfig(EightByte)", cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte), 0);
    ASK("cudaDeviceGetSharedMemConfig after", cudaDeviceGetSharedMemConfig(&sc), sc);
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    unsigned long long id0 = 0, id1 = 0, id2 = 0, idp = 0;
    ASK("cudaStreamGetId(0)", cudaStreamGetId(0, &id0), (long long)id0);
    ASK("cudaStreamGetId(s1)", cudaStreamGetId(s1, &id1), (long long)id1);
    ASK("cudaStreamGetId(s2)", cudaStreamGetId(s2, &id2), (long long)id2);
    ASK("cudaStreamGetId(cudaStreamPerThread)", cudaStreamGetId(cudaStreamPerThread, &idp), (long long)idp);
    cudaEvent_t ev;
    cudaEventCreate(&ev);
    ASK("cudaEventRecordWithFlags(0)", cudaEventRecordWithFlags(ev, s1, 0), 0);
    ASK("cudaEventRecordWithFlags(External) uncaptured", cudaEventRecordWithFlags(ev, s1, cudaEventRecordExternal), 0);
    ASK("cudaEventRecordWithFlags(4)", cudaEventRecordWithFlags(ev, s1, 4), 0);
    void *pinned, *mapped;
    unsigned flags = 0;
    cudaMallocHost(&pinned, 4096);
    ASK("cudaHostGetFlags(cudaMallocHost)", cudaHostGetFlags(&flags, pinned), flags);
    cudaHostAlloc(&mapped, 4096, cudaHostAllocMapped | cudaHostAllocWriteCombined);
    ASK("cudaHostGetFlags(cudaHostAlloc mapped|wc)", cudaHostGetFlags(&flags, mapped), flags);
    ASK("cudaHostGetFlags(cudaHostAlloc mapped|wc + 100)", cudaHostGetFlags(&flags, (char *)mapped + 100), flags);
    static char reg[8192];
    cudaHostRegister(reg, sizeof reg, cudaHostRegisterDefault);
    ASK("cudaHostGetFlags(registered)", cudaHostGetFlags(&flags, reg), flags);
    void *heap = std::malloc(4096);
    flags = 77;
    ASK("cudaHostGetFlags(malloc)", cudaHostGetFlags(&flags, heap), flags);
    int dev = -1;
    cudaDeviceProp prop = {};
    ASK("cudaChooseDevice(empty prop)", cudaChooseDevice(&dev, &prop), dev);
    ASK("cudaInitDevice(0, 0, 0)", cudaInitDevice(0, 0, 0), 0);
    ASK("cudaInitDevice(99, 0, 0)", cudaInitDevice(99, 0, 0), 0);
    int value = -1;
    ASK("cudaDeviceGetP2PAttribute(rank, 0, 0)", cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, 0, 0), value);
    // stream attributes: defaults, a set access policy window, bounds
    cudaStreamAttrValue av;
    std::memset(&av, 0x77, sizeof av);
    ASK("cudaStreamGetAttribute(window) num_bytes", cudaStreamGetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &av),
        (long long)av.accessPolicyWindow.num_bytes);
    std::printf("%-52s = %d %d %lld\n", "  window defaults: hitProp missProp hitRatio*100", (int)av.accessPolicyWindow.hitProp,
                (int)av.accessPolicyWindow.missProp, (long long)(av.accessPolicyWindow.hitRatio * 100));
    void *win;
    cudaMalloc(&win, 1 << 20);
    cudaStreamAttrValue set;
    std::memset(&set, 0, sizeof set);
    set.accessPolicyWindow.base_ptr = win;
    set.accessPolicyWindow.num_bytes = 1 << 20;
    set.accessPolicyWindow.hitRatio = 0.5f;
    set.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    set.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    ASK("cudaStreamSetAttribute(window 1 MiB)", cudaStreamSetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &set), 0);
    std::memset(&av, 0, sizeof av);
    ASK("  then num_bytes", cudaStreamGetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &av),
        (long long)av.accessPolicyWindow.num_bytes);
    std::printf("%-52s = %d %d %lld %d\n", "  then hitProp missProp hitRatio*100 base", (int)av.accessPolicyWindow.hitProp,
                (int)av.accessPolicyWindow.missProp, (long long)(av.accessPolicyWindow.hitRatio * 100),
                av.accessPolicyWindow.base_ptr == win);
    set.accessPolicyWindow.num_bytes = (size_t)1 << 40;
    ASK("cudaStreamSetAttribute(window 1 TiB)", cudaStreamSetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &set), 0);
    std::memset(&av, 0x77, sizeof av);
    ASK("cudaStreamGetAttribute(sync policy)", cudaStreamGetAttribute(s1, cudaStreamAttributeSynchronizationPolicy, &av),
        (long long)av.syncPolicy);
    set.syncPolicy = cudaSyncPolicySpin;
    ASK("cudaStreamSetAttribute(sync policy spin)", cudaStreamSetAttribute(s1, cudaStreamAttributeSynchronizationPolicy, &set), 0);
    ASK("  then", cudaStreamGetAttribute(s1, cudaStreamAttributeSynchronizationPolicy, &av), (long long)av.syncPolicy);
    std::memset(&av, 0x77, sizeof av);
    ASK("cudaStreamGetAttribute(priority)", cudaStreamGetAttribute(s1, cudaStreamAttributePriority, &av), (long long)av.priority);
    ASK("cudaStreamGetAttribute(99)", cudaStreamGetAttribute(s1, (cudaStreamAttrID)99, &av), 0);
    const char *fname = nullptr;
    ASK("cudaFuncGetName(kernel) found", cudaFuncGetName(&fname, (const void *)empty_kernel), fname != nullptr);
    std::printf("%-52s = %s\n", "  its name", fname ? fname : "(null)");
    ASK("cudaFuncGetName(host function)", cudaFuncGetName(&fname, (const void *)say), 0);
    // memory pools: access from devices, and CUDA 13's pools by location
    cudaMemPool_t dflt = nullptr, got = nullptr, made = nullptr;
    cudaDeviceGetDefaultMemPool(&dflt, 0);
    cudaMemLocation dev0 = {}, dev64 = {}, host = {};
    dev0.type = cudaMemLocationTypeDevice, dev0.id = 0;
    dev64.type = cudaMemLocationTypeDevice, dev64.id = 64;
    host.type = cudaMemLocationTypeHost, host.id = 0;
    cudaMemAccessFlags access = (cudaMemAccessFlags)77;
    ASK("cudaMemPoolGetAccess(default pool, device 0)", cudaMemPoolGetAccess(&access, dflt, &dev0), (long long)access);
    access = (cudaMemAccessFlags)77;
    ASK("cudaMemPoolGetAccess(default pool, device 64)", cudaMemPoolGetAccess(&access, dflt, &dev64), (long long)access);
    cudaMemAccessDesc desc = {};
    desc.location = dev0, desc.flags = cudaMemAccessFlagsProtReadWrite;
    ASK("cudaMemPoolSetAccess(device 0, read-write)", cudaMemPoolSetAccess(dflt, &desc, 1), 0);
    desc.flags = cudaMemAccessFlagsProtNone;
    ASK("cudaMemPoolSetAccess(device 0, none)", cudaMemPoolSetAccess(dflt, &desc, 1), 0);
    desc.location = dev64, desc.flags = cudaMemAccessFlagsProtReadWrite;
    ASK("cudaMemPoolSetAccess(device 64, read-write)", cudaMemPoolSetAccess(dflt, &desc, 1), 0);
    ASK("cudaMemPoolSetAccess(no descriptors)", cudaMemPoolSetAccess(dflt, &desc, 0), 0);
    ASK("cudaMemGetDefaultMemPool(device 0) is the device's", cudaMemGetDefaultMemPool(&got, &dev0, cudaMemAllocationTypePinned),
        got == dflt);
    ASK("cudaMemGetDefaultMemPool(device 64)", cudaMemGetDefaultMemPool(&got, &dev64, cudaMemAllocationTypePinned), 0);
    ASK("cudaMemGetDefaultMemPool(host)", cudaMemGetDefaultMemPool(&got, &host, cudaMemAllocationTypePinned), 0);
    ASK("cudaMemGetMemPool(device 0) is the current", cudaMemGetMemPool(&got, &dev0, cudaMemAllocationTypePinned),
        got == dflt);
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location = dev0;
    cudaMemPoolCreate(&made, &props);
    ASK("cudaMemSetMemPool(device 0, a new pool)", cudaMemSetMemPool(&dev0, cudaMemAllocationTypePinned, made), 0);
    ASK("  then cudaDeviceGetMemPool(0) is it", cudaDeviceGetMemPool(&got, 0), got == made);
    cudaDeviceSetMemPool(0, dflt);
    cudaMemPoolDestroy(made);
    ASK("cudaMemGetDefaultMemPool(device 0, invalid type)",
        cudaMemGetDefaultMemPool(&got, &dev0, cudaMemAllocationTypeInvalid), 0);
    cudaFree(win);
    std::free(heap);
    cudaHostUnregister(reg);
    cudaFreeHost(mapped);
    cudaFreeHost(pinned);
    cudaEventDestroy(ev);
    cudaStreamDestroy(s2);
    cudaStreamDestroy(s1);
    return 0;
}

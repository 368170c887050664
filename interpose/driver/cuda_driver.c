/*
 * libcuda.so.1: the few driver API calls a runtime-only program or a library
 * probing for a GPU makes before anything else. Device facts come from the
 * client core (Setup); error names and texts are those the real driver
 * (13000) returns, for every CUresult in CUDA 13's cuda.h; cuGetProcAddress
 * finds by name every call hysim implements (here, cuda_contexts.c and
 * cuda_modules.c). Every other function cuda.h declares is a generated stub
 * that names itself and its caller and returns CUDA_ERROR_NOT_SUPPORTED
 * (gen_api_stubs.sh); cuGetProcAddress does not hand those out
 * (cudaGetDriverEntryPoint does).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "client.h"
#include "cuda_driver.h"
#include "driver_symbols.h"

#undef cuDeviceTotalMem /* cuda.h maps it to _v2; the library exports both */
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev);
#undef cuGetProcAddress /* likewise: CUDA 12's, without the status argument */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

static _Atomic int g_initialized;

static const struct {
    CUresult code;
    const char *name;
    const char *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_PROFILER_DISABLED, "CUDA_ERROR_PROFILER_DISABLED",
     "profiler disabled while using external profiling tool"},
    {CUDA_ERROR_PROFILER_NOT_INITIALIZED, "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
     "profiler not initialized: call cudaProfilerInitialize()"},
    {CUDA_ERROR_PROFILER_ALREADY_STARTED, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "profiler already started"},
    {CUDA_ERROR_PROFILER_ALREADY_STOPPED, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "profiler already stopped"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "API call is not supported in the installed CUDA driver"},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "CUDA-capable device(s) is/are busy or unavailable"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_DEVICE_NOT_LICENSED, "CUDA_ERROR_DEVICE_NOT_LICENSED", "device doesn't have valid Grid license"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current"},
    {CUDA_ERROR_MAP_FAILED, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
    {CUDA_ERROR_UNMAP_FAILED, "CUDA_ERROR_UNMAP_FAILED", "unmapping of buffer object failed"},
    {CUDA_ERROR_ARRAY_IS_MAPPED, "CUDA_ERROR_ARRAY_IS_MAPPED", "array is mapped"},
    {CUDA_ERROR_ALREADY_MAPPED, "CUDA_ERROR_ALREADY_MAPPED", "resource already mapped"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_ALREADY_ACQUIRED, "CUDA_ERROR_ALREADY_ACQUIRED", "resource already acquired"},
    {CUDA_ERROR_NOT_MAPPED, "CUDA_ERROR_NOT_MAPPED", "resource not mapped"},
    {CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "resource not mapped as array"},
    {CUDA_ERROR_NOT_MAPPED_AS_POINTER, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "resource not mapped as pointer"},
    {CUDA_ERROR_ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
    {CUDA_ERROR_UNSUPPORTED_LIMIT, "CUDA_ERROR_UNSUPPORTED_LIMIT", "limit is not supported on this architecture"},
    {CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
     "exclusive-thread device already in use by a different thread"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "invalid OpenGL or DirectX context"},
    {CUDA_ERROR_NVLINK_UNCORRECTABLE, "CUDA_ERROR_NVLINK_UNCORRECTABLE",
     "uncorrectable NVLink error detected during the execution"},
    {CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_JIT_COMPILATION_DISABLED, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation was disabled"},
    {CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
     "the provided execution affinity is not supported"},
    {CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
     "the provided PTX contains unsupported call to cudaDeviceSynchronize"},
    {CUDA_ERROR_CONTAINED, "CUDA_ERROR_CONTAINED", "Invalid access of peer GPU memory over nvlink or a hardware error"},
    {CUDA_ERROR_INVALID_SOURCE, "CUDA_ERROR_INVALID_SOURCE", "device kernel image is invalid"},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
     "shared object symbol not found"},
    {CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
     "shared object initialization failed"},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM",
     "OS call failed or operation not supported on this OS"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {CUDA_ERROR_LOSSY_QUERY, "CUDA_ERROR_LOSSY_QUERY", "attempted introspection would be semantically lossy"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
     "launch uses incompatible texturing mode"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled"},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled"},
    {CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
     "cannot set while device is active in this process"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {CUDA_ERROR_TOO_MANY_PEERS, "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "operation not supported on global/shared address space"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, "CUDA_ERROR_TENSOR_MEMORY_LEAK", "tensor memory not completely freed"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_SYSTEM_NOT_READY, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {CUDA_ERROR_MPS_CONNECTION_FAILED, "CUDA_ERROR_MPS_CONNECTION_FAILED",
     "MPS client failed to connect to the MPS control daemon or the MPS server"},
    {CUDA_ERROR_MPS_RPC_FAILURE, "CUDA_ERROR_MPS_RPC_FAILURE",
     "the remote procedural call between the MPS server and the MPS client failed"},
    {CUDA_ERROR_MPS_SERVER_NOT_READY, "CUDA_ERROR_MPS_SERVER_NOT_READY",
     "MPS server is not ready to accept new MPS client requests"},
    {CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
     "the hardware resources required to create MPS client have been exhausted"},
    {CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
     "the hardware resources required to support device connections have been exhausted"},
    {CUDA_ERROR_MPS_CLIENT_TERMINATED, "CUDA_ERROR_MPS_CLIENT_TERMINATED",
     "the MPS client has been terminated by the server"},
    {CUDA_ERROR_CDP_NOT_SUPPORTED, "CUDA_ERROR_CDP_NOT_SUPPORTED",
     "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it"},
    {CUDA_ERROR_CDP_VERSION_MISMATCH, "CUDA_ERROR_CDP_VERSION_MISMATCH",
     "unsupported interaction between different versions of CUDA Dynamic Parallelism"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_MERGE, "CUDA_ERROR_STREAM_CAPTURE_MERGE",
     "operation would result in a merge of separate capture sequences"},
    {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
     "capture was not ended in the same stream as it began"},
    {CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capturing stream has unjoined work"},
    {CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
     "dependency created on uncaptured work in another stream"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {CUDA_ERROR_CAPTURED_EVENT, "CUDA_ERROR_CAPTURED_EVENT",
     "operation not permitted on an event last recorded in a capturing stream"},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT", "wait operation timed out"},
    {CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "the graph update was not performed because it included changes which violated constraints specific to "
     "instantiated graph update"},
    {CUDA_ERROR_EXTERNAL_DEVICE, "CUDA_ERROR_EXTERNAL_DEVICE",
     "an async error has occured in external entity outside of CUDA"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE",
     "a kernel launch error has occurred due to cluster misconfiguration"},
    {CUDA_ERROR_FUNCTION_NOT_LOADED, "CUDA_ERROR_FUNCTION_NOT_LOADED",
     "the function handle is not loaded when calling an API that requires a loaded function"},
    {CUDA_ERROR_INVALID_RESOURCE_TYPE, "CUDA_ERROR_INVALID_RESOURCE_TYPE",
     "one or more resources passed in are not valid resource types for the operation"},
    {CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
     "one or more resources are insufficient or non-applicable for the operation"},
    {CUDA_ERROR_KEY_ROTATION, "CUDA_ERROR_KEY_ROTATION", "an error happened during the key rotation sequence"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

CUresult hs_driver_from_runtime(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorInvalidValue: return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInvalidDevice: return CUDA_ERROR_INVALID_DEVICE;
    case cudaErrorNoDevice: return CUDA_ERROR_NO_DEVICE;
    case cudaErrorCudartUnloading: return CUDA_ERROR_DEINITIALIZED;
    case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;
    case cudaErrorNotReady: return CUDA_ERROR_NOT_READY;
    case cudaErrorInvalidConfiguration: return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorMemoryAllocation: return CUDA_ERROR_OUT_OF_MEMORY;
    case cudaErrorNotSupported: return CUDA_ERROR_NOT_SUPPORTED;
    case cudaErrorStreamCaptureUnsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case cudaErrorStreamCaptureInvalidated: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case cudaErrorStreamCaptureImplicit: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    default: return CUDA_ERROR_UNKNOWN;
    }
}

CUresult hs_driver_leave(CUresult r)
{
    hs_client_leave();
    return r;
}

/* Devices exist once cuInit succeeded, or the runtime (which calls it) started; dev is checked against them. */
CUresult hs_driver_check_device(CUdevice dev, const hs_gpu_info **info)
{
    *info = hs_client_gpu_info();
    if (!atomic_load(&g_initialized) && !*info)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!*info)
        return CUDA_ERROR_DEINITIALIZED;
    return dev >= 0 && dev < (*info)->device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult hs_driver_initialized(void)
{
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(0, &info);
    return r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_DEINITIALIZED ? r : CUDA_SUCCESS;
}

CUresult hs_driver_current_context(void)
{
    CUresult r = hs_driver_initialized();
    return r != CUDA_SUCCESS ? r : hs_client_ctx_current() < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags)
{
    hs_client_enter();
    if (Flags != 0)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    CUresult r = hs_driver_from_runtime(hs_client_start());
    if (r == CUDA_SUCCESS)
        atomic_store(&g_initialized, 1);
    return hs_driver_leave(r);
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    hs_client_enter();
    if (!driverVersion)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    *driverVersion = 13000;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGetCount(int *count)
{
    hs_client_enter();
    if (!count)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(0, &info);
    if (r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_DEINITIALIZED)
        return hs_driver_leave(r);
    *count = info->device_count;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    hs_client_enter();
    if (!device)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(ordinal, &info);
    if (r == CUDA_SUCCESS)
        *device = ordinal;
    return hs_driver_leave(r);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    hs_client_enter();
    if (!name || len <= 0)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "%s", info->model);
    return hs_driver_leave(r);
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    hs_client_enter();
    if (!uuid)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS)
        hs_client_gpu_uuid(dev, (unsigned char *)uuid->bytes);
    return hs_driver_leave(r);
}

#undef cuDeviceGetUuid /* cuda.h maps it to _v2; the unversioned name takes the same arguments */
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    hs_client_enter();
    if (!bytes)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS)
        *bytes = (size_t)info->memory_bytes;
    return hs_driver_leave(r);
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev) { return cuDeviceTotalMem_v2(bytes, dev); }

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    hs_client_enter();
    if (!pi)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS)
        r = hs_driver_from_runtime(hs_client_device_attribute((int)attrib, dev, pi));
    return hs_driver_leave(r);
}

static int find(CUresult e)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e)
            return (int)i;
    return -1;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    hs_client_enter();
    if (!pStr)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    int i = find(error);
    *pStr = i < 0 ? NULL : errors[i].name;
    return hs_driver_leave(i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    hs_client_enter();
    if (!pStr)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    int i = find(error);
    *pStr = i < 0 ? NULL : errors[i].text;
    return hs_driver_leave(i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

/* The file (library or program) that holds the code at `at`, or the program's name. */
static const char *object_of(const void *at)
{
    Dl_info info;
    return dladdr(at, &info) && info.dli_fname && info.dli_fname[0] ? info.dli_fname : program_invocation_name;
}

/*
 * cuGetProcAddress: the driver's entry points by name. A program that
 * carries its own copy of the CUDA runtime (linked statically: nvcc's
 * default) fetches every driver entry point through it before anything
 * else. hysim replaces the shared runtime, libcudart.so.13, and cannot see
 * the calls such a program makes inside itself; let through, each of them
 * fails ("API call is not supported in the installed CUDA driver") and the
 * run reports zero kernels. Such a runtime's first request (CUDA 13's) is
 * for the empty name, which no program of its own asks for: when hysim's
 * runtime is not loaded, that request stops the process with how to
 * rebuild it. A program on the driver API alone asks for names, and gets
 * them.
 */
static void refuse_own_runtime(const char *symbol, const void *caller)
{
    static _Atomic int ours_loaded; /* once found, for good: hysim's runtime is never unloaded */
    if (atomic_load(&ours_loaded) || (symbol && symbol[0]))
        return;
    void *ours = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
    if (ours) {
        dlclose(ours);
        atomic_store(&ours_loaded, 1);
        return;
    }
    const char *who = object_of(caller);
    fprintf(stderr,
            "hysim: %s carries its own copy of the CUDA runtime (linked statically, nvcc's default "
            "`-cudart static`) instead of loading libcudart.so.13, which hysim replaces: none of its CUDA "
            "calls could be simulated. Rebuild it with `nvcc -cudart shared` (CMake: "
            "CUDA_RUNTIME_LIBRARY Shared).\n",
            who);
    fflush(NULL);
    _exit(1);
}

/* A generated stub's call (cuda_not_supported.h): named once, with its caller. */
__attribute__((visibility("hidden"))) int hs_driver_not_supported(const char *name, const void *caller,
                                                                  _Atomic int *said);
/* What a refused cuGetExportTable means for the library that asked (who). */
static const char *export_table_note(const char *who)
{
    if (strstr(who, "libnvrtc"))
        return ": NVRTC's own copy of the CUDA runtime asks for it; compiling needs no GPU, and a module it "
               "compiled loads and runs through hysim (torch's jiterator compiles this way)";
    return ": only a copy of the CUDA runtime asks for it, and one inside a library or program cannot be "
           "simulated (its CUDA calls fail)";
}

int hs_driver_not_supported(const char *name, const void *caller, _Atomic int *said)
{
    if (!atomic_exchange(said, 1)) {
        const char *who = object_of(caller);
        fprintf(stderr, "hysim: %s (CUDA driver API, called from %s) is not supported yet%s\n", name, who,
                strcmp(name, "cuGetExportTable") == 0 ? export_table_note(who) : "");
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}

/*
 * A driver entry point hysim does not have, asked for by the code at
 * caller: said once per library or program that asks (the first 16), with
 * the first name it asked for. Such a caller is usually a library with its
 * own copy of the CUDA runtime (cuSPARSE), which looks up hundreds.
 */
static void say_not_found(const char *symbol, const void *caller)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char said[16][256];
    static int nsaid;
    const char *who = object_of(caller);
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nsaid && strncmp(said[i], who, sizeof said[i] - 1) != 0)
        i++;
    if (i == nsaid && nsaid < 16) {
        snprintf(said[nsaid++], sizeof said[0], "%s", who);
        fprintf(stderr,
                "hysim: %s asks the CUDA driver for %s (cuGetProcAddress), which is not supported yet: hysim's "
                "libcuda.so.1 has the device queries, contexts, modules and launches only. A library with its own copy "
                "of the CUDA runtime "
                "(cuFFT, cuSPARSE, cuSOLVER and cuDNN are built that way) cannot be simulated: its CUDA "
                "calls fail.\n",
                who, symbol[0] ? symbol : "\"\"");
    }
    pthread_mutex_unlock(&lock);
}

/* The generated stubs' code lies in a section of its own (cuda_not_supported.h), bounded by the linker. */
extern const char __start_hs_driver_stubs[] __attribute__((weak, visibility("hidden")));
extern const char __stop_hs_driver_stubs[] __attribute__((weak, visibility("hidden")));

static int is_stub(const void *fn)
{
    return (const char *)fn >= __start_hs_driver_stubs && (const char *)fn < __stop_hs_driver_stubs;
}

static void *g_self;
static pthread_once_t g_self_once = PTHREAD_ONCE_INIT;

static void find_self(void)
{
    Dl_info info;
    if (dladdr((void *)cuInit, &info) && info.dli_fname)
        g_self = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
}

/* A driver call hysim implements, by name and the caller's CUDA version (driver_symbols.c); not a stub. */
static void *entry_point(const char *symbol, int cuda_version, cuuint64_t flags)
{
    pthread_once(&g_self_once, find_self);
    void *fn = hs_driver_symbol(g_self, symbol, (unsigned)cuda_version,
                                flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    return fn && !is_stub(fn) ? fn : NULL;
}

static CUresult get_proc_address(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status, const void *caller)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = entry_point(symbol, cuda_version, flags);
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!*pfn)
        say_not_found(symbol, caller);
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    refuse_own_runtime(symbol, __builtin_return_address(0));
    hs_client_enter();
    return hs_driver_leave(
        get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus, __builtin_return_address(0)));
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    refuse_own_runtime(symbol, __builtin_return_address(0));
    hs_client_enter();
    return hs_driver_leave(get_proc_address(symbol, pfn, cudaVersion, flags, NULL, __builtin_return_address(0)));
}

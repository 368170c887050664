/*
 * libnvidia-ml.so.1: what programs ask of NVML, answered from the
 * scenario's GPUs (docs/pytorch.md, "NVML"): the GPUs of a server, all of
 * them whatever CUDA_VISIBLE_DEVICES says, as NVML counts them,
 * names, UUIDs and PCI addresses as the CUDA runtime reports them, memory
 * in use, the NVLink ports to the NVSwitch plane, peer-to-peer status, and
 * this process among a GPU's compute processes. Sensors hysim does not
 * model (temperature, power, clocks, utilisation) are generated stubs that
 * say so once and return NVML_ERROR_NOT_SUPPORTED.
 */
#include <math.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nvml.h>

#include "client.h"
#include "gpu_identity.h"
#include "nvml_stub.h"

#define HS_DRIVER_VERSION      "580.65.06" /* the driver CUDA 13.0 shipped with */
#define HS_NVML_VERSION        "13.580.65.06"
#define HS_CUDA_DRIVER_VERSION 13000
#define HS_NVLINK_LINK_GBPS    200.0 /* one NVLink 4 link, each way */

struct nvmlDevice_st {
    int index;
};

static struct nvmlDevice_st g_devices[64];

int hs_nvml_not_supported(const char *name, _Atomic int *said)
{
    if (!atomic_exchange(said, 1))
        fprintf(stderr, "hysim: %s (NVML) is not supported yet\n", name);
    return NVML_ERROR_NOT_SUPPORTED;
}

/* The scenario's GPUs, once this process is connected; NULL before nvmlInit could connect. */
static const hs_gpu_info *gpus(void) { return hs_client_gpu_info(); }

static int device_count(void)
{
    const hs_gpu_info *g = gpus();
    if (!g)
        return 0;
    int n = (int)g->gpus_per_server;
    return n < (int)(sizeof g_devices / sizeof g_devices[0]) ? n : (int)(sizeof g_devices / sizeof g_devices[0]);
}

/* The device behind a handle, or -1 (NVML_ERROR_INVALID_ARGUMENT to the caller). */
static int index_of(nvmlDevice_t d)
{
    int n = device_count();
    if (!d || d < g_devices || d >= g_devices + n)
        return -1;
    return d->index;
}

#define DEVICE_OR_RETURN(d, i)           \
    int i = index_of(d);                 \
    if (!gpus())                         \
        return NVML_ERROR_UNINITIALIZED; \
    if (i < 0)                           \
    return NVML_ERROR_INVALID_ARGUMENT

nvmlReturn_t nvmlInit_v2(void)
{
    if (hs_client_start() != cudaSuccess)
        return NVML_ERROR_DRIVER_NOT_LOADED; /* the client said why */
    for (int i = 0; i < (int)(sizeof g_devices / sizeof g_devices[0]); i++)
        g_devices[i].index = i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    default: return "Unknown Error";
    }
}

static nvmlReturn_t copy_string(char *out, unsigned int len, const char *s)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return copy_string(version, length, HS_DRIVER_VERSION);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    return copy_string(version, length, HS_NVML_VERSION);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    if (!version)
        return NVML_ERROR_INVALID_ARGUMENT;
    *version = HS_CUDA_DRIVER_VERSION;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version) { return nvmlSystemGetCudaDriverVersion_v2(version); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpus())
        return NVML_ERROR_UNINITIALIZED;
    *count = (unsigned)device_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (!device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpus())
        return NVML_ERROR_UNINITIALIZED;
    if (index >= (unsigned)device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &g_devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    DEVICE_OR_RETURN(device, i);
    if (!index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = (unsigned)i;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minor)
{
    return nvmlDeviceGetIndex(device, minor);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    DEVICE_OR_RETURN(device, i);
    (void)i;
    return copy_string(name, length, gpus()->model);
}

/* The UUID the CUDA runtime reports for the server's GPU dev, as text. */
static void uuid_string(int dev, char out[HS_GPU_UUID_TEXT])
{
    hs_client_gpu_uuid_text(gpus()->server * gpus()->gpus_per_server + (uint32_t)dev, out);
}

/* The CUDA device that is the server's GPU dev in this process (CUDA_VISIBLE_DEVICES), or -1. */
static int cuda_device(int dev)
{
    int local = dev - (int)gpus()->visible_first;
    return local >= 0 && local < gpus()->device_count ? local : -1;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    DEVICE_OR_RETURN(device, i);
    char s[HS_GPU_UUID_TEXT];
    uuid_string(i, s);
    return copy_string(uuid, length, s);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpus())
        return NVML_ERROR_UNINITIALIZED;
    for (int i = 0; i < device_count(); i++) {
        char s[HS_GPU_UUID_TEXT];
        uuid_string(i, s);
        if (!strcmp(s, uuid)) {
            *device = &g_devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* PCI device id and vendor (0x10de) by model: what the real boards report; 0 for others. */
static unsigned pci_device_id(const char *model)
{
    if (strstr(model, "H200"))
        return 0x233510deu;
    if (strstr(model, "H100"))
        return 0x233010deu;
    return 0x10deu;
}

/* The PCI address domain 0, bus `bus`, device 0, function 0, of a device with this id and vendor. */
static void fill_pci(unsigned char bus, unsigned device_id, nvmlPciInfo_t *pci)
{
    memset(pci, 0, sizeof *pci);
    pci->bus = bus;
    pci->pciDeviceId = device_id;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, 0u, bus, 0u);
    snprintf(pci->busId, sizeof pci->busId, NVML_DEVICE_PCI_BUS_ID_FMT, 0u, bus, 0u);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    DEVICE_OR_RETURN(device, i);
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci((unsigned char)i, pci_device_id(gpus()->model),
             pci); /* bus = the GPU's index, as cudaDeviceGetPCIBusId says */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetPciInfo_v3(device, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetPciInfo_v3(device, pci);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *device)
{
    if (!bus_id || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpus())
        return NVML_ERROR_UNINITIALIZED;
    unsigned domain = 0, bus, dev, fn;
    if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4 &&
        (domain = 0, sscanf(bus_id, "%x:%x.%x", &bus, &dev, &fn) != 3))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (domain != 0 || dev != 0 || fn != 0 || bus >= (unsigned)device_count())
        return NVML_ERROR_NOT_FOUND;
    *device = &g_devices[bus];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *bus_id, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByPciBusId_v2(bus_id, device);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    DEVICE_OR_RETURN(device, i);
    (void)i;
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = gpus()->cc_major;
    *minor = gpus()->cc_minor;
    return NVML_SUCCESS;
}

/*
 * Device memory in use: what this process allocated on it (each rank has
 * its GPUs to itself); none on a GPU this process does not see.
 */
static nvmlReturn_t memory_of(int dev, unsigned long long *total, unsigned long long *free_bytes,
                              unsigned long long *used)
{
    size_t f, t, u;
    int local = cuda_device(dev);
    if (local < 0) {
        *total = *free_bytes = gpus()->memory_bytes & ~255ull;
        *used = 0;
        return NVML_SUCCESS;
    }
    if (hs_client_mem_info_on(local, &f, &t, &u) != cudaSuccess)
        return NVML_ERROR_UNKNOWN;
    *total = t;
    *free_bytes = f;
    *used = u;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    DEVICE_OR_RETURN(device, i);
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    return memory_of(i, &memory->total, &memory->free, &memory->used);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    DEVICE_OR_RETURN(device, i);
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    memory->reserved = 0;
    return memory_of(i, &memory->total, &memory->free, &memory->used);
}

/* This process, when it holds memory on the device, as the one compute process (v1 or v2 entries). */
static nvmlReturn_t processes(nvmlDevice_t device, unsigned int *count, void *infos, int v2)
{
    DEVICE_OR_RETURN(device, i);
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long total, free_bytes, used;
    nvmlReturn_t r = memory_of(i, &total, &free_bytes, &used);
    if (r != NVML_SUCCESS)
        return r;
    unsigned need = used > 0;
    if (*count < need || (need && !infos)) {
        *count = need;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = need;
    if (!need)
        return NVML_SUCCESS;
    if (v2) {
        nvmlProcessInfo_v2_t *p = infos;
        memset(p, 0, sizeof *p);
        p->pid = (unsigned)getpid();
        p->usedGpuMemory = used;
        p->gpuInstanceId = p->computeInstanceId = 0xFFFFFFFFu; /* not a MIG partition */
    } else {
        nvmlProcessInfo_v1_t *p = infos;
        p->pid = (unsigned)getpid();
        p->usedGpuMemory = used;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v1_t *p)
{
    return processes(device, count, p, 0);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v2_t *p)
{
    return processes(device, count, p, 1);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_t *p)
{
    return processes(device, count, p, 1);
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t caps,
                                    nvmlGpuP2PStatus_t *status)
{
    DEVICE_OR_RETURN(a, i);
    DEVICE_OR_RETURN(b, j);
    (void)caps;
    if (!status)
        return NVML_ERROR_INVALID_ARGUMENT;
    *status = i == j ? NVML_P2P_STATUS_NOT_SUPPORTED : NVML_P2P_STATUS_OK; /* one server's GPUs: peers */
    return NVML_SUCCESS;
}

/* NVLink ports of a GPU: the scenario's per-GPU NVLink rate in 200 Gb/s links, at most 18; 0 without NVLink. */
static unsigned nvlink_links(void)
{
    double n = round(gpus()->nvlink_gbps / HS_NVLINK_LINK_GBPS);
    return n < 1 ? 0 : n > NVML_NVLINK_MAX_LINKS ? NVML_NVLINK_MAX_LINKS : (unsigned)n;
}

#define LINK_OR_RETURN(d, link)          \
    DEVICE_OR_RETURN(d, i_);             \
    (void)i_;                            \
    if (nvlink_links() == 0)             \
        return NVML_ERROR_NOT_SUPPORTED; \
    if ((link) >= nvlink_links())        \
    return NVML_ERROR_INVALID_ARGUMENT

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *active)
{
    LINK_OR_RETURN(device, link);
    if (!active)
        return NVML_ERROR_INVALID_ARGUMENT;
    *active = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t *type)
{
    LINK_OR_RETURN(device, link);
    if (!type)
        return NVML_ERROR_INVALID_ARGUMENT;
    *type = NVML_NVLINK_DEVICE_TYPE_SWITCH; /* every link goes to the NVSwitch plane */
    return NVML_SUCCESS;
}

/* A switch port's address: the switches sit on buses 0x80 and up, one per link. */
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
    LINK_OR_RETURN(device, link);
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci((unsigned char)(0x80 + link), 0x22a310deu /* NVSwitch, third generation */, pci);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, pci);
}

/* Not part of a multi-node NVLink domain (an HGX server's NVSwitches are its own), as such GPUs report. */
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *info)
{
    DEVICE_OR_RETURN(device, i);
    (void)i;
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned version = info->version;
    size_t size = version & 0xffffffu; /* NVML_STRUCT_VERSION: the caller's struct size, the version above */
    if (size < offsetof(nvmlGpuFabricInfoV_t, healthMask))
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memset(info, 0, size < sizeof *info ? size : sizeof *info);
    info->version = version;
    info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    info->status = NVML_SUCCESS;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *info)
{
    DEVICE_OR_RETURN(device, i);
    (void)i;
    if (!info)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(info, 0, sizeof *info);
    info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

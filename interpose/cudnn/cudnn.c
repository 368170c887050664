/*
 * libcudnn.so.9: the handle, version and error calls of cuDNN 9.19 as the
 * torch wheel uses them; the backend (graph) API is cudnn_backend.c's, and
 * every other function of the real library a generated stub that names
 * itself. docs/pytorch.md, "cuDNN".
 */
#include <cudnn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "cudnn_internal.h"
#include "cudnn_stub.h"

int hs_cudnn_not_supported(const char *name, _Atomic int *said)
{
    if (!atomic_exchange(said, 1))
        fprintf(stderr, "hysim: %s (cuDNN) is not supported yet\n", name);
    return CUDNN_STATUS_NOT_SUPPORTED;
}

size_t cudnnGetVersion(void) { return CUDNN_VERSION; }
size_t cudnnGetMaxDeviceVersion(void) { return 1000; /* sm_100: what 9.19 knows */ }
size_t cudnnGetCudartVersion(void) { return 13000; }

cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CUDNN_STATUS_BAD_PARAM;
    switch (type) {
    case MAJOR_VERSION: *value = CUDNN_MAJOR; return CUDNN_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUDNN_MINOR; return CUDNN_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; return CUDNN_STATUS_SUCCESS;
    default: return CUDNN_STATUS_BAD_PARAM;
    }
}

const char *cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED (hysim)";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    default: return "CUDNN_STATUS_UNKNOWN (hysim)";
    }
}

void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (message && max_size)
        snprintf(message, max_size, "%s", hs_cudnn_last_error());
}

/* A handle: the stream its work goes to (0: the legacy default stream). */
struct cudnnContext {
    cudaStream_t stream;
};

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    if (!handle)
        return CUDNN_STATUS_BAD_PARAM;
    if (hs_client_start() != cudaSuccess)
        return CUDNN_STATUS_NOT_INITIALIZED;
    *handle = calloc(1, sizeof **handle);
    return *handle ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
    if (!handle)
        return CUDNN_STATUS_BAD_PARAM;
    handle->stream = stream;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *stream)
{
    if (!handle || !stream)
        return CUDNN_STATUS_BAD_PARAM;
    *stream = handle->stream;
    return CUDNN_STATUS_SUCCESS;
}

cudaStream_t hs_cudnn_stream(cudnnHandle_t handle) { return handle ? handle->stream : NULL; }

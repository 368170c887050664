/*
 * Who a simulated GPU is (gpu_identity.c): its UUID, the "GPU-..." form
 * NVML and CUDA_VISIBLE_DEVICES use, and which of a server's GPUs
 * CUDA_VISIBLE_DEVICES leaves a process.
 */
#ifndef HYSIM_INTERPOSE_GPU_IDENTITY_H
#define HYSIM_INTERPOSE_GPU_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "client.h" /* HS_API */

#define HS_GPU_UUID_TEXT 41 /* "GPU-" + 36 characters + NUL */

/* The UUID of the scenario's GPU `global`: "hysim-gpu", then the index (big-endian) in the last four bytes. */
__attribute__((visibility("hidden"))) void hs_gpu_uuid(uint32_t global, unsigned char out[16]);
/* Its text form, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case hex). */
HS_API void hs_client_gpu_uuid_text(uint32_t global, char out[HS_GPU_UUID_TEXT]);

/*
 * The GPUs of server `server` (of `gpus` each) that CUDA_VISIBLE_DEVICES
 * (`value`, NULL when unset) leaves: *first (index in the server) and
 * *count. As CUDA reads it: a comma-separated list of indices or UUID
 * prefixes ("GPU-..."), read up to the first entry that names no GPU or one
 * named before. hysim supports a contiguous ascending range only: -1 with a
 * message otherwise, and when no GPU is left.
 */
int hs_visible_devices(const char *value, uint32_t server, uint32_t gpus, uint32_t *first, uint32_t *count, char *err,
                       size_t errlen);

#endif

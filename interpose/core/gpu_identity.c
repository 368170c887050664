/*
 * Who a simulated GPU is: its UUID, and CUDA_VISIBLE_DEVICES
 * (docs/pytorch.md, "NVML").
 */
#include "gpu_identity.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void hs_gpu_uuid(uint32_t global, unsigned char out[16])
{
    memset(out, 0, 16);
    memcpy(out, "hysim-gpu", 9);
    for (int i = 0; i < 4; i++)
        out[12 + i] = (unsigned char)(global >> (24 - 8 * i));
}

void hs_client_gpu_uuid_text(uint32_t global, char out[HS_GPU_UUID_TEXT])
{
    unsigned char u[16];
    hs_gpu_uuid(global, u);
    int n = snprintf(out, HS_GPU_UUID_TEXT, "GPU-");
    for (int k = 0; k < 16; k++)
        n += snprintf(out + n, (size_t)(HS_GPU_UUID_TEXT - n), "%s%02x",
                      k == 4 || k == 6 || k == 8 || k == 10 ? "-" : "", u[k]);
}

/* The server's GPU an entry names (an index, or a UUID prefix naming one GPU), or -1. */
static int entry_gpu(const char *e, size_t len, uint32_t server, uint32_t gpus)
{
    while (len && isspace((unsigned char)*e))
        e++, len--;
    while (len && isspace((unsigned char)e[len - 1]))
        len--;
    if (len == 0)
        return -1;
    if (isdigit((unsigned char)e[0])) {
        char buf[16], *end;
        if (len >= sizeof buf)
            return -1;
        memcpy(buf, e, len);
        buf[len] = '\0';
        unsigned long v = strtoul(buf, &end, 10);
        return *end == '\0' && v < gpus ? (int)v : -1;
    }
    int found = -1;
    for (uint32_t p = 0; p < gpus; p++) {
        char text[HS_GPU_UUID_TEXT];
        hs_client_gpu_uuid_text(server * gpus + p, text);
        if (len <= strlen(text) && !strncasecmp(text, e, len)) {
            if (found >= 0)
                return -1; /* a prefix of two: names none */
            found = (int)p;
        }
    }
    return found;
}

int hs_visible_devices(const char *value, uint32_t server, uint32_t gpus, uint32_t *first, uint32_t *count, char *err,
                       size_t errlen)
{
    if (!value) {
        *first = 0;
        *count = gpus;
        return 0;
    }
    uint32_t n = 0, start = 0;
    int contiguous = 1;
    uint64_t seen = 0;
    for (const char *e = value; n < gpus;) {
        const char *comma = strchr(e, ',');
        size_t len = comma ? (size_t)(comma - e) : strlen(e);
        int g = entry_gpu(e, len, server, gpus);
        if (g < 0 || (g < 64 && (seen >> g & 1)))
            break;
        if (g < 64)
            seen |= 1ull << g;
        if (n == 0)
            start = (uint32_t)g;
        else if ((uint32_t)g != start + n)
            contiguous = 0;
        n++;
        if (!comma)
            break;
        e = comma + 1;
    }
    if (n == 0) {
        snprintf(err, errlen, "CUDA_VISIBLE_DEVICES=%s leaves no GPU of the server's %u visible", value, gpus);
        return -1;
    }
    if (!contiguous) {
        snprintf(err, errlen,
                 "CUDA_VISIBLE_DEVICES=%s: hysim supports a contiguous ascending range of a server's GPUs "
                 "only (such as 2,3), not a reordered or gapped list",
                 value);
        return -1;
    }
    *first = start;
    *count = n;
    return 0;
}

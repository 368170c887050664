/*
 * CUDA_VISIBLE_DEVICES as hysim reads it (interpose/core/gpu_identity.c), on its
 * own: indices and UUID prefixes, CUDA's stop at the first entry that names
 * no GPU or one already named, and a clear refusal of what hysim cannot map.
 */
#include <string.h>

#include "gpu_identity.h"
#include "test_check.h"

/* The range value leaves on server 1 of 8 GPUs: "first+count", or the error's first words. */
static const char *range(const char *value)
{
    static char out[512];
    uint32_t first = 99, count = 99;
    char err[400] = "";
    if (hs_visible_devices(value, 1, 8, &first, &count, err, sizeof err) < 0)
        snprintf(out, sizeof out, "error: %s", err);
    else
        snprintf(out, sizeof out, "%u+%u", first, count);
    return out;
}

static void expect(const char *value, const char *want)
{
    const char *got = range(value);
    CHECK(!strncmp(got, want, strlen(want)), "CUDA_VISIBLE_DEVICES=%s: %s, not %s", value ? value : "(unset)", got,
          want);
}

int main(void)
{
    char text[HS_GPU_UUID_TEXT];
    hs_client_gpu_uuid_text(10, text); /* server 1's GPU 2 */
    CHECK(!strcmp(text, "GPU-68797369-6d2d-6770-7500-00000000000a"), "UUID text %s", text);
    expect(NULL, "0+8");
    expect("3", "3+1");
    expect("2,3,4", "2+3");
    expect(" 2, 3 ", "2+2");
    expect("2,3,9,4", "2+2"); /* 9 names no GPU: CUDA reads no further */
    expect("2,3,2", "2+2");   /* named before: the same */
    expect("GPU-68797369-6d2d-6770-7500-00000000000a,GPU-68797369-6d2d-6770-7500-00000000000b", "2+2");
    expect("GPU-68797369-6d2d-6770-7500-00000000000f", "7+1");                              /* server 1's last GPU */
    expect("GPU-68797369-6d2d-6770-7500-000000000001", "error: CUDA_VISIBLE_DEVICES=GPU-"); /* server 0's */
    expect("GPU-6879", "error: CUDA_VISIBLE_DEVICES=GPU-6879 leaves no GPU");               /* a prefix of all: none */
    expect("", "error: CUDA_VISIBLE_DEVICES= leaves no GPU");
    expect("-1", "error: CUDA_VISIBLE_DEVICES=-1 leaves no GPU");
    expect("2,0", "error: CUDA_VISIBLE_DEVICES=2,0: hysim supports a contiguous ascending range");
    expect("1,3", "error: CUDA_VISIBLE_DEVICES=1,3: hysim supports");
    printf("visible devices: ok\n");
    return 0;
}

/*
 * What a few of torch's kernels compute, for the values a program reads
 * back (docs/values.md, "Kernels hysim computes"): a histogram (torch.histc,
 * a mixture of experts' tokens per expert), exact when its input is known
 * and from the scenario's routing otherwise, a sum of plain integers or
 * floats, and an inclusive scan (torch.cumsum) of integers. The kernel's
 * arguments are read as the pinned torch lays them out; one that does not
 * check out computes nothing. Prefix hs_kv_: kernel values.
 */
#ifndef HS_KERNEL_VALUES_H
#define HS_KERNEL_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* HS_KV_NONZERO_COUNT: torch.nonzero's count, which hysim does not compute (said once, on stderr). */
enum hs_kv_kind { HS_KV_NONE, HS_KV_HISTOGRAM, HS_KV_SUM, HS_KV_SCAN, HS_KV_NONZERO_COUNT };

/* A kernel's model, decided once from its mangled name: element types as the Itanium ABI's letters. */
typedef struct hs_kv_model {
    enum hs_kv_kind kind;
    char scalar; /* input elements */
    char acc;    /* a sum's accumulator */
    char out;    /* output elements */
    char index;  /* a histogram's IndexType; a scan's offset type */
} hs_kv_model;

/* What the kernel named `mangled` computes, if hysim knows (kind HS_KV_NONE otherwise). */
hs_kv_model hs_kv_model_of(const char *mangled);

/* How a histogram of unknown values comes out (hysim.proto Setup.routing). */
enum hs_kv_routing { HS_KV_ROUTING_BALANCED, HS_KV_ROUTING_ZIPF };
void hs_kv_setup(enum hs_kv_routing routing, double zipf_s, uint64_t seed);

/* A launch's result, written once the launch is counted (hs_kv_apply). */
typedef struct hs_kv_result {
    uintptr_t dst;
    size_t len;
    uint8_t *bytes; /* NULL: dst[0, len) is unknown now */
} hs_kv_result;

/* Reads the inputs of a launch of a kernel of model m with arguments args (cudaLaunchKernel's). */
void hs_kv_eval(const hs_kv_model *m, void *const *args, hs_kv_result *r);
/* Writes r (if anything) into the known values and frees it. */
void hs_kv_apply(hs_kv_result *r);

#endif

/*
 * Kernels hysim computes: torch's histogram and sum kernels, their
 * arguments read as ATen lays them out (TensorInfo, ReduceOp). A launch
 * whose arguments do not check out leaves its output unknown.
 * docs/values.md, "Kernels hysim computes".
 */
#include "kernel_values.h"

#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

#define TENSORINFO_DIMS 25 /* ATen's MAX_TENSORINFO_DIMS */
#define OFFSET_DIMS     25 /* ATen's MAX_DIMS of OffsetCalculator (CUDA) */
#define SUM_MAX_ELEMS   8192

/* ---- element types, by their Itanium letters ---- */

/* Bytes of an element of type t (0: not a plain type), and how it reads: signed, or a float. */
typedef struct elem_type {
    char letter;
    unsigned char size;
    bool is_signed, is_float;
} elem_type;

static const elem_type ELEM_TYPES[] = {
    {'a', 1, true, false}, {'h', 1, false, false}, {'s', 2, true, false}, {'t', 2, false, false},
    {'i', 4, true, false}, {'j', 4, false, false}, {'l', 8, true, false}, {'m', 8, false, false},
    {'x', 8, true, false}, {'y', 8, false, false}, {'f', 4, true, true},  {'d', 8, true, true},
};

static const elem_type *elem_of(char t)
{
    for (size_t i = 0; i < sizeof ELEM_TYPES / sizeof ELEM_TYPES[0]; i++)
        if (ELEM_TYPES[i].letter == t)
            return &ELEM_TYPES[i];
    return NULL;
}

static size_t elem_size(char t)
{
    const elem_type *e = elem_of(t);
    return e ? e->size : 0;
}

static bool is_float(char t) { return t == 'f' || t == 'd'; }

/* One element as a number: integers exactly in int64, floats in double. */
typedef struct num {
    bool fp;
    int64_t i;
    double f;
} num;

/* Integers are read and written as their low bytes (the hosts hysim runs on are little-endian). */
static num load(char t, const uint8_t *p)
{
    const elem_type *e = elem_of(t);
    num v = {is_float(t), 0, 0};
    if (!e)
        return v;
    if (t == 'f') {
        float x;
        memcpy(&x, p, 4);
        v.f = x;
    } else if (t == 'd') {
        memcpy(&v.f, p, 8);
    } else {
        uint64_t u = 0;
        memcpy(&u, p, e->size);
        unsigned shift = 64 - 8 * e->size;
        v.i = e->is_signed && shift ? (int64_t)(u << shift) >> shift : (int64_t)u;
    }
    return v;
}

static void store(char t, uint8_t *p, num v)
{
    const elem_type *e = elem_of(t);
    int64_t i = v.fp ? (int64_t)v.f : v.i;
    double f = v.fp ? v.f : (double)v.i;
    if (!e)
        return;
    if (t == 'f') {
        float x = (float)f;
        memcpy(p, &x, 4);
    } else if (t == 'd') {
        memcpy(p, &f, 8);
    } else {
        memcpy(p, &i, e->size);
    }
}

/* ---- which kernels ---- */

/* The letter at *s if it names a plain element type; advances past it. */
static char type_letter(const char **s)
{
    char c = **s;
    if (!elem_size(c))
        return 0;
    (*s)++;
    return c;
}

static bool eat(const char **s, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*s, lit, n))
        return false;
    *s += n;
    return true;
}

/* at::cuda::kernelHistogram1D<output, input, IndexType, ...> of CUDA_tensor_histogram<.., .., HasWeights = false>. */
static hs_kv_model histogram_model(const char *s)
{
    hs_kv_model m = {HS_KV_NONE, 0, 0, 0, 0};
    char out = type_letter(&s), in = type_letter(&s), index = type_letter(&s);
    const char *h = strstr(s, "CUDA_tensor_histogramI");
    if (!out || out != in || (index != 'l' && index != 'i') || !h)
        return m;
    h += strlen("CUDA_tensor_histogramI");
    if (type_letter(&h) != in || type_letter(&h) != in || !eat(&h, "Lb0E"))
        return m; /* weighted: not a count */
    m.kind = HS_KV_HISTOGRAM;
    m.scalar = in;
    m.out = out;
    m.index = index;
    return m;
}

/* at::native::reduce_kernel<.., .., ReduceOp<scalar, func_wrapper_t<acc, sum_functor<s, a, o>::...>, unsigned, out>> */
static hs_kv_model sum_model(const char *s)
{
    hs_kv_model m = {HS_KV_NONE, 0, 0, 0, 0};
    const char *p = strstr(s, "8ReduceOpI");
    if (!p)
        return m;
    p += strlen("8ReduceOpI");
    char scalar = type_letter(&p);
    if (!scalar || !eat(&p, "NS0_14func_wrapper_tI"))
        return m;
    char acc = type_letter(&p);
    if (!acc || !eat(&p, "ZNS0_11sum_functorI"))
        return m;
    char fs = type_letter(&p), fa = type_letter(&p), fo = type_letter(&p);
    if (fs != scalar || fa != acc || !fo)
        return m;
    /* ... the lambda's type, then "EE", the index type (unsigned int only) and the output type */
    char tail[8] = {'E', 'E', 'j', fo, 'L', 'i', 0};
    if (!strstr(p, tail) || (elem_size(acc) != 4 && elem_size(acc) != 8))
        return m;
    m.kind = HS_KV_SUM;
    m.scalar = scalar;
    m.acc = acc;
    m.out = fo;
    return m;
}

/* cub's DeviceScanKernel<policy_hub<in, out, acc, offset, plus<acc>>, ..., NullType (no initial value: an inclusive
 * sum), ...>(in, out, tile state, start tile, op, init, num_items): torch.cumsum of integers */
static hs_kv_model scan_model(const char *s)
{
    hs_kv_model m = {HS_KV_NONE, 0, 0, 0, 0};
    if (!eat(&s, "NS2_10policy_hubI"))
        return m;
    char in = type_letter(&s), out = type_letter(&s), acc = type_letter(&s), off = type_letter(&s);
    char plus[16] = "St4plusI";
    plus[8] = acc;
    strcpy(plus + 9, "EE");
    if (!in || in != out || in != acc || is_float(in) || (off != 'j' && off != 'm') || !eat(&s, plus) ||
        !strstr(s, "NS0_8NullTypeE") || !strstr(s, "EEvT0_T1_T2_iT3_T4_T5_"))
        return m;
    m.kind = HS_KV_SCAN;
    m.scalar = m.acc = m.out = in;
    m.index = off;
    return m;
}

hs_kv_model hs_kv_model_of(const char *mangled)
{
    hs_kv_model none = {HS_KV_NONE, 0, 0, 0, 0};
    const char *s = mangled;
    if (!s)
        return none;
    if (eat(&s, "_ZN14at_cuda_detail3cub6detail6reduce") && strstr(s, "_Nonzero_cu_") && strstr(s, "NonZeroOp"))
        return (hs_kv_model){HS_KV_NONZERO_COUNT, 0, 0, 0, 0};
    s = mangled;
    if (eat(&s, "_ZN2at4cuda17kernelHistogram1DI"))
        return histogram_model(s);
    if (eat(&s, "_ZN2at6native13reduce_kernelI")) /* <max threads, min blocks, ReduceOp>: any launch bounds */
        return sum_model(s);
    s = mangled;
    if (eat(&s, "_ZN14at_cuda_detail3cub6detail4scan16DeviceScanKernelI"))
        return scan_model(s);
    return none;
}

/* ---- routing: the histogram of values hysim does not know ---- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static enum hs_kv_routing g_routing;
static double g_zipf_s = 1.0;
static uint64_t g_seed = 1;
static uint64_t g_draws; /* histograms drawn so far in this process */
static struct {
    uintptr_t input;
    int64_t total, bins;
    uint64_t draw, kernels;
    bool set;
} g_last; /* the last draw: a second histogram of the same input reuses it */

void hs_kv_setup(enum hs_kv_routing routing, double zipf_s, uint64_t seed)
{
    pthread_mutex_lock(&g_lock);
    g_routing = routing;
    g_zipf_s = zipf_s;
    g_seed = seed;
    pthread_mutex_unlock(&g_lock);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * counts[0, bins) summing to total: even (the first total % bins one more),
 * or Zipf's law with exponent s over the bins in an order drawn from
 * (seed, draw), shares rounded by largest remainder.
 */
static void route(int64_t *counts, int64_t bins, int64_t total, enum hs_kv_routing routing, double s, uint64_t seed,
                  uint64_t draw)
{
    if (routing == HS_KV_ROUTING_BALANCED) {
        for (int64_t b = 0; b < bins; b++)
            counts[b] = total / bins + (b < total % bins);
        return;
    }
    int64_t *order = malloc((size_t)bins * sizeof *order);
    double *frac = malloc((size_t)bins * sizeof *frac);
    if (!order || !frac) {
        free(order);
        free(frac);
        route(counts, bins, total, HS_KV_ROUTING_BALANCED, s, seed, draw);
        return;
    }
    uint64_t x = seed ^ (draw * 0xd1342543de82ef95ull);
    for (int64_t b = 0; b < bins; b++)
        order[b] = b;
    for (int64_t b = bins - 1; b > 0; b--) {
        int64_t j = (int64_t)(splitmix64(&x) % (uint64_t)(b + 1));
        int64_t t = order[b];
        order[b] = order[j];
        order[j] = t;
    }
    double sum = 0;
    for (int64_t r = 0; r < bins; r++)
        sum += pow((double)(r + 1), -s);
    int64_t given = 0;
    for (int64_t r = 0; r < bins; r++) {
        double share = (double)total * pow((double)(r + 1), -s) / sum;
        counts[order[r]] = (int64_t)floor(share);
        frac[r] = share - floor(share);
        given += counts[order[r]];
    }
    for (; given < total; given++) { /* the largest remainders, the more popular first on ties */
        int64_t best = 0;
        for (int64_t r = 1; r < bins; r++)
            if (frac[r] > frac[best])
                best = r;
        counts[order[best]]++;
        frac[best] = -1;
    }
    free(order);
    free(frac);
}

/* ---- histogram ---- */

/* TensorInfo<T, IndexType>: T *data; IndexType sizes[25], strides[25]; int dims. */
typedef struct tensor_info {
    uintptr_t data;
    int dims;
    int64_t sizes[TENSORINFO_DIMS], strides[TENSORINFO_DIMS];
} tensor_info;

static bool read_tensor_info(const uint8_t *p, char index, tensor_info *t)
{
    size_t isz = elem_size(index);
    memcpy(&t->data, p, sizeof t->data);
    memcpy(&t->dims, p + 8 + 2 * TENSORINFO_DIMS * isz, sizeof t->dims);
    if (t->dims < 1 || t->dims > TENSORINFO_DIMS || !t->data)
        return false;
    for (int d = 0; d < t->dims; d++) {
        t->sizes[d] = load(index, p + 8 + (size_t)d * isz).i;
        t->strides[d] = load(index, p + 8 + (size_t)(TENSORINFO_DIMS + d) * isz).i;
        if (t->sizes[d] < 0 || t->strides[d] < 0)
            return false;
    }
    return true;
}

/* Element offset of linear index i (ATen's IndexToOffset: the last dimension varies fastest). */
static int64_t info_offset(const tensor_info *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->dims - 1; d >= 0; d--) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    return off;
}

/* The input's n elements, when every byte of them is known (NULL otherwise; free it). */
static uint8_t *known_elements(const tensor_info *t, char type, int64_t n)
{
    size_t es = elem_size(type);
    int64_t span = 0;
    for (int d = 0; d < t->dims; d++)
        span += (t->sizes[d] - 1) * t->strides[d];
    span = (span + 1) * (int64_t)es;
    if (n <= 0 || span <= 0 || span > (int64_t)HS_VALUES_MAX_BYTES)
        return NULL;
    uint8_t *raw = malloc((size_t)span), *out = malloc((size_t)n * es);
    if (raw && out && hs_values_read(raw, t->data, (size_t)span) == (size_t)span) {
        for (int64_t i = 0; i < n; i++)
            memcpy(out + i * (int64_t)es, raw + info_offset(t, i) * (int64_t)es, es);
        free(raw);
        return out;
    }
    free(raw);
    free(out);
    return NULL;
}

/* ATen's getBin, in the accumulate type; -1: outside [min, max]. */
static int64_t bin_of(num v, num lo, num hi, int64_t bins, char type)
{
    int64_t b;
    if (is_float(type)) {
        if (!(v.f >= lo.f && v.f <= hi.f))
            return -1;
        b = type == 'f' ? (int64_t)(int)((float)(v.f - lo.f) * (float)bins / (float)(hi.f - lo.f))
                        : (int64_t)(int)((v.f - lo.f) * (double)bins / (hi.f - lo.f));
    } else {
        if (v.i < lo.i || v.i > hi.i || hi.i == lo.i)
            return -1;
        b = (int64_t)(int)((v.i - lo.i) * bins / (hi.i - lo.i));
    }
    return b == bins ? bins - 1 : b;
}

/*
 * kernelHistogram1D(TensorInfo a, TensorInfo p, TensorInfo b, int64_t nbins,
 * acc minvalue, acc maxvalue, IndexType totalElements, Op): a the counts, b the input.
 */
static void eval_histogram(const hs_kv_model *m, void *const *args, hs_kv_result *r)
{
    tensor_info a, b;
    char index = m->index;
    if (!read_tensor_info(args[0], index, &a) || !read_tensor_info(args[2], index, &b) || a.dims != 1 ||
        a.strides[0] != 1)
        return;
    int64_t bins, total = load(index, args[6]).i;
    memcpy(&bins, args[3], sizeof bins);
    size_t es = elem_size(m->out);
    if (bins < 1 || a.sizes[0] != bins || total < 0)
        return;
    r->dst = a.data; /* the counts' range: from here on it is written, known or not */
    r->len = (size_t)bins * es;
    int64_t n = 1;
    for (int d = 0; d < b.dims; d++)
        n *= b.sizes[d];
    if (n != total || r->len > HS_VALUES_MAX_BYTES)
        return;
    char acc = is_float(m->scalar) ? m->scalar : 'l'; /* at::acc_type<T, true>: float, double or int64_t */
    num lo = load(acc, args[4]), hi = load(acc, args[5]);
    int64_t *counts = calloc((size_t)bins, sizeof *counts);
    r->bytes = malloc((size_t)bins * es);
    if (!counts || !r->bytes) {
        free(counts);
        free(r->bytes);
        r->bytes = NULL;
        return;
    }
    uint8_t *in = known_elements(&b, m->scalar, n);
    if (in) { /* exact */
        for (int64_t i = 0; i < n; i++) {
            int64_t k = bin_of(load(m->scalar, in + i * (int64_t)elem_size(m->scalar)), lo, hi, bins, acc);
            if (k >= 0)
                counts[k]++;
        }
        free(in);
    } else {
        pthread_mutex_lock(&g_lock);
        uint64_t kernels = hs_values_kernels();
        bool again = g_last.set && g_last.input == b.data && g_last.total == total && g_last.bins == bins &&
                     kernels - g_last.kernels <= HS_VALUES_KERNEL_WINDOW;
        uint64_t draw = again ? g_last.draw : g_draws++;
        g_last.input = b.data;
        g_last.total = total;
        g_last.bins = bins;
        g_last.draw = draw;
        g_last.kernels = kernels;
        g_last.set = true;
        enum hs_kv_routing routing = g_routing;
        double s = g_zipf_s;
        uint64_t seed = g_seed;
        pthread_mutex_unlock(&g_lock);
        route(counts, bins, total, routing, s, seed, draw);
    }
    for (int64_t k = 0; k < bins; k++)
        store(m->out, r->bytes + k * (int64_t)es, (num){false, counts[k], 0});
    free(counts);
}

/* ---- sum ---- */

/* ATen's OffsetCalculator<NARGS, uint32_t> and ReduceConfig (Reduce.cuh), field for field. */
typedef struct int_divider {
    uint32_t divisor, m1, shift;
} int_divider;
typedef struct offset_calc1 {
    int dims;
    int_divider sizes[OFFSET_DIMS];
    uint32_t strides[OFFSET_DIMS][1];
} offset_calc1;
typedef struct offset_calc2 {
    int dims;
    int_divider sizes[OFFSET_DIMS];
    uint32_t strides[OFFSET_DIMS][2];
} offset_calc2;
typedef struct reduce_config {
    int element_size_bytes, num_inputs, num_outputs, step_input, step_output, ctas_per_output;
    int input_mult[3], output_mult[2];
    int block_width, block_height, num_threads;
    bool vectorize_input;
    int output_vec_size;
} reduce_config;
/*
 * ReduceOp<scalar, func_wrapper_t, uint32_t, out> is {ops (an empty struct: 1 byte), arg_t ident, then this
 * tail}: for a 4- or 8-byte accumulator the ident lies at offset A = sizeof(arg_t) and the tail, 8-aligned,
 * at 2A (at 8 or 16 bytes, 984 or 992 bytes to src in all, as ATen's for the pinned torch:
 * tests/torch/collectives.py sums with both).
 */
typedef struct reduce_op_tail {
    reduce_config config;
    offset_calc1 input_calc;
    offset_calc2 output_calc;
    const void *src;
    const char *dst[2];
    void *acc_buf, *cta_buf;
    int *semaphores;
    int64_t base_idx;
    bool accumulate, final_output;
    int noutputs;
} reduce_op_tail;
_Static_assert(offsetof(reduce_op_tail, src) == 976 && sizeof(reduce_op_tail) == 1040, "ReduceOp's layout");

/* The byte offsets calc gives linear index i (ATen's get: the first dimension varies fastest). */
static void calc_get(int dims, const int_divider *sizes, const uint32_t *strides, int nargs, uint64_t i, uint64_t *off)
{
    for (int a = 0; a < nargs; a++)
        off[a] = 0;
    for (int d = 0; d < dims; d++) {
        uint64_t div = sizes[d].divisor;
        for (int a = 0; a < nargs; a++)
            off[a] += (i % div) * strides[d * nargs + a];
        i /= div;
    }
}

static bool calc_ok(int dims, const int_divider *sizes)
{
    if (dims < 0 || dims > OFFSET_DIMS)
        return false;
    for (int d = 0; d < dims; d++)
        if (sizes[d].divisor < 1 || sizes[d].divisor > (uint32_t)INT32_MAX)
            return false;
    return true;
}

/* A sum's ReduceOp argument: *ident its identity, *op the rest; whether it is one pass hysim computes. */
static bool read_sum_args(const hs_kv_model *m, void *const *args, const uint8_t **ident, reduce_op_tail *op)
{
    size_t a = elem_size(m->acc);
    *ident = (const uint8_t *)args[0] + a;
    memcpy(op, (const uint8_t *)args[0] + 2 * a, sizeof *op);
    const reduce_config *c = &op->config;
    return !op->accumulate && op->final_output && op->noutputs == 1 && !op->acc_buf && op->src && op->dst[0] &&
           c->element_size_bytes == (int)elem_size(m->scalar) && c->num_inputs >= 1 && c->num_outputs >= 1 &&
           (int64_t)c->num_inputs * c->num_outputs <= SUM_MAX_ELEMS &&
           calc_ok(op->input_calc.dims, op->input_calc.sizes) && calc_ok(op->output_calc.dims, op->output_calc.sizes);
}

/*
 * reduce_kernel(ReduceOp): output o is the sum over i < num_inputs of the
 * element at src + output_calc(o)[1] + input_calc(i)[0], written at
 * dst[0] + output_calc(o)[0] (offsets in bytes).
 */
static void eval_sum(const hs_kv_model *m, void *const *args, hs_kv_result *r)
{
    const uint8_t *ident_at;
    reduce_op_tail s;
    if (!read_sum_args(m, args, &ident_at, &s))
        return;
    size_t es = elem_size(m->scalar), os = elem_size(m->out);
    int nin = s.config.num_inputs, nout = s.config.num_outputs;
    uint64_t lo = UINT64_MAX, hi = 0, out_lo = UINT64_MAX, out_hi = 0;
    uint64_t *in_off = malloc((size_t)nin * sizeof *in_off), *out_off = malloc((size_t)nout * 2 * sizeof *out_off);
    uint8_t *raw = NULL;
    if (!in_off || !out_off)
        goto done;
    for (int i = 0; i < nin; i++)
        calc_get(s.input_calc.dims, s.input_calc.sizes, &s.input_calc.strides[0][0], 1, (uint64_t)i, &in_off[i]);
    for (int o = 0; o < nout; o++) {
        calc_get(s.output_calc.dims, s.output_calc.sizes, &s.output_calc.strides[0][0], 2, (uint64_t)o,
                 &out_off[2 * o]);
        out_lo = out_off[2 * o] < out_lo ? out_off[2 * o] : out_lo;
        out_hi = out_off[2 * o] + os > out_hi ? out_off[2 * o] + os : out_hi;
        for (int i = 0; i < nin; i++) {
            uint64_t at = out_off[2 * o + 1] + in_off[i];
            lo = at < lo ? at : lo;
            hi = at + es > hi ? at + es : hi;
        }
    }
    r->dst = (uintptr_t)s.dst[0] + out_lo;
    r->len = out_hi - out_lo;
    if (hi - lo > HS_VALUES_MAX_BYTES || r->len != (size_t)nout * os || !(raw = malloc(hi - lo)) ||
        hs_values_read(raw, (uintptr_t)s.src + lo, hi - lo) != hi - lo || !(r->bytes = malloc(r->len)))
        goto done; /* not all known, or outputs not packed: unknown */
    num ident = load(m->acc, ident_at);
    for (int o = 0; o < nout; o++) {
        num acc = ident; /* in the accumulator's type: int64 wraps, float rounds at each step */
        for (int i = 0; i < nin; i++) {
            num v = load(m->scalar, raw + (out_off[2 * o + 1] + in_off[i] - lo));
            if (acc.fp) {
                acc.f += v.fp ? v.f : (double)v.i;
                if (m->acc == 'f')
                    acc.f = (float)acc.f;
            } else {
                acc.i = (int64_t)((uint64_t)acc.i + (uint64_t)(v.fp ? (int64_t)v.f : v.i));
            }
        }
        store(m->out, r->bytes + (out_off[2 * o] - out_lo), acc);
    }
done:
    free(in_off);
    free(out_off);
    free(raw);
}

/* ---- what hysim does not compute ---- */

/* DeviceReduceSingleTileKernel(transform_iterator<NonZeroOp> in, int *out, ...): its count is unknown, said once. */
static void nonzero_count(void *const *args, hs_kv_result *r)
{
    int *out;
    memcpy(&out, args[1], sizeof out);
    r->dst = (uintptr_t)out; /* written: whatever was known there is not its count */
    r->len = out ? sizeof(int) : 0;
    static _Atomic int said;
    if (!atomic_exchange(&said, 1))
        fprintf(stderr, "hysim: torch.nonzero (also torch.where of one argument, boolean indexing, masked_select) "
                        "counts elements hysim does not compute: the count reads 0, so its result is empty and code "
                        "that loops over it does nothing (Hugging Face's eager mixture-of-experts layers skip their "
                        "experts: load the model with experts_implementation=\"grouped_mm\"; docs/values.md, "
                        "\"Kernels hysim computes\")\n");
}

/* ---- launches ---- */

/* An inclusive sum of known integers, in their type (it wraps as the GPU's does); one launch from tile 0 only. */
static void eval_scan(const hs_kv_model *m, void *const *args, hs_kv_result *r)
{
    uintptr_t in = (uintptr_t) * (void *const *)args[0], out = (uintptr_t) * (void *const *)args[1];
    int start_tile = *(const int *)args[3];
    uint64_t n = m->index == 'j' ? *(const uint32_t *)args[6] : *(const uint64_t *)args[6];
    size_t es = elem_size(m->scalar), len = (size_t)n * es;
    r->dst = out;
    r->len = len; /* what it writes is unknown unless computed below */
    if (start_tile != 0 || !n || n > HS_VALUES_MAX_BYTES / es)
        return;
    uint8_t *raw = malloc(len);
    if (!raw || hs_values_read(raw, in, len) != len) {
        free(raw);
        return; /* unknown input: the output is unknown too */
    }
    num acc = {false, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        acc.i = (int64_t)((uint64_t)acc.i + (uint64_t)load(m->scalar, raw + i * es).i);
        store(m->scalar, raw + i * es, acc);
        acc = load(m->scalar, raw + i * es); /* wrapped to the type */
    }
    r->bytes = raw;
}

void hs_kv_eval(const hs_kv_model *m, void *const *args, hs_kv_result *r)
{
    *r = (hs_kv_result){0, 0, NULL};
    if (!args)
        return;
    switch (m->kind) {
    case HS_KV_HISTOGRAM: eval_histogram(m, args, r); break;
    case HS_KV_SUM: eval_sum(m, args, r); break;
    case HS_KV_SCAN: eval_scan(m, args, r); break;
    case HS_KV_NONZERO_COUNT: nonzero_count(args, r); break;
    case HS_KV_NONE: break;
    }
}

void hs_kv_apply(hs_kv_result *r)
{
    if (r->bytes)
        hs_values_write_computed(r->dst, r->bytes, r->len);
    else if (r->len)
        hs_values_forget(r->dst, r->len);
    free(r->bytes);
    *r = (hs_kv_result){0, 0, NULL};
}

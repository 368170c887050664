/*
 * The bytes a program put into device memory through host copies, memsets,
 * device copies and collectives: kernels are not run, so everything else
 * reads as zeros. Small writes only (HS_VALUES_MAX_BYTES). docs/values.md.
 */
#ifndef HS_VALUES_H
#define HS_VALUES_H

#include <stddef.h>
#include <stdint.h>

#define HS_VALUES_API __attribute__((visibility("default"))) /* libhysim.so's: every library shares one store */

/* A write larger than this is not kept: its range reads as zeros. */
#define HS_VALUES_MAX_BYTES (64u << 10)
/* At most this many bytes are kept in all; the oldest writes go first. */
#define HS_VALUES_MAX_TOTAL (16u << 20)
/*
 * Kernels run invisibly: which memory one writes is not known. So a block
 * is forgotten once a kernel was launched after it was read, or once this
 * many kernels were launched after it was written (docs/values.md).
 */
#define HS_VALUES_KERNEL_WINDOW 64u

/* dst[0, n) now holds src's n bytes (host memory). */
HS_VALUES_API void hs_values_write(uintptr_t dst, const void *src, size_t n);
/*
 * dst[0, n) now holds src's n bytes, a kernel's whole output as hysim
 * computed it: a part of it may be read after later kernels (a collective's
 * slice), within the window.
 */
HS_VALUES_API void hs_values_write_computed(uintptr_t dst, const void *src, size_t n);
/* dst[0, n) now holds n copies of byte. */
HS_VALUES_API void hs_values_fill(uintptr_t dst, int byte, size_t n);
/* dst[0, n) now holds what src[0, n) holds (device to device). */
HS_VALUES_API void hs_values_copy(uintptr_t dst, uintptr_t src, size_t n);
/* Writes what src[0, n) holds into host memory dst: zeros where nothing is known. Returns the bytes known. */
HS_VALUES_API size_t hs_values_read(void *dst, uintptr_t src, size_t n);
/*
 * As hs_values_read, for hysim's own use of a value (a grouped GEMM's sizes):
 * not a read of the program's, so the blocks' expiry does not start.
 */
HS_VALUES_API size_t hs_values_peek(void *dst, uintptr_t src, size_t n);
/* Whatever dst[0, n) held is unknown now (reads as zeros). */
HS_VALUES_API void hs_values_forget(uintptr_t dst, size_t n);
/* A kernel was launched (any device): blocks read before it, and old ones, expire. */
HS_VALUES_API void hs_values_kernel_launched(void);
/* Kernels launched so far. */
HS_VALUES_API uint64_t hs_values_kernels(void);
/*
 * dst[0, n) holds, for now, what hs_values_write put there last; its exact
 * bytes are rank's receive bytes of collective (comm_key, seq), or with
 * peer >= 0 of rank's Recv number seq from peer, which the fetch function
 * gives when the range is first read or copied.
 */
HS_VALUES_API void hs_values_pending(uintptr_t dst, size_t n, uint64_t comm_key, uint64_t seq, uint32_t rank, int peer);
/* Fills dst with n bytes of a pending range: 1, or 0 when they are not known (the bytes kept stay). */
typedef int (*hs_values_fetch_fn)(uint64_t comm_key, uint64_t seq, uint32_t rank, int peer, void *dst, size_t n);
HS_VALUES_API void hs_values_set_fetch(hs_values_fetch_fn fetch);
/* Bytes kept now (for tests). */
HS_VALUES_API size_t hs_values_total(void);

#endif

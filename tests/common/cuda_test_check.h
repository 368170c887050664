/*
 * CHECK_CUDA(call, want): CHECK (test_check.h) that a CUDA runtime call
 * returned `want`, naming both errors when it did not. Include after
 * test_check.h and cuda_runtime_api.h.
 */
#ifndef HYSIM_TESTS_COMMON_CUDA_TEST_CHECK_H
#define HYSIM_TESTS_COMMON_CUDA_TEST_CHECK_H

#define CHECK_CUDA(call, want)                                                                                       \
    do {                                                                                                             \
        cudaError_t got_ = (call);                                                                                   \
        CHECK(got_ == (want), "%s returned %s, expected %s", #call, cudaGetErrorName(got_), cudaGetErrorName(want)); \
    } while (0)

#endif

/* What libcudnn.so.9's files share (cudnn.c, cudnn_backend.c). */
#ifndef HYSIM_INTERPOSE_CUDNN_INTERNAL_H
#define HYSIM_INTERPOSE_CUDNN_INTERNAL_H

#include <cudnn.h>

/* The stream a handle's work goes to. */
__attribute__((visibility("hidden"))) cudaStream_t hs_cudnn_stream(cudnnHandle_t handle);
/* The last error the backend API explained (cudnnGetLastErrorString). */
__attribute__((visibility("hidden"))) const char *hs_cudnn_last_error(void);

#endif

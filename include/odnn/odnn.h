/*
 * odnn - an open-source implementation of the cuDNN 9 C API.
 * odnn/odnn.h: odnn's own extensions. They are not part of cuDNN; a program that
 * wants to run on either library looks them up with dlsym.
 */
#ifndef ODNN_ODNN_H
#define ODNN_ODNN_H

#include "cudnn.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* Always 1 in odnn; absent in NVIDIA's cuDNN. */
int odnnIsOdnn(void);

/* "major.minor.patch" of odnn itself. */
const char *odnnGetVersionString(void);

/* Build facts, one "key=value" per line (backends, CUDA version, architectures). */
const char *odnnGetBuildInfo(void);

/* CUDA devices this build can use, one line each (or why there are none). */
const char *odnnGetDeviceInfo(void);

/* The cuDNN API this library exports: count, then one entry per index. */
int odnnGetApiCount(void);

typedef struct odnnApiEntry {
    const char *name;       /* e.g. "cudnnConvolutionForward" */
    const char *sublibrary; /* "graph", "ops", "cnn" or "adv" */
    int implemented;        /* 0: returns CUDNN_STATUS_NOT_SUPPORTED on every backend */
    int cpu;                /* 1: works on the CPU backend */
    int cuda;               /* 1: works on the CUDA backend (in a build with CUDA) */
} odnnApiEntry;

/* Fills *entry for 0 <= index < odnnGetApiCount(); BAD_PARAM otherwise. */
cudnnStatus_t odnnGetApiEntry(int index, odnnApiEntry *entry);

/* The backend a handle runs on: "cpu" or "cuda". NULL for an invalid handle. */
const char *odnnGetHandleBackend(cudnnHandle_t handle);

#if defined(__cplusplus)
}
#endif

#endif /* ODNN_ODNN_H */

/*
 * odnn - an open-source implementation of the cuDNN 9 C API.
 * cudnn_version.h: the API level this library implements and reports.
 */
#ifndef ODNN_CUDNN_VERSION_H
#define ODNN_CUDNN_VERSION_H

/* odnn implements the cuDNN 9.19 API: frameworks compiled against 9.19 accept it. */
#define CUDNN_MAJOR 9
#define CUDNN_MINOR 19
#define CUDNN_PATCHLEVEL 0

/* The newest GPU architecture the API level knows: sm_121 (reported as 1210). */
#define CUDNN_MAX_SM_MAJOR_NUMBER 12
#define CUDNN_MAX_SM_MINOR_NUMBER 1
#define CUDNN_MAX_DEVICE_VERSION (CUDNN_MAX_SM_MAJOR_NUMBER * 100 + CUDNN_MAX_SM_MINOR_NUMBER * 10)

/* 9.19.0 -> 91900, the number cudnnGetVersion() returns. */
#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

/* Version of odnn itself (independent of the API level above). */
#define ODNN_VERSION_MAJOR 0
#define ODNN_VERSION_MINOR 1
#define ODNN_VERSION_PATCH 0

#endif /* ODNN_CUDNN_VERSION_H */

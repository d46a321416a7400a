/*
 * odnn - an open-source implementation of the cuDNN 9 C API.
 * cudnn_backend.h: compatibility name; since cuDNN 9 the backend API lives in cudnn_graph.h.
 */
#ifndef ODNN_CUDNN_BACKEND_H
#define ODNN_CUDNN_BACKEND_H

#include "cudnn_graph.h"

#endif /* ODNN_CUDNN_BACKEND_H */

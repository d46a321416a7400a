/*
 * odnn - an open-source implementation of the cuDNN 9 C API.
 * cudnn.h: umbrella header pulling in every part of the API.
 */
#ifndef ODNN_CUDNN_H
#define ODNN_CUDNN_H

#include "cudnn_version.h"
#include "cudnn_graph.h"
#include "cudnn_ops.h"
#include "cudnn_cnn.h"
#include "cudnn_adv.h"

#endif /* ODNN_CUDNN_H */

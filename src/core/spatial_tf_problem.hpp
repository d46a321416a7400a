// Spatial transformer (cudnnSpatialTf*): affine grid generation and bilinear sampling,
// forward and backward; the problems both backends run and the shared math.
//
// The transformer descriptor gives the output dims N x C x H x W and the data type of
// theta and the grid. Coordinates are normalised to [-1, 1] with the corners on the
// first and last pixel centres (PyTorch's align_corners = True):
//   grid generator  grid[n][h][w] = theta[n] (2 x 3) * (x_w, y_h, 1),
//                   x_w = -1 + 2 w / (W - 1) (0 when W = 1), y_h likewise;
//                   backward: dtheta[n] = sum over h, w of dgrid[n][h][w] (x) (x_w, y_h, 1).
//   sampler         y[n][c][h][w] = bilinear sample of x[n][c] at
//                   ix = (gx + 1) (Wi - 1) / 2, iy = (gy + 1) (Hi - 1) / 2; neighbours outside
//                   the image count as 0 (a non-finite or far-away coordinate samples 0);
//                   backward: dx (scattered bilinear weights) and dgrid (the sample's
//                   derivative along ix, iy times (Wi - 1) / 2, (Hi - 1) / 2, summed over c),
//                   each blended with its own alpha / beta.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/blend.hpp"
#include "core/handle.hpp"
#include "core/impl_registry.hpp"
#include "core/ops_desc.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

ODNN_HD double tf_base_coord(int64_t i, int64_t size) { return size > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1) : 0.0; }

// Bilinear corners of the normalised coordinate (gx, gy) in an Hi x Wi image: x0, y0
// and the weights of x0 + 1, y0 + 1. False when nothing is sampled.
struct Bilinear {
    int64_t x0, y0;
    double wx1, wy1;
};

ODNN_HD bool tf_bilinear(double gx, double gy, int64_t hi, int64_t wi, Bilinear* b) {
    const double ix = (gx + 1.0) * static_cast<double>(wi - 1) * 0.5;
    const double iy = (gy + 1.0) * static_cast<double>(hi - 1) * 0.5;
    // Also false for NaN: every neighbour would be outside.
    if (!(ix > -1.0 && ix < static_cast<double>(wi)) || !(iy > -1.0 && iy < static_cast<double>(hi))) return false;
    const double fx = floor(ix), fy = floor(iy);
    b->x0 = static_cast<int64_t>(fx);
    b->y0 = static_cast<int64_t>(fy);
    b->wx1 = ix - fx;
    b->wy1 = iy - fy;
    return true;
}

struct SpatialTfGridProblem {
    static constexpr const char* kOpName = "spatial transformer grid generator";
    bool backward = false;
    int64_t n = 0, h = 0, w = 0;
    cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
    const void* in = nullptr;  // theta (forward) or dgrid (backward)
    void* out = nullptr;       // grid or dtheta
};

struct SpatialTfSamplerProblem {
    static constexpr const char* kOpName = "spatial transformer sampler";
    bool backward = false;
    cudnnDataType_t grid_dtype = CUDNN_DATA_FLOAT;
    TensorDesc x, y;    // forward: x -> y; backward: x, dy (in y) -> dx
    TensorDesc dx;
    const void* x_data = nullptr;
    const void* grid = nullptr;
    const void* dy_data = nullptr;
    void* y_data = nullptr;
    void* dx_data = nullptr;
    void* dgrid = nullptr;
    Scale out;       // y (forward) or dx (backward)
    Scale grid_out;  // dgrid
};

Status spatial_tf_grid(const Handle& h, const SpatialTransformerDesc& st, SpatialTfGridProblem& p);
Status spatial_tf_sampler(const Handle& h, const SpatialTransformerDesc& st, SpatialTfSamplerProblem& p);

}  // namespace odnn::core

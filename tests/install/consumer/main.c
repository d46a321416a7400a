/* A program built against an installed odnn: must load it and see the 9.19 API. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <cudnn.h>

int main(void) {
    cudnnTensorDescriptor_t t;
    size_t bytes = 0;
    if (cudnnGetVersion() != CUDNN_VERSION) return 1;
    if (dlsym(RTLD_DEFAULT, "odnnIsOdnn") == NULL) {
        printf("consumer: the libcudnn.so.9 loaded is not odnn's\n");
        return 5;
    }
    if (cudnnCreateTensorDescriptor(&t) != CUDNN_STATUS_SUCCESS) return 2;
    if (cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 2, 3, 4, 5) != CUDNN_STATUS_SUCCESS) return 3;
    if (cudnnGetTensorSizeInBytes(t, &bytes) != CUDNN_STATUS_SUCCESS || bytes != 2 * 3 * 4 * 5 * 2) return 4;
    cudnnDestroyTensorDescriptor(t);
    printf("consumer: cuDNN API %zu, tensor of %zu bytes\n", cudnnGetVersion(), bytes);
    return 0;
}

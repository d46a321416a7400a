// Handle, version, error reporting, logging and the API table.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <fstream>
#include <sstream>
#include <string>

#include "common/test_util.hpp"
#include "odnn/odnn.h"

namespace {

TEST(Library, IsOursAndReportsTheApiLevel) {
    // The ldconfig cache may hold NVIDIA's libcudnn.so.9: make sure this process mapped ours.
    EXPECT_EQ(odnnIsOdnn(), 1);
    const std::string path = odnn_test::loaded_cudnn_path();
    EXPECT_NE(path.find("libcudnn.so.9"), std::string::npos) << path;
    void* self = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(self, nullptr);
    EXPECT_NE(dlsym(self, "odnnIsOdnn"), nullptr) << path << " is not odnn";
    dlclose(self);
    EXPECT_EQ(cudnnGetVersion(), 91900u);
    EXPECT_EQ(CUDNN_VERSION, 91900);
    int v = -1;
    ASSERT_OK(cudnnGetProperty(MAJOR_VERSION, &v));
    EXPECT_EQ(v, 9);
    ASSERT_OK(cudnnGetProperty(MINOR_VERSION, &v));
    EXPECT_EQ(v, 19);
    ASSERT_OK(cudnnGetProperty(PATCH_LEVEL, &v));
    EXPECT_EQ(v, 0);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetProperty(static_cast<libraryPropertyType>(3), &v));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetProperty(MAJOR_VERSION, nullptr));
    EXPECT_EQ(cudnnGraphVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnOpsVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnCnnVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnAdvVersionCheck(), CUDNN_STATUS_SUCCESS);
    EXPECT_GE(cudnnGetMaxDeviceVersion(), 900u);
}

TEST(Library, ErrorStringsAreExact) {
    EXPECT_STREQ(cudnnGetErrorString(CUDNN_STATUS_SUCCESS), "CUDNN_STATUS_SUCCESS");
    EXPECT_STREQ(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");
    EXPECT_STREQ(cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED), "CUDNN_STATUS_NOT_SUPPORTED");
    EXPECT_STREQ(cudnnGetErrorString(CUDNN_STATUS_INVALID_VALUE), "CUDNN_STATUS_INVALID_VALUE");
    EXPECT_STREQ(cudnnGetErrorString(static_cast<cudnnStatus_t>(12345)), "CUDNN_UNKNOWN_STATUS");
    EXPECT_STREQ(cudnnGetErrorString(static_cast<cudnnStatus_t>(-1)), "CUDNN_UNKNOWN_STATUS");
}

TEST(Handle, CreateDestroyAndStream) {
    cudnnHandle_t h = nullptr;
    ASSERT_OK(cudnnCreate(&h));
    ASSERT_NE(h, nullptr);
    const char* backend = odnnGetHandleBackend(h);
    ASSERT_NE(backend, nullptr);
    EXPECT_TRUE(std::string(backend) == "cpu" || std::string(backend) == "cuda") << backend;
    cudaStream_t s = reinterpret_cast<cudaStream_t>(0x1);
    ASSERT_OK(cudnnGetStream(h, &s));
    EXPECT_EQ(s, nullptr);  // the default stream until set
    cudnnStatus_t rs = CUDNN_STATUS_INTERNAL_ERROR;
    ASSERT_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, nullptr));
    EXPECT_EQ(rs, CUDNN_STATUS_SUCCESS);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnQueryRuntimeError(h, nullptr, CUDNN_ERRQUERY_BLOCKING, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnQueryRuntimeError(h, &rs, static_cast<cudnnErrQueryMode_t>(9), nullptr));
    ASSERT_OK(cudnnDestroy(h));
}

TEST(Handle, BadArgumentsNeverCrash) {
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreate(nullptr));
    EXPECT_EQ(cudnnDestroy(nullptr), CUDNN_STATUS_SUCCESS);  // as cuDNN
    int on_stack = 42;
    cudnnHandle_t garbage = reinterpret_cast<cudnnHandle_t>(&on_stack);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroy(garbage));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetStream(garbage, nullptr));
    cudaStream_t s;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetStream(garbage, &s));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetStream(nullptr, &s));
    EXPECT_EQ(odnnGetHandleBackend(garbage), nullptr);
    // Destroyed handles are recognised too.
    cudnnHandle_t h = nullptr;
    ASSERT_OK(cudnnCreate(&h));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetStream(h, nullptr));
    ASSERT_OK(cudnnDestroy(h));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroy(h));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetStream(h, nullptr));
    // A descriptor is not a handle.
    cudnnTensorDescriptor_t t;
    ASSERT_OK(cudnnCreateTensorDescriptor(&t));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetStream(reinterpret_cast<cudnnHandle_t>(t), nullptr));
    ASSERT_OK(cudnnDestroyTensorDescriptor(t));
}

TEST(Handle, ForcedCpuBackend) {
    const char* old = std::getenv("ODNN_BACKEND");
    std::string saved = old ? old : "";
    setenv("ODNN_BACKEND", "cpu", 1);
    cudnnHandle_t h = nullptr;
    ASSERT_OK(cudnnCreate(&h));
    EXPECT_STREQ(odnnGetHandleBackend(h), "cpu");
    ASSERT_OK(cudnnDestroy(h));
    setenv("ODNN_BACKEND", "tpu", 1);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreate(&h));
    if (old) setenv("ODNN_BACKEND", saved.c_str(), 1); else unsetenv("ODNN_BACKEND");
}

TEST(LastError, NamesTheFunctionAndArgumentAndClearsWhenRead) {
    odnn_test::last_error();  // drain
    cudnnTensorDescriptor_t t;
    ASSERT_OK(cudnnCreateTensorDescriptor(&t));
    EXPECT_EQ(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 4),
              CUDNN_STATUS_BAD_PARAM);
    const std::string msg = odnn_test::last_error();
    EXPECT_NE(msg.find("cudnnSetTensor4dDescriptor"), std::string::npos) << msg;
    EXPECT_NE(msg.find("c=-2"), std::string::npos) << msg;
    EXPECT_EQ(odnn_test::last_error(), "");  // reading clears it
    // Truncation keeps the buffer NUL-terminated.
    EXPECT_EQ(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 4),
              CUDNN_STATUS_BAD_PARAM);
    char small[8];
    std::memset(small, 'x', sizeof small);
    cudnnGetLastErrorString(small, sizeof small);
    EXPECT_EQ(std::strlen(small), 7u);
    cudnnGetLastErrorString(nullptr, 10);  // no crash
    ASSERT_OK(cudnnDestroyTensorDescriptor(t));
}

struct CallbackLog {
    int calls = 0;
    cudnnSeverity_t last = CUDNN_SEV_INFO;
    std::string msg;
    unsigned version = 0;
};

void record(cudnnSeverity_t sev, void* udata, const cudnnDebug_t* dbg, const char* msg) {
    auto* log = static_cast<CallbackLog*>(udata);
    ++log->calls;
    log->last = sev;
    log->msg = msg;
    log->version = dbg->cudnn_version;
}

TEST(Logging, CallbackReceivesErrors) {
    CallbackLog log;
    ASSERT_OK(cudnnSetCallback(CUDNN_SEV_ERROR_EN, &log, record));
    unsigned mask = 0;
    void* udata = nullptr;
    cudnnCallback_t fn = nullptr;
    ASSERT_OK(cudnnGetCallback(&mask, &udata, &fn));
    EXPECT_EQ(mask, static_cast<unsigned>(CUDNN_SEV_ERROR_EN));
    EXPECT_EQ(udata, &log);
    EXPECT_EQ(fn, &record);
    EXPECT_EQ(cudnnCreate(nullptr), CUDNN_STATUS_BAD_PARAM);
    EXPECT_EQ(log.calls, 1);
    EXPECT_EQ(log.last, CUDNN_SEV_ERROR);
    EXPECT_NE(log.msg.find("cudnnCreate"), std::string::npos) << log.msg;
    EXPECT_EQ(log.version, 91900u);
    ASSERT_OK(cudnnSetCallback(0, nullptr, nullptr));
    EXPECT_EQ(cudnnCreate(nullptr), CUDNN_STATUS_BAD_PARAM);
    EXPECT_EQ(log.calls, 1);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetCallback(nullptr, &udata, &fn));
    odnn_test::last_error();
}

TEST(ApiTable, CoversTheWholeApi) {
    const int n = odnnGetApiCount();
    EXPECT_EQ(n, 220);
    int implemented = 0;
    void* self = dlopen(odnn_test::loaded_cudnn_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(self, nullptr);
    for (int i = 0; i < n; ++i) {
        odnnApiEntry e;
        ASSERT_OK(odnnGetApiEntry(i, &e));
        ASSERT_NE(e.name, nullptr);
        EXPECT_NE(dlsym(self, e.name), nullptr) << e.name << " is not exported";
        const std::string lib = e.sublibrary;
        EXPECT_TRUE(lib == "graph" || lib == "ops" || lib == "cnn" || lib == "adv") << lib;
        if (e.implemented) {
            ++implemented;
            continue;
        }
        // A stub takes no arguments (the C calling convention lets any caller call it)
        // and must answer NOT_SUPPORTED with a message naming itself.
        auto stub = reinterpret_cast<cudnnStatus_t (*)(void)>(dlsym(self, e.name));
        odnn_test::last_error();
        EXPECT_EQ(stub(), CUDNN_STATUS_NOT_SUPPORTED) << e.name;
        const std::string msg = odnn_test::last_error();
        EXPECT_NE(msg.find(e.name), std::string::npos) << msg;
    }
    dlclose(self);
    EXPECT_GE(implemented, 40);
    odnnApiEntry e;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, odnnGetApiEntry(n, &e));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, odnnGetApiEntry(-1, &e));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, odnnGetApiEntry(0, nullptr));
}

TEST(Logging, LogLevelWritesToTheDestinationFile) {
    // The logger reads its variables once per process, at the first call: the check runs
    // in a fresh process of this program running this test alone (ctest may run several
    // cases in one process), whose result this one reports.
    if (!std::getenv("ODNN_LOGGING_TEST_CHILD")) {
        char out[] = "/tmp/odnn_log_child_XXXXXX";
        const int ofd = mkstemp(out);
        ASSERT_GE(ofd, 0);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            dup2(ofd, 1);
            dup2(ofd, 2);
            unsetenv("GTEST_TOTAL_SHARDS");
            unsetenv("GTEST_SHARD_INDEX");
            setenv("ODNN_LOGGING_TEST_CHILD", "1", 1);
            execl("/proc/self/exe", "test_handle", "--gtest_filter=Logging.LogLevelWritesToTheDestinationFile",
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        close(ofd);
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        std::ifstream in(out);
        std::stringstream ss;
        ss << in.rdbuf();
        std::remove(out);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ss.str();
        EXPECT_NE(ss.str().find("[       OK ] Logging.LogLevelWritesToTheDestinationFile"), std::string::npos)
            << ss.str();
        return;
    }
    char path[] = "/tmp/odnn_log_XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    setenv("CUDNN_LOGLEVEL_DBG", "1", 1);
    setenv("CUDNN_LOGDEST_DBG", path, 1);
    EXPECT_EQ(cudnnCreate(nullptr), CUDNN_STATUS_BAD_PARAM);
    cudnnTensorDescriptor_t t;
    ASSERT_OK(cudnnCreateTensorDescriptor(&t));  // success: not logged at level 1
    ASSERT_OK(cudnnDestroyTensorDescriptor(t));
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    EXPECT_NE(text.find("cudnnCreate()"), std::string::npos) << text;
    EXPECT_NE(text.find("CUDNN_STATUS_BAD_PARAM"), std::string::npos) << text;
    EXPECT_EQ(text.find("cudnnCreateTensorDescriptor"), std::string::npos) << text;
    std::remove(path);
    unsetenv("CUDNN_LOGLEVEL_DBG");
    unsetenv("CUDNN_LOGDEST_DBG");
}

}  // namespace

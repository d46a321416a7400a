// Small helpers of the odnn tool: files, paths, strings, child processes, JSON text.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "byte_view.hpp"

namespace odnn_tool {

// A whole file mapped read-only (or read into memory where mapping fails).
class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // False with error() set ("No such file or directory", "is a directory", ...).
    bool open(const std::string& path);
    ByteView bytes() const { return ByteView(data_, size_); }
    const std::string& error() const { return error_; }

private:
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    void* map_ = nullptr;
    std::vector<uint8_t> copy_;
    std::string error_;
};

struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
    bool operator<(const FileId& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

bool file_id(const std::string& path, FileId* id);  // follows symlinks
bool is_dir(const std::string& path);
bool is_regular(const std::string& path);  // follows symlinks
bool is_symlink(const std::string& path);
std::string read_link(const std::string& path);
std::string real_path(const std::string& path);  // the path itself when it cannot be resolved
std::string dir_name(const std::string& path);
std::string base_name(const std::string& path);
std::string join_path(const std::string& a, const std::string& b);
std::vector<std::string> list_dir(const std::string& dir);  // names, sorted; empty when unreadable
std::vector<std::string> glob_paths(const std::string& pattern);
bool read_text_file(const std::string& path, std::string* out, size_t max_bytes = 1 << 20);
std::string getenv_str(const char* name);
std::string self_exe_dir();

std::vector<std::string> split(const std::string& s, const std::string& seps, bool keep_empty);
bool starts_with(const std::string& s, const std::string& p);
bool ends_with(const std::string& s, const std::string& p);
std::string to_lower(std::string s);
std::string trim(const std::string& s);
std::string json_escape(const std::string& s);
std::string human_size(uint64_t bytes);

// Runs argv in a child process (stdin /dev/null; stderr merged into stdout, or kept
// apart in 'errors' when merge_stderr is false), killing it after timeout_s. Never throws.
struct ChildResult {
    bool started = false;
    std::string start_error;
    std::string output;
    std::string errors;  // stderr, when not merged
    int exit_code = -1;  // when exited normally
    int signal = 0;      // when killed by a signal
    bool timed_out = false;
};
ChildResult run_child(const std::vector<std::string>& argv, double timeout_s, bool merge_stderr = true,
                      const std::vector<std::string>& extra_env = {});
std::string describe_signal(int sig);

}  // namespace odnn_tool

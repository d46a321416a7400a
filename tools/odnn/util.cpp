#include "util.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace odnn_tool {

MappedFile::~MappedFile() {
    if (map_) munmap(map_, size_);
}

bool MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error_ = std::strerror(errno);
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        error_ = std::strerror(errno);
        close(fd);
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        error_ = "is a directory";
        close(fd);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        error_ = "not a regular file";
        close(fd);
        return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) {
        close(fd);
        data_ = copy_.data();
        return true;
    }
    void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
        map_ = m;
        data_ = static_cast<const uint8_t*>(m);
        close(fd);
        return true;
    }
    // Some file systems cannot map: read it.
    copy_.resize(size_);
    size_t got = 0;
    while (got < size_) {
        const ssize_t n = read(fd, copy_.data() + got, size_ - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    close(fd);
    if (got != size_) {
        error_ = "read failed";
        copy_.clear();
        size_ = 0;
        return false;
    }
    data_ = copy_.data();
    return true;
}

bool file_id(const std::string& path, FileId* id) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return false;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return true;
}

bool is_dir(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_regular(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_symlink(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

std::string read_link(const std::string& path) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return "";
    return std::string(buf, static_cast<size_t>(n));
}

std::string real_path(const std::string& path) {
    char* r = realpath(path.c_str(), nullptr);
    if (!r) return path;
    std::string s(r);
    free(r);
    return s;
}

std::string dir_name(const std::string& path) {
    const size_t p = path.find_last_of('/');
    if (p == std::string::npos) return ".";
    if (p == 0) return "/";
    return path.substr(0, p);
}

std::string base_name(const std::string& path) {
    const size_t p = path.find_last_of('/');
    return p == std::string::npos ? path : path.substr(p + 1);
}

std::string join_path(const std::string& a, const std::string& b) {
    if (a.empty()) return b;
    if (a.back() == '/') return a + b;
    return a + "/" + b;
}

std::vector<std::string> list_dir(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = opendir(dir.c_str());
    if (!d) return out;
    while (struct dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        out.push_back(n);
        if (out.size() > 100000) break;
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> glob_paths(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g;
    std::memset(&g, 0, sizeof g);
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
    return out;
}

bool read_text_file(const std::string& path, std::string* out, size_t max_bytes) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    out->clear();
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        out->append(buf, n);
        if (out->size() >= max_bytes) {
            out->resize(max_bytes);
            break;
        }
    }
    std::fclose(f);
    return true;
}

std::string getenv_str(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string self_exe_dir() {
    const std::string exe = read_link("/proc/self/exe");
    return exe.empty() ? std::string() : dir_name(exe);
}

std::vector<std::string> split(const std::string& s, const std::string& seps, bool keep_empty) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (seps.find(c) != std::string::npos) {
            if (keep_empty || !cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (keep_empty || !cur.empty()) out.push_back(cur);
    return out;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
    return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

std::string to_lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

std::string trim(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r' || s[a] == '\n')) ++a;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' || s[b - 1] == '\n')) --b;
    return s.substr(a, b - a);
}

std::string json_escape(const std::string& s) {
    std::string o;
    o.reserve(s.size() + 2);
    for (unsigned char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\r': o += "\\r"; break;
            case '\t': o += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    o += b;
                } else {
                    o += static_cast<char>(c);
                }
        }
    }
    // Invalid UTF-8 would make the JSON unparsable: replace stray high bytes.
    std::string v;
    v.reserve(o.size());
    for (size_t i = 0; i < o.size();) {
        const unsigned char c = static_cast<unsigned char>(o[i]);
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool good = len != 0 && i + len <= o.size();
        for (size_t k = 1; good && k < len; ++k)
            if ((static_cast<unsigned char>(o[i + k]) >> 6) != 2) good = false;
        if (good) {
            v.append(o, i, len);
            i += len;
        } else {
            v += "\\ufffd";
            ++i;
        }
    }
    return v;
}

std::string human_size(uint64_t bytes) {
    char b[32];
    if (bytes >= (1ull << 30)) std::snprintf(b, sizeof b, "%.1f GiB", bytes / double(1ull << 30));
    else if (bytes >= (1ull << 20)) std::snprintf(b, sizeof b, "%.1f MiB", bytes / double(1ull << 20));
    else if (bytes >= (1ull << 10)) std::snprintf(b, sizeof b, "%.1f KiB", bytes / double(1ull << 10));
    else std::snprintf(b, sizeof b, "%llu B", static_cast<unsigned long long>(bytes));
    return b;
}

ChildResult run_child(const std::vector<std::string>& argv, double timeout_s, bool merge_stderr,
                      const std::vector<std::string>& extra_env) {
    ChildResult r;
    if (argv.empty()) {
        r.start_error = "no command";
        return r;
    }
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        r.start_error = std::string("pipe: ") + std::strerror(errno);
        return r;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        r.start_error = std::string("pipe: ") + std::strerror(errno);
        close(out[0]);
        close(out[1]);
        return r;
    }
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        r.start_error = std::string("fork: ") + std::strerror(errno);
        for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
        return r;
    }
    if (pid == 0) {
        const int devnull = ::open("/dev/null", O_RDWR);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(merge_stderr ? out[1] : err[1], 2);
        for (const std::string& e : extra_env) {
            const size_t eq = e.find('=');
            if (eq == std::string::npos) unsetenv(e.c_str());
            else setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
        }
        std::vector<char*> a;
        for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        execvp(a[0], a.data());
        const std::string msg = std::string("exec ") + argv[0] + ": " + std::strerror(errno) + "\n";
        (void)!write(1, msg.data(), msg.size());
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    r.started = true;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
    char buf[8192];
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sink[2] = {&r.output, &r.errors};
    int open_pipes = 2;
    while (open_pipes > 0) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            r.timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        const int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
        const int pr = poll(p, 2, ms > 1000 ? 1000 : ms);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                --open_pipes;
                continue;
            }
            if (sink[i]->size() < (8u << 20)) sink[i]->append(buf, static_cast<size_t>(n));
        }
    }
    for (int i = 0; i < 2; ++i)
        if (p[i].fd >= 0) close(p[i].fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    return r;
}

std::string describe_signal(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV (segmentation fault)";
        case SIGBUS: return "SIGBUS (bus error)";
        case SIGABRT: return "SIGABRT (abort)";
        case SIGILL: return "SIGILL (illegal instruction)";
        case SIGFPE: return "SIGFPE (arithmetic exception)";
        case SIGKILL: return "SIGKILL";
        default: return "signal " + std::to_string(sig);
    }
}

}  // namespace odnn_tool

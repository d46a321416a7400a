// Reads the idx files of Fashion-MNIST. Every failure becomes one message naming the
// file and what is wrong with it: missing, unreadable, bad gzip data, truncated, wrong
// idx magic, wrong dimensions, counts that do not match, labels out of range.
#include "dataset.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace fmnist {
namespace {

// Larger than any Fashion-MNIST file, compressed or not; a bound against gzip bombs.
constexpr size_t kMaxFileBytes = size_t{256} << 20;

const char* kInstallHint =
    "Install Debian's package dataset-fashion-mnist (apt-get install dataset-fashion-mnist), "
    "or pass --data DIR with a directory holding train-images-idx3-ubyte.gz, "
    "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz.";

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

bool is_dir(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool read_file(const std::string& path, std::vector<uint8_t>* out, std::string* error) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        *error = format("%s: cannot open: %s", path.c_str(), std::strerror(errno));
        return false;
    }
    out->clear();
    uint8_t buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        if (out->size() + n > kMaxFileBytes) {
            std::fclose(f);
            *error = format("%s: larger than %zu MiB, too large for a Fashion-MNIST file", path.c_str(),
                            kMaxFileBytes >> 20);
            return false;
        }
        out->insert(out->end(), buf, buf + n);
    }
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    std::fclose(f);
    if (failed) {
        *error = format("%s: read error: %s", path.c_str(), std::strerror(err));
        return false;
    }
    return true;
}

// Inflates gzip data (one or more members, as gzip -d accepts).
bool gunzip(const std::string& path, const std::vector<uint8_t>& in, std::vector<uint8_t>* out,
            std::string* error) {
    if (in.size() < 2 || in[0] != 0x1f || in[1] != 0x8b) {
        if (in.empty())
            *error = format("%s: bad gzip data: the file is empty", path.c_str());
        else
            *error = format("%s: bad gzip data: not a gzip file (it starts with 0x%02x%s)", path.c_str(), in[0],
                            in.size() > 1 ? format(" 0x%02x", in[1]).c_str() : "");
        return false;
    }
    out->clear();
    z_stream zs;
    std::memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        *error = format("%s: zlib could not start inflating", path.c_str());
        return false;
    }
    zs.next_in = const_cast<Bytef*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    std::vector<uint8_t> chunk(1 << 20);
    for (;;) {
        zs.next_out = chunk.data();
        zs.avail_out = static_cast<uInt>(chunk.size());
        const int rc = inflate(&zs, Z_NO_FLUSH);
        const size_t produced = chunk.size() - zs.avail_out;
        if (out->size() + produced > kMaxFileBytes) {
            inflateEnd(&zs);
            *error = format("%s: inflates to more than %zu MiB, too large for a Fashion-MNIST file", path.c_str(),
                            kMaxFileBytes >> 20);
            return false;
        }
        out->insert(out->end(), chunk.data(), chunk.data() + produced);
        if (rc == Z_STREAM_END) {
            // Another gzip member may follow; trailing zero padding is tolerated, as gzip does.
            size_t rest = zs.avail_in;
            const uint8_t* p = zs.next_in;
            while (rest > 0 && *p == 0) ++p, --rest;
            if (rest == 0) break;
            if (rest < 2 || p[0] != 0x1f || p[1] != 0x8b) {
                inflateEnd(&zs);
                *error = format("%s: bad gzip data: %zu bytes of trailing garbage after the compressed data",
                                path.c_str(), rest);
                return false;
            }
            inflateReset(&zs);
            zs.next_in = const_cast<Bytef*>(p);
            zs.avail_in = static_cast<uInt>(rest);
            continue;
        }
        if (rc == Z_OK) continue;
        if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
            inflateEnd(&zs);
            *error = format("%s: bad gzip data: truncated (the compressed stream ends early, after %zu bytes "
                            "of output)", path.c_str(), out->size());
            return false;
        }
        *error = format("%s: bad gzip data: %s", path.c_str(), zs.msg ? zs.msg : zError(rc));
        inflateEnd(&zs);
        return false;
    }
    inflateEnd(&zs);
    return true;
}

uint32_t be32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Finds `<dir>/<name>.gz`, or `<dir>/<name>` uncompressed, and returns its bytes after
// decompression.
bool read_idx_file(const std::string& dir, const std::string& name, std::string* path, std::vector<uint8_t>* data,
                   std::string* error) {
    const std::string gz = dir + "/" + name + ".gz";
    const std::string raw = dir + "/" + name;
    if (exists(gz)) {
        *path = gz;
        std::vector<uint8_t> compressed;
        return read_file(gz, &compressed, error) && gunzip(gz, compressed, data, error);
    }
    if (exists(raw)) {
        *path = raw;
        return read_file(raw, data, error);
    }
    *path = gz;
    *error = format("%s: no such file. Fashion-MNIST is missing or incomplete. %s", gz.c_str(), kInstallHint);
    return false;
}

// Checks the idx header: unsigned bytes, `ndims` dimensions. Returns the dimensions.
bool parse_header(const std::string& path, const std::vector<uint8_t>& d, int ndims, std::vector<uint32_t>* dims,
                  std::string* error) {
    const uint32_t want = 0x0800u | static_cast<uint32_t>(ndims);
    const size_t header = 4 + 4 * static_cast<size_t>(ndims);
    if (d.size() < 4) {
        *error = format("%s: truncated: %zu bytes, too short for an idx header", path.c_str(), d.size());
        return false;
    }
    const uint32_t magic = be32(d.data());
    if (magic != want) {
        *error = format("%s: wrong idx magic 0x%08x (expected 0x%08x: unsigned bytes, %d dimension%s)",
                        path.c_str(), magic, want, ndims, ndims == 1 ? "" : "s");
        return false;
    }
    if (d.size() < header) {
        *error = format("%s: truncated: %zu bytes, the idx header alone needs %zu", path.c_str(), d.size(), header);
        return false;
    }
    dims->clear();
    for (int i = 0; i < ndims; ++i) dims->push_back(be32(d.data() + 4 + 4 * i));
    return true;
}

bool check_payload(const std::string& path, size_t have, size_t header, uint64_t want, const char* what,
                   uint32_t count, std::string* error) {
    const uint64_t payload = have - header;
    if (payload < want) {
        *error = format("%s: truncated: the header promises %u %s (%llu bytes of data) but only %llu bytes follow",
                        path.c_str(), count, what, static_cast<unsigned long long>(want),
                        static_cast<unsigned long long>(payload));
        return false;
    }
    if (payload > want) {
        *error = format("%s: wrong count: the header says %u %s (%llu bytes of data) but %llu bytes follow",
                        path.c_str(), count, what, static_cast<unsigned long long>(want),
                        static_cast<unsigned long long>(payload));
        return false;
    }
    return true;
}

}  // namespace

bool load_split(const std::string& dir, const std::string& prefix, Split* out, std::string* error) {
    if (!is_dir(dir)) {
        *error = format("%s: no such directory. Fashion-MNIST is not installed. %s", dir.c_str(), kInstallHint);
        return false;
    }
    std::string ipath, lpath;
    std::vector<uint8_t> idata, ldata;
    std::vector<uint32_t> idims, ldims;
    if (!read_idx_file(dir, prefix + "-images-idx3-ubyte", &ipath, &idata, error)) return false;
    if (!parse_header(ipath, idata, 3, &idims, error)) return false;
    if (idims[1] != kRows || idims[2] != kCols) {
        *error = format("%s: wrong dimensions: images of %ux%u pixels, expected %dx%d", ipath.c_str(), idims[1],
                        idims[2], kRows, kCols);
        return false;
    }
    if (idims[0] == 0) {
        *error = format("%s: wrong count: the file holds no images", ipath.c_str());
        return false;
    }
    if (!check_payload(ipath, idata.size(), 16, uint64_t{idims[0]} * kPixels, "images", idims[0], error))
        return false;

    if (!read_idx_file(dir, prefix + "-labels-idx1-ubyte", &lpath, &ldata, error)) return false;
    if (!parse_header(lpath, ldata, 1, &ldims, error)) return false;
    if (!check_payload(lpath, ldata.size(), 8, ldims[0], "labels", ldims[0], error)) return false;
    if (ldims[0] != idims[0]) {
        *error = format("%s: wrong count: %u labels, but %s holds %u images", lpath.c_str(), ldims[0],
                        ipath.c_str(), idims[0]);
        return false;
    }
    for (uint32_t i = 0; i < ldims[0]; ++i) {
        if (ldata[8 + i] >= kClasses) {
            *error = format("%s: label %u of item %u is out of range (classes are 0..%d)", lpath.c_str(),
                            ldata[8 + i], i, kClasses - 1);
            return false;
        }
    }
    out->count = idims[0];
    out->images.assign(idata.begin() + 16, idata.end());
    out->labels.assign(ldata.begin() + 8, ldata.end());
    return true;
}

}  // namespace fmnist

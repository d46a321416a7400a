// Without libFuzzer: runs a fuzz target's entry point over every file of the seed
// corpus, and over deterministic damage of each seed (truncations, flipped bytes,
// absurd 32/64-bit values at every aligned offset of the headers). Part of the normal
// test suite, so the readers stay robust in builds that are not made with clang.
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint64_t next() {  // splitmix64: the same mutations on every run
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void run(const std::vector<uint8_t>& v) { LLVMFuzzerTestOneInput(v.data(), v.size()); }

size_t replay(const std::vector<uint8_t>& seed) {
    size_t n = 0;
    run(seed);
    ++n;
    for (size_t k = 0; k <= 64; ++k) {  // truncations
        std::vector<uint8_t> t(seed.begin(), seed.begin() + static_cast<long>(seed.size() * k / 64));
        run(t);
        ++n;
    }
    const size_t head = seed.size() < 512 ? seed.size() : 512;
    for (size_t off = 0; off + 4 <= head; off += 4) {  // absurd values in the headers
        for (uint32_t val : {0xffffffffu, 0x7fffffffu, 0x80000000u, 0u, 0x10000u}) {
            std::vector<uint8_t> t = seed;
            for (int i = 0; i < 4; ++i) t[off + i] = static_cast<uint8_t>(val >> (8 * i));
            run(t);
            ++n;
        }
    }
    for (int round = 0; round < 300 && !seed.empty(); ++round) {  // random byte damage
        std::vector<uint8_t> t = seed;
        const int flips = 1 + static_cast<int>(next() % 16);
        for (int i = 0; i < flips; ++i) t[next() % t.size()] = static_cast<uint8_t>(next());
        run(t);
        ++n;
    }
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    size_t files = 0, inputs = 0;
    for (int a = 1; a < argc; ++a) {
        std::vector<std::string> paths;
        if (DIR* d = opendir(argv[a])) {
            while (dirent* e = readdir(d))
                if (e->d_name[0] != '.') paths.push_back(std::string(argv[a]) + "/" + e->d_name);
            closedir(d);
        } else {
            paths.push_back(argv[a]);
        }
        for (const std::string& p : paths) {
            std::ifstream f(p, std::ios::binary);
            if (!f) {
                std::fprintf(stderr, "cannot read %s\n", p.c_str());
                return 1;
            }
            std::vector<uint8_t> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            inputs += replay(v);
            ++files;
        }
    }
    if (files == 0) {
        std::fprintf(stderr, "no seeds found\n");
        return 1;
    }
    std::printf("%zu seeds, %zu inputs: no crash\n", files, inputs);
    return 0;
}

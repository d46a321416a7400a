// The doctor's own file readers against known answers: the fuzz seeds (hand-laid-out
// ELF of both classes and byte orders, compiled .so files with and without section
// headers, PE DLLs, ld.so.cache files), our library, and this machine's ld.so.cache
// compared with `ldconfig -p`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "elf_reader.hpp"
#include "lib_inspect.hpp"
#include "loader.hpp"
#include "pe_reader.hpp"
#include "util.hpp"

using namespace odnn_tool;

namespace {

std::vector<uint8_t> slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    EXPECT_TRUE(f.good()) << p;
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string seed(const std::string& rel) { return std::string(ODNN_FUZZ_CORPUS) + "/" + rel; }

const ElfSymbol* sym(const ElfFile& f, const std::string& n) { return f.find_dynsym(n); }

}  // namespace

TEST(ElfReader, HandMadeSeedsOfEveryClassAndByteOrder) {
    for (const char* name : {"hand64le.so", "hand32be.so", "hand32le_noshdr.so", "hand64be_noshdr.so"}) {
        SCOPED_TRACE(name);
        const std::vector<uint8_t> d = slurp(seed(std::string("elf/") + name));
        const ElfFile f = parse_elf(ByteView(d.data(), d.size()));
        ASSERT_TRUE(f.ok) << f.error;
        EXPECT_TRUE(f.problems.empty()) << f.problems.front();
        EXPECT_EQ(f.soname, "libcudnn_graph.so.9");
        EXPECT_EQ(f.needed, (std::vector<std::string>{"libz.so.1", "libcublasLt.so.13"}));
        EXPECT_EQ(f.runpath, "$ORIGIN");
        EXPECT_EQ(f.elf_class, std::string(name).find("32") != std::string::npos ? 32 : 64);
        EXPECT_EQ(f.big_endian, std::string(name).find("be") != std::string::npos);
        EXPECT_EQ(f.symbols_from, std::string(name).find("noshdr") != std::string::npos ? "dynamic" : "sections");
        for (const char* s : {"cudnnGetVersion", "cudnn_graph_version", "odnnIsOdnn"}) {
            const ElfSymbol* e = sym(f, s);
            ASSERT_NE(e, nullptr) << s;
            EXPECT_EQ(e->version, "libcudnn_graph.so.9") << s;
        }
        const LibraryInfo L = inspect_library_bytes(ByteView(d.data(), d.size()), "libcudnn_graph.so.9");
        EXPECT_EQ(L.version_text(), "9.19.0");
        EXPECT_EQ(L.cuda_major, 13);
        EXPECT_TRUE(L.is_odnn);
    }
}

TEST(ElfReader, CompiledSeedsWithAndWithoutSectionHeaders) {
    for (const char* name : {"gcc_gnuhash.so", "gcc_gnuhash_noshdr.so", "gcc_sysvhash.so", "gcc_sysvhash_noshdr.so"}) {
        SCOPED_TRACE(name);
        const std::vector<uint8_t> d = slurp(seed(std::string("elf/") + name));
        const ElfFile f = parse_elf(ByteView(d.data(), d.size()));
        ASSERT_TRUE(f.ok) << f.error;
        EXPECT_EQ(f.soname, "libcudnn_graph.so.9");
        ASSERT_NE(sym(f, "cudnnGetVersion"), nullptr);
        EXPECT_EQ(sym(f, "cudnnCreate")->version, "libcudnn_graph.so.9");
        const LibraryInfo L = inspect_library_bytes(ByteView(d.data(), d.size()), "libcudnn_graph.so.9");
        EXPECT_EQ(L.version_text(), "9.19.0");
        bool code = false;
        for (const VersionFinding& v : L.versions) code = code || v.source.find("x86-64 code") != std::string::npos;
        EXPECT_TRUE(code) << "the constant returned by cudnnGetVersion";
        // names in the read-only data: run-time dependencies (only with section headers: .rodata)
        if (std::string(name).find("noshdr") == std::string::npos) {
            EXPECT_NE(std::find(L.runtime_deps.begin(), L.runtime_deps.end(), "libnvrtc.so.13"), L.runtime_deps.end());
            EXPECT_EQ(L.cuda_major, 13);
        }
    }
}

TEST(ElfReader, DamagedInputsAreReportedNotTrusted) {
    const std::vector<uint8_t> d = slurp(seed("elf/hand64le.so"));
    for (size_t n : {size_t(0), size_t(3), size_t(16), size_t(63), size_t(64), size_t(200), d.size() - 1}) {
        const ElfFile f = parse_elf(ByteView(d.data(), n));
        if (n < 64) {
            EXPECT_FALSE(f.ok) << n;
            EXPECT_FALSE(f.error.empty());
        } else {
            EXPECT_TRUE(f.ok) << n;
            EXPECT_FALSE(f.problems.empty()) << n;  // truncated
        }
    }
    std::vector<uint8_t> b = d;
    for (int i = 0; i < 8; ++i) b[40 + i] = 0xff;  // e_shoff far away
    for (int i = 0; i < 8; ++i) b[32 + i] = 0xff;  // e_phoff far away
    const ElfFile f = parse_elf(ByteView(b.data(), b.size()));
    EXPECT_TRUE(f.ok);
    EXPECT_FALSE(f.problems.empty());
    EXPECT_TRUE(f.dynsyms.empty());
}

TEST(ElfReader, OurLibrary) {
    const std::vector<uint8_t> d = slurp(ODNN_OUR_LIBRARY);
    const ElfFile f = parse_elf(ByteView(d.data(), d.size()));
    ASSERT_TRUE(f.ok);
    EXPECT_TRUE(f.problems.empty());
    EXPECT_EQ(f.soname, "libcudnn.so.9");
    int cudnn = 0;
    for (const ElfSymbol& s : f.dynsyms) {
        if (!s.defined || s.name.rfind("cudnn", 0) != 0) continue;
        ++cudnn;
        EXPECT_EQ(s.version, "libcudnn.so.9") << s.name;
        EXPECT_FALSE(s.version_hidden) << s.name;
    }
    EXPECT_GE(cudnn, 220);
    EXPECT_NE(std::find(f.verdefs.begin(), f.verdefs.end(), "libcudnn.so.9"), f.verdefs.end());
    bool glibc = false;
    for (const ElfVersionNeed& n : f.verneeds) glibc = glibc || n.file == "libc.so.6";
    EXPECT_TRUE(glibc);
}

TEST(PeReader, SeedDll) {
    const std::vector<uint8_t> d = slurp(seed("pe/full.dll"));
    const PeFile p = parse_pe(ByteView(d.data(), d.size()));
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_TRUE(p.problems.empty()) << p.problems.front();
    EXPECT_TRUE(p.is_dll);
    EXPECT_TRUE(p.pe32_plus);
    EXPECT_EQ(p.export_dll_name, "cudnn64_9.dll");
    EXPECT_EQ(p.exports, (std::vector<std::string>{"cudnnCreate", "cudnnDestroy", "cudnnGetVersion", "odnnIsOdnn"}));
    ASSERT_EQ(p.imports.size(), 4u);
    EXPECT_EQ(p.imports[0].dll, "KERNEL32.dll");
    EXPECT_FALSE(p.imports[0].delay_load);
    EXPECT_EQ(p.imports[1].dll, "cudnn_graph64_9.dll");
    EXPECT_EQ(p.imports[2].dll, "cublasLt64_13.dll");
    EXPECT_TRUE(p.imports[2].delay_load);
    EXPECT_EQ(p.imports[3].functions, (std::vector<std::string>{"cublasLtCreate"}));
    ASSERT_TRUE(p.has_file_version);
    EXPECT_EQ(p.file_version[0], 9);
    EXPECT_EQ(p.file_version[1], 19);
    EXPECT_EQ(p.file_version[3], 56);
    const LibraryInfo L = inspect_library_bytes(ByteView(d.data(), d.size()), "cudnn64_9.dll");
    EXPECT_EQ(L.role, "cudnn");
    EXPECT_EQ(L.name_major, 9);
    EXPECT_EQ(L.version_text(), "9.19.0");
    EXPECT_EQ(L.cuda_major, 13);
}

TEST(PeReader, DamagedInputs) {
    const std::vector<uint8_t> d = slurp(seed("pe/full.dll"));
    EXPECT_FALSE(parse_pe(ByteView(d.data(), 1)).ok);
    EXPECT_FALSE(parse_pe(ByteView(d.data(), 0x3c)).ok);
    std::vector<uint8_t> b = d;
    b[0x3c] = 0xff, b[0x3d] = 0xff, b[0x3e] = 0xff, b[0x3f] = 0x7f;  // e_lfanew far away
    const PeFile p = parse_pe(ByteView(b.data(), b.size()));
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.error.find("e_lfanew"), std::string::npos) << p.error;
    const PeFile h = parse_pe(ByteView(d.data(), 0x200));  // headers only: sections point past the end
    EXPECT_TRUE(h.ok);
    EXPECT_FALSE(h.problems.empty());
}

TEST(NameParts, LibraryFileNames) {
    std::string role, full;
    int major;
    ASSERT_TRUE(cudnn_name_parts("libcudnn_ops.so.9.1.0", &role, &major, &full));
    EXPECT_EQ(role, "cudnn_ops");
    EXPECT_EQ(major, 9);
    EXPECT_EQ(full, "9.1.0");
    ASSERT_TRUE(cudnn_name_parts("cudnn_engines_precompiled64_9.dll", &role, &major, &full));
    EXPECT_EQ(role, "cudnn_engines_precompiled");
    EXPECT_EQ(major, 9);
    ASSERT_TRUE(cudnn_name_parts("libcudnn.so", &role, &major, &full));
    EXPECT_EQ(major, -1);
    EXPECT_FALSE(cudnn_name_parts("libcudnnfoo.sonar", &role, &major, &full));
    EXPECT_EQ(version_from_number(91900, "").text(), "9.19.0");
    EXPECT_EQ(version_from_number(8907, "").text(), "8.9.7");
}

TEST(LdCache, SeedsInBothFormats) {
    for (const char* name : {"ldcache/new.cache", "ldcache/old_and_new.cache"}) {
        SCOPED_TRACE(name);
        const std::vector<uint8_t> d = slurp(seed(name));
        const LdCache c = parse_ld_cache(d.data(), d.size());
        ASSERT_TRUE(c.ok) << c.error;
        EXPECT_EQ(c.format, "glibc-ld.so.cache1.1");
        ASSERT_EQ(c.entries.size(), 2u);
        EXPECT_EQ(c.entries[0].name, "libcudnn.so.9");
        EXPECT_EQ(c.entries[0].path, "/usr/local/cuda/lib64/libcudnn.so.9");
        EXPECT_EQ(c.entries[1].name, "libz.so.1");
    }
    const uint8_t junk[] = "glibc-ld.so.cache1.1\xff\xff\xff\x7f";
    EXPECT_FALSE(parse_ld_cache(junk, sizeof junk).ok);
}

TEST(LdCache, ThisMachinesCacheMatchesLdconfig) {
    if (!is_regular("/etc/ld.so.cache")) GTEST_SKIP() << "no /etc/ld.so.cache";
    MappedFile f;
    ASSERT_TRUE(f.open("/etc/ld.so.cache"));
    const LdCache mine = parse_ld_cache(f.bytes().data(), f.bytes().size());
    ASSERT_TRUE(mine.ok) << mine.error;
    ChildResult r = run_child({"ldconfig", "-p"}, 30, false);
    if (r.exit_code != 0) r = run_child({"/sbin/ldconfig", "-p"}, 30, false);
    if (r.exit_code != 0) GTEST_SKIP() << "ldconfig -p unavailable";
    const LdCache theirs = parse_ldconfig_p(r.output);
    ASSERT_EQ(mine.entries.size(), theirs.entries.size());
    for (size_t i = 0; i < mine.entries.size(); ++i) {
        EXPECT_EQ(mine.entries[i].name, theirs.entries[i].name);
        EXPECT_EQ(mine.entries[i].path, theirs.entries[i].path);
    }
}

// ELF reader: see elf_reader.hpp. Layouts follow the System V gABI and the GNU
// symbol-versioning extension; 32/64-bit, little and big endian.
#include "elf_reader.hpp"

#include <algorithm>
#include <map>

namespace odnn_tool {

namespace {

constexpr uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3;
constexpr uint32_t kShtStrtab = 3, kShtDynamic = 6, kShtNobits = 8, kShtDynsym = 11;
constexpr uint32_t kShtGnuVerdef = 0x6ffffffd, kShtGnuVerneed = 0x6ffffffe, kShtGnuVersym = 0x6fffffff;
constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtHash = 4, kDtStrtab = 5, kDtSymtab = 6, kDtStrsz = 10,
                  kDtSyment = 11, kDtSoname = 14, kDtRpath = 15, kDtRunpath = 29, kDtFlags = 30;
constexpr int64_t kDtGnuHash = 0x6ffffef5, kDtVersym = 0x6ffffff0, kDtFlags1 = 0x6ffffffb, kDtVerdef = 0x6ffffffc,
                  kDtVerdefnum = 0x6ffffffd, kDtVerneed = 0x6ffffffe, kDtVerneednum = 0x6fffffff;

// Reads fields of one ELF file in its class and byte order.
class Reader {
public:
    Reader(ByteView b, bool be) : b_(b), be_(be) {}
    bool u16(uint64_t off, uint64_t* v) const { return b_.uint(off, 2, be_, v); }
    bool u32(uint64_t off, uint64_t* v) const { return b_.uint(off, 4, be_, v); }
    bool u64(uint64_t off, uint64_t* v) const { return b_.uint(off, 8, be_, v); }
    bool word(uint64_t off, bool is64, uint64_t* v) const { return is64 ? u64(off, v) : u32(off, v); }
    const ByteView& bytes() const { return b_; }

private:
    ByteView b_;
    bool be_;
};

struct StrTab {
    uint64_t off = 0, size = 0;
    bool valid = false;
};

class Parser {
public:
    Parser(ByteView b, const ElfLimits& lim, ElfFile* f) : b_(b), lim_(lim), f_(f), r_(b, false) {}

    void run() {
        if (!header()) return;
        f_->ok = true;
        segments();
        sections();
        dynamic();
        symbols();
        versions();
    }

private:
    void problem(const std::string& s) {
        if (f_->problems.size() < 64) f_->problems.push_back(s);
    }

    bool str(const StrTab& t, uint64_t idx, std::string* out) {
        if (!t.valid || idx >= t.size) return false;
        const uint64_t remain = t.size - idx;
        std::string s;
        if (!b_.cstr(t.off + idx, &s, static_cast<size_t>(std::min<uint64_t>(remain, 4096)))) return false;
        if (string_bytes_ + s.size() > lim_.max_string_bytes) {
            if (!string_budget_hit_) problem("too many name bytes: stopped keeping names");
            string_budget_hit_ = true;
            return false;
        }
        string_bytes_ += s.size();
        *out = std::move(s);
        return true;
    }

    bool header() {
        f_->file_size = b_.size();
        if (b_.size() < 16) {
            f_->error = b_.size() == 0 ? "empty file" : "file too short for an ELF header";
            return false;
        }
        const uint8_t* d = b_.data();
        if (!(d[0] == 0x7f && d[1] == 'E' && d[2] == 'L' && d[3] == 'F')) {
            f_->error = "not an ELF file (no \\x7fELF magic)";
            return false;
        }
        if (d[4] != 1 && d[4] != 2) {
            f_->error = "corrupt ELF header: class byte is " + std::to_string(d[4]) + " (expected 1 or 2)";
            return false;
        }
        if (d[5] != 1 && d[5] != 2) {
            f_->error = "corrupt ELF header: data-encoding byte is " + std::to_string(d[5]) + " (expected 1 or 2)";
            return false;
        }
        is64_ = d[4] == 2;
        f_->elf_class = is64_ ? 64 : 32;
        f_->big_endian = d[5] == 2;
        f_->osabi = d[7];
        r_ = Reader(b_, f_->big_endian);
        const uint64_t ehsize = is64_ ? 64 : 52;
        if (b_.size() < ehsize) {
            f_->error = "truncated: file is " + std::to_string(b_.size()) + " bytes, shorter than the ELF header";
            return false;
        }
        uint64_t v;
        r_.u16(16, &v);
        f_->type = static_cast<uint16_t>(v);
        r_.u16(18, &v);
        f_->machine = static_cast<uint16_t>(v);
        if (is64_) {
            r_.u64(24, &f_->entry);
            r_.u64(32, &phoff_);
            r_.u64(40, &shoff_);
            r_.u16(54, &phentsize_);
            r_.u16(56, &phnum_);
            r_.u16(58, &shentsize_);
            r_.u16(60, &shnum_);
            r_.u16(62, &shstrndx_);
        } else {
            r_.u32(24, &f_->entry);
            r_.u32(28, &phoff_);
            r_.u32(32, &shoff_);
            r_.u16(42, &phentsize_);
            r_.u16(44, &phnum_);
            r_.u16(46, &shentsize_);
            r_.u16(48, &shnum_);
            r_.u16(50, &shstrndx_);
        }
        return true;
    }

    void segments() {
        if (phnum_ == 0) return;
        const uint64_t need = is64_ ? 56 : 32;
        if (phentsize_ < need) {
            problem("corrupt ELF header: program header size " + std::to_string(phentsize_) + " < " +
                    std::to_string(need));
            return;
        }
        uint64_t n = phnum_;
        if (n > lim_.max_segments) n = lim_.max_segments;
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t o = phoff_ + i * phentsize_;
            if (o < phoff_ || !b_.has(o, need)) {
                problem("truncated or corrupt: program header " + std::to_string(i) + " of " +
                        std::to_string(phnum_) + " lies outside the file (e_phoff=" + std::to_string(phoff_) + ")");
                break;
            }
            ElfSegment s;
            uint64_t v = 0;
            r_.u32(o, &v);
            s.type = static_cast<uint32_t>(v);
            if (is64_) {
                r_.u32(o + 4, &v);
                s.flags = static_cast<uint32_t>(v);
                r_.u64(o + 8, &s.offset);
                r_.u64(o + 16, &s.vaddr);
                r_.u64(o + 32, &s.filesz);
                r_.u64(o + 40, &s.memsz);
            } else {
                r_.u32(o + 4, &s.offset);
                r_.u32(o + 8, &s.vaddr);
                r_.u32(o + 16, &s.filesz);
                r_.u32(o + 20, &s.memsz);
                r_.u32(o + 24, &v);
                s.flags = static_cast<uint32_t>(v);
            }
            f_->segments.push_back(s);
        }
        for (const ElfSegment& s : f_->segments) {
            if (s.type == kPtLoad && !b_.has(s.offset, s.filesz))
                problem("truncated: a loadable segment ends at byte " + std::to_string(s.offset + s.filesz) +
                        " but the file has " + std::to_string(b_.size()));
            if (s.type == kPtInterp && f_->interp.empty()) b_.cstr(s.offset, &f_->interp, 1024);
        }
    }

    void sections() {
        uint64_t n = shnum_;
        if (shoff_ == 0) return;
        const uint64_t need = is64_ ? 64 : 40;
        if (shentsize_ < need) {
            if (n != 0 || shentsize_ != 0)
                problem("corrupt ELF header: section header size " + std::to_string(shentsize_) + " < " +
                        std::to_string(need));
            return;
        }
        if (!b_.has(shoff_, need)) {
            problem("truncated or corrupt: section headers at offset " + std::to_string(shoff_) +
                    " lie outside the file (" + std::to_string(b_.size()) + " bytes)");
            return;
        }
        // Extended numbering: e_shnum == 0 and e_shstrndx == SHN_XINDEX keep the real values in section 0.
        uint64_t strndx = shstrndx_;
        if (n == 0) r_.word(shoff_ + (is64_ ? 32 : 20), is64_, &n);
        if (strndx == 0xffff) {
            uint64_t v = 0;
            r_.u32(shoff_ + (is64_ ? 40 : 24), &v);
            strndx = v;
        }
        if (n > lim_.max_sections) {
            problem("corrupt: " + std::to_string(n) + " sections claimed; reading the first " +
                    std::to_string(lim_.max_sections));
            n = lim_.max_sections;
        }
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t o = shoff_ + i * shentsize_;
            if (!b_.has(o, need)) {
                problem("truncated: section header " + std::to_string(i) + " of " + std::to_string(n) +
                        " lies outside the file");
                break;
            }
            ElfSection s;
            uint64_t v = 0;
            r_.u32(o, &v);
            s.name = std::to_string(v);  // resolved below
            name_idx_.push_back(v);
            r_.u32(o + 4, &v);
            s.type = static_cast<uint32_t>(v);
            if (is64_) {
                r_.u64(o + 8, &s.flags);
                r_.u64(o + 16, &s.addr);
                r_.u64(o + 24, &s.offset);
                r_.u64(o + 32, &s.size);
                r_.u32(o + 40, &v);
                s.link = static_cast<uint32_t>(v);
                r_.u32(o + 44, &v);
                s.info = static_cast<uint32_t>(v);
                r_.u64(o + 56, &s.entsize);
            } else {
                r_.u32(o + 8, &s.flags);
                r_.u32(o + 12, &s.addr);
                r_.u32(o + 16, &s.offset);
                r_.u32(o + 20, &s.size);
                r_.u32(o + 24, &v);
                s.link = static_cast<uint32_t>(v);
                r_.u32(o + 28, &v);
                s.info = static_cast<uint32_t>(v);
                r_.u32(o + 36, &s.entsize);
            }
            f_->sections.push_back(s);
        }
        StrTab shstr;
        if (strndx < f_->sections.size() && f_->sections[strndx].type != kShtNobits &&
            b_.has(f_->sections[strndx].offset, f_->sections[strndx].size)) {
            shstr.off = f_->sections[strndx].offset;
            shstr.size = f_->sections[strndx].size;
            shstr.valid = true;
        } else if (!f_->sections.empty()) {
            problem("section names unreadable (bad e_shstrndx or truncated)");
        }
        for (size_t i = 0; i < f_->sections.size(); ++i) {
            std::string nm;
            if (shstr.valid && str(shstr, name_idx_[i], &nm)) f_->sections[i].name = nm;
            else f_->sections[i].name = "";
            if (f_->sections[i].type != kShtNobits && f_->sections[i].size != 0 &&
                !b_.has(f_->sections[i].offset, f_->sections[i].size))
                problem("truncated: section " + (f_->sections[i].name.empty() ? std::to_string(i)
                                                                                : f_->sections[i].name) +
                        " ends past the end of the file");
        }
    }

    // A section's bytes, when they lie in the file.
    bool section_range(const ElfSection& s, uint64_t* off, uint64_t* size) const {
        if (s.type == kShtNobits || !b_.has(s.offset, s.size)) return false;
        *off = s.offset;
        *size = s.size;
        return true;
    }

    void dynamic() {
        uint64_t off = 0, size = 0;
        bool found = false;
        for (const ElfSegment& s : f_->segments) {
            if (s.type != kPtDynamic) continue;
            if (b_.has(s.offset, s.filesz)) {
                off = s.offset;
                size = s.filesz;
                found = true;
            } else if (s.offset < b_.size()) {  // read what is there
                off = s.offset;
                size = b_.size() - s.offset;
                found = true;
                problem("truncated: the dynamic section is cut off");
            } else {
                problem("truncated or corrupt: the dynamic segment lies outside the file");
            }
            break;
        }
        if (!found) {
            for (const ElfSection& s : f_->sections)
                if (s.type == kShtDynamic && section_range(s, &off, &size)) {
                    found = true;
                    break;
                }
        }
        if (!found) return;
        f_->has_dynamic = true;
        const uint64_t ent = is64_ ? 16 : 8;
        uint64_t count = size / ent;
        if (count > lim_.max_dynamic_entries) count = lim_.max_dynamic_entries;
        std::vector<std::pair<int64_t, uint64_t>> tags;
        for (uint64_t i = 0; i < count; ++i) {
            uint64_t tag = 0, val = 0;
            if (!r_.word(off + i * ent, is64_, &tag) || !r_.word(off + i * ent + ent / 2, is64_, &val)) break;
            int64_t t = is64_ ? static_cast<int64_t>(tag) : static_cast<int64_t>(static_cast<int32_t>(tag));
            if (t == kDtNull) break;
            tags.emplace_back(t, val);
        }
        uint64_t strtab = 0, strsz = 0;
        bool have_strtab = false, have_strsz = false;
        for (auto& [t, v] : tags) {
            switch (t) {
                case kDtStrtab: strtab = v; have_strtab = true; break;
                case kDtStrsz: strsz = v; have_strsz = true; break;
                case kDtSymtab: dt_symtab_ = v; have_dt_symtab_ = true; break;
                case kDtSyment: dt_syment_ = v; break;
                case kDtHash: dt_hash_ = v; have_dt_hash_ = true; break;
                case kDtGnuHash: dt_gnu_hash_ = v; have_dt_gnu_hash_ = true; break;
                case kDtVersym: dt_versym_ = v; have_dt_versym_ = true; break;
                case kDtVerdef: dt_verdef_ = v; have_dt_verdef_ = true; break;
                case kDtVerdefnum: dt_verdefnum_ = v; break;
                case kDtVerneed: dt_verneed_ = v; have_dt_verneed_ = true; break;
                case kDtVerneednum: dt_verneednum_ = v; break;
                case kDtFlags: f_->flags = v; break;
                case kDtFlags1: f_->flags_1 = v; break;
                default: break;
            }
        }
        // The loader reads strings through DT_STRTAB (a virtual address).
        if (have_strtab) {
            uint64_t o = 0;
            uint64_t sz = have_strsz ? strsz : 0;
            if (sz == 0 || !f_->vaddr_to_offset(strtab, sz, &o)) {
                // Fall back to what is in the file from there on.
                if (f_->vaddr_to_offset(strtab, 1, &o)) {
                    if (sz != 0) problem("truncated or corrupt: DT_STRSZ runs past the file");
                    sz = b_.size() - o;
                } else {
                    sz = 0;
                }
            }
            if (sz != 0) {
                dynstr_.off = o;
                dynstr_.size = sz;
                dynstr_.valid = true;
            }
        }
        if (!dynstr_.valid) {
            for (const ElfSection& s : f_->sections) {
                if (s.type == kShtStrtab && s.name == ".dynstr" && section_range(s, &dynstr_.off, &dynstr_.size)) {
                    dynstr_.valid = true;
                    problem("DT_STRTAB unusable; names read from the .dynstr section");
                    break;
                }
            }
        }
        if (!dynstr_.valid) {
            problem("the dynamic string table is unreadable: no SONAME, NEEDED or RPATH");
            return;
        }
        for (auto& [t, v] : tags) {
            std::string s;
            const bool got = (t == kDtNeeded || t == kDtSoname || t == kDtRpath || t == kDtRunpath) && str(dynstr_, v, &s);
            if ((t == kDtNeeded || t == kDtSoname || t == kDtRpath || t == kDtRunpath) && !got) {
                problem("a dynamic entry names a string outside the string table (offset " + std::to_string(v) + ")");
                continue;
            }
            if (t == kDtNeeded) f_->needed.push_back(s);
            else if (t == kDtSoname) f_->soname = s;
            else if (t == kDtRpath) f_->rpath = s;
            else if (t == kDtRunpath) f_->runpath = s;
        }
    }

    // Number of dynamic symbols from DT_GNU_HASH: the highest symbol index any chain reaches.
    bool gnu_hash_count(uint64_t* count) {
        uint64_t o;
        if (!f_->vaddr_to_offset(dt_gnu_hash_, 16, &o)) return false;
        uint64_t nbuckets, symoffset, bloom_size, shift;
        if (!r_.u32(o, &nbuckets) || !r_.u32(o + 4, &symoffset) || !r_.u32(o + 8, &bloom_size) ||
            !r_.u32(o + 12, &shift))
            return false;
        const uint64_t word = is64_ ? 8 : 4;
        const uint64_t buckets = o + 16 + bloom_size * word;
        if (bloom_size > b_.size() || nbuckets > b_.size() || !b_.has(buckets, nbuckets * 4)) return false;
        uint64_t maxsym = 0;
        for (uint64_t i = 0; i < nbuckets; ++i) {
            uint64_t v = 0;
            r_.u32(buckets + i * 4, &v);
            maxsym = std::max(maxsym, v);
        }
        if (maxsym < symoffset) {
            *count = symoffset;
            return true;
        }
        const uint64_t chains = buckets + nbuckets * 4;
        for (uint64_t i = maxsym; i - maxsym <= lim_.max_symbols; ++i) {
            uint64_t h;
            if (!r_.u32(chains + (i - symoffset) * 4, &h)) return false;
            if (h & 1) {
                *count = i + 1;
                return true;
            }
        }
        return false;
    }

    void symbols() {
        uint64_t off = 0, size = 0, ent = is64_ ? 24 : 16;
        StrTab strs;
        const ElfSection* dynsym = nullptr;
        for (const ElfSection& s : f_->sections)
            if (s.type == kShtDynsym) {
                dynsym = &s;
                break;
            }
        uint64_t count = 0;
        if (dynsym && section_range(*dynsym, &off, &size)) {
            if (dynsym->entsize != 0 && dynsym->entsize != ent)
                problem("corrupt: .dynsym entry size " + std::to_string(dynsym->entsize));
            count = size / ent;
            if (dynsym->link < f_->sections.size() &&
                section_range(f_->sections[dynsym->link], &strs.off, &strs.size))
                strs.valid = true;
            else
                strs = dynstr_;
            f_->symbols_from = "sections";
        } else if (have_dt_symtab_ && f_->vaddr_to_offset(dt_symtab_, ent, &off)) {
            if (dt_syment_ != 0 && dt_syment_ != ent) problem("corrupt: DT_SYMENT " + std::to_string(dt_syment_));
            uint64_t n = 0;
            bool known = false;
            uint64_t h;
            if (have_dt_hash_ && f_->vaddr_to_offset(dt_hash_, 8, &h) && r_.u32(h + 4, &n)) known = true;
            if (!known && have_dt_gnu_hash_) known = gnu_hash_count(&n);
            if (!known) {
                problem("dynamic symbol count unknown (no section headers, no usable hash table)");
                return;
            }
            count = n;
            strs = dynstr_;
            f_->symbols_from = "dynamic";
        } else {
            if (f_->has_dynamic) problem("no readable dynamic symbol table");
            return;
        }
        if (!b_.has(off, count * ent) || count > b_.size()) {
            const uint64_t fit = off < b_.size() ? (b_.size() - off) / ent : 0;
            problem("truncated or corrupt: the dynamic symbol table claims " + std::to_string(count) +
                    " symbols, " + std::to_string(fit) + " fit in the file");
            count = fit;
        }
        if (count > lim_.max_symbols) {
            problem("too many symbols (" + std::to_string(count) + "); reading the first " +
                    std::to_string(lim_.max_symbols));
            count = lim_.max_symbols;
        }
        symtab_off_ = off;
        f_->dynsyms.reserve(static_cast<size_t>(count));
        bool bad_name = false;
        for (uint64_t i = 0; i < count; ++i) {
            const uint64_t o = off + i * ent;
            ElfSymbol s;
            uint64_t name = 0, v = 0;
            r_.u32(o, &name);
            if (is64_) {
                r_.bytes().uint(o + 4, 1, false, &v);
                s.type = v & 0xf;
                s.bind = static_cast<uint8_t>(v >> 4);
                r_.bytes().uint(o + 5, 1, false, &v);
                s.visibility = v & 3;
                r_.u16(o + 6, &v);
                s.shndx = static_cast<uint16_t>(v);
                r_.u64(o + 8, &s.value);
                r_.u64(o + 16, &s.size);
            } else {
                r_.u32(o + 4, &s.value);
                r_.u32(o + 8, &s.size);
                r_.bytes().uint(o + 12, 1, false, &v);
                s.type = v & 0xf;
                s.bind = static_cast<uint8_t>(v >> 4);
                r_.bytes().uint(o + 13, 1, false, &v);
                s.visibility = v & 3;
                r_.u16(o + 14, &v);
                s.shndx = static_cast<uint16_t>(v);
            }
            s.defined = s.shndx != 0;
            if (name != 0 && !str(strs, name, &s.name)) bad_name = true;
            f_->dynsyms.push_back(std::move(s));
        }
        if (bad_name) problem("some symbol names lie outside the string table");
    }

    void versions() {
        if (f_->dynsyms.empty()) return;
        std::map<uint64_t, std::string> names;  // version index -> name
        // verdef
        uint64_t off = 0, size = 0, num = 0;
        bool have = false;
        for (const ElfSection& s : f_->sections)
            if (s.type == kShtGnuVerdef && section_range(s, &off, &size)) {
                num = s.info;
                have = true;
                break;
            }
        if (!have && have_dt_verdef_ && f_->vaddr_to_offset(dt_verdef_, 20, &off)) {
            num = dt_verdefnum_;
            have = true;
        }
        if (have) {
            uint64_t o = off;
            for (uint64_t i = 0; i < num && i < lim_.max_versions; ++i) {
                uint64_t ndx, cnt, aux, next, name;
                if (!r_.u16(o + 4, &ndx) || !r_.u16(o + 6, &cnt) || !r_.u32(o + 12, &aux) || !r_.u32(o + 16, &next)) {
                    problem("truncated or corrupt version definitions");
                    break;
                }
                std::string nm;
                if (cnt > 0 && r_.u32(o + aux, &name) && str(dynstr_, name, &nm)) {
                    names[ndx & 0x7fff] = nm;
                    f_->verdefs.push_back(nm);
                }
                if (next == 0) break;
                if (o + next < o) break;
                o += next;
            }
        }
        // verneed
        have = false;
        for (const ElfSection& s : f_->sections)
            if (s.type == kShtGnuVerneed && section_range(s, &off, &size)) {
                num = s.info;
                have = true;
                break;
            }
        if (!have && have_dt_verneed_ && f_->vaddr_to_offset(dt_verneed_, 16, &off)) {
            num = dt_verneednum_;
            have = true;
        }
        if (have) {
            uint64_t o = off;
            uint64_t total = 0;
            for (uint64_t i = 0; i < num && i < lim_.max_versions; ++i) {
                uint64_t cnt, file, aux, next;
                if (!r_.u16(o + 2, &cnt) || !r_.u32(o + 4, &file) || !r_.u32(o + 8, &aux) || !r_.u32(o + 12, &next)) {
                    problem("truncated or corrupt version needs");
                    break;
                }
                ElfVersionNeed need;
                str(dynstr_, file, &need.file);
                uint64_t a = o + aux;
                for (uint64_t j = 0; j < cnt && total < lim_.max_versions; ++j, ++total) {
                    uint64_t other, name, anext;
                    if (!r_.u16(a + 6, &other) || !r_.u32(a + 8, &name) || !r_.u32(a + 12, &anext)) break;
                    std::string nm;
                    if (str(dynstr_, name, &nm)) {
                        names[other & 0x7fff] = nm;
                        need.names.push_back(nm);
                    }
                    if (anext == 0 || a + anext < a) break;
                    a += anext;
                }
                f_->verneeds.push_back(std::move(need));
                if (next == 0 || o + next < o) break;
                o += next;
            }
        }
        // versym: one 16-bit index per dynamic symbol
        have = false;
        for (const ElfSection& s : f_->sections)
            if (s.type == kShtGnuVersym && section_range(s, &off, &size)) {
                have = true;
                break;
            }
        if (!have && have_dt_versym_ && f_->vaddr_to_offset(dt_versym_, 2, &off)) have = true;
        if (!have) return;
        bool short_table = false;
        for (size_t i = 0; i < f_->dynsyms.size(); ++i) {
            uint64_t v;
            if (!r_.u16(off + i * 2, &v)) {
                short_table = true;
                break;
            }
            const uint64_t idx = v & 0x7fff;
            f_->dynsyms[i].version_hidden = (v & 0x8000) != 0;
            if (idx >= 2) {
                auto it = names.find(idx);
                f_->dynsyms[i].version = it != names.end() ? it->second : "<version " + std::to_string(idx) + "?>";
            }
        }
        if (short_table) problem("truncated: the symbol version table is cut off");
    }

    ByteView b_;
    const ElfLimits& lim_;
    ElfFile* f_;
    Reader r_;
    bool is64_ = false;
    uint64_t phoff_ = 0, shoff_ = 0, phentsize_ = 0, phnum_ = 0, shentsize_ = 0, shnum_ = 0, shstrndx_ = 0;
    std::vector<uint64_t> name_idx_;
    StrTab dynstr_;
    uint64_t dt_symtab_ = 0, dt_syment_ = 0, dt_hash_ = 0, dt_gnu_hash_ = 0, dt_versym_ = 0, dt_verdef_ = 0,
             dt_verdefnum_ = 0, dt_verneed_ = 0, dt_verneednum_ = 0;
    bool have_dt_symtab_ = false, have_dt_hash_ = false, have_dt_gnu_hash_ = false, have_dt_versym_ = false,
         have_dt_verdef_ = false, have_dt_verneed_ = false;
    uint64_t symtab_off_ = 0;
    uint64_t string_bytes_ = 0;
    bool string_budget_hit_ = false;
};

}  // namespace

bool ElfFile::vaddr_to_offset(uint64_t vaddr, uint64_t len, uint64_t* off) const {
    for (const ElfSegment& s : segments) {
        if (s.type != kPtLoad) continue;
        if (vaddr < s.vaddr) continue;
        const uint64_t delta = vaddr - s.vaddr;
        if (delta >= s.filesz || len > s.filesz - delta) continue;
        const uint64_t o = s.offset + delta;
        if (o < s.offset || o > file_size || len > file_size - o) return false;
        *off = o;
        return true;
    }
    return false;
}

const ElfSymbol* ElfFile::find_dynsym(const std::string& name) const {
    for (const ElfSymbol& s : dynsyms)
        if (s.defined && s.name == name) return &s;
    return nullptr;
}

const ElfSection* ElfFile::section(const std::string& name) const {
    for (const ElfSection& s : sections)
        if (s.name == name) return &s;
    return nullptr;
}

const char* ElfFile::machine_name() const {
    switch (machine) {
        case kEmX86_64: return "x86-64";
        case kEm386: return "i386";
        case kEmAarch64: return "aarch64";
        case kEmPpc64: return "ppc64";
        case kEmArm: return "arm";
        default: return "other";
    }
}

bool looks_like_elf(ByteView b) {
    return b.size() >= 4 && b.data()[0] == 0x7f && b.data()[1] == 'E' && b.data()[2] == 'L' && b.data()[3] == 'F';
}

ElfFile parse_elf(ByteView bytes, const ElfLimits& limits) {
    ElfFile f;
    Parser p(bytes, limits, &f);
    p.run();
    return f;
}

}  // namespace odnn_tool

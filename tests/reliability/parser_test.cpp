// The manifest and safetensors parsers, called directly (aotrun_core), on
// every file of the fuzz seed corpora (tests/fuzz/corpus/, including the
// reproducers of anything the fuzzers found) and on targeted edge cases.
// The contract: a parser either returns something that satisfies
// tests/fuzz/invariants.hpp or throws aotrun::Error(BAD_PACKAGE); no other
// exception, no crash.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../fuzz/invariants.hpp"
#include "linkinfo/elf_check.hpp"
#include "linkinfo/elf_symbols.hpp"
#include "base/error.hpp"

namespace {

std::vector<std::string> corpus(const std::string& target) {
  std::vector<std::string> files;
  const std::string dir = std::string(AOTRUN_FUZZ_CORPUS_DIR) + "/" + target;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') files.push_back(dir + "/" + e->d_name);
    }
    ::closedir(d);
  }
  return files;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Outcome of parsing: "" accepted and valid, "BAD_PACKAGE" refused properly,
// anything else describes a broken promise.
std::string manifest_outcome(const std::string& text) {
  try {
    return aotrun_fuzz::check_manifest(aotrun::parse_manifest(text, "manifest.json"));
  } catch (const aotrun::Error& e) {
    return e.code() == aotrun::Code::BadPackage ? "BAD_PACKAGE" : std::string("wrong code: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("non-aotrun exception escaped: ") + e.what();
  }
}

// A whole safetensors file, through SafetensorsFile::open (which checks the
// header length, then calls parse_header).
std::string safetensors_outcome(const std::string& bytes) {
  char path[] = "/tmp/aotrun_rel_st_XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) return "mkstemp failed";
  if (!bytes.empty() && ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    ::close(fd);
    ::unlink(path);
    return "write failed";
  }
  ::close(fd);
  std::string result;
  try {
    auto f = aotrun::SafetensorsFile::open(path);
    // Accepted: parse the same header again over a data section whose
    // address is known here, and check every tensor against it.
    uint64_t hl = 0;
    for (int i = 7; i >= 0; --i) hl = (hl << 8) | static_cast<unsigned char>(bytes[i]);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data()) + 8 + hl;
    const uint64_t data_size = bytes.size() - 8 - hl;
    if (f->data_bytes() != data_size) {
      result = "data_bytes disagrees with the file";
    } else {
      auto ts = aotrun::SafetensorsFile::parse_header(bytes.data() + 8, hl, data, data_size, "again");
      result = ts.size() != f->tensors().size() ? "tensor count differs between parses"
                                                : aotrun_fuzz::check_tensors(ts, data, data_size);
    }
  } catch (const aotrun::Error& e) {
    result = e.code() == aotrun::Code::BadPackage ? "BAD_PACKAGE" : std::string("wrong code: ") + e.what();
  } catch (const std::exception& e) {
    result = std::string("non-aotrun exception escaped: ") + e.what();
  }
  ::unlink(path);
  return result;
}

std::string st_file(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((uint64_t(header.size()) >> (8 * i)) & 0xFF);
  return out + header + std::string(data_bytes, '\0');
}

}  // namespace

TEST(ParserCorpus, ManifestCorpusKeepsItsPromises) {
  auto files = corpus("manifest");
  ASSERT_FALSE(files.empty()) << "no corpus under " << AOTRUN_FUZZ_CORPUS_DIR;
  size_t accepted = 0;
  for (const auto& f : files) {
    const std::string o = manifest_outcome(slurp(f));
    EXPECT_TRUE(o.empty() || o == "BAD_PACKAGE") << f << ": " << o;
    accepted += o.empty();
  }
  EXPECT_GT(accepted, 0u) << "the corpus should hold valid manifests too";
}

TEST(ParserCorpus, SafetensorsCorpusKeepsItsPromises) {
  auto files = corpus("safetensors");
  ASSERT_FALSE(files.empty());
  size_t accepted = 0;
  for (const auto& f : files) {
    const std::string o = safetensors_outcome(slurp(f));
    EXPECT_TRUE(o.empty() || o == "BAD_PACKAGE") << f << ": " << o;
    accepted += o.empty();
  }
  EXPECT_GT(accepted, 0u);
}

// Finding F1, at the parser: 2^62 float64 elements in 0 bytes.
TEST(ParserEdges, SafetensorsByteSizeOverflow) {
  for (const char* dtype : {"F64", "F32", "I16"}) {
    SCOPED_TRACE(dtype);
    const std::string header =
        std::string(R"({"w":{"dtype":")") + dtype + R"(","shape":[4294967296,1073741824],"data_offsets":[0,0]}})";
    EXPECT_EQ(safetensors_outcome(st_file(header, 0)), "BAD_PACKAGE");
  }
}

TEST(ParserEdges, ManifestAbiVersionText) {
  EXPECT_EQ(aotrun::parse_abi_version("1.1", "m"), (1u << 16) | 1u);
  EXPECT_EQ(aotrun::parse_abi_version("65535.65535", "m"), 0xFFFFFFFFu);
  for (const char* bad : {"", "1", "1.", ".1", "1.1.1", "1.1x", "-1.0", "65536.0", "1.65536", "4294967297.1", "a.b"}) {
    SCOPED_TRACE(bad);
    try {
      aotrun::parse_abi_version(bad, "m");
      ADD_FAILURE() << "accepted";
    } catch (const aotrun::Error& e) {
      EXPECT_EQ(e.code(), aotrun::Code::BadPackage);
    }
  }
}

TEST(ParserEdges, DeeplyNestedJsonIsRefusedWithoutCrashing) {
  // Deep nesting must not overflow the stack, in parse or in destruction.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(manifest_outcome(deep), "BAD_PACKAGE");
  EXPECT_EQ(manifest_outcome("{\"name\":" + deep + "}"), "BAD_PACKAGE");
  EXPECT_EQ(safetensors_outcome(st_file("{\"a\":" + deep + "}", 0)), "BAD_PACKAGE");
}

// The ELF readers run before dlopen (fuzz_elf's corpus: small real libraries
// and the regression inputs): each file is read or refused as LOAD_FAILED.
TEST(ParserCorpus, ElfCorpusIsReadOrRefusedAsLoadFailed) {
  auto files = corpus("elf");
  ASSERT_FALSE(files.empty());
  size_t read = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    try {
      aotrun::check_elf_shared_object(fd, f);
    } catch (const aotrun::Error& e) {
      EXPECT_EQ(e.code(), aotrun::Code::LoadFailed) << e.what();
    }
    ::close(fd);
    try {
      aotrun::read_elf_dynamic_symbols(f, "aoti_");
      ++read;
    } catch (const aotrun::Error& e) {
      EXPECT_EQ(e.code(), aotrun::Code::LoadFailed) << e.what();
    }
  }
  EXPECT_GT(read, 0u) << "the corpus should hold readable libraries too";
}

// Finding F26: a version-need table at an odd offset was read in place
// (misaligned Elf64_Verneed, undefined behaviour); now LOAD_FAILED.
TEST(ParserEdges, MisalignedElfTableIsLoadFailed) {
  const std::string f = std::string(AOTRUN_FUZZ_CORPUS_DIR) + "/elf/regress-f26-misaligned-verneed";
  try {
    aotrun::read_elf_dynamic_symbols(f, "aoti_");
    ADD_FAILURE() << "accepted";
  } catch (const aotrun::Error& e) {
    EXPECT_EQ(e.code(), aotrun::Code::LoadFailed);
    EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
  }
}

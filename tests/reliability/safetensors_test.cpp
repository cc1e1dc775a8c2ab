// Malformed weights files. Each case is a copy of the noop package directory
// given one crafted .safetensors file (listed in the manifest with its true
// hash, so only the file's format is wrong). noop accepts any constants, so
// whatever the host lets through reaches a package unchecked: the host's own
// parser is the only line of defence these cases exercise. The mlp package
// is used for the cases where the host's parse is fine and the package must
// refuse the constant (wrong dtype or shape for the model).
#include <cstring>

#include "rel_util.hpp"

using nlohmann::json;
using rel::open_fails;
using rel::PackageCopy;
using rel::safetensors_bytes;

namespace {

// noop package directory with the given weights files.
struct NoopWithWeights {
  PackageCopy pkg{"noop", "st"};
  explicit NoopWithWeights(const std::vector<std::pair<std::string, std::string>>& files) {
    json j = pkg.manifest();
    j["weights"] = json::array();
    for (const auto& [name, bytes] : files) {
      rel::write_file(pkg.file(name), bytes);
      j["weights"].push_back(name);
      j["files"][name] = rel::sha256_of(pkg.file(name));
    }
    pkg.write_manifest(j);
  }
  explicit NoopWithWeights(const std::string& bytes) : NoopWithWeights({{"w.safetensors", bytes}}) {}
};

aotrun_package_info info_of(aotrun_package* p) {
  aotrun_package_info info{};
  info.struct_size = sizeof(info);
  aotrun_status_free(aotrun_package_get_info(p, &info));
  return info;
}

struct HeaderCase {
  std::string name;
  std::string header;  // JSON text
  size_t data_bytes;
  std::string needle;
};

void expect_bad(const std::vector<HeaderCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name + ": " + c.header);
    NoopWithWeights w(safetensors_bytes(c.header, std::string(c.data_bytes, '\x01')));
    REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, c.needle);
  }
}

}  // namespace

TEST(Safetensors, WellFormedFileLoadsAsConstants) {
  // Control for the crafting: two tensors, an empty one, and metadata.
  const std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("b":{"dtype":"I64","shape":[1],"data_offsets":[16,24]},"e":{"dtype":"U8","shape":[0,3],"data_offsets":[24,24]}})";
  NoopWithWeights w(safetensors_bytes(header, std::string(24, '\x02')));
  aotrun_package* p = nullptr;
  AOTRUN_ASSERT_OK(aotrun_package_open(w.pkg.dir().c_str(), nullptr, &p));
  aotrun_package_info info = info_of(p);
  EXPECT_EQ(info.num_constants, 3u);
  EXPECT_EQ(info.constant_bytes, 24u);
  aotrun_package_close(p);
}

TEST(Safetensors, TruncatedFiles) {
  for (size_t n : {0u, 1u, 7u}) {
    SCOPED_TRACE(n);
    NoopWithWeights w(std::string(n, '\0'));
    REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "is truncated");
  }
  // A good file cut inside its data section: offsets now point past the end.
  std::string good =
      safetensors_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(16, 'x'));
  NoopWithWeights w(good.substr(0, good.size() - 5));
  REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "lie outside the 11-byte data section");
}

TEST(Safetensors, HeaderLengthBeyondFile) {
  for (uint64_t claimed : {uint64_t(100), uint64_t(1) << 40, ~uint64_t(0)}) {
    SCOPED_TRACE(claimed);
    std::string bytes = safetensors_bytes("{}", "");
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((claimed >> (8 * i)) & 0xFF);
    NoopWithWeights w(bytes);
    REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "exceeds the file");
  }
}

TEST(Safetensors, HeaderNotJsonOrNotAnObject) {
  expect_bad({
      {"empty header", "", 0, "invalid safetensors header"},
      {"garbage", "\x01\x02\x03", 0, "invalid safetensors header"},
      {"array", "[1, 2]", 0, "safetensors header is not a JSON object"},
      {"string", "\"a\"", 0, "safetensors header is not a JSON object"},
      {"tensor not an object", R"({"a": 5})", 0, "tensor 'a' needs dtype, shape and data_offsets"},
      {"no dtype", R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4, "needs dtype, shape and data_offsets"},
      {"no shape", R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4, "needs dtype, shape and data_offsets"},
      {"no offsets", R"({"a":{"dtype":"F32","shape":[1]}})", 4, "needs dtype, shape and data_offsets"},
  });
}

TEST(Safetensors, DtypeShapeAndByteSizeMismatches) {
  expect_bad({
      {"unknown dtype", R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", 1,
       "tensor 'a' has an unsupported dtype"},
      {"dtype not a string", R"({"a":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", 4, "unsupported dtype"},
      {"shape not an array", R"({"a":{"dtype":"F32","shape":4,"data_offsets":[0,16]}})", 16, "has a malformed shape"},
      {"rank 33",
       R"({"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}})",
       1, "has a malformed shape"},
      {"bytes fewer than shape needs", R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8]}})", 16,
       "occupies 8 bytes but its dtype and shape need 16"},
      {"bytes more than shape needs", R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", 8,
       "occupies 8 bytes but its dtype and shape need 4"},
  });
}

TEST(Safetensors, NegativeAndNonIntegerDims) {
  expect_bad({
      {"negative", R"({"a":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,16]}})", 16,
       "has a negative or non-integer dimension"},
      {"fraction", R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,10]}})", 10,
       "negative or non-integer dimension"},
      {"string", R"({"a":{"dtype":"F32","shape":["4"],"data_offsets":[0,16]}})", 16,
       "negative or non-integer dimension"},
  });
}

TEST(Safetensors, HugeShapes) {
  expect_bad({
      {"one huge dim", R"({"a":{"dtype":"U8","shape":[281474976710657],"data_offsets":[0,1]}})", 1,
       "has a shape too large"},
      {"product too large", R"({"a":{"dtype":"U8","shape":[65536,65536,65536,65536],"data_offsets":[0,1]}})", 1,
       "has a shape too large"},
  });
}

// Core bug (docs/RELIABILITY.md, finding F1): the byte size elems * (bits/8)
// is computed in 64 bits after only elems was bounded (<= 2^62), so
// 2^62 float64 elements "need" 2^65 mod 2^64 = 0 bytes and a tensor of
// 4.6e18 elements backed by no data at all is handed to the package.
TEST(Safetensors, ByteSizeOverflowIsRejected) {
  for (const char* dtype : {"F64", "F32", "I64"}) {
    SCOPED_TRACE(dtype);
    const std::string header =
        std::string(R"({"w":{"dtype":")") + dtype + R"(","shape":[2147483648,2147483648],"data_offsets":[0,0]}})";
    NoopWithWeights w(safetensors_bytes(header, ""));
    aotrun_package* p = nullptr;
    rel::Outcome o = rel::outcome(aotrun_package_open(w.pkg.dir().c_str(), nullptr, &p));
    if (p != nullptr) {
      ADD_FAILURE() << "a " << dtype << " tensor of 2^62 elements with 0 bytes of data was accepted; constant_bytes = "
                    << info_of(p).constant_bytes;
      aotrun_package_close(p);
      continue;
    }
    EXPECT_EQ(o.code, AOTRUN_ERR_BAD_PACKAGE) << o.message;
    EXPECT_TRUE(rel::contains(o.message, "'w'")) << o.message;
  }
}

TEST(Safetensors, OffsetsOutOfRangeOrReversed) {
  expect_bad({
      {"end past data", R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 2,
       "data_offsets [0, 4) lie outside the 2-byte data section"},
      {"begin past end", R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[9,9]}})", 4, "lie outside"},
      {"reversed", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[4,2]}})", 8, "lie outside"},
      {"huge end", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[18446744073709551614,18446744073709551615]}})", 8,
       "lie outside"},
      {"one offset", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2]}})", 8, "has malformed data_offsets"},
      {"negative offset", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[-2,0]}})", 8, "has malformed data_offsets"},
      {"string offsets", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":["0","2"]}})", 8,
       "has malformed data_offsets"},
  });
}

// Core gap (finding F2): the safetensors format requires the tensors to tile
// the data section (no overlap, no holes); the reference implementation
// refuses other files. aotrun accepts two tensors over the same bytes.
TEST(Safetensors, OverlappingOffsetsAreRejected) {
  NoopWithWeights w(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                                      R"("b":{"dtype":"I32","shape":[2],"data_offsets":[8,16]}})",
                                      std::string(16, '\0')));
  REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "overlap");
}

// Core gap (finding F3): a header naming the same tensor twice is ambiguous
// (which entry a reader keeps depends on its JSON library); aotrun silently
// keeps the last one.
TEST(Safetensors, DuplicateNameInOneHeaderIsRejected) {
  NoopWithWeights w(safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                      std::string(12, '\0')));
  REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "'a'");
}

TEST(Safetensors, DuplicateNameAcrossFilesIsRejected) {
  const std::string one =
      safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0'));
  NoopWithWeights w({{"one.safetensors", one}, {"two.safetensors", one}});
  REL_EXPECT_OUTCOME(open_fails(w.pkg.dir()), AOTRUN_ERR_BAD_PACKAGE,
                     "constant 'a' appears in more than one weights file");
}

TEST(Safetensors, WeightsPathNotARegularFileOrMissing) {
  {
    PackageCopy pkg("noop", "stdir");
    json j = pkg.manifest();
    ASSERT_EQ(::mkdir(pkg.file("w.safetensors").c_str(), 0755), 0);
    j["weights"] = json::array({"w.safetensors"});
    j["files"]["w.safetensors"] = std::string(64, 'a');
    pkg.write_manifest(j);
    rel::PackageOptions no_verify;
    no_verify.verify_hashes(false);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir(), no_verify.get()), AOTRUN_ERR_BAD_PACKAGE, "is not a regular file");
  }
  {
    PackageCopy pkg("noop", "stmissing");
    json j = pkg.manifest();
    j["weights"] = json::array({"w.safetensors"});
    j["files"]["w.safetensors"] = std::string(64, 'a');
    pkg.write_manifest(j);
    rel::PackageOptions no_verify;
    no_verify.verify_hashes(false);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir(), no_verify.get()), AOTRUN_ERR_BAD_PACKAGE,
                       "w.safetensors' cannot be opened");
  }
}

// The host's parse is fine but the package refuses the constant: the mlp
// package's fc3.bias re-declared as I32 (same byte size), so only the dtype
// is wrong for the model.
TEST(Safetensors, ConstantOfWrongDtypeForTheModelIsBadPackage) {
  PackageCopy pkg("mlp", "dtype");
  const std::string bytes = rel::read_file(pkg.file("weights.safetensors"));
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  json header = json::parse(bytes.substr(8, n));
  ASSERT_TRUE(header.contains("fc3.bias"));
  header["fc3.bias"]["dtype"] = "I32";
  pkg.replace_file_rehash("weights.safetensors", safetensors_bytes(header.dump(), bytes.substr(8 + n)));
  REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "fc3.bias");
}

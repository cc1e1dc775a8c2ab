// Malformed manifest.json files: each case is a copy of the built mlp package
// directory with one thing about its manifest changed, opened through the C
// API. Every case must fail with its documented code and a message naming
// the key or file (docs/RELIABILITY.md, "Manifests").
#include <functional>

#include "rel_util.hpp"

using nlohmann::json;
using rel::open_fails;
using rel::PackageCopy;

namespace {

struct ManifestCase {
  std::string name;
  std::function<void(json&)> edit;  // applied to the parsed manifest
  aotrun_code code;
  std::string needle;  // part of the message
};

void run_cases(const std::vector<ManifestCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PackageCopy pkg("mlp", "manifest");
    json j = pkg.manifest();
    c.edit(j);
    pkg.write_manifest(j);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), c.code, c.needle);
  }
}

}  // namespace

TEST(Manifest, ValidCopyOpens) {
  // Control: the copy itself is a good package, so every failure below comes
  // from the one change each case makes.
  PackageCopy pkg("mlp", "control");
  aotrun_package* p = nullptr;
  AOTRUN_ASSERT_OK(aotrun_package_open(pkg.dir().c_str(), nullptr, &p));
  aotrun_package_close(p);
  // Unknown keys are ignored (newer writers may add some); upper-case hex and
  // the {"sha256": ...} form of a hash are accepted.
  json j = pkg.manifest();
  j["produced_by"] = "a future tool";
  std::string h = j["files"]["libmlp.so"].get<std::string>();
  for (auto& ch : h) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  j["files"]["libmlp.so"] = h;
  j["files"]["weights.safetensors"] = json{{"sha256", j["files"]["weights.safetensors"]}};
  pkg.write_manifest(j);
  AOTRUN_ASSERT_OK(aotrun_package_open(pkg.dir().c_str(), nullptr, &p));
  aotrun_package_close(p);
}

TEST(Manifest, InvalidJson) {
  for (const char* text : {"", "{", "{\"name\": \"mlp\",}", "\xff\xfe{}", "{\"name\": \"mlp\"} trailing", "nul"}) {
    SCOPED_TRACE(text);
    PackageCopy pkg("mlp", "json");
    pkg.write_manifest_text(text);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "invalid JSON");
  }
  PackageCopy pkg("mlp", "json");
  pkg.write_manifest_text("[\"aotrun-package\"]");
  REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "top level must be a JSON object");
}

TEST(Manifest, MissingKeys) {
  std::vector<ManifestCase> cases;
  for (std::string key : {"name", "abi_version", "library", "files"}) {
    cases.push_back({key, [key](json& j) { j.erase(key); }, AOTRUN_ERR_BAD_PACKAGE, "missing key \"" + key + "\""});
  }
  run_cases(cases);
}

TEST(Manifest, WrongTypesAndValues) {
  run_cases({
      {"name is a number", [](json& j) { j["name"] = 5; }, AOTRUN_ERR_BAD_PACKAGE, "\"name\" must be a string"},
      {"name empty", [](json& j) { j["name"] = ""; }, AOTRUN_ERR_BAD_PACKAGE, "\"name\" must be 1..256 characters"},
      {"name too long", [](json& j) { j["name"] = std::string(300, 'n'); }, AOTRUN_ERR_BAD_PACKAGE, "1..256"},
      {"abi_version is a number", [](json& j) { j["abi_version"] = 1.1; }, AOTRUN_ERR_BAD_PACKAGE,
       "\"abi_version\" must be a string"},
      {"abi_version not major.minor", [](json& j) { j["abi_version"] = "one.one"; }, AOTRUN_ERR_BAD_PACKAGE,
       "is not \"major.minor\""},
      {"abi_version three parts", [](json& j) { j["abi_version"] = "1.1.0"; }, AOTRUN_ERR_BAD_PACKAGE,
       "is not \"major.minor\""},
      {"abi_version out of range", [](json& j) { j["abi_version"] = "70000.1"; }, AOTRUN_ERR_BAD_PACKAGE,
       "is not \"major.minor\""},
      {"abi_version disagrees with library", [](json& j) { j["abi_version"] = "1.0"; }, AOTRUN_ERR_BAD_PACKAGE,
       "but its manifest says 1.0"},
      {"format wrong", [](json& j) { j["format"] = "pt2-zip"; }, AOTRUN_ERR_BAD_PACKAGE,
       "\"format\" must be \"aotrun-package\""},
      {"format_version 2", [](json& j) { j["format_version"] = 2; }, AOTRUN_ERR_BAD_PACKAGE,
       "unsupported format_version"},
      {"format_version string", [](json& j) { j["format_version"] = "1"; }, AOTRUN_ERR_BAD_PACKAGE,
       "unsupported format_version"},
      {"device unknown", [](json& j) { j["device"] = "tpu"; }, AOTRUN_ERR_BAD_PACKAGE,
       "\"device\" must be \"cpu\" or \"cuda\""},
      {"device not a string", [](json& j) { j["device"] = json::array(); }, AOTRUN_ERR_BAD_PACKAGE,
       "\"device\" must be a string"},
      {"library not a string", [](json& j) { j["library"] = 7; }, AOTRUN_ERR_BAD_PACKAGE,
       "\"library\" must be a plain file name"},
      {"weights not an array", [](json& j) { j["weights"] = "weights.safetensors"; }, AOTRUN_ERR_BAD_PACKAGE,
       "\"weights\" must be an array"},
      {"weights entry not a string", [](json& j) { j["weights"] = json::array({1}); }, AOTRUN_ERR_BAD_PACKAGE,
       "each \"weights\" entry must be a plain file name"},
      {"too many weights files", [](json& j) { j["weights"] = json(std::vector<std::string>(1025, "w")); },
       AOTRUN_ERR_BAD_PACKAGE, "\"weights\" must be an array"},
      {"files not an object", [](json& j) { j["files"] = json::array(); }, AOTRUN_ERR_BAD_PACKAGE,
       "\"files\" must be an object"},
      {"library is not an ELF file", [](json& j) { j["library"] = "weights.safetensors"; }, AOTRUN_ERR_LOAD_FAILED,
       "not an ELF"},
  });
}

TEST(Manifest, PathTraversalInFileNames) {
  run_cases({
      {"library ../", [](json& j) { j["library"] = "../mlp/libmlp.so"; }, AOTRUN_ERR_BAD_PACKAGE,
       "\"library\" must be a plain file name inside the package directory"},
      {"library a/b", [](json& j) { j["library"] = "sub/libmlp.so"; }, AOTRUN_ERR_BAD_PACKAGE, "plain file name"},
      {"library absolute", [](json& j) { j["library"] = "/usr/lib/x86_64-linux-gnu/libc.so.6"; },
       AOTRUN_ERR_BAD_PACKAGE, "plain file name"},
      {"library ..", [](json& j) { j["library"] = ".."; }, AOTRUN_ERR_BAD_PACKAGE, "plain file name"},
      {"library .", [](json& j) { j["library"] = "."; }, AOTRUN_ERR_BAD_PACKAGE, "plain file name"},
      {"library empty", [](json& j) { j["library"] = ""; }, AOTRUN_ERR_BAD_PACKAGE, "plain file name"},
      {"library with NUL", [](json& j) { j["library"] = std::string("libmlp.so\0.txt", 14); }, AOTRUN_ERR_BAD_PACKAGE,
       "plain file name"},
      {"weights ../x", [](json& j) { j["weights"] = json::array({"../x.safetensors"}); }, AOTRUN_ERR_BAD_PACKAGE,
       "each \"weights\" entry must be a plain file name"},
      {"weights a/b", [](json& j) { j["weights"] = json::array({"a/b.safetensors"}); }, AOTRUN_ERR_BAD_PACKAGE,
       "each \"weights\" entry must be a plain file name"},
      {"files key ../x", [](json& j) { j["files"]["../x"] = std::string(64, 'a'); }, AOTRUN_ERR_BAD_PACKAGE,
       "\"files\" key \"../x\" is not a plain file name"},
      {"files key a/b", [](json& j) { j["files"]["a/b"] = std::string(64, 'a'); }, AOTRUN_ERR_BAD_PACKAGE,
       "is not a plain file name"},
  });
}

TEST(Manifest, MissingOrMalformedHashes) {
  run_cases({
      {"no hash for library", [](json& j) { j["files"].erase("libmlp.so"); }, AOTRUN_ERR_BAD_PACKAGE,
       "\"files\" has no sha256 for the library \"libmlp.so\""},
      {"no hash for weights", [](json& j) { j["files"].erase("weights.safetensors"); }, AOTRUN_ERR_BAD_PACKAGE,
       "\"files\" has no sha256 for weights file \"weights.safetensors\""},
      {"hash 63 digits", [](json& j) { j["files"]["libmlp.so"] = std::string(63, 'a'); }, AOTRUN_ERR_BAD_PACKAGE,
       "sha256 of \"libmlp.so\" is not 64 hex digits"},
      {"hash 65 digits", [](json& j) { j["files"]["libmlp.so"] = std::string(65, 'a'); }, AOTRUN_ERR_BAD_PACKAGE,
       "is not 64 hex digits"},
      {"hash not hex", [](json& j) { j["files"]["libmlp.so"] = std::string(63, 'a') + "g"; }, AOTRUN_ERR_BAD_PACKAGE,
       "is not 64 hex digits"},
      {"hash a number", [](json& j) { j["files"]["libmlp.so"] = 12345; }, AOTRUN_ERR_BAD_PACKAGE,
       "is not 64 hex digits"},
      {"hash object without sha256",
       [](json& j) {
         j["files"]["libmlp.so"] = json{{"md5", "x"}};
       },
       AOTRUN_ERR_BAD_PACKAGE, "is not 64 hex digits"},
      {"hash of a listed file that is missing", [](json& j) { j["files"]["extra.bin"] = std::string(64, 'a'); },
       AOTRUN_ERR_BAD_PACKAGE, "manifest lists 'extra.bin'"},
  });
}

TEST(Manifest, HugeOrMissingOrNotARegularFile) {
  {
    PackageCopy pkg("mlp", "huge");
    // Valid JSON padded past the 1 MiB limit: refused before parsing.
    std::string text = pkg.manifest().dump();
    text.insert(1, std::string((1 << 20) + 16, ' '));
    pkg.write_manifest_text(text);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "larger than 1048576 bytes");
  }
  {
    PackageCopy pkg("mlp", "nomanifest");
    ASSERT_EQ(std::remove(pkg.file("manifest.json").c_str()), 0);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_NOT_FOUND, "has no readable manifest.json");
  }
  {
    PackageCopy pkg("mlp", "dirmanifest");
    ASSERT_EQ(std::remove(pkg.file("manifest.json").c_str()), 0);
    ASSERT_EQ(::mkdir(pkg.file("manifest.json").c_str(), 0755), 0);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "not a regular file");
  }
  {
    // The library the manifest names is absent, hashes verified or not.
    PackageCopy pkg("mlp", "nolib");
    ASSERT_EQ(std::remove(pkg.file("libmlp.so").c_str()), 0);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir()), AOTRUN_ERR_BAD_PACKAGE, "libmlp.so is missing");
    rel::PackageOptions no_verify;
    no_verify.verify_hashes(false);
    REL_EXPECT_OUTCOME(open_fails(pkg.dir(), no_verify.get()), AOTRUN_ERR_BAD_PACKAGE, "libmlp.so is missing");
  }
}

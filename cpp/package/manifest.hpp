// manifest.json of a package directory: what the package claims to be and the
// sha256 of every file, checked before anything is mapped or dlopen'd.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aotrun {

struct Manifest {
  std::string name;
  uint32_t abi_version = 0;  // (major << 16) | minor
  std::string device;        // a name in the device table: "cpu", "cuda"
  std::string library;       // file name inside the directory
  std::vector<std::string> weights;
  std::map<std::string, std::string> sha256;  // file name -> lower-case hex
};

// Manifests are small; anything larger is refused before parsing.
constexpr size_t kMaxManifestBytes = 1 << 20;

// Parses manifest text. `where` names the file in error messages.
// Throws Error(BadPackage) with the offending key named.
Manifest parse_manifest(const std::string& text, const std::string& where);
// Reads and parses <dir>/manifest.json. Throws NotFound / LoadFailed / BadPackage.
Manifest read_manifest(const std::string& dir);

// "1.1" -> 0x00010001. Throws Error(BadPackage) on anything else.
uint32_t parse_abi_version(const std::string& text, const std::string& where);

}  // namespace aotrun

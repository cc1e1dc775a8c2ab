#include "package/manifest.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json.hpp"
#include "device/device_table.hpp"

namespace aotrun {
namespace {

// A file name inside the package directory: no path separators, no "..".
bool plain_file_name(const std::string& s) {
  return !s.empty() && s.size() < 256 && s.find('/') == std::string::npos && s != "." && s != ".." &&
         s.find('\0') == std::string::npos;
}

const nlohmann::json& require(const nlohmann::json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) fail(Code::BadPackage, where + ": missing key \"" + key + "\"");
  return *it;
}

std::string require_string(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = require(j, key, where);
  if (!v.is_string()) fail(Code::BadPackage, where + ": \"" + key + "\" must be a string");
  return v.get<std::string>();
}

std::string require_file_name(const nlohmann::json& v, const std::string& what, const std::string& where) {
  if (!v.is_string() || !plain_file_name(v.get<std::string>())) {
    fail(Code::BadPackage, where + ": " + what + " must be a plain file name inside the package directory");
  }
  return v.get<std::string>();
}

}  // namespace

uint32_t parse_abi_version(const std::string& text, const std::string& where) {
  // from_chars: no sign, no whitespace, no wrap-around ("4294967297.1").
  uint32_t major = 0, minor = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto r1 = std::from_chars(b, e, major);
  bool ok = r1.ec == std::errc() && r1.ptr != b && r1.ptr < e && *r1.ptr == '.';
  if (ok) {
    auto r2 = std::from_chars(r1.ptr + 1, e, minor);
    ok = r2.ec == std::errc() && r2.ptr == e && r2.ptr != r1.ptr + 1;
  }
  if (!ok || major > 0xFFFF || minor > 0xFFFF) {
    fail(Code::BadPackage, where + ": abi_version \"" + text + "\" is not \"major.minor\" (each 0..65535)");
  }
  return (major << 16) | minor;
}

Manifest parse_manifest(const std::string& text, const std::string& where) {
  const PackageJson doc = parse_package_json(text.data(), text.data() + text.size(), where, "JSON", Code::BadPackage);
  const nlohmann::json& j = doc.get();
  if (!j.is_object()) fail(Code::BadPackage, where + ": top level must be a JSON object");
  // get_ref, not json's operator!= with a C string: that one is noexcept and
  // builds a temporary json (out of memory there ends the process).
  if (auto f = j.find("format");
      f != j.end() && (!f->is_string() || f->get_ref<const std::string&>() != "aotrun-package")) {
    fail(Code::BadPackage, where + ": \"format\" must be \"aotrun-package\"");
  }
  if (auto fv = j.find("format_version"); fv != j.end()) {
    if (!fv->is_number_integer() || fv->get<int64_t>() != 1) {
      fail(Code::BadPackage, where + ": unsupported format_version (this aotrun reads 1)");
    }
  }
  Manifest m;
  m.name = require_string(j, "name", where);
  if (m.name.empty() || m.name.size() > 256) fail(Code::BadPackage, where + ": \"name\" must be 1..256 characters");
  m.abi_version = parse_abi_version(require_string(j, "abi_version", where), where);
  m.device = j.contains("device") ? require_string(j, "device", where) : "cpu";
  if (find_device(m.device) == nullptr) {
    fail(Code::BadPackage, where + ": \"device\" must be " + device_names_quoted() + ", not \"" + m.device + "\"");
  }
  m.library = require_file_name(require(j, "library", where), "\"library\"", where);
  if (auto w = j.find("weights"); w != j.end()) {
    if (!w->is_array() || w->size() > 1024)
      fail(Code::BadPackage, where + ": \"weights\" must be an array of file names");
    for (const auto& f : *w) m.weights.push_back(require_file_name(f, "each \"weights\" entry", where));
  }
  const auto& files = require(j, "files", where);
  if (!files.is_object()) fail(Code::BadPackage, where + ": \"files\" must be an object name -> sha256");
  for (auto it = files.begin(); it != files.end(); ++it) {
    if (!plain_file_name(it.key()))
      fail(Code::BadPackage, where + ": \"files\" key \"" + it.key() + "\" is not a plain file name");
    const auto& v = it.value();
    std::string hex = v.is_string() ? v.get<std::string>()
                      : (v.is_object() && v.contains("sha256") && v["sha256"].is_string())
                          ? v["sha256"].get<std::string>()
                          : std::string();
    bool ok = hex.size() == 64 && hex.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
    if (!ok) fail(Code::BadPackage, where + ": sha256 of \"" + it.key() + "\" is not 64 hex digits");
    for (auto& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    m.sha256[it.key()] = hex;
  }
  // Everything the loader will read must be covered by a hash.
  if (!m.sha256.count(m.library))
    fail(Code::BadPackage, where + ": \"files\" has no sha256 for the library \"" + m.library + "\"");
  for (const auto& w : m.weights) {
    if (!m.sha256.count(w)) fail(Code::BadPackage, where + ": \"files\" has no sha256 for weights file \"" + w + "\"");
  }
  return m;
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    fail(err == ENOENT ? Code::NotFound : Code::LoadFailed,
         "package directory '" + dir + "' has no readable manifest.json: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) fail(Code::BadPackage, path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxManifestBytes) {
    fail(Code::BadPackage, path + ": larger than " + std::to_string(kMaxManifestBytes) + " bytes");
  }
  // Read into a buffer sized up front: `ss << rdbuf()` swallows bad_alloc
  // and returns a truncated text, which would read as a corrupt manifest.
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(Code::LoadFailed, "cannot read " + path);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.gcount() != static_cast<std::streamsize>(text.size())) {
    fail(Code::LoadFailed, "cannot read " + path + ": it changed size while being read");
  }
  return parse_manifest(text, path);
}

}  // namespace aotrun

// Extracting the model library (the .so under data/aotinductor/model/) from
// a .pt2 archive (a zip) for the tests that dlopen it directly.
#pragma once

#include <zip.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// Extracts the model library from a .pt2 into `dir`; returns its path.
inline std::string extract_model_so(const std::filesystem::path& pt2, const std::filesystem::path& dir) {
  int err = 0;
  zip_t* z = zip_open(pt2.c_str(), ZIP_RDONLY, &err);
  if (z == nullptr) throw std::runtime_error("cannot open " + pt2.string());
  std::unique_ptr<zip_t, int (*)(zip_t*)> guard(z, zip_close);
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const std::string name = zip_get_name(z, i, 0);
    if (name.find("data/aotinductor/model/") == std::string::npos || name.size() < 3 ||
        name.compare(name.size() - 3, 3, ".so") != 0) {
      continue;
    }
    zip_stat_t st;
    zip_stat_index(z, i, 0, &st);
    std::vector<char> buf(st.size);
    zip_file_t* zf = zip_fopen_index(z, i, 0);
    if (zf == nullptr || zip_fread(zf, buf.data(), st.size) != static_cast<zip_int64_t>(st.size)) {
      throw std::runtime_error("cannot read " + name);
    }
    zip_fclose(zf);
    const std::filesystem::path out = dir / std::filesystem::path(name).filename();
    std::ofstream(out, std::ios::binary).write(buf.data(), static_cast<std::streamsize>(buf.size()));
    return out.string();
  }
  throw std::runtime_error("no model library in " + pt2.string());
}

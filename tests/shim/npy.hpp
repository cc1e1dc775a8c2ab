// A minimal reader of .npy files (version 1/2, little-endian, C order) for
// the corpus references.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

struct Npy {
  std::string descr;  // "<f4", "<i8", "|b1", ...
  std::vector<int64_t> shape;
  std::vector<char> data;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

inline Npy read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() < 10 || all[0] != '\x93' || std::string(all.data() + 1, 5) != "NUMPY") {
    throw std::runtime_error(path + " is not a .npy file");
  }
  const int major = static_cast<unsigned char>(all[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<unsigned char>(all[8]) | (static_cast<size_t>(static_cast<unsigned char>(all[9])) << 8);
    hstart = 10;
  } else {
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<unsigned char>(all[8 + i])) << (8 * i);
    hstart = 12;
  }
  const std::string h(all.data() + hstart, hlen);
  Npy n;
  const auto dpos = h.find("'descr':");
  const auto q1 = h.find('\'', dpos + 8);
  const auto q2 = h.find('\'', q1 + 1);
  n.descr = h.substr(q1 + 1, q2 - q1 - 1);
  if (h.find("'fortran_order': False") == std::string::npos) throw std::runtime_error(path + ": Fortran order");
  const auto s1 = h.find('(', h.find("'shape':"));
  const auto s2 = h.find(')', s1);
  std::stringstream ss(h.substr(s1 + 1, s2 - s1 - 1));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    if (tok.find_first_not_of(' ') == std::string::npos) continue;
    n.shape.push_back(std::stoll(tok));
  }
  n.data.assign(all.begin() + static_cast<long>(hstart + hlen), all.end());
  return n;
}

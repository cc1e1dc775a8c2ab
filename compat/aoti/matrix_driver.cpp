// One cell of the compatibility matrix (compat/aoti/matrix.py): opens one .pt2
// through libaotrun's C API, runs it RUNS times in one mode on the given .npy
// inputs and compares every run with the reference outputs, then prints one
// JSON object on stdout. Built as the CMake target aoti_matrix_driver
// (tests/pt2/CMakeLists.txt). libtorch: $AOTRUN_LIBTORCH, as everywhere.
//
//   aoti_matrix_driver --pkg mlp.pt2 --mode graph [--runs 3]
//                      --in mlp.in0.npy ... --want mlp.out0.npy ...
//                      [--rtol 1.3e-6 --atol 1e-5]    (float32; others exact)
//
// Result ("result" key) and exit status:
//   ok        0  every run within tolerance
//   refused   1  a call returned a status: "stage" (open, runner, run),
//                "code" (aotrun_code_name), "message"
//   mismatch  2  "max_abs_diff", "first" (the first bad element)
//   usage     3
// Also: "fallback" (the mode ran through a fallback, with "reason"),
// "graph_captures", "graph_replays". A crash is the caller's to see (signal).
#include <aotrun/aotrun.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Npy {
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  DLDataType dtype{kDLFloat, 32, 1};
  std::string kind;  // f4 i8 b1
};

bool load_npy(const std::string& path, Npy* n, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return *why = "cannot read " + path, false;
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0) return *why = path + ": not a .npy v1", false;
  const size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
  const std::string header = all.substr(10, hlen);
  if (header.find("'<f4'") != std::string::npos) {
    n->dtype = {kDLFloat, 32, 1}, n->kind = "f4";
  } else if (header.find("'<i8'") != std::string::npos) {
    n->dtype = {kDLInt, 64, 1}, n->kind = "i8";
  } else if (header.find("'|b1'") != std::string::npos) {
    n->dtype = {6 /* DLPack >= 0.8 kDLBool */, 8, 1}, n->kind = "b1";
  } else {
    return *why = path + ": dtype not f4/i8/b1: " + header, false;
  }
  const size_t lp = header.find('(', header.find("'shape'"));
  const size_t rp = header.find(')', lp);
  std::stringstream dims(header.substr(lp + 1, rp - lp - 1));
  std::string d;
  while (std::getline(dims, d, ',')) {
    if (d.find_first_of("0123456789") != std::string::npos) n->shape.push_back(std::stoll(d));
  }
  n->bytes.assign(all.begin() + 10 + static_cast<long>(hlen), all.end());
  return true;
}

DLTensor as_dl(Npy& n) {
  return DLTensor{n.bytes.data(), {kDLCPU, 0}, static_cast<int>(n.shape.size()), n.dtype, n.shape.data(), nullptr, 0};
}

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (c == '\n')
      o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      o += ' ';
    else
      o += c;
  }
  return o;
}

int refused(const char* stage, aotrun_status* s, const std::string& extra) {
  std::printf("{\"result\": \"refused\", \"stage\": \"%s\", \"code\": \"%s\", \"message\": \"%s\"%s}\n", stage,
              aotrun_code_name(aotrun_status_code(s)), esc(aotrun_status_message(s)).c_str(), extra.c_str());
  aotrun_status_free(s);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string pkg_path, mode_s = "threaded";
  int runs = 3;
  double rtol = 1.3e-6, atol = 1e-5;
  std::vector<std::string> ins, wants;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return std::fprintf(stderr, "missing value for %s\n", a.c_str()), 3;
    const std::string v = argv[++i];
    if (a == "--pkg")
      pkg_path = v;
    else if (a == "--mode")
      mode_s = v;
    else if (a == "--runs")
      runs = std::atoi(v.c_str());
    else if (a == "--in")
      ins.push_back(v);
    else if (a == "--want")
      wants.push_back(v);
    else if (a == "--rtol")
      rtol = std::atof(v.c_str());
    else if (a == "--atol")
      atol = std::atof(v.c_str());
    else
      return std::fprintf(stderr, "unknown option %s\n", a.c_str()), 3;
  }
  aotrun_mode mode = mode_s == "threaded"          ? AOTRUN_MODE_THREADED
                     : mode_s == "single_threaded" ? AOTRUN_MODE_SINGLE_THREADED
                     : mode_s == "graph"           ? AOTRUN_MODE_GRAPH
                                                   : static_cast<aotrun_mode>(-1);
  if (pkg_path.empty() || static_cast<int>(mode) < 0 || runs < 1) return std::fprintf(stderr, "usage\n"), 3;

  std::vector<Npy> in(ins.size()), want(wants.size());
  std::string why;
  for (size_t i = 0; i < ins.size(); ++i)
    if (!load_npy(ins[i], &in[i], &why)) return std::fprintf(stderr, "%s\n", why.c_str()), 3;
  for (size_t i = 0; i < wants.size(); ++i)
    if (!load_npy(wants[i], &want[i], &why)) return std::fprintf(stderr, "%s\n", why.c_str()), 3;
  std::vector<DLTensor> in_dl;
  for (auto& n : in) in_dl.push_back(as_dl(n));

  aotrun_package* pkg = nullptr;
  if (aotrun_status* s = aotrun_package_open(pkg_path.c_str(), nullptr, &pkg)) return refused("open", s, "");
  const char* reason = nullptr;
  const bool native = aotrun_package_mode_available(pkg, mode, &reason) != 0;
  std::string fb =
      native ? ", \"fallback\": false" : ", \"fallback\": true, \"reason\": \"" + esc(reason ? reason : "") + "\"";
  aotrun_runner_options* opts = nullptr;
  aotrun_status_free(aotrun_runner_options_create(&opts));
  aotrun_status_free(aotrun_runner_options_set_mode(opts, mode));
  aotrun_runner* r = nullptr;
  aotrun_status* s = aotrun_runner_create(pkg, opts, &r);
  aotrun_runner_options_free(opts);
  if (s != nullptr) return refused("runner", s, fb);

  double max_diff = 0;
  std::string first;
  bool bad = false;
  for (int run = 0; run < runs; ++run) {
    std::vector<Npy> got(want.size());
    std::vector<DLTensor> out_dl;
    for (size_t i = 0; i < want.size(); ++i) {
      got[i] = want[i];
      std::memset(got[i].bytes.data(), 0x7f, got[i].bytes.size());
      out_dl.push_back(as_dl(got[i]));
    }
    if (aotrun_status* e = aotrun_runner_run(r, in_dl.data(), in_dl.size(), out_dl.data(), out_dl.size())) {
      return refused("run", e, fb + ", \"run\": " + std::to_string(run));
    }
    for (size_t o = 0; o < want.size(); ++o) {
      const Npy& w = want[o];
      const Npy& g = got[o];
      if (w.kind == "f4") {
        const float* a = reinterpret_cast<const float*>(g.bytes.data());
        const float* b = reinterpret_cast<const float*>(w.bytes.data());
        for (size_t k = 0; k < w.bytes.size() / 4; ++k) {
          const double d = std::fabs(double(a[k]) - double(b[k]));
          if (!(d <= atol + rtol * std::fabs(double(b[k])))) {
            if (!bad)
              first = "run " + std::to_string(run) + " output " + std::to_string(o) + " element " + std::to_string(k) +
                      ": " + std::to_string(a[k]) + " vs " + std::to_string(b[k]);
            bad = true;
            max_diff = std::isnan(d) ? INFINITY : std::max(max_diff, d);
          }
        }
      } else {
        const size_t item = w.kind == "i8" ? 8 : 1;
        for (size_t k = 0; k < w.bytes.size() / item; ++k) {
          if (std::memcmp(g.bytes.data() + k * item, w.bytes.data() + k * item, item) != 0) {
            int64_t a = 0, b = 0;
            std::memcpy(&a, g.bytes.data() + k * item, item);
            std::memcpy(&b, w.bytes.data() + k * item, item);
            if (!bad)
              first = "run " + std::to_string(run) + " output " + std::to_string(o) + " element " + std::to_string(k) +
                      ": " + std::to_string(a) + " vs " + std::to_string(b);
            bad = true;
            max_diff = std::max(max_diff, std::fabs(double(a - b)));
          }
        }
      }
    }
  }
  aotrun_runner_stats st{};
  st.struct_size = sizeof(st);
  aotrun_status_free(aotrun_runner_get_stats(r, &st));
  const std::string stats = ", \"graph_captures\": " + std::to_string(st.graph_captures) +
                            ", \"graph_replays\": " + std::to_string(st.graph_replays) +
                            ", \"fallback_runs\": " + std::to_string(st.fallback_runs);
  aotrun_runner_destroy(r);
  aotrun_package_close(pkg);
  if (bad) {
    std::printf("{\"result\": \"mismatch\", \"max_abs_diff\": %.9g, \"first\": \"%s\"%s%s}\n", max_diff,
                esc(first).c_str(), fb.c_str(), stats.c_str());
    return 2;
  }
  std::printf("{\"result\": \"ok\"%s%s}\n", fb.c_str(), stats.c_str());
  return 0;
}

// The layout of a PyTorch AOTInductor package (.pt2, a zip archive):
//
//   [<archive name>/]data/aotinductor/<model>/<hash>.so           the compiled model
//   [<archive name>/]data/aotinductor/<model>/<hash>_metadata.json  e.g. {"AOTI_DEVICE_KEY": "cpu"}
//   [<archive name>/]data/aotinductor/<model>/...                 sources, flags, weights blobs
//
// One archive may hold several models; callers pick one by name ("model" is
// what torch._inductor.aoti_compile_and_package writes).
#pragma once

#include <string>
#include <vector>

#include "package/pt2/archive/private_dir.hpp"
#include "package/pt2/archive/zip_archive.hpp"

namespace aotrun::pt2 {

constexpr const char* kDefaultModel = "model";

struct Pt2Model {
  std::string name;
  std::vector<ZipEntry> files;  // plain files directly in the model's directory
  ZipEntry library;             // the one .so among them
  std::string metadata_json;    // the *_metadata.json, "" if absent
};

// Whether the file at `path`, open as `fd`, is read as a .pt2: by content (a
// zip archive) or by name ("*.pt2", so that a damaged archive is called one
// and refused as such). The package kind claims files by it, and `aotrun
// inspect` decides by it what to examine.
bool read_as_pt2(const std::string& path, int fd);

// Names of the models in the archive, sorted; empty if it has none.
std::vector<std::string> list_models(const ZipArchive& zip);

// Finds model `name`. Throws Error: BAD_PACKAGE when the archive holds no
// AOTInductor model at all, or the model has no or several .so files, or an
// entry of it is unsafe (a link, a name escaping the directory); NOT_FOUND
// when `name` is not among the models (the message lists those it holds).
Pt2Model find_model(const ZipArchive& zip, const std::string& name);

// Extracts every file of `model` but the entry named `skip` ("" = none; a
// weights blob read in place) into `dir` (files are flat, 0400; the .so
// 0500) and returns the path of the extracted .so.
std::string extract_model(const ZipArchive& zip, const Pt2Model& model, const PrivateDir& dir,
                          const std::string& skip = "");

}  // namespace aotrun::pt2

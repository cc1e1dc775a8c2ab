// `aotrun inspect`'s pre-dlopen findings: what the loader checks about a
// package's model library before dlopen (linkinfo/link_findings.hpp, linked
// in directly: the C API returns only the refusal), shown for packages that
// open and for packages it refuses.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime.hpp"

namespace aotrun::cli {

nlohmann::ordered_json link_findings_json(const std::string& package_path);
void link_findings_text(const std::string& package_path, std::ostream& out);

// open_package(), and when the open is refused: prints the findings (with
// the refusal, as JSON or text) to stdout, then rethrows the Failure.
Package open_or_show_findings(const std::string& path, const Args& args, bool json);

}  // namespace aotrun::cli

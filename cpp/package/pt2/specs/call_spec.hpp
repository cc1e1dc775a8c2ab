// The model's own names for its inputs and outputs, read from the call
// signature an AOTInductor archive keeps (issue #28 item 3).
//
// Inductor names a .pt2's inputs after its graph placeholders (arg41_1) and
// reports no output names, but every model library keeps the pytree specs
// torch.export recorded for the call (AOTInductorModelContainerGetCallSpec,
// also written into the wrapper as in_spec_ / out_spec_):
//   in_spec   [1, {"type": "builtins.tuple", "children_spec": [ARGS, KWARGS]}]
//   out_spec  [1, NODE]
// where NODE is {"type": T, "context": C, "children_spec": [NODE...]} and a
// leaf (one tensor) has type null. A dict-like node (builtins.dict,
// collections.OrderedDict, a transformers ModelOutput, ...) serialises its
// keys as a JSON list in C (a string holding JSON); defaultdict nests them in
// {"dict_context": [...]}. The leaves, depth first, are the model's inputs
// (outputs) in order.
//
// A leaf's name is its key path from the first key on: a keyword argument
// "input_ids", an output "last_hidden_state", a nested one "past[0][1]" or
// "extra.mask". A leaf reached by positions only (a positional argument, a
// tuple or plain tensor output) has none: torch records no names there.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace aotrun::pt2 {

// The model's names of `count` leaves of `spec` ("" where it has none), or
// an empty vector when the spec does not describe exactly `count` leaves or
// cannot be read (*why says which). `inputs`: spec is an in_spec, whose
// root splits positional from keyword arguments. Names that would be
// ambiguous (two leaves with one name, or a name equal to another leaf's
// placeholder in `placeholders`, when given) are dropped.
std::vector<std::string> call_spec_names(const std::string& spec, size_t count, bool inputs,
                                         const std::vector<std::string>& placeholders, std::string* why);

}  // namespace aotrun::pt2

// The model's own input and output names, read from the pytree call specs
// an AOTInductor model keeps (call_spec.hpp, issue #28 item 3). The specs
// are in the form torch.export writes (treespec_dumps, protocol 1); the
// zoo's BERT and CLIP exports check the same against real archives.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "package/pt2/specs/call_spec.hpp"

using aotrun::pt2::call_spec_names;

namespace {

const std::string kLeaf = R"({"type": null, "context": null, "children_spec": []})";

std::string node(const std::string& type, const std::string& context, const std::vector<std::string>& children) {
  std::string s = R"({"type": ")" + type + R"(", "context": )" + context + R"(, "children_spec": [)";
  for (size_t i = 0; i < children.size(); ++i) s += (i ? ", " : "") + children[i];
  return s + "]}";
}

// A JSON string holding `json` (what torch writes as a node's context).
std::string quoted(const std::string& json) {
  std::string s = "\"";
  for (char c : json) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s + "\"";
}

std::string spec(const std::string& root) { return "[1, " + root + "]"; }

std::string in_spec(const std::vector<std::string>& args, const std::string& kwargs) {
  return spec(node("builtins.tuple", "\"null\"", {node("builtins.tuple", "\"null\"", args), kwargs}));
}

std::string dict(const std::vector<std::string>& keys, const std::vector<std::string>& children,
                 const std::string& type = "builtins.dict") {
  std::string list = "[";
  for (size_t i = 0; i < keys.size(); ++i) list += (i ? ", \"" : "\"") + keys[i] + "\"";
  return node(type, quoted(list + "]"), children);
}

std::vector<std::string> names(const std::string& s, size_t n, bool inputs,
                               const std::vector<std::string>& placeholders = {}) {
  std::string why;
  return call_spec_names(s, n, inputs, placeholders, &why);
}

}  // namespace

TEST(CallSpec, PositionalArgumentsHaveNoNames) {
  // What the corpus and the bad-request models record: forward(*args).
  const std::string s = in_spec({kLeaf, kLeaf}, dict({}, {}));
  EXPECT_EQ(names(s, 2, true), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(names(spec(kLeaf), 1, false), (std::vector<std::string>{""}));
  EXPECT_EQ(names(spec(node("builtins.tuple", "\"null\"", {kLeaf, kLeaf})), 2, false),
            (std::vector<std::string>{"", ""}));
}

TEST(CallSpec, KeywordArgumentsAndOutputKeys) {
  const std::string s = in_spec({}, dict({"input_ids", "attention_mask"}, {kLeaf, kLeaf}));
  EXPECT_EQ(names(s, 2, true), (std::vector<std::string>{"input_ids", "attention_mask"}));
  // A transformers ModelOutput serialises like a dict, under its own type.
  const std::string out = spec(dict({"last_hidden_state", "pooler_output"}, {kLeaf, kLeaf},
                                    "transformers.modeling_outputs.BaseModelOutputWithPooling"));
  EXPECT_EQ(names(out, 2, false), (std::vector<std::string>{"last_hidden_state", "pooler_output"}));
}

TEST(CallSpec, MixedAndNestedPaths) {
  // forward(x, extra={"mask": m, "past": [k, v]}): x has no name.
  const std::string extra = dict({"mask", "past"}, {kLeaf, node("builtins.list", "\"null\"", {kLeaf, kLeaf})});
  const std::string s = in_spec({kLeaf}, dict({"extra"}, {extra}));
  EXPECT_EQ(names(s, 4, true), (std::vector<std::string>{"", "extra.mask", "extra.past[0]", "extra.past[1]"}));
  // A positional dict argument names its leaves by its keys.
  const std::string p = in_spec({dict({"a", "b"}, {kLeaf, kLeaf})}, dict({}, {}));
  EXPECT_EQ(names(p, 2, true), (std::vector<std::string>{"a", "b"}));
  // defaultdict keeps its keys under dict_context.
  const std::string dd = node("collections.defaultdict",
                              quoted(R"({"default_factory_module": "builtins", "default_factory_name": "list", )"
                                     R"("dict_context": ["logits", "loss"]})"),
                              {kLeaf, kLeaf});
  EXPECT_EQ(names(spec(dd), 2, false), (std::vector<std::string>{"logits", "loss"}));
  // Integer keys read as positions.
  EXPECT_EQ(names(spec(node("builtins.dict", quoted("[0, 1]"), {kLeaf, kLeaf})), 2, false),
            (std::vector<std::string>{"[0]", "[1]"}));
}

TEST(CallSpec, AmbiguousNamesAreDropped) {
  // Two positional dicts with the same key: neither leaf gets "x".
  const std::string s = in_spec({dict({"x"}, {kLeaf}), dict({"x", "y"}, {kLeaf, kLeaf})}, dict({}, {}));
  EXPECT_EQ(names(s, 3, true), (std::vector<std::string>{"", "", "y"}));
  // A name that is another input's placeholder would make a lookup ambiguous.
  const std::string k = in_spec({}, dict({"arg1_1", "mask"}, {kLeaf, kLeaf}));
  EXPECT_EQ(names(k, 2, true, {"arg0_1", "arg1_1"}), (std::vector<std::string>{"", "mask"}));
  // Its own placeholder is no ambiguity.
  EXPECT_EQ(names(k, 2, true, {"arg1_1", "arg2_1"}), (std::vector<std::string>{"arg1_1", "mask"}));
}

TEST(CallSpec, SpecsThatDoNotFitGiveNoNames) {
  std::string why;
  const std::string s = in_spec({}, dict({"input_ids", "attention_mask"}, {kLeaf, kLeaf}));
  EXPECT_TRUE(call_spec_names(s, 3, true, {}, &why).empty());
  EXPECT_NE(why.find("2 leaves for 3 inputs"), std::string::npos) << why;
  for (const std::string& bad : {std::string(""), std::string("[1]"), std::string("not json"),
                                 spec(R"({"type": "builtins.tuple"})"), spec(kLeaf) /* root not (args, kwargs) */}) {
    why.clear();
    EXPECT_TRUE(call_spec_names(bad, 1, true, {}, &why).empty()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  // Keys that do not match the children fall back to positions.
  EXPECT_EQ(names(spec(node("builtins.dict", quoted(R"(["only"])"), {kLeaf, kLeaf})), 2, false),
            (std::vector<std::string>{"", ""}));
  // Nested deeper than a package document may be: refused, not recursed.
  std::string deep = kLeaf;
  for (int i = 0; i < 40; ++i) deep = node("builtins.tuple", "\"null\"", {deep});
  why.clear();
  EXPECT_TRUE(call_spec_names(spec(deep), 1, false, {}, &why).empty());
  EXPECT_NE(why.find("deeper"), std::string::npos) << why;
}

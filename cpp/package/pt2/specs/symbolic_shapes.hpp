// Which input dims of a .pt2 model must agree, read from its wrapper
// (issue #29). torch.export gives dims that are one size one symbol (BERT's
// input_ids and attention_mask share batch and sequence); the compiled code
// reads each symbol from the first input that has it and trusts every other
// input to match, so a mask shorter than the ids is read past its end.
//
// The wrapper states the symbolic shape of each input it uses in
//   assert_size_stride(arg5_1, {s23, s27}, {s27, 1L}, "input");
// (torch 2.13 and newer; run only with AOTI_RUNTIME_CHECK_INPUTS=1) and binds
// symbols in `int64_t s23 = arg4_1_size[0];`. Older releases state only the
// bindings: there, dims that must agree cannot be told apart from dims that
// merely have the same range, and nothing is checked (docs/PT2.md).
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

namespace aotrun::pt2 {

// One operation of a dim's expression, in postfix order.
struct ShapeOp {
  enum Kind : uint8_t { Const, Sym, Add, Sub, Mul } kind;
  int64_t value;  // Const: the value; Sym: the symbol's index
};

class SymbolicShapes {
 public:
  // Reads `source` (the model's concatenated C++); inputs as the wrapper
  // names them (inputs_info_[I].name).
  static SymbolicShapes parse(const std::string& source, size_t num_inputs);

  // Whether the inputs' dims agree where the model says they must. `shapes`
  // and `ndims` hold one entry per input; `names` name the inputs in
  // messages. On a mismatch, false with *why naming both dims.
  bool check(const int64_t* const* shapes, const int* ndims, size_t num_inputs, const std::vector<std::string>& names,
             std::string* why) const;

  bool stated() const { return !dims_.empty() || !steps_.empty(); }

  // The model's size symbols ("s23"), and the input dims bound to each one
  // (those the model states as a bare symbol; all of one symbol share its
  // size). For tools that build inputs: `aotrun run --dim s23=4`.
  struct Binding {
    size_t input;
    int dim;
    size_t symbol;  // index into symbols()
  };
  const std::vector<std::string>& symbols() const { return symbols_; }
  std::vector<Binding> bindings() const;
  // The size the model computes for input dim (input, dim) from an
  // expression of the symbols (s0*2), given a size for each symbol
  // (`sizes[k]` for symbols()[k], used where `set[k]`); false when the dim
  // is no expression, or a symbol it needs has no size, or it overflows.
  bool computed_size(size_t input, int dim, const std::vector<int64_t>& sizes, const std::vector<bool>& set,
                     int64_t* out) const;
  // How many input dims are tied to another by a symbol or an expression.
  size_t tied_dims() const;

  // The step of input dim (input, dim): K when the model binds a symbol as
  // a K-th of it (`int64_t s6 = (1.0/8.0)*arg23_1_size_1;`: a dim exported
  // as 8*s6) and works on K*s6 elements, so that a size which is no
  // multiple of K would be cut down without an error; 1 otherwise. check()
  // refuses such sizes; probes use multiples.
  int64_t step(size_t input, int dim) const;

 private:
  struct Dim {
    size_t input;
    int dim;
    std::string text;          // as written, for messages
    std::vector<ShapeOp> ops;  // a bare symbol is one Sym op
  };
  struct Step {
    size_t input;
    int dim;
    int64_t k;
    std::string symbol;  // for messages
  };
  std::vector<std::string> symbols_;
  std::vector<Dim> dims_;  // bare symbols first, in input order, then expressions
  std::vector<Step> steps_;
};

}  // namespace aotrun::pt2

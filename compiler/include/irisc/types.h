// Types of the checked program.
//
// A value is a scalar or a tile of rank 1 or 2. Its element is a scalar type or
// a pointer to a scalar (`*T`, or `sym *T` for a pointer into the symmetric
// heap). Each dimension of a tile's shape is a compile-time size; when that
// size depends on compile-time parameters it keeps its canonical text (e.g.
// "BLOCK") so that shapes compare symbolically, and its value under the
// parameters' defaults. Shapes broadcast as NumPy's do (TileShape). A Type
// holds no owning pointers, so copying one is cheap and nodes that hold one
// need no destructor.
#pragma once

#include <cstdint>
#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace irisc {

enum class ScalarKind : uint8_t {
#define SCALAR(Name, Spelling, Bits, IsInteger, IsSigned, IsFloat, CppType) Name,
#include "irisc/scalars.def"
};

struct ScalarInfo {
  std::string_view spelling;
  unsigned bits;
  bool is_integer;
  bool is_signed;
  bool is_float;
  std::string_view cpp_type;
};
const ScalarInfo& scalar_info(ScalarKind kind);

// A tile's size, as the checker's ConstValue (ast.h) gives it: a plain number
// has no symbol, so the common case needs no string of its own.
struct Shape {
  std::string_view symbol;        // "BLOCK", "(BLOCK * 2)" (kept by the Module); empty for a number
  std::optional<int64_t> value;   // known value, or the value under defaults
  // The canonical text: the symbol, or the number in decimal.
  std::string text() const { return symbol.empty() ? std::to_string(*value) : std::string(symbol); }
  bool operator==(const Shape& other) const {
    return symbol == other.symbol && (!symbol.empty() || value == other.value);
  }
  // The literal size 1, which broadcasts (a symbolic size never does, even
  // where its default is 1).
  bool is_one() const { return symbol.empty() && value == 1; }
};

// The shape of a tile: one or two dimensions, row-major.
struct TileShape {
  std::array<Shape, 2> dims{};
  uint8_t rank = 0;

  TileShape() = default;
  TileShape(Shape n) : dims{n, {}}, rank(1) {}  // NOLINT: a size is a 1-D shape
  TileShape(Shape m, Shape n) : dims{m, n}, rank(2) {}
  std::span<const Shape> list() const { return {dims.data(), rank}; }
  // "64", "BLOCK_M, 64": the dimensions as the type spells them.
  std::string text() const;
  bool operator==(const TileShape& other) const { return list().size() == other.list().size() &&
                                                        std::equal(list().begin(), list().end(), other.list().begin()); }
  // The total number of elements under the parameters' defaults, if known.
  std::optional<int64_t> elements() const;
};

// NumPy's broadcasting of two shapes: aligned at the right, each pair of
// dimensions equal or one of them the literal 1. Null where they do not.
std::optional<TileShape> broadcast_shapes(const TileShape& a, const TileShape& b);

struct Type {
  enum class Kind : uint8_t { Error, Void, Scalar, Pointer };
  Kind kind = Kind::Error;
  ScalarKind scalar = ScalarKind::I32;  // the scalar, or the pointee of a pointer
  bool sym = false;                     // pointer into the symmetric heap
  bool literal = false;                 // an untyped literal whose type adapts
  std::optional<TileShape> shape;       // set for tiles
  // In a function with type parameters: the parameter that the scalar (or the
  // pointee) is in every instance of the function, so that the printer names
  // T rather than the scalar of one instance. `scalar` is the instance's.
  std::string_view type_param;

  static Type error() { return {}; }
  static Type void_type() { return {Kind::Void}; }
  static Type scalar_of(ScalarKind s) { return {Kind::Scalar, s}; }
  static Type pointer_to(ScalarKind s, bool sym) { return {Kind::Pointer, s, sym}; }

  bool is_error() const { return kind == Kind::Error; }
  bool is_void() const { return kind == Kind::Void; }
  bool is_tile() const { return shape.has_value(); }
  bool is_pointer() const { return kind == Kind::Pointer; }
  bool is_scalar_kind() const { return kind == Kind::Scalar; }
  bool is_bool() const { return kind == Kind::Scalar && scalar == ScalarKind::Bool; }
  bool is_integer() const { return kind == Kind::Scalar && scalar_info(scalar).is_integer; }
  bool is_float() const { return kind == Kind::Scalar && scalar_info(scalar).is_float; }
  bool is_arithmetic() const { return is_integer() || is_float(); }

  // The element type of a tile (the type itself for a scalar).
  Type element() const {
    Type t = *this;
    t.shape.reset();
    return t;
  }
  Type with_shape(std::optional<TileShape> s) const {
    Type t = *this;
    t.shape = std::move(s);
    return t;
  }
  // Same type ignoring literal-ness and type parameters (in the instance checked).
  bool same(const Type& other) const;
  std::string str() const;
};

}  // namespace irisc

// Type helpers; see types.h.
#include "irisc/types.h"

#include <fmt/format.h>

namespace irisc {
namespace {
constexpr ScalarInfo kScalarInfos[] = {
#define SCALAR(Name, Spelling, Bits, IsInteger, IsSigned, IsFloat, CppType) \
  {Spelling, Bits, IsInteger, IsSigned, IsFloat, CppType},
#include "irisc/scalars.def"
};
}  // namespace

const ScalarInfo& scalar_info(ScalarKind kind) { return kScalarInfos[static_cast<size_t>(kind)]; }

std::string TileShape::text() const {
  std::string s;
  for (const Shape& d : list()) s += (s.empty() ? "" : ", ") + d.text();
  return s;
}

std::optional<int64_t> TileShape::elements() const {
  int64_t n = 1;
  for (const Shape& d : list()) {
    if (!d.value) return std::nullopt;
    n *= *d.value;
  }
  return n;
}

std::optional<TileShape> broadcast_shapes(const TileShape& a, const TileShape& b) {
  const TileShape& longer = a.rank >= b.rank ? a : b;
  const TileShape& shorter = a.rank >= b.rank ? b : a;
  TileShape out = longer;
  const int offset = longer.rank - shorter.rank;
  for (int i = 0; i < shorter.rank; ++i) {
    const Shape& x = longer.dims[offset + i];
    const Shape& y = shorter.dims[i];
    if (x == y || y.is_one()) continue;
    if (!x.is_one()) return std::nullopt;
    out.dims[offset + i] = y;
  }
  return out;
}

bool Type::same(const Type& other) const {
  if (kind != other.kind || shape != other.shape) return false;
  if (kind == Kind::Scalar) return scalar == other.scalar;
  if (kind == Kind::Pointer) return scalar == other.scalar && sym == other.sym;
  return true;
}

std::string Type::str() const {
  std::string element;
  switch (kind) {
    case Kind::Error: return "<error>";
    case Kind::Void: return "void";
    case Kind::Scalar: element = std::string(type_param.empty() ? scalar_info(scalar).spelling : type_param); break;
    case Kind::Pointer:
      element = fmt::format("{}*{}", sym ? "sym " : "", type_param.empty() ? scalar_info(scalar).spelling : type_param);
      break;
  }
  if (!shape) return element;
  return fmt::format("tile<{}, {}>", element, shape->text());
}

}  // namespace irisc

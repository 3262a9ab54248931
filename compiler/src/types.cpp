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
    case Kind::Scalar: element = std::string(scalar_info(scalar).spelling); break;
    case Kind::Pointer:
      element = fmt::format("{}*{}", sym ? "sym " : "", scalar_info(scalar).spelling);
      break;
  }
  if (!shape) return element;
  return fmt::format("tile<{}, {}>", element, shape->text());
}

}  // namespace irisc

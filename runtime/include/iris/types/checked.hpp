// What an access carries in checked builds (irisc --checked).
#pragma once

#include <type_traits>

#include "iris/types/program.hpp"

namespace iris {

// In checked builds (irisc --checked) every access through a pointer derived
// from the symmetric heap, and every translation, carries the .iris location
// it came from; the runtime reports a violation with that location, the rank
// and the program instance. Unchecked builds pass Unchecked{}, which costs
// nothing.
struct Unchecked {};
// An unchecked wait's .iris location: the CPU emulation names it in a
// deadlock report (docs/runtime.md, "Hang detection") whether or not the
// kernel was built checked; the GPU's wait ignores it.
struct UncheckedAt {
  const char* file;
  int line;
};
struct Checked {
  const Program& program;
  const char* file;
  int line;
};
template <class C>
inline constexpr bool is_checked = std::is_same_v<C, Checked>;

}  // namespace iris

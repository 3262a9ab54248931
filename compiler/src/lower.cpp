// The lowering passes, in order: the one list of what happens between the
// checker and the C++ printer (Halide's lowering is the model). Each pass is
// a small walk in its own file (passes.h); a pass that applies only to one
// kind of build says so here.
#include "irisc/lower.h"

#include "irisc/passes.h"
#include "irisc/tir_walk.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace irisc {
namespace {

struct Pass {
  std::string_view name;
  bool (*applies)(const LowerOptions&);
  void (*run)(TirModule&);
};

constexpr bool every_build(const LowerOptions&) { return true; }
constexpr bool checked_builds(const LowerOptions& o) { return o.checked; }
// A checked build keeps `p @ rank()` and each translation of a pointer tile,
// so that the runtime checks every translated pointer.
constexpr bool unchecked_builds(const LowerOptions& o) { return !o.checked; }

constexpr std::array<Pass, 9> kPasses = {{
    {"elide-own-rank", unchecked_builds, elide_own_rank},
    {"hoist-translations", unchecked_builds, hoist_translations},
    {"sink-broadcasts", every_build, sink_broadcasts},
    {"pipeline-loads", every_build, pipeline_loads},
    {"assign-layouts", every_build, assign_layouts},
    {"advance-pointers", every_build, advance_pointers},
    {"mark-checked", checked_builds, mark_checked_sites},
    {"assign-names", every_build, assign_names},
    {"split-copier", every_build, split_copier},
}};

constexpr std::array<std::string_view, kPasses.size() + 1> names_of_passes() {
  std::array<std::string_view, kPasses.size() + 1> names{"build"};
  for (size_t i = 0; i < kPasses.size(); ++i) names[i + 1] = kPasses[i].name;
  return names;
}

// Every value's operands against tir_ops.def (operand_error), after `stage`:
// a builder or pass that forgets an operand stops here, naming itself, not in
// the C++ compiler or at run time.
void verify_operands(TirModule& tir, std::string_view stage) {
  for (TirFunction* function : tir.functions)
    for_each_value(*function, [&](const TirValue* v) {
      if (std::string error = operand_error(*v); !error.empty())
        throw std::logic_error(fmt::format("TIR after {}: {}", stage, error));
    });
}

}  // namespace

std::span<const std::string_view> pass_names() {
  static const auto names = names_of_passes();
  return names;
}

TirModule lower(const Module& module, const LowerOptions& options) {
  TirModule tir = build_tir(module, options.source_name);
  tir.namespace_name = options.namespace_name;  // empty: the naming pass derives it
  tir.checked = options.checked;
  verify_operands(tir, "build");
  if (options.stop_after == "build") return tir;
  for (const Pass& pass : kPasses) {
    if (pass.applies(options)) {
      pass.run(tir);
      verify_operands(tir, pass.name);
    }
    if (options.stop_after == pass.name) break;
  }
  return tir;
}

}  // namespace irisc

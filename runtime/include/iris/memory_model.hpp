// The memory model's enumerations (iris/memory_model.def), the same on every
// target: what a memory order, a scope, a comparison and a read-modify-write
// operation are called in the runtime and in generated code.
#pragma once

namespace iris {

enum class Sem {
#define IRIS_SEM(name) name,
#include "iris/memory_model.def"
};
enum class Scope {
#define IRIS_SCOPE(name) name,
#include "iris/memory_model.def"
};
enum class Cmp {
#define IRIS_CMP(name) name,
#include "iris/memory_model.def"
};
enum class AtomicOp {
#define IRIS_ATOMIC_OP(name) name,
#include "iris/memory_model.def"
};

}  // namespace iris

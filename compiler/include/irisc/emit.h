// Code emission: TIR, after the lowering passes, printed as C++ written
// against the runtime's tile library (runtime/include/iris/kernel.hpp). The
// same text builds for every target: a GPU compiler gets the GPU runtime, a
// host C++ compiler the CPU emulation.
#pragma once

#include "irisc/tir.h"

namespace irisc {

struct EmitOptions {
  // Record spans of the kernel, its waits, signals, barriers, remote stores
  // and atomics, dot loops and epilogues (trace_points.h), which a run
  // writes as a trace where IRIS_TRACE names a file (docs/debugging.md).
  bool trace = false;
};

// Writes the generated C++ for a lowered module (lower.h).
void emit_cpp(const TirModule& module, const llvm::SourceMgr& sources, llvm::raw_ostream& out,
              const EmitOptions& options = {});

// How a memory access (an operation that reads or writes through its first
// operand, a pointer: tir_trait::ReadsMemory, WritesMemory) reaches the
// memory it names, from that pointer's address space. The printer asks here,
// and only here, so that a transport to peers that loads and stores cannot
// reach (multi-node) changes this one decision.
enum class MemoryRoute : uint8_t {
  Own,   // the calling rank's memory: a plain pointer or its own symmetric heap
  Peer,  // another rank's heap (AddressSpace::Remote: a translation's result)
  // A heap of a rank that may be on another node (AddressSpace::AnyRank, or
  // put_signal's flag there): the runtime's transport finds the rank and
  // goes through the network where loads and stores cannot reach it.
  Transport,
};
MemoryRoute memory_route(const TirValue& access);

// The runtime function that performs `access` on its route. Every peer of
// the Own and Peer routes is mapped into the calling rank's address space
// (threads of one process, or CUDA IPC), so both take the tile library's own
// loads, stores and atomics (tir_ops.def's function); the Transport route
// takes iris/ops/transport.hpp's remote_* function of the operation, which
// takes the program first and then the arguments of the tile library's.
std::string_view access_function(const TirValue& access);

}  // namespace irisc

// Iris runtime, every backend: host collective calls (see collective.hpp).
#include "collective.hpp"

#include <sstream>

#include "iris/host.hpp"

namespace iris::detail {

CollectiveCall CollectiveCall::allocate(std::size_t bytes, std::size_t alignment) {
  CollectiveCall call;
  call.op = CollectiveOp::allocate;
  call.bytes = bytes;
  call.alignment = alignment;
  return call;
}

CollectiveCall CollectiveCall::free(const void* p, const char* base, std::size_t heap_size) {
  CollectiveCall call;
  call.op = CollectiveOp::free;
  call.pointer = p;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const auto start = reinterpret_cast<std::uintptr_t>(base);
  if (p == nullptr) {
    call.offset = kNullOffset;
  } else if (addr < start || addr - start >= heap_size) {
    call.offset = kOutsideHeap;
  } else {
    call.offset = addr - start;
  }
  return call;
}

CollectiveCall CollectiveCall::barrier() { return CollectiveCall{}; }

CollectiveCall CollectiveCall::from_rank0(std::uint64_t value) {
  CollectiveCall call;
  call.op = CollectiveOp::from_rank0;
  call.value = value;
  return call;
}

CollectiveCall CollectiveCall::agree(const std::string& text) {
  CollectiveCall call;
  call.op = CollectiveOp::agree;
  // FNV-1a: what MPI ranks send and compare in place of the text.
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  call.offset = hash;
  call.text = &text;
  return call;
}

void CollectiveCall::to_words(std::uint64_t* words) const {
  words[0] = static_cast<std::uint64_t>(op);
  words[1] = bytes;
  words[2] = alignment;
  words[3] = offset;
  words[4] = value;
}

CollectiveCall CollectiveCall::from_words(const std::uint64_t* words) {
  CollectiveCall call;
  call.op = static_cast<CollectiveOp>(words[0]);
  call.bytes = words[1];
  call.alignment = words[2];
  call.offset = words[3];
  call.value = words[4];
  return call;
}

std::string CollectiveCall::describe() const {
  std::ostringstream s;
  switch (op) {
    case CollectiveOp::allocate:
      s << "allocate(" << bytes << " bytes, alignment " << alignment << ")";
      break;
    case CollectiveOp::free:
      if (offset == kNullOffset) {
        s << "free(nullptr)";
      } else if (offset == kOutsideHeap) {
        if (pointer != nullptr) s << "free(" << pointer << ", not inside its heap)";
        else s << "free(a pointer not inside its heap)";  // another process's call
      } else {
        s << "free(heap offset " << offset << ")";
      }
      break;
    case CollectiveOp::barrier:
      s << "barrier()";
      break;
    case CollectiveOp::from_rank0:
      s << "from_rank0()";
      break;
    case CollectiveOp::agree:
      if (text != nullptr) s << *text;
      else s << "agree(a text of hash " << offset << ")";  // another process's call
      break;
  }
  return s.str();
}

std::string compare_calls(std::uint64_t seq, const std::vector<CollectiveCall>& calls) {
  std::string diffs;
  for (std::size_t o = 1; o < calls.size(); ++o) {
    if (!calls[o].same_as(calls[0])) diffs += "; rank " + std::to_string(o) + " called " + calls[o].describe();
  }
  if (diffs.empty()) return diffs;
  return "iris: collective call #" + std::to_string(seq) + " differs between ranks: rank 0 called " +
         calls[0].describe() + diffs + " (every rank must make the same sequence of allocate/free/barrier/agree/from_rank0 calls)";
}

std::uint64_t apply_call(HeapAllocator& allocator, const CollectiveCall& call) {
  if (call.op == CollectiveOp::allocate) return allocator.allocate(call.bytes, call.alignment);
  if (call.op == CollectiveOp::free && call.offset == CollectiveCall::kOutsideHeap) {
    std::ostringstream msg;
    msg << "iris: free: pointer " << call.pointer << " is not inside the symmetric heap";
    throw Error(msg.str());
  }
  if (call.op == CollectiveOp::free && call.offset != CollectiveCall::kNullOffset) allocator.free(call.offset);
  return 0;
}

std::uint64_t call_result(HeapAllocator& allocator, const std::vector<CollectiveCall>& calls, int self) {
  if (calls[0].op == CollectiveOp::from_rank0) return calls[0].value;
  return apply_call(allocator, calls[static_cast<std::size_t>(self)]);
}

std::uint64_t call_result_of_words(std::uint64_t seq, const std::vector<std::uint64_t>& words, int self,
                                   const CollectiveCall& call, HeapAllocator& allocator) {
  std::vector<CollectiveCall> calls(words.size() / CollectiveCall::kWords);
  for (std::size_t o = 0; o < calls.size(); ++o) calls[o] = CollectiveCall::from_words(&words[CollectiveCall::kWords * o]);
  calls[static_cast<std::size_t>(self)].pointer = call.pointer;
  calls[static_cast<std::size_t>(self)].text = call.text;
  const std::string error = compare_calls(seq, calls);
  if (!error.empty()) throw Error(error);
  return call_result(allocator, calls, self);  // the same on every process, errors included
}

std::uintptr_t checked_heap_offset(const void* p, int to_rank, int rank, int world_size, const char* base,
                                   std::size_t heap_size) {
  if (to_rank < 0 || to_rank >= world_size) {
    throw Error("iris: translate: rank " + std::to_string(to_rank) + " is out of range [0, " +
                std::to_string(world_size) + ")");
  }
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const auto start = reinterpret_cast<std::uintptr_t>(base);
  if (addr < start || addr - start >= heap_size) {
    std::ostringstream s;
    s << "iris: translate: pointer " << p << " is not inside the symmetric heap of rank " << rank;
    throw Error(s.str());
  }
  return addr - start;
}

}  // namespace iris::detail

// Iris runtime: what checked mode decides and says, shared by every target.
//
// Checked builds (irisc --checked) call the target's check_access, check_rank and
// translate_checked in front of heap accesses, rank operands and translations. The
// targets differ only in how a violation is reported (the CPU throws iris::Error,
// the GPU writes a report buffer and traps); the rules and the words are here, in
// functions that run on the host and on the device, so the two cannot drift apart.
//
// Allocation bounds. The collective allocator hands out the same blocks at the same
// offsets on every rank, so one table of live allocations (heap offset, size asked
// for, ordinal number) describes every heap. The runtime keeps it up to date
// (DeviceContext::allocations; on the GPU a device copy in the runtime area). An
// access is a set of active elements of one type; the rule is:
//
//   every active element of one access lies inside the live allocation that holds
//   the access's lowest active element, on the heap of that element.
//
// So a tile that runs off the end of a buffer, into the padding after it, into the
// next buffer or into freed memory is reported, and so is a scalar access outside
// every allocation. What is not seen: an access that lies wholly inside another
// live allocation than the one the pointer was computed from (no provenance is
// tracked); sizes are those asked for, so the padding up to 256 bytes counts as
// outside.
#pragma once

#include <cstddef>
#include <cstdint>

#include "iris/host.hpp"
#include "iris/memory_model.hpp"
#include "iris/target.hpp"

namespace iris {

// The live allocations of the symmetric heaps, in offset order.
struct AllocationTable {
  static constexpr int kCapacity = 1024;
  // Number of entries; -1 while more than kCapacity blocks are live (then only the
  // heap bounds are checked).
  int count;
  std::uint64_t begin[kCapacity];   // heap offset of the block
  std::uint64_t end[kCapacity];     // begin + the bytes asked for
  std::uint64_t number[kCapacity];  // 1 for the run's first allocate call, 2 for the second, ...
};

namespace detail {

// A fixed-size message buffer (device code has no snprintf).
struct Text {
  static constexpr int kCapacity = 480;
  char buf[kCapacity];
  int len = 0;
  IRIS_HD Text& add(const char* s) {
    if (s == nullptr) s = "<unknown>";
    while (*s != '\0' && len < kCapacity - 1) buf[len++] = *s++;
    buf[len] = '\0';
    return *this;
  }
  IRIS_HD Text& add(long long v) {
    if (v < 0 && len < kCapacity - 1) buf[len++] = '-';
    return add_unsigned(v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
  }
  IRIS_HD Text& add_unsigned(unsigned long long u) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    while (n > 0 && len < kCapacity - 1) buf[len++] = digits[--n];
    buf[len] = '\0';
    return *this;
  }
  IRIS_HD Text& add_pointer(const void* p) {
    const auto u = reinterpret_cast<unsigned long long>(p);
    add("0x");
    bool started = false;
    for (int shift = 60; shift >= 0; shift -= 4) {
      const unsigned d = static_cast<unsigned>(u >> shift) & 0xfu;
      if (d == 0 && !started && shift != 0) continue;
      started = true;
      if (len < kCapacity - 1) buf[len++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    }
    buf[len] = '\0';
    return *this;
  }
};

IRIS_HD inline bool in_heap(const DeviceContext& ctx, int r, std::uintptr_t addr, std::size_t bytes) {
  const auto base = reinterpret_cast<std::uintptr_t>(ctx.heap_bases[r]);
  return addr >= base && bytes <= ctx.heap_size && addr - base <= ctx.heap_size - bytes;
}

// The rank whose heap holds addr .. addr+bytes, or -1.
IRIS_HD inline int heap_of(const DeviceContext& ctx, std::uintptr_t addr, std::size_t bytes) {
  for (int r = 0; r < ctx.world_size; ++r) {
    if (in_heap(ctx, r, addr, bytes)) return r;
  }
  return -1;
}

IRIS_HD inline std::uint64_t heap_offset(const DeviceContext& ctx, int r, std::uintptr_t addr) {
  return addr - reinterpret_cast<std::uintptr_t>(ctx.heap_bases[r]);
}

// Index of the last allocation that begins at or before `offset`, or -1.
IRIS_HD inline int allocation_before(const AllocationTable& t, std::uint64_t offset) {
  int lo = 0, hi = t.count;  // binary search for the first block that begins after offset
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (t.begin[mid] <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

// What is wrong with an access whose lowest and highest active elements (of
// `bytes` bytes each) are at `lowest` and `highest`.
struct AccessFault {
  enum Kind { none, outside_heap, not_allocated, past_end } kind = none;
  std::uintptr_t addr = 0;  // outside_heap: the element outside
  int heap = -1;            // not_allocated, past_end: the heap of the lowest element
  int block = -1;           // index into the table: the block before (not_allocated), the block (past_end)
};

IRIS_HD inline AccessFault classify_access(const DeviceContext& ctx, std::uintptr_t lowest, std::uintptr_t highest,
                                           std::size_t bytes) {
  AccessFault f;
  const int heap = heap_of(ctx, lowest, bytes);
  const std::uintptr_t outside = heap < 0 ? lowest : heap_of(ctx, highest, bytes) < 0 ? highest : 0;
  if (outside != 0) {
    f.kind = AccessFault::outside_heap;
    f.addr = outside;
    return f;
  }
  const AllocationTable* t = ctx.allocations;
  if (t == nullptr || t->count < 0) return f;
  const std::uint64_t first = heap_offset(ctx, heap, lowest);
  f.heap = heap;
  f.block = allocation_before(*t, first);
  if (f.block < 0 || first + bytes > t->end[f.block]) {
    f.kind = first < (f.block < 0 ? 0 : t->end[f.block]) ? AccessFault::past_end : AccessFault::not_allocated;
    return f;
  }
  const std::uintptr_t block_end = reinterpret_cast<std::uintptr_t>(ctx.heap_bases[heap]) + t->end[f.block];
  if (highest + bytes > block_end) f.kind = AccessFault::past_end;
  return f;
}

IRIS_HD inline void describe_block(const AllocationTable& t, int i, Text& what) {
  what.add("allocation #").add_unsigned(t.number[i]).add(" (heap offset ").add_unsigned(t.begin[i]).add(", ");
  what.add_unsigned(t.end[i] - t.begin[i]).add(" bytes)");
}

// The message for a fault found by classify_access (same arguments).
IRIS_HD inline void describe_access(const DeviceContext& ctx, const AccessFault& f, std::uintptr_t lowest,
                                    std::uintptr_t highest, std::size_t bytes, Text& what) {
  if (f.kind == AccessFault::outside_heap) {
    what.add("access of ").add_unsigned(bytes).add(" bytes at ").add_pointer(reinterpret_cast<const void*>(f.addr));
    what.add(" is outside every rank's symmetric heap");
    for (int r = 0; r < ctx.world_size; ++r) {
      const auto base = reinterpret_cast<std::uintptr_t>(ctx.heap_bases[r]);
      if (f.addr >= base && f.addr - base < ctx.heap_size) {
        what.add(" (it starts at offset ").add_unsigned(f.addr - base).add(" of rank ").add(static_cast<long long>(r));
        what.add("'s heap of ").add_unsigned(ctx.heap_size).add(" bytes and runs past its end)");
        return;
      }
    }
    const auto base = reinterpret_cast<std::uintptr_t>(ctx.heap_bases[ctx.rank]);
    what.add(" (offset ").add(static_cast<long long>(f.addr - base)).add(" from this rank's heap base; heap size ");
    what.add_unsigned(ctx.heap_size).add(")");
    return;
  }
  const AllocationTable& t = *ctx.allocations;
  const std::uint64_t first = heap_offset(ctx, f.heap, lowest);
  what.add("access of ").add_unsigned(bytes).add("-byte elements at offset ").add_unsigned(first);
  if (highest != lowest) what.add(" .. ").add(static_cast<long long>(highest - lowest + first));
  what.add(" of rank ").add(static_cast<long long>(f.heap)).add("'s heap");
  if (f.kind == AccessFault::not_allocated) {
    what.add(" is not inside any live allocation");
    if (f.block < 0) {
      what.add(" (no allocation begins before it)");
    } else {
      what.add(" (the nearest one before it, ");
      describe_block(t, f.block, what);
      what.add(", ends ").add_unsigned(first - t.end[f.block]).add(" bytes before it)");
    }
    return;
  }
  const std::uint64_t end = t.end[f.block];
  const int high_heap = heap_of(ctx, highest, bytes);
  if (high_heap != f.heap) {
    what.add(" reaches into rank ").add(static_cast<long long>(high_heap)).add("'s heap, past the end of ");
  } else {
    const std::uint64_t over = heap_offset(ctx, f.heap, highest) + bytes - end;
    what.add(" runs ").add_unsigned((over + bytes - 1) / bytes).add(over > bytes ? " elements" : " element");
    what.add(" past the end of ");
  }
  describe_block(t, f.block, what);
}

// A wait's comparison as written: ">=".
IRIS_HD inline const char* cmp_text(Cmp op) {
  switch (op) {
    case Cmp::eq: return "==";
    case Cmp::ne: return "!=";
    case Cmp::lt: return "<";
    case Cmp::le: return "<=";
    case Cmp::gt: return ">";
    case Cmp::ge: return ">=";
  }
  return "?";
}

// Where a waited-for flag is, for a hang report: "offset 4096 of rank 1's heap,
// in allocation #2 (heap offset 4096, 64 bytes)", or its address where it is
// outside every heap.
IRIS_HD inline void describe_flag(const DeviceContext& ctx, const void* p, Text& what) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const int heap = heap_of(ctx, addr, 1);
  if (heap < 0) {
    what.add("at ").add_pointer(p).add(", outside every rank's symmetric heap");
    return;
  }
  const std::uint64_t offset = heap_offset(ctx, heap, addr);
  what.add("at offset ").add_unsigned(offset).add(" of rank ").add(static_cast<long long>(heap)).add("'s heap");
  const AllocationTable* t = ctx.allocations;
  if (t == nullptr || t->count < 0) return;
  const int block = allocation_before(*t, offset);
  if (block < 0 || offset >= t->end[block]) {
    what.add(", in no live allocation");
    return;
  }
  what.add(", in ");
  describe_block(*t, block, what);
}

IRIS_HD inline void describe_bad_rank(const DeviceContext& ctx, int r, Text& what) {
  what.add("rank ").add(static_cast<long long>(r)).add(" is out of range [0, ");
  what.add(static_cast<long long>(ctx.world_size)).add(")");
}

IRIS_HD inline void describe_bad_translate(const void* p, int to_rank, Text& what) {
  what.add("translate to rank ").add(static_cast<long long>(to_rank)).add(": pointer ").add_pointer(p);
  what.add(" is not inside this rank's symmetric heap (only local heap pointers can be translated)");
}

}  // namespace detail
}  // namespace iris

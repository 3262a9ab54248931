// Tiles: the device library that irisc's generated code is written against.
//
// One lowering path for every target. A program instance computes on 1-D
// tiles of N elements held in registers, spread over the kThreads threads
// that run the instance (a GPU thread block; on the CPU kThreads is 1 and the
// one thread holds every element). The layout is blocked: a thread holds runs
// of `vec` consecutive elements (4 when the tile is large enough), so a
// contiguous access becomes 16-byte vector loads and stores for 32-bit types.
// The layout depends on N only, never on the element type, so tiles of
// different types line up element for element.
//
// Values are plain scalars or tile-like objects:
//   Tile<T, N>        a register tile
//   Range<T, N>       start + i (what arange and offsets built from it are),
//                     kept symbolic so that contiguity is known at compile time
//   ContigPtrs<T, N>  base + i: a pointer tile known to be contiguous
// Operations are named functions (add, lt, load, ...) rather than operators,
// so generated code says exactly what it does and overloads never surprise.
//
// Requires, before inclusion, the target's primitives (device_cpu.hpp or the
// GPU equivalent): Sem, Scope, Cmp, translate, atomics, wait_until, fence.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "iris/target.hpp"

#ifndef IRIS_THREADS
#define IRIS_THREADS 256
#endif

namespace iris {

#if IRIS_GPU
inline constexpr int kThreads = IRIS_THREADS;
// Host and device: the tile functions that use it are IRIS_HD (their host
// instantiations, which never run, see thread 0).
IRIS_HD inline int thread_index() {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return static_cast<int>(threadIdx.x);
#else
  return 0;
#endif
}
#else
inline constexpr int kThreads = 1;
inline int thread_index() { return 0; }
#endif

// The grid of program instances that a launch runs.
struct Grid {
  int x = 1, y = 1, z = 1;
};

// The state of one program instance: which instance, of how many, and the
// symmetric heaps it may address.
struct Program {
  DeviceContext ctx;
  int id[3];
  int count[3];
  IRIS_HD int linear_id() const { return id[0] + count[0] * (id[1] + count[1] * id[2]); }
};

constexpr bool is_tile_size(long long n) { return n > 0 && (n & (n - 1)) == 0; }

// Where element j of this thread lives in a tile of N elements.
template <int N>
struct Layout {
  static_assert(is_tile_size(N), "tile sizes are positive powers of two");
  static constexpr int per_thread = N >= kThreads ? N / kThreads : 1;
  static constexpr int vec = per_thread < 4 ? per_thread : 4;
  IRIS_HD static int index(int j) {
    return (j / vec) * (kThreads * vec) + thread_index() * vec + (j % vec);
  }
  // Small tiles leave threads beyond N idle.
  IRIS_HD static bool active() { return N >= kThreads || thread_index() < N; }
};

template <class T, int N>
struct Tile {
  using value_type = T;
  static constexpr int size = N;
  static constexpr int per_thread = Layout<N>::per_thread;
  T v[per_thread];
  IRIS_HD T operator[](int j) const { return v[j]; }
  IRIS_HD T& operator[](int j) { return v[j]; }
};

template <class T, int N>
struct Range {
  using value_type = T;
  static constexpr int size = N;
  static constexpr int per_thread = Layout<N>::per_thread;
  T start;
  IRIS_HD T operator[](int j) const { return start + static_cast<T>(Layout<N>::index(j)); }
  IRIS_HD operator Tile<T, N>() const {
    Tile<T, N> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

template <class T, int N>
struct ContigPtrs {
  using value_type = T*;
  static constexpr int size = N;
  static constexpr int per_thread = Layout<N>::per_thread;
  T* base;
  IRIS_HD T* operator[](int j) const { return base + Layout<N>::index(j); }
  IRIS_HD operator Tile<T*, N>() const {
    Tile<T*, N> t;
    for (int j = 0; j < per_thread; ++j) t.v[j] = (*this)[j];
    return t;
  }
};

// ---------------------------------------------------------------- traits
template <class X> struct tile_traits { static constexpr bool is_tile = false; };
template <class T, int N> struct tile_traits<Tile<T, N>> { static constexpr bool is_tile = true; };
template <class T, int N> struct tile_traits<Range<T, N>> { static constexpr bool is_tile = true; };
template <class T, int N> struct tile_traits<ContigPtrs<T, N>> { static constexpr bool is_tile = true; };
template <class X> inline constexpr bool is_tile = tile_traits<std::remove_cvref_t<X>>::is_tile;
template <class X> inline constexpr bool is_range = false;
template <class T, int N> inline constexpr bool is_range<Range<T, N>> = true;
template <class X> inline constexpr bool is_contig = false;
template <class T, int N> inline constexpr bool is_contig<ContigPtrs<T, N>> = true;
template <class X> inline constexpr bool is_int_scalar = std::is_integral_v<X> && !std::is_same_v<X, bool>;

// The number of elements of a tile-like type, 0 for a scalar.
template <class X>
constexpr int size_of() {
  if constexpr (is_tile<X>) return std::remove_cvref_t<X>::size;
  else return 0;
}

// Element j of a tile, or the scalar itself (broadcasting).
template <class X>
IRIS_HD auto elem(const X& x, int j) {
  if constexpr (is_tile<X>) return x[j];
  else return x;
}

// Applies f elementwise over tiles and broadcast scalars.
template <class F, class... Xs>
IRIS_HD auto zip(F f, const Xs&... xs) {
  if constexpr (!(is_tile<Xs> || ...)) {
    return f(xs...);
  } else {
    constexpr int N = std::max({size_of<Xs>()...});  // the checker made all tiles agree
    using R = decltype(f(elem(xs, 0)...));
    Tile<R, N> out;
    for (int j = 0; j < Layout<N>::per_thread; ++j) out.v[j] = f(elem(xs, j)...);
    return out;
  }
}

// ------------------------------------------------------------ conversion
// `x as T`: a Range of integers stays a Range; a tile converts elementwise.
template <class T, class X>
IRIS_HD auto as(const X& x) {
  if constexpr (is_range<X> && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return Range<T, X::size>{static_cast<T>(x.start)};
  } else if constexpr (is_contig<X>) {
    return x;
  } else {
    return zip([](auto e) { return static_cast<T>(e); }, x);
  }
}

// --------------------------------------------------- creation and shape
template <int N>
IRIS_HD Range<int32_t, N> arange() { return {0}; }

template <class T, int N>
IRIS_HD Tile<T, N> full(T value) {
  Tile<T, N> t;
  for (int j = 0; j < Layout<N>::per_thread; ++j) t.v[j] = value;
  return t;
}

template <class T, int N>
IRIS_HD Tile<T, N> zeros() { return full<T, N>(T{}); }

// ------------------------------------------------------------ arithmetic
// add and sub keep Ranges and contiguous pointers symbolic where they can.
template <class A, class B>
IRIS_HD auto add(const A& a, const B& b) {
  if constexpr (is_range<A> && is_int_scalar<B>) {
    using T = std::common_type_t<typename A::value_type, B>;
    return Range<T, A::size>{static_cast<T>(a.start + b)};
  } else if constexpr (is_int_scalar<A> && is_range<B>) {
    return add(b, a);
  } else if constexpr (std::is_pointer_v<A> && is_range<B>) {
    return ContigPtrs<std::remove_pointer_t<A>, B::size>{a + b.start};
  } else if constexpr (is_range<A> && std::is_pointer_v<B>) {
    return add(b, a);
  } else if constexpr (is_contig<A> && is_int_scalar<B>) {
    return A{a.base + b};
  } else if constexpr (is_int_scalar<A> && is_contig<B>) {
    return B{b.base + a};
  } else {
    return zip([](auto x, auto y) { return x + y; }, a, b);
  }
}

template <class A, class B>
IRIS_HD auto sub(const A& a, const B& b) {
  if constexpr ((is_range<A> || is_contig<A>) && is_int_scalar<B>) {
    return add(a, -static_cast<std::make_signed_t<B>>(b));
  } else {
    return zip([](auto x, auto y) { return x - y; }, a, b);
  }
}

#define IRIS_ELEMENTWISE_BINARY(name, expr) \
  template <class A, class B>               \
  IRIS_HD auto name(const A& a, const B& b) { return zip([](auto x, auto y) { return expr; }, a, b); }
IRIS_ELEMENTWISE_BINARY(mul, x * y)
IRIS_ELEMENTWISE_BINARY(div, x / y)
IRIS_ELEMENTWISE_BINARY(mod, x % y)
IRIS_ELEMENTWISE_BINARY(bit_and, x & y)
IRIS_ELEMENTWISE_BINARY(bit_or, x | y)
IRIS_ELEMENTWISE_BINARY(bit_xor, x ^ y)
IRIS_ELEMENTWISE_BINARY(shl, x << y)
IRIS_ELEMENTWISE_BINARY(shr, x >> y)
IRIS_ELEMENTWISE_BINARY(lt, x < y)
IRIS_ELEMENTWISE_BINARY(le, x <= y)
IRIS_ELEMENTWISE_BINARY(gt, x > y)
IRIS_ELEMENTWISE_BINARY(ge, x >= y)
IRIS_ELEMENTWISE_BINARY(eq, x == y)
IRIS_ELEMENTWISE_BINARY(ne, x != y)
IRIS_ELEMENTWISE_BINARY(logical_and, x && y)
IRIS_ELEMENTWISE_BINARY(logical_or, x || y)
#undef IRIS_ELEMENTWISE_BINARY

template <class A> IRIS_HD auto neg(const A& a) { return zip([](auto x) { return -x; }, a); }
template <class A> IRIS_HD auto logical_not(const A& a) { return zip([](auto x) { return !x; }, a); }
template <class A> IRIS_HD auto bit_not(const A& a) { return zip([](auto x) { return ~x; }, a); }

template <class C, class A, class B>
IRIS_HD auto where(const C& c, const A& a, const B& b) {
  return zip([](auto cc, auto x, auto y) { return cc ? x : y; }, c, a, b);
}

// ------------------------------------------------------- program state
IRIS_HD inline int32_t program_id(const Program& p, int axis) { return p.id[axis]; }
IRIS_HD inline int32_t num_programs(const Program& p, int axis) { return p.count[axis]; }
IRIS_HD inline int32_t rank(const Program& p) { return p.ctx.rank; }
IRIS_HD inline int32_t world_size(const Program& p) { return p.ctx.world_size; }

// ------------------------------------------------------------ translation
// `p @ r`: the distance between the two heaps is computed once per pointer
// (or pointer tile) and added to each address.
// ------------------------------------------------------------ checked mode
// In checked builds (irisc --checked) every access through a pointer derived
// from the symmetric heap, and every translation, carries the .iris location
// it came from; the runtime reports a violation with that location, the rank
// and the program instance. Unchecked builds pass Unchecked{}, which costs
// nothing.
struct Unchecked {};
struct Checked {
  const Program& program;
  const char* file;
  int line;
};
template <class C>
inline constexpr bool is_checked = std::is_same_v<C, Checked>;

template <class C, class T>
IRIS_HD void check_translation(const C& check, const T* p, int to_rank) {
  if constexpr (is_checked<C>)
    detail::check_translate(check.program.ctx, p, to_rank, check.file, check.line,
                            check.program.linear_id());
}

template <class P, class C = Unchecked>
IRIS_HD auto translate_to(const Program& p, const P& ptr, int to_rank, const C& check = {}) {
  if constexpr (is_contig<P>) {
    check_translation(check, ptr.base, to_rank);
  } else if constexpr (is_tile<P>) {
    for (int j = 0; j < Layout<P::size>::per_thread; ++j) check_translation(check, ptr[j], to_rank);
  } else {
    check_translation(check, ptr, to_rank);
  }
  std::ptrdiff_t delta = p.ctx.heap_bases[to_rank] - p.ctx.heap_bases[p.ctx.rank];
  auto shift = [delta](auto* q) {
    return reinterpret_cast<decltype(q)>(reinterpret_cast<char*>(q) + delta);
  };
  if constexpr (is_contig<P>) return P{shift(ptr.base)};
  else return zip(shift, ptr);
}

// ------------------------------------------------------------ block reduce
#if IRIS_GPU
// Combines one partial value per thread into one value for the instance.
// (Host and device for the same reason as single().)
template <class R, class F>
IRIS_HD R block_reduce(R partial, F combine) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  (void)combine;
  return partial;  // host pass of a GPU compilation: never runs
#else
  struct alignas(16) Buffer {
    unsigned char bytes[kThreads * sizeof(R)];
  };
  __shared__ Buffer raw;
  R* buf = reinterpret_cast<R*>(raw.bytes);
  const int t = thread_index();
  buf[t] = partial;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] = combine(buf[t], buf[t + s]);
    __syncthreads();
  }
  R result = buf[0];
  __syncthreads();
  return result;
#endif
}
#else
template <class R, class F>
R block_reduce(R partial, F) { return partial; }
#endif

// ----------------------------------------------------------- memory access
struct NoMask {};
struct NoOther {};

template <class M>
IRIS_HD bool mask_at(const M& mask, int j) {
  if constexpr (std::is_same_v<M, NoMask>) return true;
  else return elem(mask, j);
}
template <class T, class O>
IRIS_HD T other_at(const O& other, int j) {
  if constexpr (std::is_same_v<O, NoOther>) return T{};
  else return static_cast<T>(elem(other, j));
}

// The element type that a pointer or a pointer tile addresses.
template <class P>
struct pointee {
  using type = std::remove_cv_t<std::remove_pointer_t<typename P::value_type>>;
};
template <class T>
struct pointee<T*> {
  using type = std::remove_cv_t<T>;
};
template <class P>
using pointee_t = typename pointee<P>::type;

// Calls f(p) for every element pointer of this thread that the access touches.
template <class P, class M, class F>
IRIS_HD void for_each_active(const P& ptr, const M& mask, F f) {
  if constexpr (std::is_pointer_v<P>) {
    if (mask_at(mask, 0)) f(ptr);
  } else {
    if (!Layout<P::size>::active()) return;
    for (int j = 0; j < Layout<P::size>::per_thread; ++j)
      if (mask_at(mask, j)) f(ptr[j]);
  }
}

// How an operation touches memory.
enum class Access { load, store, atomic };

// The reductions of check_memory, as named types so that every access of every
// kernel shares one instantiation of block_reduce (each one reserves its own
// shared memory on the GPU).
struct LowerAddress {
  IRIS_HD std::uintptr_t operator()(std::uintptr_t a, std::uintptr_t b) const { return a < b ? a : b; }
};
struct HigherAddress {
  IRIS_HD std::uintptr_t operator()(std::uintptr_t a, std::uintptr_t b) const { return a < b ? b : a; }
};

// Checked builds, in front of every access: the bounds of the whole access (its
// lowest and highest active elements, over all threads of the instance; the rule
// is in iris/checked.hpp), then, for plain loads and stores, each element against
// the target's race detector (the CPU's; none on the GPU). Every thread of the
// instance calls it, before any early return. Unchecked builds compile it to
// nothing.
template <Access A, class C, class P, class M = NoMask>
IRIS_HD void check_memory(const C& check, const P& ptr, const M& mask = {}) {
  if constexpr (is_checked<C>) {
    std::uintptr_t lowest = UINTPTR_MAX, highest = 0;
    for_each_active(ptr, mask, [&](const auto* p) {
      const auto a = reinterpret_cast<std::uintptr_t>(p);
      lowest = a < lowest ? a : lowest;
      highest = a > highest ? a : highest;
    });
    if constexpr (!std::is_pointer_v<P>) {
      lowest = block_reduce<std::uintptr_t>(lowest, LowerAddress{});
      highest = block_reduce<std::uintptr_t>(highest, HigherAddress{});
    }
    if (lowest > highest) return;  // no active element
    const Program& program = check.program;
    check_access(program.ctx, reinterpret_cast<const void*>(lowest), reinterpret_cast<const void*>(highest),
                 sizeof(pointee_t<P>), check.file, check.line, program.linear_id());
    if constexpr (A != Access::atomic) {
      for_each_active(ptr, mask, [&](const auto* p) {
        detail::race_check(program.ctx, p, sizeof(pointee_t<P>), A == Access::store, check.file, check.line,
                           program.linear_id());
      });
    }
  }
}

// Checked builds, around each atomic element operation: what it orders, for the
// race detector. Only system scope orders ranks (on a GPU they are on different
// devices). A write reports its release half before it is made, a read its
// acquire half after.
template <Sem S, Scope Sc, class C>
IRIS_HD void before_atomic_write(const C& check, const void* p) {
  if constexpr (is_checked<C> && Sc == Scope::sys)
    detail::sync_atomic_write(check.program.ctx, p, S == Sem::release || S == Sem::acq_rel);
}
template <Sem S, Scope Sc, class C>
IRIS_HD void after_atomic_read(const C& check, const void* p) {
  if constexpr (is_checked<C> && Sc == Scope::sys)
    detail::sync_atomic_read(check.program.ctx, p, S == Sem::acquire || S == Sem::acq_rel);
}

// Runs f on one thread of the program instance and gives its result to all:
// scalar side effects (a store through a scalar pointer, an atomic, a signal)
// happen once per instance, after every thread's earlier accesses.
#if IRIS_GPU
// Host and device like the tile functions that return its result: their host
// pass must be able to deduce return types. Only the device pass synchronises.
template <class F>
IRIS_HD auto single(F f) {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  return f();  // host pass of a GPU compilation: never runs
#else
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    __syncthreads();
    if (thread_index() == 0) f();
    __syncthreads();
  } else {
    struct alignas(16) Slot {
      unsigned char bytes[sizeof(R)];
    };
    __shared__ Slot slot;  // (alignas on the variable: hip-clang refuses it after __shared__)
    __syncthreads();
    if (thread_index() == 0) *reinterpret_cast<R*>(slot.bytes) = f();
    __syncthreads();
    R result = *reinterpret_cast<R*>(slot.bytes);
    __syncthreads();
    return result;
  }
#endif
}
#else
template <class F>
auto single(F f) { return f(); }
#endif

// Bytes that one vector access moves: a thread's run of `vec` elements, when
// that is a size the hardware loads in one instruction.
template <class T, int N>
constexpr bool vector_access = sizeof(T) * Layout<N>::vec <= 16 &&
                               is_tile_size(sizeof(T) * Layout<N>::vec) && Layout<N>::vec > 1;

template <class T, int V>
struct alignas(sizeof(T) * V) Chunk {
  T x[V];
};

template <class P, class M = NoMask, class O = NoOther, class C = Unchecked>
IRIS_HD auto load(const P& ptr, const M& mask = {}, const O& other = {}, const C& check = {}) {
  check_memory<Access::load>(check, ptr, mask);
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_cv_t<std::remove_pointer_t<P>>;
    if (!mask_at(mask, 0)) return other_at<T>(other, 0);
    return *ptr;
  } else if constexpr (is_contig<P>) {
    using T = std::remove_cv_t<std::remove_pointer_t<typename P::value_type>>;
    constexpr int N = P::size, V = Layout<N>::vec;
    Tile<T, N> out;
    const bool active = Layout<N>::active();
    bool aligned = false;
    if constexpr (vector_access<T, N>)
      aligned = reinterpret_cast<uintptr_t>(ptr.base) % (sizeof(T) * V) == 0;
    for (int c = 0; c < Layout<N>::per_thread; c += V) {
      bool all = active;
      for (int k = 0; k < V; ++k) all = all && mask_at(mask, c + k);
      if constexpr (vector_access<T, N>) {
        if (aligned && all) {
          Chunk<T, V> chunk = *reinterpret_cast<const Chunk<T, V>*>(ptr[c]);
          for (int k = 0; k < V; ++k) out.v[c + k] = chunk.x[k];
          continue;
        }
      }
      for (int k = 0; k < V; ++k) {
        out.v[c + k] = other_at<T>(other, c + k);
        if (active && mask_at(mask, c + k)) out.v[c + k] = *ptr[c + k];
      }
    }
    return out;
  } else {
    using T = std::remove_cv_t<std::remove_pointer_t<typename P::value_type>>;
    constexpr int N = P::size;
    Tile<T, N> out;
    const bool active = Layout<N>::active();
    for (int j = 0; j < Layout<N>::per_thread; ++j) {
      out.v[j] = other_at<T>(other, j);
      if (active && mask_at(mask, j)) out.v[j] = *ptr[j];
    }
    return out;
  }
}

template <class P, class X, class M = NoMask, class C = Unchecked>
IRIS_HD void store(const P& ptr, const X& value, const M& mask = {}, const C& check = {}) {
  check_memory<Access::store>(check, ptr, mask);
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    single([&] {
      if (!mask_at(mask, 0)) return;
      *ptr = static_cast<T>(value);
    });
  } else if constexpr (is_contig<P>) {
    using T = std::remove_pointer_t<typename P::value_type>;
    constexpr int N = P::size, V = Layout<N>::vec;
    if (!Layout<N>::active()) return;
    bool aligned = false;
    if constexpr (vector_access<T, N>)
      aligned = reinterpret_cast<uintptr_t>(ptr.base) % (sizeof(T) * V) == 0;
    for (int c = 0; c < Layout<N>::per_thread; c += V) {
      bool all = true;
      for (int k = 0; k < V; ++k) all = all && mask_at(mask, c + k);
      if constexpr (vector_access<T, N>) {
        if (aligned && all) {
          Chunk<T, V> chunk;
          for (int k = 0; k < V; ++k) chunk.x[k] = static_cast<T>(elem(value, c + k));
          *reinterpret_cast<Chunk<T, V>*>(ptr[c]) = chunk;
          continue;
        }
      }
      for (int k = 0; k < V; ++k) {
        if (!mask_at(mask, c + k)) continue;
        *ptr[c + k] = static_cast<T>(elem(value, c + k));
      }
    }
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    constexpr int N = P::size;
    if (!Layout<N>::active()) return;
    for (int j = 0; j < Layout<N>::per_thread; ++j) {
      if (!mask_at(mask, j)) continue;
      *ptr[j] = static_cast<T>(elem(value, j));
    }
  }
}

// ----------------------------------------------------------------- atomics
template <AtomicOp Op, Sem S, Scope Sc, class T>
IRIS_HD T atomic_apply(T* p, T v) {
  if constexpr (Op == AtomicOp::add) return atomic_add<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::sub) return atomic_sub<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::and_) return atomic_and<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::or_) return atomic_or<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::xor_) return atomic_xor<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::min) return atomic_min<S, Sc>(p, v);
  else if constexpr (Op == AtomicOp::max) return atomic_max<S, Sc>(p, v);
  else return atomic_xchg<S, Sc>(p, v);
}

// One atomic per active, unmasked element: once per instance through a
// scalar pointer, per element of a pointer tile. `op(p, j)` makes element j's
// on p and returns the old value; the result collects them (T{} where nothing
// happened). Checked builds tell the race detector what each one orders.
template <Sem S, Scope Sc, class P, class M, class C, class Op>
IRIS_HD auto atomic_each(const P& ptr, const M& mask, const C& check, Op op) {
  check_memory<Access::atomic>(check, ptr, mask);
  const auto one = [&](auto* p, int j) {
    before_atomic_write<S, Sc>(check, p);
    const auto old = op(p, j);
    after_atomic_read<S, Sc>(check, p);
    return old;
  };
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    return single([&] { return mask_at(mask, 0) ? one(ptr, 0) : T{}; });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    Tile<T, P::size> old;
    const bool active = Layout<P::size>::active();
    for (int j = 0; j < Layout<P::size>::per_thread; ++j) old.v[j] = active && mask_at(mask, j) ? one(ptr[j], j) : T{};
    return old;
  }
}

// Read-modify-write; returns the old values.
template <AtomicOp Op, Sem S, Scope Sc, class P, class X, class M = NoMask, class C = Unchecked>
IRIS_HD auto atomic_rmw(const P& ptr, const X& value, const M& mask = {}, const C& check = {}) {
  return atomic_each<S, Sc>(ptr, mask, check, [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    return atomic_apply<Op, S, Sc>(p, static_cast<T>(elem(value, j)));
  });
}

// Compare-and-swap: stores value where the element equals compare; returns
// the old values either way.
template <Sem S, Scope Sc, class P, class E, class X, class C = Unchecked>
IRIS_HD auto atomic_compare_exchange(const P& ptr, const E& compare, const X& value, const C& check = {}) {
  return atomic_each<S, Sc>(ptr, NoMask{}, check, [&](auto* p, int j) {
    using T = std::remove_pointer_t<decltype(p)>;
    return atomic_cas<S, Sc>(p, static_cast<T>(elem(compare, j)), static_cast<T>(elem(value, j)));
  });
}

template <Sem S, Scope Sc, class P, class C = Unchecked>
IRIS_HD auto atomic_read(const P& ptr, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  if constexpr (std::is_pointer_v<P>) {
    return single([&] {
      const auto value = atomic_load<S, Sc>(ptr);
      after_atomic_read<S, Sc>(check, ptr);
      return value;
    });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    Tile<T, P::size> out;
    const bool active = Layout<P::size>::active();
    for (int j = 0; j < Layout<P::size>::per_thread; ++j) {
      out.v[j] = T{};
      if (!active) continue;
      out.v[j] = atomic_load<S, Sc>(ptr[j]);
      after_atomic_read<S, Sc>(check, ptr[j]);
    }
    return out;
  }
}

template <Sem S, Scope Sc, class P, class X, class C = Unchecked>
IRIS_HD void atomic_write(const P& ptr, const X& value, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    single([&] {
      before_atomic_write<S, Sc>(check, ptr);
      atomic_store<S, Sc>(ptr, static_cast<T>(value));
    });
  } else {
    using T = std::remove_pointer_t<typename P::value_type>;
    if (!Layout<P::size>::active()) return;
    for (int j = 0; j < Layout<P::size>::per_thread; ++j) {
      before_atomic_write<S, Sc>(check, ptr[j]);
      atomic_store<S, Sc>(ptr[j], static_cast<T>(elem(value, j)));
    }
  }
}

// ------------------------------------------------------- synchronisation
template <Sem S, Scope Sc, class T, class X, class C = Unchecked>
IRIS_HD void wait(T* ptr, Cmp op, const X& value, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  single([&] {
    wait_until<S, Sc>(ptr, op, static_cast<T>(value));
    after_atomic_read<S, Sc>(check, ptr);
  });
}

template <bool Add, Sem S, Scope Sc, class T, class X, class C = Unchecked>
IRIS_HD void raise_signal(T* ptr, const X& value, const C& check = {}) {
  check_memory<Access::atomic>(check, ptr);
  single([&] {
    before_atomic_write<S, Sc>(check, ptr);
    if constexpr (Add) signal_add<S, Sc>(ptr, static_cast<T>(value));
    else signal_set<S, Sc>(ptr, static_cast<T>(value));
  });
}

template <Sem S, Scope Sc, class C = Unchecked>
IRIS_HD void memory_fence(const C& check = {}) {
  single([&] {
    fence<S, Sc>();
    if constexpr (is_checked<C> && Sc == Scope::sys)
      detail::sync_fence(check.program.ctx, S == Sem::acquire || S == Sem::acq_rel,
                         S == Sem::release || S == Sem::acq_rel);
  });
}

IRIS_HD inline void device_barrier(const Program& p) {
  single([&] { barrier(p.ctx, p.linear_id()); });
}

// -------------------------------------------------------------- reductions
template <class X, class F>
IRIS_HD auto reduce(const X& x, typename X::value_type identity, F combine) {
  using R = typename X::value_type;
  R acc = identity;
  if (Layout<X::size>::active())
    for (int j = 0; j < Layout<X::size>::per_thread; ++j) acc = combine(acc, x[j]);
  return block_reduce<R>(acc, combine);
}

template <class X>
IRIS_HD auto sum(const X& x) {
  using R = typename X::value_type;
  return reduce(x, R{}, [](R a, R b) { return static_cast<R>(a + b); });
}
template <class X>
IRIS_HD auto max(const X& x) {
  using R = typename X::value_type;
  return reduce(x, std::numeric_limits<R>::lowest(), [](R a, R b) { return a < b ? b : a; });
}
template <class X>
IRIS_HD auto min(const X& x) {
  using R = typename X::value_type;
  return reduce(x, std::numeric_limits<R>::max(), [](R a, R b) { return b < a ? b : a; });
}

}  // namespace iris

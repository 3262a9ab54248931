// The C++ printer's one decision of how a memory access reaches its memory
// (memory_route, emit.h), on fully lowered kernels: every kind of access
// through `@` takes the peer route, and one through a plain or `sym`
// pointer the calling rank's own, in unchecked and checked builds.
#include "irisc/emit.h"
#include "irisc/lower.h"
#include "irisc/tir_walk.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <map>

using namespace irisc;

namespace {

// Each access on its own line, the route it takes at the end of the line.
constexpr const char* kAccesses = R"(kernel accesses(x: sym *i32, y: *i32, peer: i32) {
    let offs = arange(16);
    let v = load(x + offs @ peer);                              // peer
    store(x + offs @ peer, v);                                  // peer
    let a = atomic_add(x @ peer, 1, sem = relaxed, scope = sys);  // peer
    let c = atomic_cas(x @ peer, 0, 1, sem = acq_rel, scope = sys);  // peer
    let l = atomic_load(x @ peer, sem = acquire, scope = sys);  // peer
    atomic_store(x @ peer, a + c + l, sem = release, scope = sys);  // peer
    wait_until(x @ peer, ge, 1, sem = acquire, scope = sys);    // peer
    signal(x @ peer, 1, op = add, sem = release, scope = sys);  // peer
    let w = load(x + offs);                                     // own
    store(y + offs, w);                                         // own
    let b = atomic_add(y, 1, sem = relaxed, scope = gpu);       // own
    signal(x, b, sem = release, scope = sys);                   // own
}
// A K loop's loads become copy_asyncs that read their advanced pointers
// from a variable, which keeps the pointers' address space.
kernel pipelined(a: sym *f32, c: *f32, k_end: i32, peer: i32) {
    let r = arange(16);
    var acc = zeros((16, 16), f32);
    for k in 0 .. k_end {
        let t = load(a + r[:, None] * 16 + r[None, :] + k @ peer);  // peer
        acc = dot(t, t, acc);
    }
    store(c + r[:, None] * 16 + r[None, :], acc);               // own
}
)";

// The route each line's comment names, by line.
std::map<unsigned, MemoryRoute> expected_routes(std::string_view source) {
  std::map<unsigned, MemoryRoute> routes;
  unsigned line = 1;
  for (size_t start = 0; start < source.size(); ++line) {
    size_t end = source.find('\n', start);
    std::string_view text = source.substr(start, end - start);
    if (text.ends_with("// peer")) routes[line] = MemoryRoute::Peer;
    if (text.ends_with("// own")) routes[line] = MemoryRoute::Own;
    start = end == std::string_view::npos ? source.size() : end + 1;
  }
  return routes;
}

// Each access of the lowered kernels: its line and route.
std::multimap<unsigned, MemoryRoute> routes_of(bool checked) {
  auto run = test::run(kAccesses);
  REQUIRE(run->diagnostics.empty());
  TirModule tir = lower(run->module(), {.source_name = "test.iris", .checked = checked});
  std::multimap<unsigned, MemoryRoute> routes;
  for (TirFunction* function : tir.functions)
    for_each_value(*function, [&](TirValue* v) {
      const TirOpInfo& info = tir_op_info(v->op);
      if (!info.has(tir_trait::ReadsMemory) && !info.has(tir_trait::WritesMemory)) return;
      routes.emplace(run->sources.getLineAndColumn(v->loc).first, memory_route(*v));
      // Loads and stores reach a peer's heap as they reach their own.
      CHECK(access_function(*v) == info.runtime);
    });
  return routes;
}

}  // namespace

TEST_CASE("memory_route: an access through `@` reaches a peer, any other the calling rank's own memory") {
  const std::map<unsigned, MemoryRoute> expected = expected_routes(kAccesses);
  for (bool checked : {false, true}) {
    CAPTURE(checked);
    const std::multimap<unsigned, MemoryRoute> routes = routes_of(checked);
    for (const auto& [line, route] : routes) {
      CAPTURE(line);
      REQUIRE(expected.count(line));
      CHECK(route == expected.at(line));
    }
    for (const auto& [line, route] : expected) {
      CAPTURE(line);
      CHECK(routes.count(line) > 0);
    }
  }
}

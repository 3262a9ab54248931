// Iris runtime, CPU backend: the data-race detector (see race_detector.hpp).
#include "race_detector.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "iris/device_cpu.hpp"

namespace iris::detail {
namespace {

// A record of one access in a shadow cell: rank + 1 (0: none), the bytes of the
// word it touched, its epoch. The store record's top bit is the cell's lock.
constexpr std::uint64_t kLock = std::uint64_t{1} << 63;
constexpr int kRankShift = 47;
constexpr int kBytesShift = 43;
constexpr std::uint64_t kEpochMask = (std::uint64_t{1} << kBytesShift) - 1;

constexpr std::uint64_t record(int rank, unsigned bytes, std::uint64_t epoch) {
  return static_cast<std::uint64_t>(rank + 1) << kRankShift | static_cast<std::uint64_t>(bytes) << kBytesShift |
         (epoch & kEpochMask);
}
constexpr int rank_of(std::uint64_t r) { return static_cast<int>((r >> kRankShift) & 0xffff) - 1; }
constexpr unsigned bytes_of(std::uint64_t r) { return static_cast<unsigned>(r >> kBytesShift) & 0xfu; }
constexpr std::uint64_t epoch_of(std::uint64_t r) { return r & kEpochMask; }

// A cell: the last store, its site, the last load, its site.
constexpr int kCellWords = 4;

// Sites are interned once per process: the file names are string literals of the
// generated code. A site word is (site index << 32 | program id).
std::mutex site_mutex;
std::map<std::pair<const char*, int>, std::uint32_t> site_index;
std::vector<std::pair<const char*, int>> site_list;

std::uint32_t intern(const char* file, int line) {
  thread_local const char* last_file = nullptr;
  thread_local int last_line = -1;
  thread_local std::uint32_t last_index = 0;
  if (file == last_file && line == last_line) return last_index;
  std::lock_guard lock(site_mutex);
  const auto [it, added] = site_index.emplace(std::make_pair(file, line), static_cast<std::uint32_t>(site_list.size()));
  if (added) site_list.emplace_back(file, line);
  last_file = file;
  last_line = line;
  last_index = it->second;
  return last_index;
}

AccessSite site_of(std::uint64_t word) {
  std::lock_guard lock(site_mutex);
  const auto& [file, line] = site_list[static_cast<std::size_t>(word >> 32)];
  return {file, line, static_cast<int>(static_cast<std::uint32_t>(word))};
}

std::uint64_t load(std::uint64_t& w) { return std::atomic_ref<std::uint64_t>(w).load(std::memory_order_relaxed); }
void store(std::uint64_t& w, std::uint64_t v) { std::atomic_ref<std::uint64_t>(w).store(v, std::memory_order_relaxed); }

void join(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

}  // namespace

RaceDetector::RaceDetector(int ranks, std::size_t heap_size)
    : ranks_(ranks), heap_size_(heap_size), state_(static_cast<std::size_t>(ranks)) {
  const auto n = static_cast<std::size_t>(ranks);
  for (int r = 0; r < ranks; ++r) {
    RankState& s = state_[static_cast<std::size_t>(r)];
    s.clock.assign(n, 0);
    s.clock[static_cast<std::size_t>(r)] = 1;
    s.pending.assign(n, 0);
  }
  for (Meeting* m : {&barrier_, &collective_}) {
    for (auto& slot : m->slot) slot = std::vector<std::atomic<std::uint64_t>>(n);
  }
}

RaceDetector::~RaceDetector() {
  if (shadow_ != nullptr) munmap(shadow_, shadow_bytes_);
}

std::uint64_t* RaceDetector::cells(int heap) {
  const std::size_t per_heap = heap_size_ / 4 * kCellWords;
  std::call_once(shadow_once_, [&] {
    shadow_bytes_ = per_heap * sizeof(std::uint64_t) * static_cast<std::size_t>(ranks_);
    void* m = mmap(nullptr, shadow_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      const int err = errno;
      throw Error("iris: checked mode: cannot reserve " + std::to_string(shadow_bytes_) +
                  " bytes of shadow memory for the race detector: mmap failed: " + std::strerror(err));
    }
    shadow_ = m;
  });
  return static_cast<std::uint64_t*>(shadow_) + per_heap * static_cast<std::size_t>(heap);
}

bool RaceDetector::access(int rank, int heap, std::uint64_t offset, std::size_t bytes, bool is_store,
                          const AccessSite& site, Conflict& out) {
  std::uint64_t* shadow = cells(heap);
  const Clock& clock = state_[static_cast<std::size_t>(rank)].clock;
  const std::uint64_t epoch = clock[static_cast<std::size_t>(rank)];
  const std::uint64_t site_word =
      static_cast<std::uint64_t>(intern(site.file, site.line)) << 32 | static_cast<std::uint32_t>(site.program);
  // An earlier access (a record) that touched some of the same bytes and is not
  // ordered before this one.
  const auto unordered = [&](std::uint64_t r, unsigned touched) {
    const int q = rank_of(r);
    return q >= 0 && q != rank && (bytes_of(r) & touched) != 0 && epoch_of(r) > clock[static_cast<std::size_t>(q)];
  };
  // The same rank in the same epoch adds bytes to its record; anything else replaces it.
  const auto merged = [&](std::uint64_t r, unsigned touched) {
    if (rank_of(r) == rank && epoch_of(r) == epoch) touched |= bytes_of(r);
    return record(rank, touched, epoch);
  };
  for (std::uint64_t word = offset / 4; word * 4 < offset + bytes; ++word) {
    const std::uint64_t lo = std::max(offset, word * 4) - word * 4;
    const std::uint64_t hi = std::min<std::uint64_t>(offset + bytes, word * 4 + 4) - word * 4;
    const unsigned touched = ((1u << hi) - 1) & ~((1u << lo) - 1);
    std::uint64_t* cell = shadow + word * kCellWords;
    std::atomic_ref<std::uint64_t> lock(cell[0]);
    std::uint64_t last_store = lock.load(std::memory_order_relaxed);
    while ((last_store & kLock) != 0 ||
           !lock.compare_exchange_weak(last_store, last_store | kLock, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      cpu_relax();
      last_store = lock.load(std::memory_order_relaxed);
    }
    const std::uint64_t last_load = load(cell[2]);
    bool race = true;
    if (unordered(last_store, touched)) {
      out = {rank_of(last_store), true, site_of(load(cell[1]))};
    } else if (is_store && unordered(last_load, touched)) {
      out = {rank_of(last_load), false, site_of(load(cell[3]))};
    } else {
      race = false;
    }
    if (!race && is_store) {
      store(cell[1], site_word);
      last_store = merged(last_store, touched);
    } else if (!race) {
      store(cell[2], merged(last_load, touched));
      store(cell[3], site_word);
    }
    lock.store(last_store, std::memory_order_release);  // unlocks
    if (race) return true;
  }
  return false;
}

void RaceDetector::publish(const void* object, const Clock& clock) {
  const auto key = reinterpret_cast<std::uintptr_t>(object);
  Stripe& s = stripes_[(key >> 3) % stripes_.size()];
  std::lock_guard lock(s.mutex);
  Clock& l = s.clocks[key];
  if (l.empty()) l.assign(clock.size(), 0);
  join(l, clock);
}

void RaceDetector::collect(const void* object, Clock& into) {
  const auto key = reinterpret_cast<std::uintptr_t>(object);
  Stripe& s = stripes_[(key >> 3) % stripes_.size()];
  std::lock_guard lock(s.mutex);
  const auto it = s.clocks.find(key);
  if (it != s.clocks.end()) join(into, it->second);
}

void RaceDetector::atomic_write(int rank, const void* object, bool release) {
  RankState& me = state_[static_cast<std::size_t>(rank)];
  if (release) {
    publish(object, me.clock);
    ++me.clock[static_cast<std::size_t>(rank)];
  } else if (!me.fenced.empty()) {
    publish(object, me.fenced);
  }
}

void RaceDetector::atomic_read(int rank, const void* object, bool acquire) {
  RankState& me = state_[static_cast<std::size_t>(rank)];
  collect(object, acquire ? me.clock : me.pending);
}

void RaceDetector::fence(int rank, bool acquire, bool release) {
  RankState& me = state_[static_cast<std::size_t>(rank)];
  if (acquire) join(me.clock, me.pending);
  if (release) {
    me.fenced = me.clock;
    ++me.clock[static_cast<std::size_t>(rank)];
  }
}

void RaceDetector::meet(Meeting& m, int rank, std::uint64_t number, bool arriving) {
  auto& slot = m.slot[number % 2];
  Clock& clock = state_[static_cast<std::size_t>(rank)].clock;
  for (std::size_t i = 0; i < clock.size(); ++i) {
    if (arriving) {
      std::uint64_t seen = slot[i].load(std::memory_order_relaxed);
      while (seen < clock[i] && !slot[i].compare_exchange_weak(seen, clock[i], std::memory_order_relaxed)) {
      }
    } else {
      clock[i] = std::max(clock[i], slot[i].load(std::memory_order_relaxed));
    }
  }
  if (!arriving) ++clock[static_cast<std::size_t>(rank)];
}

void RaceDetector::reset(Meeting& m, std::uint64_t number) {
  for (auto& c : m.slot[number % 2]) c.store(0, std::memory_order_relaxed);
}

}  // namespace iris::detail

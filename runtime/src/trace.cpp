// Iris runtime: device traces on the host side (see trace.hpp).
#include "trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "iris/host.hpp"

namespace iris {
namespace detail {

namespace {

struct TracedFile {
  std::string path;
  std::map<int, std::string> kernels;  // by the line of their definition
};

// The files of the program's traced kernels, by trace_file_id.
std::map<std::uint32_t, TracedFile>& traced_files() {
  static std::map<std::uint32_t, TracedFile> files;
  return files;
}
std::mutex traced_files_lock;

const char* kind_name(TraceKind kind) {
  switch (kind) {
#define IRIS_TRACE_KIND(name) \
  case TraceKind::name: return #name;
    IRIS_TRACE_KINDS(IRIS_TRACE_KIND)
#undef IRIS_TRACE_KIND
  }
  return "unknown";
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Nanoseconds as the microseconds of the format, to the nanosecond.
std::string microseconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%s%" PRId64 ".%03" PRId64, ns < 0 ? "-" : "", std::abs(ns) / 1000,
                std::abs(ns) % 1000);
  return text;
}

}  // namespace

bool register_trace_file(std::uint32_t id, const char* path, std::initializer_list<TraceKernelName> kernels) {
  std::lock_guard<std::mutex> hold(traced_files_lock);
  TracedFile& file = traced_files()[id];
  file.path = path;
  for (const TraceKernelName& k : kernels) file.kernels[k.line] = k.name;
  return true;
}

std::optional<TraceSettings> trace_settings() {
  const char* path = std::getenv("IRIS_TRACE");
  if (path == nullptr || *path == '\0') return std::nullopt;
  TraceSettings settings{path, kDefaultTraceEvents};
  if (const char* events = std::getenv("IRIS_TRACE_EVENTS"); events != nullptr && *events != '\0') {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(events, &end, 10);
    if (*end != '\0' || errno != 0 || n == 0 || events[0] == '-' || n > kMaxTraceEvents) {
      throw Error(std::string("iris: IRIS_TRACE_EVENTS must be a number of events from 1 to 4194304 (2^22), got '") +
                  events + "'");
    }
    settings.events_per_rank = static_cast<std::size_t>(n);
  }
  return settings;
}

RankTrace take_trace(int rank, const TraceBuffer& buffer) {
  RankTrace trace;
  trace.rank = rank;
  const unsigned long long claimed = std::min(buffer.claimed, buffer.capacity);
  std::copy_if(buffer.events, buffer.events + claimed, std::back_inserter(trace.events),
               [](const TraceEvent& e) { return e.end != 0; });  // a slot claimed and never filled
  trace.dropped = buffer.dropped;
  return trace;
}

HostTraceBuffers::HostTraceBuffers(int ranks, std::size_t events_per_rank)
    : storage_(static_cast<std::size_t>(ranks)), buffers_(static_cast<std::size_t>(ranks)) {
  for (std::size_t r = 0; r < buffers_.size(); ++r) {
    storage_[r].resize(events_per_rank);
    buffers_[r] = TraceBuffer{storage_[r].data(), events_per_rank, 0, 0};  // (resize zeroed the events)
  }
}

void write_trace(const std::string& path, std::vector<RankTrace> ranks) {
  std::map<std::uint32_t, TracedFile> files;
  {
    std::lock_guard<std::mutex> hold(traced_files_lock);
    files = traced_files();
  }
  std::sort(ranks.begin(), ranks.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  // Times from the first event of any rank, on the common clock.
  std::int64_t origin = INT64_MAX;
  for (const RankTrace& r : ranks)
    for (const TraceEvent& e : r.events) origin = std::min(origin, static_cast<std::int64_t>(e.start) + r.clock_offset);
  std::ofstream out(path);
  if (!out) throw Error("iris: cannot write the trace to '" + path + "' (IRIS_TRACE): " + std::strerror(errno));
  std::uint64_t written = 0, dropped = 0;
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  const auto event = [&](const std::string& json) {
    out << (first ? "" : ",\n") << json;
    first = false;
  };
  for (RankTrace& r : ranks) {
    std::sort(r.events.begin(), r.events.end(), [](const TraceEvent& a, const TraceEvent& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;  // outer spans before the spans they hold
    });
    const std::string pid = std::to_string(r.rank);
    event("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid + ", \"args\": {\"name\": \"rank " + pid +
          "\"}}");
    event("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": " + pid + ", \"args\": {\"sort_index\": " + pid +
          "}}");
    std::vector<int> programs;
    for (const TraceEvent& e : r.events) programs.push_back(e.program);
    std::sort(programs.begin(), programs.end());
    programs.erase(std::unique(programs.begin(), programs.end()), programs.end());
    for (const int p : programs) {
      event("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid + ", \"tid\": " + std::to_string(p) +
            ", \"args\": {\"name\": \"program " + std::to_string(p) + "\"}}");
    }
    for (const TraceEvent& e : r.events) {
      const auto found = files.find(e.file);
      const std::string file = found == files.end() ? "?" : found->second.path;
      std::string name = kind_name(e.kind);
      if (e.kind == TraceKind::kernel && found != files.end()) {
        const auto kernel = found->second.kernels.find(e.line);
        if (kernel != found->second.kernels.end()) name += " " + kernel->second;
      }
      std::string args = "\"at\": " + json_string(file + ":" + std::to_string(e.line));
      if (e.peer >= 0) args += ", \"peer\": " + std::to_string(e.peer);
      if (e.kind == TraceKind::wait_until || e.kind == TraceKind::signal || e.kind == TraceKind::put_signal)
        args += ", \"value\": " + std::to_string(e.value);
      const std::int64_t start = static_cast<std::int64_t>(e.start) + r.clock_offset - origin;
      const std::int64_t duration = static_cast<std::int64_t>(e.end - std::min(e.end, e.start));
      event("{\"ph\": \"X\", \"name\": " + json_string(name) + ", \"cat\": \"" + kind_name(e.kind) +
            "\", \"pid\": " + pid + ", \"tid\": " + std::to_string(e.program) + ", \"ts\": " + microseconds(start) +
            ", \"dur\": " + microseconds(duration) + ", \"args\": {" + args + "}}");
    }
    written += r.events.size();
    dropped += r.dropped;
  }
  out << "\n], \"otherData\": {\"dropped_events\": {";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out << (i ? ", " : "") << "\"" << ranks[i].rank << "\": " << ranks[i].dropped;
  out << "}}}\n";
  out.close();
  if (!out) throw Error("iris: cannot write the trace to '" + path + "' (IRIS_TRACE): " + std::strerror(errno));
  std::fprintf(stderr, "iris: trace of %" PRIu64 " events written to %s", written, path.c_str());
  if (dropped != 0) {
    std::fprintf(stderr, " (%" PRIu64 " more dropped: the buffers were full; raise IRIS_TRACE_EVENTS)", dropped);
  }
  std::fprintf(stderr, "\n");
}

}  // namespace detail
}  // namespace iris

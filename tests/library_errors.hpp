// What the error tests of the host libraries share (tests/ccl_host/errors.cpp
// for iris::ccl, tests/fused_host/errors.cpp for iris::ops): each rank's
// message checked against the one a case must give, and the hangs' verdict.
#pragma once

#include <iris/host.hpp>

#include <cstdio>
#include <functional>
#include <iterator>
#include <mutex>
#include <regex>
#include <string>

namespace library_errors {

inline std::mutex report_lock;
inline int failures = 0;  // of the whole run

// A failed expectation on `rank`: counted, and said on stderr.
inline void fail(int rank, const std::string& why) {
  std::lock_guard<std::mutex> lock(report_lock);
  ++failures;
  std::fprintf(stderr, "FAILED: rank %d: %s\n", rank, why.c_str());
}

// The message a rank's call of case `name` threw must start with `prefix` and hold `expected`.
inline void expect_message(int rank, const char* name, const std::string& message, const char* prefix,
                           const char* expected) {
  if (message.rfind(prefix, 0) != 0 || message.find(expected) == std::string::npos) {
    fail(rank, std::string(name) + ": got \"" + message + "\", expected \"" + prefix + "...\" with \"" + expected +
                   "\"");
  }
}

// The message of the iris::Error that call() throws, or "<no iris::Error>".
inline std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const iris::Error& e) {
    return e.what();
  }
  return "<no iris::Error>";
}

// Does a deadlock report name the .iris line of every wait_until in it: the
// reporting rank's, and each other rank's that waits in one? The kernels of
// the libraries are built unchecked, so this is the location an unchecked
// build passes (iris::UncheckedAt).
inline bool names_every_wait(const std::string& message) {
  static const std::regex reporter(
      R"(^iris: deadlock in wait_until\(\*\S+ \S+ \S+\) at [\w./]+\.iris:\d+ \(rank \d+, program \d+\): )");
  static const std::regex located_wait(R"(rank \d+ waits in wait_until at [\w./]+\.iris:\d+ \(program \d+\))");
  static const std::regex any_wait(R"(rank \d+ waits in wait_until)");
  const auto count = [&](const std::regex& r) {
    return std::distance(std::sregex_iterator(message.begin(), message.end(), r), std::sregex_iterator());
  };
  return std::regex_search(message, reporter) && count(located_wait) == count(any_wait);
}

// The hang `name`: run() (a world of `world` ranks) must end in a deadlock
// report of a rank in the kernels' wait_until, naming every wait's .iris
// line. The exit status.
inline int expect_deadlock(const char* name, int world, const std::function<void()>& run) {
  const std::string message = message_of(run);
  const bool reported = message.rfind("iris: deadlock in wait_until(", 0) == 0 && names_every_wait(message);
  std::printf("hang:%s on %d ranks: %s\n  %s\n", name, world, reported ? "reported" : "FAILED", message.c_str());
  return reported ? 0 : 1;
}

}  // namespace library_errors

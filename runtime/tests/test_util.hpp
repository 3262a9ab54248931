// Iris runtime tests: small shared helpers.
#pragma once

#include <functional>
#include <string>

#include "iris/host.hpp"

// Whether this test program runs under ThreadSanitizer (GCC and Clang spell it differently).
#if defined(__SANITIZE_THREAD__)
#define IRIS_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IRIS_TEST_TSAN 1
#endif
#endif
#ifndef IRIS_TEST_TSAN
#define IRIS_TEST_TSAN 0
#endif

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of the iris::Error that f throws, or a text no test expects.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const iris::Error& e) {
    return e.what();
  }
  return "<no iris::Error>";
}

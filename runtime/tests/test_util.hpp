// Iris runtime tests: small shared helpers.
#pragma once

#include <string>

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

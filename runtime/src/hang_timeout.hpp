// Iris runtime: IRIS_HANG_TIMEOUT, the seconds a wait may spin before it is
// taken for a hang (docs/debugging.md): run_mpi's waits on the CPU, whose
// processes cannot see each other's, and the waits of checked GPU kernels.
#pragma once

#include <cstdlib>
#include <string>

namespace iris::detail {

inline constexpr double kDefaultHangTimeout = 10;  // seconds

// The setting, or the default where it is unset; what is wrong with it goes
// to `failure` (`who` names the caller in the message).
inline double hang_timeout_setting(const char* who, std::string& failure) {
  const char* text = std::getenv("IRIS_HANG_TIMEOUT");
  if (text == nullptr || *text == '\0') return kDefaultHangTimeout;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end == '\0' && seconds > 0) return seconds;
  failure = std::string("iris: ") + who + ": IRIS_HANG_TIMEOUT must be a positive number of seconds, got '" + text +
            "'";
  return kDefaultHangTimeout;
}

}  // namespace iris::detail

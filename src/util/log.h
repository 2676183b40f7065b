// Logging in NCCL's style: HETCCL_DEBUG (or NCCL_DEBUG) selects the level,
// HETCCL_DEBUG_SUBSYS (or NCCL_DEBUG_SUBSYS) filters subsystems, and
// HETCCL_DEBUG_FILE (or NCCL_DEBUG_FILE) redirects the output; "%h" and "%p"
// in the file name expand to the host name and the pid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hetccl {

enum class LogLevel { None = 0, Version = 1, Warn = 2, Info = 3, Trace = 4 };

enum LogSubsys : uint32_t {
  kLogInit = 1u << 0,
  kLogBootstrap = 1u << 1,
  kLogColl = 1u << 2,
  kLogP2p = 1u << 3,
  kLogShm = 1u << 4,
  kLogNet = 1u << 5,
  kLogEnv = 1u << 6,
  kLogAlloc = 1u << 7,
  kLogTuning = 1u << 8,
  kLogAll = ~0u,
};

bool logEnabled(LogLevel level, uint32_t subsys);
void logMessage(LogLevel level, uint32_t subsys, const char* file, int line,
                const char* fmt, ...) __attribute__((format(printf, 5, 6)));

// The level for each of a stream of like events that strangers can cause
// (connections dropped at a listener): the first few are warnings, then
// one in every 1000, the others INFO, so that a flood of strangers does
// not flood the log. Not thread-safe: one owner counts.
class LogThrottle {
 public:
  // Counts one more event and returns the level to log it at. Call it
  // once per event, before HETCCL_LOG (which reads its level twice).
  LogLevel next();
  size_t count() const { return count_; }
  // What a message adds so that its reader knows later ones may be INFO:
  // "; from the 10th on, ..." once that applies, else "".
  std::string note() const;

 private:
  static constexpr size_t kWarned = 10;
  static constexpr size_t kThenEvery = 1000;
  size_t count_ = 0;
};

}  // namespace hetccl

#define HETCCL_LOG(level, subsys, ...)                                      \
  do {                                                                      \
    if (::hetccl::logEnabled(level, subsys))                                \
      ::hetccl::logMessage(level, subsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

#define LOG_WARN(subsys, ...) \
  HETCCL_LOG(::hetccl::LogLevel::Warn, subsys, __VA_ARGS__)
#define LOG_INFO(subsys, ...) \
  HETCCL_LOG(::hetccl::LogLevel::Info, subsys, __VA_ARGS__)
#define LOG_TRACE(subsys, ...) \
  HETCCL_LOG(::hetccl::LogLevel::Trace, subsys, __VA_ARGS__)

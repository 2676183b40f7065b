#include "util/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "util/comma_list.h"
#include "util/error.h"
#include "util/params.h"

namespace hetccl {
namespace {

struct LogConfig {
  LogLevel level = LogLevel::Warn;
  uint32_t subsys = kLogInit | kLogBootstrap | kLogEnv;
  FILE* out = stderr;
  std::string host;
  std::mutex mutex;
};

LogLevel levelNamed(const std::string& name) {
  if (name == "VERSION") return LogLevel::Version;
  if (name == "INFO") return LogLevel::Info;
  if (name == "TRACE") return LogLevel::Trace;
  if (name == "NONE") return LogLevel::None;
  return LogLevel::Warn;
}

// The logger cannot report through itself, and a bad setting cannot fail
// anything (logging starts before any communicator): it is said once on
// stderr, and the default applies.
void warnAtStartup(const std::string& message) {
  std::fprintf(stderr, "HETCCL WARN %s\n", message.c_str());
}

LogLevel levelFromEnvironment() {
  try {
    return levelNamed(readChoice(kDebug));
  } catch (const Error& e) {
    warnAtStartup(std::string(e.what()) + "; logging at WARN");
    return LogLevel::Warn;
  }
}

uint32_t subsysBit(const std::string& name) {
  static const struct {
    const char* name;
    uint32_t bit;
  } kNames[] = {{"INIT", kLogInit},     {"BOOTSTRAP", kLogBootstrap},
                {"COLL", kLogColl},     {"P2P", kLogP2p},
                {"SHM", kLogShm},       {"NET", kLogNet},
                {"ENV", kLogEnv},       {"ALLOC", kLogAlloc},
                {"TUNING", kLogTuning}, {"ALL", kLogAll}};
  for (const auto& entry : kNames)
    if (strcasecmp(entry.name, name.c_str()) == 0) return entry.bit;
  return 0;
}

// "INIT,COLL" enables those; a leading '^' enables all but those. Unknown
// names are said once and skipped.
uint32_t parseSubsys(const std::string& spec) {
  bool invert = !spec.empty() && spec[0] == '^';
  uint32_t mask = 0;
  for (const std::string& name : splitCommaList(spec.substr(invert ? 1 : 0))) {
    uint32_t bit = subsysBit(name);
    if (bit == 0 && !name.empty())
      warnAtStartup(format(
          "ignoring \"%s\" in HETCCL_DEBUG_SUBSYS=\"%s\": "
          "expected %s",
          name.c_str(), spec.c_str(), describeAccepted(kDebugSubsys).c_str()));
    mask |= bit;
  }
  return invert ? ~mask : mask;
}

FILE* openLogFile(std::string pattern, const std::string& host) {
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'h')
        path += host;
      else if (c == 'p')
        path += std::to_string(getpid());
      else
        path += c;
    } else {
      path += pattern[i];
    }
  }
  FILE* f = std::fopen(path.c_str(), "a");
  if (f != nullptr) return f;
  warnAtStartup(
      format("cannot open the log file \"%s\" (HETCCL_DEBUG_FILE=\"%s\"): "
             "%s; logging to stderr",
             path.c_str(), pattern.c_str(), std::strerror(errno)));
  return stderr;
}

// Read once, on first use: the environment is the configuration.
LogConfig& config() {
  static LogConfig* cfg = [] {
    auto* c = new LogConfig;
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    c->host = host;
    c->level = levelFromEnvironment();
    if (auto subsys = readString(kDebugSubsys))
      c->subsys = parseSubsys(*subsys);
    else if (c->level >= LogLevel::Info)
      c->subsys = kLogAll & ~kLogColl;  // a line per call only when asked
    if (auto file = readString(kDebugFile))
      c->out = openLogFile(*file, c->host);
    return c;
  }();
  return *cfg;
}

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Warn:
      return "WARN";
    case LogLevel::Info:
      return "INFO";
    case LogLevel::Trace:
      return "TRACE";
    default:
      return "VERSION";
  }
}

}  // namespace

bool logEnabled(LogLevel level, uint32_t subsys) {
  LogConfig& c = config();
  if (level > c.level) return false;
  // Warnings always pass the subsystem filter: they must never be hidden.
  return level <= LogLevel::Warn || (c.subsys & subsys) != 0;
}

void logMessage(LogLevel level, uint32_t /*subsys*/, const char* file, int line,
                const char* fmt, ...) {
  LogConfig& c = config();
  char message[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  // One write per line: ranks of several processes often share a log (a
  // launcher's output), and lines written piecemeal interleave there.
  char text[2400];
  int length;
  if (level == LogLevel::Trace)
    length = std::snprintf(text, sizeof(text), "%s:%d:%ld HETCCL %s %s:%d %s\n",
                           c.host.c_str(), getpid(),
                           static_cast<long>(syscall(SYS_gettid)),
                           levelName(level), base, line, message);
  else
    length = std::snprintf(text, sizeof(text), "%s:%d:%ld HETCCL %s %s\n",
                           c.host.c_str(), getpid(),
                           static_cast<long>(syscall(SYS_gettid)),
                           levelName(level), message);
  if (length <= 0) return;
  size_t bytes = std::min(static_cast<size_t>(length), sizeof(text) - 1);
  text[bytes - 1] = '\n';  // a truncated line still ends
  std::lock_guard<std::mutex> lock(c.mutex);
  std::fflush(c.out);
  ssize_t written = ::write(fileno(c.out), text, bytes);
  (void)written;  // a log that cannot be written has nowhere to say so
}

LogLevel LogThrottle::next() {
  ++count_;
  return count_ <= kWarned || count_ % kThenEvery == 0 ? LogLevel::Warn
                                                       : LogLevel::Info;
}

std::string LogThrottle::note() const {
  if (count_ < kWarned) return "";
  return format(
      "; from the %zuth on, one in %zu is logged at WARN, the "
      "others at INFO",
      kWarned, kThenEvery);
}

}  // namespace hetccl

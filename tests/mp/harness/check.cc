#include "harness/check.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace hetccl::mp {
namespace {

// Per child process: each child has exactly one rank, set once after fork.
struct FailureReporting {
  int rank = -1;
  std::string failureFile;
};

FailureReporting& reporting() {
  static FailureReporting instance;
  return instance;
}

void appendToFile(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ssize_t ignored = ::write(fd, text.data(), text.size());
  (void)ignored;
  ::close(fd);
}

}  // namespace

void setFailureReporting(int rank, const std::string& failureFile) {
  reporting().rank = rank;
  reporting().failureFile = failureFile;
}

CheckFailure::CheckFailure(const char* file, int line,
                           const std::string& what) {
  message_ << "rank " << reporting().rank << ": " << file << ":" << line << ": "
           << what << ": ";
}

CheckFailure::~CheckFailure() {
  std::string text = message_.str();
  if (text.empty() || text.back() != '\n') text += '\n';
  // One write so that lines of different ranks do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
  appendToFile(reporting().failureFile, text);
  ::_exit(1);
}

const char* resultName(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult(unknown)";
  }
}

std::string describeResult(ncclResult_t result) {
  std::string text = resultName(result);
  text += " (";
  const char* meaning = ncclGetErrorString(result);
  text += meaning ? meaning : "null";
  text += ")";
  if (result != ncclSuccess && result != ncclInProgress) {
    const char* last = ncclGetLastError(nullptr);
    text += "; last error: \"";
    text += last ? last : "(null)";
    text += "\"";
  }
  return text;
}

}  // namespace hetccl::mp

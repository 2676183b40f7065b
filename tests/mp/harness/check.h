// Checks for code that runs inside a rank's child process.
//
// gtest assertions cannot report from a forked child, so a failed check
// prints "rank R: file:line: message" to stderr, records the same line in the
// run's temp dir for the parent to quote, and ends the child with _exit(1).
#pragma once

#include <sstream>
#include <string>

#include "nccl.h"

namespace hetccl::mp {

// Called once in each child, before the body runs: the rank to name in
// messages and the file the parent reads failure messages from.
void setFailureReporting(int rank, const std::string& failureFile);

// Collects a message; its destructor reports it and ends the process.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const std::string& what);
  ~CheckFailure();
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  std::ostream& stream() { return message_; }

 private:
  std::ostringstream message_;
};

// Lets a stream expression be the second operand of ?: (as glog does).
struct Voidify {
  void operator&(std::ostream&) {}
};

// "ncclInvalidArgument (invalid argument); last error: ..." for messages.
std::string describeResult(ncclResult_t result);
const char* resultName(ncclResult_t result);

}  // namespace hetccl::mp

// MP_CHECK(cond) << "more context";
#define MP_CHECK(cond)                                            \
  (cond) ? (void)0                                                \
         : ::hetccl::mp::Voidify() &                              \
               ::hetccl::mp::CheckFailure(__FILE__, __LINE__,     \
                                          "check failed: " #cond) \
                   .stream()

// Unconditional failure: MP_FAIL() << "why";
#define MP_FAIL() \
  ::hetccl::mp::CheckFailure(__FILE__, __LINE__, "failure").stream()

// MP_CHECK_NCCL(ncclAllReduce(...)) << "case ...";
#define MP_CHECK_NCCL(call)                                          \
  for (ncclResult_t mp_result_ = (call); mp_result_ != ncclSuccess;) \
  ::hetccl::mp::CheckFailure(                                        \
      __FILE__, __LINE__,                                            \
      #call " returned " + ::hetccl::mp::describeResult(mp_result_)) \
      .stream()

// MP_CHECK_RESULT(ncclInvalidArgument, ncclAllReduce(...)) << "...";
#define MP_CHECK_RESULT(expected, call)                               \
  for (ncclResult_t mp_result_ = (call); mp_result_ != (expected);)   \
  ::hetccl::mp::CheckFailure(                                         \
      __FILE__, __LINE__,                                             \
      #call " returned " + ::hetccl::mp::describeResult(mp_result_) + \
          ", expected " + ::hetccl::mp::resultName(expected))         \
      .stream()

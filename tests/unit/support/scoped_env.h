// An environment variable set (or unset) for the life of a scope, so a test
// never leaks its settings into the next one.
#pragma once

#include <string>

namespace hetccl {

class ScopedEnv {
 public:
  // With value == nullptr the variable is unset for the scope.
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool hadOld_ = false;
};

}  // namespace hetccl

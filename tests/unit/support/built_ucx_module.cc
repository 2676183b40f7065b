#include "support/built_ucx_module.h"

#include <cstdlib>
#include <string>

#include "transport/ucx/ucx_library.h"
#include "util/error.h"

namespace hetccl {

bool useBuiltUcxModule(const char** why) {
#ifdef HETCCL_UCX_MODULE_PATH
  setenv("HETCCL_UCX_MODULE", HETCCL_UCX_MODULE_PATH, /*overwrite=*/0);
  static std::string failure;
  try {
    ucxLibrary();
    return true;
  } catch (const Error& e) {
    failure = e.what();
    *why = failure.c_str();
    return false;
  }
#else
  *why = "this build has no UCX module (libucx-dev was not found)";
  return false;
#endif
}

}  // namespace hetccl

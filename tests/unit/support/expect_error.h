// Runs a body that must throw hetccl::Error and hands the error back for
// the test to inspect (code, message).
#pragma once

#include <gtest/gtest.h>

#include "util/error.h"

namespace hetccl {

template <typename Body>
Error expectError(Body body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a hetccl::Error";
  return Error(ncclSuccess, "");
}

}  // namespace hetccl

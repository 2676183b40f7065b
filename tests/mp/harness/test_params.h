// Parameters shared by parameterized multi-process tests: ranks split into
// domains, plus what varies per suite. Each names its test instance.
#pragma once

#include <ostream>
#include <string>

#include "harness/collective_case.h"
#include "harness/domains.h"

namespace hetccl::mp {

// One collective kind on `nranks` ranks.
struct CollectiveParam {
  int nranks;
  Collective collective;
  DomainLayout domains;

  // e.g. "allreduce_4ranks_domains0101"
  std::string name() const;
};

// Calls on the NULL stream or on a host stream, on `nranks` ranks.
struct StreamModeParam {
  int nranks;
  bool onStream;
  DomainLayout domains;

  // e.g. "3ranks_HostStream_domains010"
  std::string name() const;
};

// gtest prints parameters in test listings (and so in ctest names).
void PrintTo(const CollectiveParam& param, std::ostream* out);
void PrintTo(const StreamModeParam& param, std::ostream* out);

}  // namespace hetccl::mp

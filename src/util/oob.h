// Out-of-band exchange among the ranks of a communicator. The bootstrap
// provides it; layers below the bootstrap (domain back-ends, transports)
// use it through this interface to set themselves up.
#pragma once

#include <cstddef>

namespace hetccl {

class Oob {
 public:
  virtual ~Oob() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // `data` holds nranks slots of `bytesPerRank`; this rank's slot is filled.
  virtual void allGather(void* data, size_t bytesPerRank) = 0;
  virtual void barrier() = 0;
};

}  // namespace hetccl

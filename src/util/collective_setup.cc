#include "util/collective_setup.h"

#include <cstdint>
#include <vector>

namespace hetccl {

void agreeOnSuccess(Oob& oob, const std::optional<Error>& failure,
                    const char* what, const char* stage) {
  std::vector<uint8_t> failed(oob.nranks(), 0);
  failed[oob.rank()] = failure ? 1 : 0;
  oob.allGather(failed.data(), 1);
  if (failure) throw *failure;
  for (int r = 0; r < oob.nranks(); ++r)
    if (failed[r])
      fail(ncclRemoteError, "%s: rank %d failed while %s (its error says why)",
           what, r, stage);
}

}  // namespace hetccl

// The settings that every rank of a communicator must share (ParamScope::Same:
// segment layouts, how messages are cut, which plan or path runs) are
// compared once, at init. Ranks that disagreed would not fail: each would
// open its peers' segments at the announced size but place data by its own
// settings, and return wrong results or wait forever. Each rank announces a
// digest of its values with its peer information; only when the digests
// differ do the ranks exchange the values themselves, to name them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/oob.h"
#include "util/params.h"

namespace hetccl {

// A parameter's value as readCanonical gives it.
struct SettingValue {
  const ParamSpec* param;
  std::string value;
};

// The value of every Same parameter of `params`, in their order. Throws
// like the readers.
std::vector<SettingValue> readMustAgree(const ParamList& params);

// Equal on two ranks exactly when their `mustAgree` are (but for hash
// collisions).
uint64_t mustAgreeDigest(const std::vector<SettingValue>& mustAgree);

// `digests`: every rank's, by rank, the same vector on every rank. Returns
// if they are all equal. Otherwise, collectively over `oob` (every rank sees
// the same digests, so every rank takes part), exchanges the values and
// throws ncclInvalidUsage on every rank, naming each variable that differs,
// rank 0's value and that of the first rank with another one:
// "HETCCL_SHM_CHUNK differs: rank 0 has 524288, rank 1 has 1048576".
void checkSettingsAgree(Oob& oob, const std::vector<SettingValue>& mustAgree,
                        const std::vector<uint64_t>& digests);

}  // namespace hetccl

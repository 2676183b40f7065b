#include "harness/test_params.h"

namespace hetccl::mp {

std::string CollectiveParam::name() const {
  return std::string(collectiveName(collective)) + "_" +
         std::to_string(nranks) + "ranks_" + domains.name();
}

std::string StreamModeParam::name() const {
  return std::to_string(nranks) + "ranks_" +
         (onStream ? "HostStream" : "NullStream") + "_" + domains.name();
}

void PrintTo(const CollectiveParam& param, std::ostream* out) {
  *out << param.name();
}

void PrintTo(const StreamModeParam& param, std::ostream* out) {
  *out << param.name();
}

}  // namespace hetccl::mp

// hetccl-sim's command line.
#pragma once

#include <string>
#include <vector>

#include "cluster.h"
#include "simulation.h"

namespace hetccl::sim {

struct Options {
  ClusterSpec cluster;
  PlanKnobs knobs;
  std::vector<SimCollective> collectives;
  size_t minBytes = 8;
  size_t maxBytes = size_t{1} << 30;
  double factor = 2;
  ncclDataType_t dtype = ncclFloat32;
  std::string jsonPath;  // empty: no JSON
  bool help = false;
};

// Throws std::invalid_argument naming the bad argument.
Options parseOptions(const std::vector<std::string>& args);
const char* usage();

}  // namespace hetccl::sim

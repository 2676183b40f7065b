// Every parameter HetCCL reads, joined from the components' own lists
// (each declared in the component's *_params.def): what hetccl-info lists,
// what docs/configuration.md's table is generated from, and where the
// parameters that every rank must share are found (Settings::mustAgree).
#pragma once

#include "util/params.h"

namespace hetccl {

// Component by component, the lowest layer first; in each, as declared.
const ParamList& allParams();

}  // namespace hetccl

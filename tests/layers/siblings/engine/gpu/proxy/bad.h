// The proxy includes the plan executor, which comes after it: refused.
#pragma once

#include "engine/gpu/plan/gpu_plan_executor.h"

// A util header that includes the core: the layer check must refuse it.
#pragma once

#include "core/communicator.h"

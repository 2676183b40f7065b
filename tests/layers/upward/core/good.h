// The core may include util: allowed.
#pragma once

#include "util/error.h"

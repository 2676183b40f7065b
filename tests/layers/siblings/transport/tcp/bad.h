// A tcp header that includes the ucx transport, its sibling: refused.
#pragma once

#include "transport/ucx/ucx_link.h"

// The plan executor includes the proxy, which comes before it, and the
// folder above: allowed.
#pragma once

#include "engine/gpu/proxy/staging_proxy.h"
#include "engine/gpu/stream_timeline.h"

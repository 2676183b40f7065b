// The steps inside this rank's domain that plans share. A domain's
// reduction leaves each local rank owning its ownedRange (ownership.h) of
// the domain's partial result, with the user's PreMulSum scaling applied
// and averaging left for the cross-domain step.
#pragma once

#include <vector>

#include "algo/plan_context.h"

namespace hetccl {

// `user` with another kind, buffers, count and (domain-local) root; its
// reduction keeps the base op and scaling but not the averaging.
Op domainOp(OpKind kind, const Op& user, const void* send, void* recv,
            size_t count, int root = 0);

// The domain's partial result of n elements of `send`, left in `recv` at
// the same offsets, complete in this rank's owned range (ownership.h):
// local rank i owns [i*base, (i+1)*base), base = n / domain size, the
// last one also the rest up to n.
void reduceInDomain(const PlanContext& ctx, const Op& op, const char* send,
                    char* recv, size_t n);

// The same with any `base` (at most n / domain size), leaving only this
// rank's part, compact at `owned`: its `base` elements of the
// reduce-scatter, then the tail past base * size, which every rank
// receives and the last local rank owns. `owned` holds
// n - (size - 1) * base elements.
void reduceOwnedInDomain(const PlanContext& ctx, const Op& op, const char* send,
                         char* owned, size_t n, size_t base);

// Whether this rank's partial is its input as it is: a rank alone in its
// domain whose reduction scales nothing (no PreMulSum). Plans then read
// the input in place instead of running the domain's step, a copy.
bool partialIsInput(const PlanContext& ctx, const Op& op);

// How plans combine the domains' partials of `op`, one per domain in
// domain order: the user's reduction without its PreMulSum scaling, which
// each domain applied already, and with the averaging.
Reduction partialsCombination(const PlanContext& ctx, const Op& op);

// Spreads every rank's owned range of `buffer` (n elements) to the whole
// domain.
void gatherInDomain(const PlanContext& ctx, const Op& op, char* buffer,
                    size_t n);
// The ops of gatherInDomain (an all-gather of the even part, a broadcast of
// the tail), for a caller that launches them in a group with others.
std::vector<Op> gatherSteps(const PlanContext& ctx, const Op& op, char* buffer,
                            size_t n);

}  // namespace hetccl

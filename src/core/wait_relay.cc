#include "core/wait_relay.h"

#include <algorithm>
#include <cstring>

namespace hetccl {

void WaitRelay::asked(int peer, uint64_t sequence) {
  if (peer < 0 || peer >= nranks_ || peer == rank_) return;
  askers_[peer] = sequence;
}

void WaitRelay::heard(int peer, const std::vector<uint8_t>& body) {
  if (peer < 0 || peer >= nranks_ || peer == rank_) return;
  std::optional<RelayedWait> wait = decode(peer, body);
  if (!wait) return;
  for (int rank : wait->chain)
    if (rank < 0 || rank >= nranks_) return;
  if (wait->chain.empty())
    relayed_.erase(peer);
  else
    relayed_[peer] = std::move(*wait);
}

std::vector<int> WaitRelay::chainFor(int asker,
                                     const std::vector<int>& own) const {
  std::vector<int> chain;
  for (int rank : own) {
    if (rank == rank_ || rank == asker || chain.size() == kMaxChain ||
        std::find(chain.begin(), chain.end(), rank) != chain.end())
      break;
    chain.push_back(rank);
  }
  // Waiting for the asker itself: it knows, as it is the one that waits.
  if (!own.empty() && own.front() == asker) chain.clear();
  return chain;
}

std::vector<WaitRelay::Answer> WaitRelay::answers(
    const std::optional<WaitingCall::Stall>& own, uint64_t latestCall,
    const WaitDescription& names) {
  if (askers_.empty()) return {};  // the common case: no words to make
  // This rank's chain: whom it waits for, then what that rank said.
  std::vector<int> chain;
  std::string leg;
  if (own && own->peer >= 0 && own->peer < nranks_ && own->peer != rank_) {
    chain.push_back(own->peer);
    const auto further = relayed_.find(own->peer);
    if (further != relayed_.end())
      chain.insert(chain.end(), further->second.chain.begin(),
                   further->second.chain.end());
    leg = names.leg(*own);
  }
  std::vector<Answer> out;
  for (auto asker = askers_.begin(); asker != askers_.end();) {
    // Past the asker's call: it waits for this rank no longer.
    const bool gone = latestCall > asker->second;
    const std::vector<int> told =
        gone ? std::vector<int>{} : chainFor(asker->first, chain);
    std::vector<int>& last = told_[asker->first];
    if (told != last) {
      out.emplace_back(asker->first,
                       encode(own ? own->sequence : 0, told, leg));
      last = told;
    }
    if (gone) {
      told_.erase(asker->first);
      asker = askers_.erase(asker);
    } else {
      ++asker;
    }
  }
  return out;
}

std::vector<uint8_t> WaitRelay::encode(uint64_t sequence,
                                       const std::vector<int>& chain,
                                       const std::string& leg) {
  const size_t n = std::min(chain.size(), kMaxChain);
  const size_t legBytes = std::min(leg.size(), kMaxLegBytes);
  std::vector<uint8_t> body(8 + 1 + 4 * n + legBytes);
  uint8_t* at = body.data();
  for (int i = 0; i < 8; ++i) *at++ = static_cast<uint8_t>(sequence >> 8 * i);
  *at++ = static_cast<uint8_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const auto rank = static_cast<uint32_t>(chain[i]);
    for (int b = 0; b < 4; ++b) *at++ = static_cast<uint8_t>(rank >> 8 * b);
  }
  if (legBytes > 0) std::memcpy(at, leg.data(), legBytes);
  return body;
}

std::optional<RelayedWait> WaitRelay::decode(int from,
                                             const std::vector<uint8_t>& body) {
  if (body.size() < 9) return std::nullopt;
  RelayedWait wait;
  wait.from = from;
  const uint8_t* at = body.data();
  for (int i = 0; i < 8; ++i)
    wait.sequence |= static_cast<uint64_t>(*at++) << 8 * i;
  const size_t n = *at++;
  if (n > kMaxChain || body.size() < 9 + 4 * n ||
      body.size() > 9 + 4 * n + kMaxLegBytes)
    return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    uint32_t rank = 0;
    for (int b = 0; b < 4; ++b) rank |= static_cast<uint32_t>(*at++) << 8 * b;
    wait.chain.push_back(static_cast<int>(rank));
  }
  wait.leg.assign(reinterpret_cast<const char*>(at), body.size() - (9 + 4 * n));
  return wait;
}

}  // namespace hetccl

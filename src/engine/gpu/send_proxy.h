// The GPU engine's proxy: the one thread that hands staged sends to their
// links. It touches only the network: a send is posted as soon as the
// engine's stream has copied the bytes to their slot (a mark it reads in
// host memory), and its slot goes back to the pool once the link is done
// with it. Sends are posted in the order they were staged, which keeps
// every link direction in the plan's order.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/gpu/staging_pool.h"
#include "transport/link.h"
#include "util/error.h"

namespace hetccl {

class SendProxy {
 public:
  SendProxy(const StreamProgress& progress, StagingPool& pool,
            std::shared_ptr<AbortSignal> abort);
  // Fails what is still queued (the engine is going away) and stops.
  ~SendProxy();
  SendProxy(const SendProxy&) = delete;
  SendProxy& operator=(const SendProxy&) = delete;

  // Sends `bytes` of `slot` over `link` once the stream reached `mark`;
  // the request is done when the link has sent them.
  std::shared_ptr<TransferRequest> post(Link& link, char* slot, size_t bytes,
                                        uint64_t mark);

 private:
  class Request;
  struct Job {
    Link* link;
    char* slot;
    size_t bytes;
    uint64_t mark;
    std::shared_ptr<Request> request;
    std::shared_ptr<TransferRequest> onLink;  // once posted
  };

  void run();
  bool postReady(std::deque<Job>& waiting, std::deque<Job>& posted);
  bool completeFinished(std::deque<Job>& posted);
  void failAll(std::deque<Job>& jobs, const Error& error);

  const StreamProgress& progress_;
  StagingPool& pool_;
  std::shared_ptr<AbortSignal> abort_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> inbox_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl

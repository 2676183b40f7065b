// A stand-in NCCL network plugin for HetCCL's tests: the ncclNet ABI
// (v8 to v12, net_plugin_abi.h) over plain TCP sockets, so that the net
// transport's handling of the ABI's edges runs anywhere. Each message on a
// connection is an 8-byte length and the bytes; requests of a comm move in
// posting order, driven by test(). Built with STANDIN_VERSION=N it exports
// only version N's table, else every version's.
//
// Knobs (environment, read at init):
//   HETCCL_TEST_NET_DEVICES=N          devices (1; 0: none)
//   HETCCL_TEST_NET_FAIL_INIT=1        init fails
//   HETCCL_TEST_NET_FAIL_REGMR=N       regMr refuses buffers of N bytes or
//                                      more (1: every one)
//   HETCCL_TEST_NET_FAIL_TEST_AFTER=N  test fails for the request made after
//                                      the first N of the process
//   HETCCL_TEST_NET_RETRY=N            isend/irecv say "retry" (a NULL
//                                      request) N times before each post
//   HETCCL_TEST_NET_CONNECT_POLLS=N    connect and accept return no comm for
//                                      the first N calls of each (2)
//   HETCCL_TEST_NET_MAX_BYTES=N        maxP2pBytes (v9 on; 512 KiB)
//   HETCCL_TEST_NET_SET_ENV=NAME=VALUE init sets it (as some plugins do)
//   HETCCL_TEST_NET_ADDR=IPv4          where listen binds (127.0.0.1)
//   HETCCL_TEST_NET_NAME=NAME          every device's name (standinN; "lo"
//                                      makes them look like plain sockets)
//   HETCCL_TEST_NET_PTR_CUDA=1         devices take GPU memory
//                                      (NCCL_PTR_CUDA): device pointers of
//                                      the process's CUDA runtime move
//                                      through a host copy, as GPUDirect
//                                      would move them without one
//   HETCCL_TEST_NET_PTR_DMABUF=1       devices take GPU memory through
//                                      DMA-BUF (NCCL_PTR_DMABUF): regMrDmaBuf
//                                      checks the descriptor and then moves
//                                      the memory as NCCL_PTR_CUDA's
//   HETCCL_TEST_NET_FAIL_FLUSH=1       iflush fails
// At close each connection says (INFO) how many bytes its device moved.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "transport/net/module/net_plugin_abi.h"

#ifndef STANDIN_VERSION
#define STANDIN_VERSION 0
#endif

// A build for one version leaves the other versions' entry points unused.
#pragma GCC diagnostic ignored "-Wunused-function"

namespace {

constexpr uint32_t kHandleMagic = 0x54534e48;  // "HNST"

struct Knobs {
  int devices = 1;
  bool failInit = false;
  size_t failRegMr = 0;
  long failTestAfter = -1;
  int retries = 0;
  int connectPolls = 2;
  size_t maxBytes = 512 << 10;
  std::string setEnv;
  std::string address = "127.0.0.1";
  std::string name;
  bool cudaPointers = false;
  bool dmaBuf = false;
  bool failFlush = false;
};

long knob(const char* name, long fallback) {
  const char* value = getenv(name);
  return value && *value ? strtol(value, nullptr, 0) : fallback;
}

Knobs readKnobs() {
  Knobs k;
  k.devices = static_cast<int>(knob("HETCCL_TEST_NET_DEVICES", k.devices));
  k.failInit = knob("HETCCL_TEST_NET_FAIL_INIT", 0) != 0;
  k.failRegMr = static_cast<size_t>(knob("HETCCL_TEST_NET_FAIL_REGMR", 0));
  k.failTestAfter = knob("HETCCL_TEST_NET_FAIL_TEST_AFTER", -1);
  k.retries = static_cast<int>(knob("HETCCL_TEST_NET_RETRY", 0));
  k.connectPolls =
      static_cast<int>(knob("HETCCL_TEST_NET_CONNECT_POLLS", k.connectPolls));
  k.maxBytes = static_cast<size_t>(
      knob("HETCCL_TEST_NET_MAX_BYTES", static_cast<long>(k.maxBytes)));
  if (const char* v = getenv("HETCCL_TEST_NET_SET_ENV")) k.setEnv = v;
  if (const char* v = getenv("HETCCL_TEST_NET_ADDR"); v && *v) k.address = v;
  if (const char* v = getenv("HETCCL_TEST_NET_NAME"); v && *v) k.name = v;
  k.cudaPointers = knob("HETCCL_TEST_NET_PTR_CUDA", 0) != 0;
  k.dmaBuf = knob("HETCCL_TEST_NET_PTR_DMABUF", 0) != 0;
  k.failFlush = knob("HETCCL_TEST_NET_FAIL_FLUSH", 0) != 0;
  return k;
}

// The plugin's state: its knobs, the host's logger and the requests made,
// which the ABI's plain functions can reach only as globals.
Knobs knobs;
hetcclNetLogger logger = nullptr;
std::atomic<long> requestsMade{0};

#define STANDIN_LOG(level, ...)                                       \
  do {                                                                \
    if (logger) logger(level, ~0ul, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define STANDIN_WARN(...) STANDIN_LOG(HETCCL_NET_LOG_WARN, __VA_ARGS__)

struct Handle {
  uint32_t magic;
  sockaddr_in address;
};
static_assert(sizeof(Handle) <= HETCCL_NET_HANDLE_BYTES);

struct Context {
  uint64_t commId;
  int trafficClass;
};

struct Listen {
  int fd;
  int dev;
  int polls = 0;
};

struct Request;

struct Comm {
  int fd = -1;
  int dev = 0;
  bool sending = false;
  unsigned long long bytes = 0;  // payload moved
  int refusals = 0;              // "retry" answers given for the next post
  std::deque<Request*> queue;    // not done yet, in posting order
  // Made and not yet handed back done by test(); freed by the close.
  std::unordered_set<Request*> unreturned;
  int inFlight = 0;  // made and not yet reported done
  bool broken = false;
};

// What connect() keeps between polls.
struct Connecting {
  int fd = -1;
  int polls = 0;
};

struct Registration {
  Comm* comm;
  char* data;
  size_t size;
  bool gpu;  // registered as NCCL_PTR_CUDA
};

// The process's CUDA runtime, where it has one loaded (a GPU rank's):
// device memory registered as NCCL_PTR_CUDA moves through a host copy made
// on a stream of its own, so that no stream of the program waits for it.
// Without one (CPU machines, emulated GPUs) such memory is the host's.
struct CudaRuntime {
  using PointerAttributes = int (*)(void*, const void*);
  using StreamCreate = int (*)(void**, unsigned);
  using MemcpyAsync = int (*)(void*, const void*, size_t, int, void*);
  using StreamSynchronize = int (*)(void*);
  PointerAttributes pointerAttributes = nullptr;
  StreamCreate streamCreate = nullptr;
  MemcpyAsync memcpyAsync = nullptr;
  StreamSynchronize streamSynchronize = nullptr;
  void* stream = nullptr;

  static CudaRuntime& get() {
    static CudaRuntime runtime;
    return runtime;
  }
  CudaRuntime() {
    void* lib = nullptr;
    for (const char* name :
         {"libcudart.so.13", "libcudart.so.12", "libcudart.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) != nullptr) break;
    if (lib == nullptr) return;
    pointerAttributes =
        (PointerAttributes)dlsym(lib, "cudaPointerGetAttributes");
    streamCreate = (StreamCreate)dlsym(lib, "cudaStreamCreateWithFlags");
    memcpyAsync = (MemcpyAsync)dlsym(lib, "cudaMemcpyAsync");
    streamSynchronize = (StreamSynchronize)dlsym(lib, "cudaStreamSynchronize");
    if (!pointerAttributes || !streamCreate || !memcpyAsync ||
        !streamSynchronize || streamCreate(&stream, /*NonBlocking*/ 1) != 0)
      pointerAttributes = nullptr;
  }
  // cudaPointerAttributes begins with its cudaMemoryType (2: device); the
  // room is more than any version's struct needs.
  bool isDevice(const void* data) const {
    alignas(16) int attributes[256] = {};
    return pointerAttributes && pointerAttributes(attributes, data) == 0 &&
           attributes[0] == 2;
  }
  // `kind`: cudaMemcpyHostToDevice 1, DeviceToHost 2.
  bool copy(void* to, const void* from, size_t bytes, int kind) const {
    return memcpyAsync(to, from, bytes, kind, stream) == 0 &&
           streamSynchronize(stream) == 0;
  }
};

struct Request {
  Request(Comm* comm, long number, char* data, size_t bytes)
      : comm(comm), number(number), data(data), capacity(bytes), size(bytes) {}

  Comm* comm;
  long number;
  char* data;
  size_t capacity;  // a receive's room
  size_t size;      // a send's, or what arrived
  uint8_t header[8] = {};
  size_t headerDone = 0;
  size_t payloadDone = 0;
  bool done = false;
  bool flush = false;        // an iflush's: done at once
  char* device = nullptr;    // GPU memory this request moves through `data`
  std::vector<char> bounce;  // its host copy
};

// Each init starts the request count again, so that a test's
// HETCCL_TEST_NET_FAIL_TEST_AFTER counts from its own communicator.
hetcclNetResult initCommon() {
  knobs = readKnobs();
  requestsMade = 0;
  if (knobs.failInit) {
    STANDIN_WARN("stand-in: init fails (HETCCL_TEST_NET_FAIL_INIT)");
    return HETCCL_NET_SYSTEM_ERROR;
  }
  size_t equals = knobs.setEnv.find('=');
  if (equals != std::string::npos)
    setenv(knobs.setEnv.substr(0, equals).c_str(),
           knobs.setEnv.substr(equals + 1).c_str(), 1);
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult devices(int* count) {
  *count = knobs.devices;
  return HETCCL_NET_SUCCESS;
}

bool setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

hetcclNetResult listenOn(int dev, void* handle, void** listenComm) {
  if (dev < 0 || dev >= knobs.devices) return HETCCL_NET_INTERNAL_ERROR;
  Handle h{kHandleMagic, {}};
  h.address.sin_family = AF_INET;
  if (inet_pton(AF_INET, knobs.address.c_str(), &h.address.sin_addr) != 1)
    return HETCCL_NET_SYSTEM_ERROR;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t length = sizeof h.address;
  if (fd < 0 || bind(fd, (sockaddr*)&h.address, sizeof h.address) != 0 ||
      listen(fd, 128) != 0 || !setNonBlocking(fd) ||
      getsockname(fd, (sockaddr*)&h.address, &length) != 0) {
    STANDIN_WARN("stand-in: listen failed: %s", strerror(errno));
    if (fd >= 0) close(fd);
    return HETCCL_NET_SYSTEM_ERROR;
  }
  memset(handle, 0, HETCCL_NET_HANDLE_BYTES);
  memcpy(handle, &h, sizeof h);
  *listenComm = new Listen{fd, dev};
  return HETCCL_NET_SUCCESS;
}

Comm* newComm(int fd, int dev, bool sending) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto* comm = new Comm;
  comm->fd = fd;
  comm->dev = dev;
  comm->sending = sending;
  return comm;
}

// The connecting state rides in the handle's spare bytes, which the host
// passes back on every poll of the same connection.
hetcclNetResult connectTo(int dev, void* handle, void** sendComm) {
  if (dev < 0 || dev >= knobs.devices) return HETCCL_NET_INTERNAL_ERROR;
  *sendComm = nullptr;
  Handle h;
  memcpy(&h, handle, sizeof h);
  if (h.magic != kHandleMagic) return HETCCL_NET_INTERNAL_ERROR;
  auto* state = reinterpret_cast<Connecting*>(static_cast<char*>(handle) +
                                              HETCCL_NET_HANDLE_BYTES -
                                              sizeof(Connecting));
  if (state->polls == 0) {
    state->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (state->fd < 0 || !setNonBlocking(state->fd) ||
        (connect(state->fd, (sockaddr*)&h.address, sizeof h.address) != 0 &&
         errno != EINPROGRESS)) {
      STANDIN_WARN("stand-in: connect failed: %s", strerror(errno));
      return HETCCL_NET_SYSTEM_ERROR;
    }
  }
  ++state->polls;
  pollfd p{state->fd, POLLOUT, 0};
  if (poll(&p, 1, 0) <= 0 || state->polls <= knobs.connectPolls)
    return HETCCL_NET_SUCCESS;
  int error = 0;
  socklen_t length = sizeof error;
  getsockopt(state->fd, SOL_SOCKET, SO_ERROR, &error, &length);
  if (error != 0) {
    STANDIN_WARN("stand-in: connect failed: %s", strerror(error));
    return HETCCL_NET_SYSTEM_ERROR;
  }
  *sendComm = newComm(state->fd, dev, true);
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult acceptFrom(void* listenComm, void** recvComm,
                           hetcclNetDeviceHandle**) {
  *recvComm = nullptr;
  auto* l = static_cast<Listen*>(listenComm);
  if (++l->polls <= knobs.connectPolls) return HETCCL_NET_SUCCESS;
  int fd = accept4(l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return HETCCL_NET_SUCCESS;
    STANDIN_WARN("stand-in: accept failed: %s", strerror(errno));
    return HETCCL_NET_SYSTEM_ERROR;
  }
  l->polls = 0;  // the next connection needs its own polls
  *recvComm = newComm(fd, l->dev, false);
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult regMr(void* comm, void* data, size_t size, int type,
                      void** mhandle) {
  if (knobs.failRegMr > 0 && size >= knobs.failRegMr) {
    STANDIN_WARN("stand-in: regMr refused (HETCCL_TEST_NET_FAIL_REGMR)");
    return HETCCL_NET_SYSTEM_ERROR;
  }
  const bool gpu = type == HETCCL_NET_PTR_CUDA && knobs.cudaPointers;
  if (type != HETCCL_NET_PTR_HOST && !gpu) {
    STANDIN_WARN("stand-in: regMr of memory type %d it does not take", type);
    return HETCCL_NET_INTERNAL_ERROR;
  }
  *mhandle = new Registration{static_cast<Comm*>(comm),
                              static_cast<char*>(data), size, gpu};
  return HETCCL_NET_SUCCESS;
}

// The first registration of each process says what it got (INFO), so that
// a test sees the path taken.
hetcclNetResult regMrDmaBuf(void* comm, void* data, size_t size, int type,
                            uint64_t offset, int fd, void** mhandle) {
  // A DMA-BUF's size is where SEEK_END puts it: the registration must lie
  // within it.
  const off_t bytes = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
  if (!knobs.dmaBuf || type != HETCCL_NET_PTR_CUDA || bytes < 0 ||
      offset + size > static_cast<uint64_t>(bytes)) {
    STANDIN_WARN(
        "stand-in: regMrDmaBuf of type %d, %zu bytes at offset %llu of "
        "descriptor %d (%lld bytes) refused",
        type, size, (unsigned long long)offset, fd, (long long)bytes);
    return HETCCL_NET_INTERNAL_ERROR;
  }
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    STANDIN_LOG(HETCCL_NET_LOG_INFO,
                "stand-in: regMrDmaBuf of %zu bytes at offset %llu of a "
                "%lld-byte DMA-BUF",
                size, (unsigned long long)offset, (long long)bytes);
  *mhandle = new Registration{static_cast<Comm*>(comm),
                              static_cast<char*>(data), size, true};
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult deregMr(void*, void* mhandle) {
  delete static_cast<Registration*>(mhandle);
  return HETCCL_NET_SUCCESS;
}

// Checks what the ABI asks of the host: the buffer lies in a registration
// of this comm, and no more than the allowed requests are in flight.
hetcclNetResult checkPost(Comm* comm, void* data, size_t size, void* mhandle) {
  auto* r = static_cast<Registration*>(mhandle);
  if (r == nullptr || r->comm != comm || static_cast<char*>(data) < r->data ||
      static_cast<char*>(data) + size > r->data + r->size) {
    STANDIN_WARN("stand-in: a buffer outside its registration");
    return HETCCL_NET_INTERNAL_ERROR;
  }
  if (comm->inFlight >= HETCCL_NET_MAX_REQUESTS) {
    STANDIN_WARN("stand-in: more than %d requests in flight",
                 HETCCL_NET_MAX_REQUESTS);
    return HETCCL_NET_INTERNAL_ERROR;
  }
  return comm->broken ? HETCCL_NET_SYSTEM_ERROR : HETCCL_NET_SUCCESS;
}

// True (and no request) while the post should be retried.
bool refuseForNow(Comm* comm) {
  if (comm->refusals < knobs.retries) {
    ++comm->refusals;
    return true;
  }
  comm->refusals = 0;
  return false;
}

// A request over GPU memory moves through a host copy: a send's is made
// now, a receive's is copied in once all has arrived (step).
Request* newRequest(Comm* comm, void* data, size_t bytes, void* mhandle) {
  auto* request =
      new Request(comm, requestsMade++, static_cast<char*>(data), bytes);
  const CudaRuntime& cuda = CudaRuntime::get();
  if (static_cast<Registration*>(mhandle)->gpu && bytes > 0 &&
      cuda.isDevice(data)) {
    request->device = request->data;
    request->bounce.resize(bytes);
    request->data = request->bounce.data();
    if (comm->sending && !cuda.copy(request->data, data, bytes, 2))
      comm->broken = true;
  }
  comm->queue.push_back(request);
  comm->unreturned.insert(request);
  ++comm->inFlight;
  return request;
}

hetcclNetResult isend(void* sendComm, void* data, size_t size, int,
                      void* mhandle, void** request) {
  *request = nullptr;
  auto* comm = static_cast<Comm*>(sendComm);
  if (hetcclNetResult r = checkPost(comm, data, size, mhandle)) return r;
  if (refuseForNow(comm)) return HETCCL_NET_SUCCESS;
  Request* posted = newRequest(comm, data, size, mhandle);
  uint64_t length = size;
  memcpy(posted->header, &length, sizeof length);
  *request = posted;
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult irecv(void* recvComm, int n, void** data, size_t* sizes,
                      void** mhandles, void** request) {
  *request = nullptr;
  auto* comm = static_cast<Comm*>(recvComm);
  if (n != 1) return HETCCL_NET_INTERNAL_ERROR;  // maxRecvs is 1
  if (hetcclNetResult r = checkPost(comm, data[0], sizes[0], mhandles[0]))
    return r;
  if (refuseForNow(comm)) return HETCCL_NET_SUCCESS;
  *request = newRequest(comm, data[0], sizes[0], mhandles[0]);
  return HETCCL_NET_SUCCESS;
}

// Moves what the socket takes or holds now for the front request; false
// when it would block. Sets comm->broken on a failure.
bool step(Request* r) {
  Comm* comm = r->comm;
  const bool inHeader = r->headerDone < sizeof r->header;
  char* at =
      inHeader ? (char*)r->header + r->headerDone : r->data + r->payloadDone;
  size_t left =
      inHeader ? sizeof r->header - r->headerDone : r->size - r->payloadDone;
  ssize_t moved = comm->sending
                      ? send(comm->fd, at, left, MSG_NOSIGNAL | MSG_DONTWAIT)
                      : recv(comm->fd, at, left, MSG_DONTWAIT);
  if (moved < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return false;
  if (moved <= 0) {
    // The peer's orderly close is news only to a request still pending.
    if (moved < 0)
      STANDIN_WARN("stand-in: connection lost: %s", strerror(errno));
    comm->broken = true;
    return false;
  }
  (inHeader ? r->headerDone : r->payloadDone) += static_cast<size_t>(moved);
  if (!inHeader) comm->bytes += static_cast<unsigned long long>(moved);
  if (!comm->sending && inHeader && r->headerDone == sizeof r->header) {
    uint64_t length;
    memcpy(&length, r->header, sizeof length);
    if (length > r->capacity) {
      STANDIN_WARN("stand-in: %llu bytes arrived for a %zu-byte receive",
                   (unsigned long long)length, r->capacity);
      comm->broken = true;
      return false;
    }
    r->size = length;
  }
  r->done = r->headerDone == sizeof r->header && r->payloadDone == r->size;
  if (r->done && !comm->sending && r->device != nullptr && r->size > 0 &&
      !CudaRuntime::get().copy(r->device, r->data, r->size, 1)) {
    STANDIN_WARN("stand-in: copying a receive into GPU memory failed");
    comm->broken = true;
    return false;
  }
  return true;
}

void progress(Comm* comm) {
  while (!comm->queue.empty() && !comm->broken) {
    Request* front = comm->queue.front();
    if (!front->done && !step(front)) return;
    if (front->done) comm->queue.pop_front();
  }
}

hetcclNetResult test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  *done = 0;
  if (knobs.failTestAfter >= 0 && r->number >= knobs.failTestAfter) {
    STANDIN_WARN("stand-in: test fails (HETCCL_TEST_NET_FAIL_TEST_AFTER)");
    return HETCCL_NET_SYSTEM_ERROR;
  }
  if (!r->flush) progress(r->comm);
  if (!r->done) return r->comm->broken ? HETCCL_NET_REMOTE_ERROR : 0;
  *done = 1;
  if (sizes) *sizes = static_cast<int>(r->size);
  if (!r->flush) --r->comm->inFlight;
  r->comm->unreturned.erase(r);
  delete r;
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult iflush(void* recvComm, int, void**, int*, void**,
                       void** request) {
  if (knobs.failFlush) {
    STANDIN_WARN("stand-in: iflush fails (HETCCL_TEST_NET_FAIL_FLUSH)");
    return HETCCL_NET_SYSTEM_ERROR;
  }
  auto* r =
      new Request(static_cast<Comm*>(recvComm), requestsMade++, nullptr, 0);
  r->flush = r->done = true;
  r->comm->unreturned.insert(r);
  *request = r;
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult closeComm(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (c->bytes > 0)
    STANDIN_LOG(HETCCL_NET_LOG_INFO, "stand-in: device %d %s %llu bytes",
                c->dev, c->sending ? "sent" : "received", c->bytes);
  for (Request* r : c->unreturned) delete r;
  close(c->fd);
  delete c;
  return HETCCL_NET_SUCCESS;
}

hetcclNetResult closeListen(void* listenComm) {
  auto* l = static_cast<Listen*>(listenComm);
  close(l->fd);
  delete l;
  return HETCCL_NET_SUCCESS;
}

// The properties every version shares, then each version's own.
template <typename Properties>
void fillCommon(int dev, Properties* p) {
  memset(p, 0, sizeof *p);
  // Names live as long as the plugin: the host may keep the pointer.
  static char names[64][32];
  snprintf(names[dev % 64], sizeof names[0], "%s",
           knobs.name.empty() ? ("standin" + std::to_string(dev)).c_str()
                              : knobs.name.c_str());
  p->name = names[dev % 64];
  p->pciPath = nullptr;  // a virtual device
  p->guid = 0x5354414e44000000ull + static_cast<uint64_t>(dev);
  p->ptrSupport = HETCCL_NET_PTR_HOST |
                  (knobs.cudaPointers ? HETCCL_NET_PTR_CUDA : 0) |
                  (knobs.dmaBuf ? HETCCL_NET_PTR_DMABUF : 0);
  p->speed = 10000;
  p->port = 1;
  p->latency = 5.0f;
  p->maxComms = 65536;
  p->maxRecvs = 1;
}

template <typename Properties>
hetcclNetResult properties(int dev, Properties* p) {
  if (dev < 0 || dev >= knobs.devices) return HETCCL_NET_INTERNAL_ERROR;
  fillCommon(dev, p);
  if constexpr (!std::is_same_v<Properties, hetcclNetPropertiesV8>) {
    p->maxP2pBytes = knobs.maxBytes;
    p->maxCollBytes = knobs.maxBytes;
  }
  if constexpr (std::is_same_v<Properties, hetcclNetPropertiesV11> ||
                std::is_same_v<Properties, hetcclNetPropertiesV12>)
    p->maxMultiRequestSize = 1;
  return HETCCL_NET_SUCCESS;
}

// Each version's entry points over the shared ones.
hetcclNetResult initV8(hetcclNetLogger log) {
  logger = log;
  return initCommon();
}
hetcclNetResult initV10(hetcclNetLogger log, hetcclNetProfiler profiler) {
  return profiler == nullptr ? HETCCL_NET_INTERNAL_ERROR : initV8(log);
}
hetcclNetResult initV11(void** context, uint64_t commId,
                        hetcclNetCommConfig* config, hetcclNetLogger log,
                        hetcclNetProfiler profiler) {
  hetcclNetResult r = initV10(log, profiler);
  if (r != HETCCL_NET_SUCCESS) return r;
  *context = new Context{commId, config ? config->trafficClass : -1};
  return HETCCL_NET_SUCCESS;
}
hetcclNetResult finalize(void* context) {
  delete static_cast<Context*>(context);
  return HETCCL_NET_SUCCESS;
}
hetcclNetResult listenV11(void* context, int dev, void* handle, void** l) {
  return context == nullptr ? HETCCL_NET_INTERNAL_ERROR
                            : listenOn(dev, handle, l);
}
hetcclNetResult connectV8(int dev, void* handle, void** sendComm,
                          hetcclNetDeviceHandle**) {
  return connectTo(dev, handle, sendComm);
}
hetcclNetResult connectV10(int dev, hetcclNetCommConfig*, void* handle,
                           void** sendComm, hetcclNetDeviceHandle**) {
  return connectTo(dev, handle, sendComm);
}
hetcclNetResult connectV11(void* context, int dev, void* handle,
                           void** sendComm, hetcclNetDeviceHandle**) {
  return context == nullptr ? HETCCL_NET_INTERNAL_ERROR
                            : connectTo(dev, handle, sendComm);
}
hetcclNetResult isendV8(void* comm, void* data, int size, int tag, void* mh,
                        void** request) {
  return isend(comm, data, static_cast<size_t>(size), tag, mh, request);
}
hetcclNetResult isendV9(void* comm, void* data, size_t size, int tag, void* mh,
                        void** request) {
  return isend(comm, data, size, tag, mh, request);
}
hetcclNetResult isendV10(void* comm, void* data, size_t size, int tag, void* mh,
                         void*, void** request) {
  return isend(comm, data, size, tag, mh, request);
}
hetcclNetResult irecvV8(void* comm, int n, void** data, int* sizes, int*,
                        void** mh, void** request) {
  if (n != 1) return HETCCL_NET_INTERNAL_ERROR;
  size_t size = static_cast<size_t>(sizes[0]);
  return irecv(comm, n, data, &size, mh, request);
}
hetcclNetResult irecvV9(void* comm, int n, void** data, size_t* sizes, int*,
                        void** mh, void** request) {
  return irecv(comm, n, data, sizes, mh, request);
}
hetcclNetResult irecvV10(void* comm, int n, void** data, size_t* sizes, int*,
                         void** mh, void**, void** request) {
  return irecv(comm, n, data, sizes, mh, request);
}

}  // namespace

// The tables, as the ABI names them. Members left out stay null: the
// stand-in offers no device offload, virtual NICs or net attributes.
#define STANDIN_SHARED         \
  t.devices = devices;         \
  t.accept = acceptFrom;       \
  t.regMr = regMr;             \
  t.regMrDmaBuf = regMrDmaBuf; \
  t.deregMr = deregMr;         \
  t.iflush = iflush;           \
  t.test = test;               \
  t.closeSend = closeComm;     \
  t.closeRecv = closeComm;     \
  t.closeListen = closeListen;

template <typename Table>
Table table();

template <>
hetcclNetV8 table() {
  hetcclNetV8 t{};
  t.name = "hetccl-test";
  STANDIN_SHARED
  t.init = initV8;
  t.getProperties = properties<hetcclNetPropertiesV8>;
  t.listen = listenOn;
  t.connect = connectV8;
  t.isend = isendV8;
  t.irecv = irecvV8;
  return t;
}

template <>
hetcclNetV9 table() {
  hetcclNetV9 t{};
  t.name = "hetccl-test";
  STANDIN_SHARED
  t.init = initV8;
  t.getProperties = properties<hetcclNetPropertiesV9>;
  t.listen = listenOn;
  t.connect = connectV8;
  t.isend = isendV9;
  t.irecv = irecvV9;
  return t;
}

template <>
hetcclNetV10 table() {
  hetcclNetV10 t{};
  t.name = "hetccl-test";
  STANDIN_SHARED
  t.init = initV10;
  t.getProperties = properties<hetcclNetPropertiesV9>;
  t.listen = listenOn;
  t.connect = connectV10;
  t.isend = isendV10;
  t.irecv = irecvV10;
  return t;
}

template <typename Table, typename Properties>
Table tableV11() {
  Table t{};
  t.name = "hetccl-test";
  STANDIN_SHARED
  t.init = initV11;
  t.finalize = finalize;
  t.getProperties = properties<Properties>;
  t.listen = listenV11;
  t.connect = connectV11;
  t.isend = isendV10;
  t.irecv = irecvV10;
  return t;
}

#define STANDIN_EXPORTS(version) \
  (STANDIN_VERSION == 0 || STANDIN_VERSION == (version))

extern "C" {
#if STANDIN_EXPORTS(8)
__attribute__((visibility("default"))) hetcclNetV8 ncclNetPlugin_v8 =
    table<hetcclNetV8>();
#endif
#if STANDIN_EXPORTS(9)
__attribute__((visibility("default"))) hetcclNetV9 ncclNetPlugin_v9 =
    table<hetcclNetV9>();
#endif
#if STANDIN_EXPORTS(10)
__attribute__((visibility("default"))) hetcclNetV10 ncclNetPlugin_v10 =
    table<hetcclNetV10>();
#endif
#if STANDIN_EXPORTS(11)
__attribute__((visibility("default"))) hetcclNetV11 ncclNetPlugin_v11 =
    tableV11<hetcclNetV11, hetcclNetPropertiesV11>();
#endif
#if STANDIN_EXPORTS(12)
__attribute__((visibility("default"))) hetcclNetV12 ncclNetPlugin_v12 =
    tableV11<hetcclNetV12, hetcclNetPropertiesV12>();
#endif
}

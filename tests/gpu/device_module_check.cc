// device_module_check: checks a device-runtime module on a real GPU.
//
//   device_module_check <libhetccl-cuda.so | libhetccl-hip.so> [device]
//
// Reaches the GPU only through the module's table, as the core does:
// memory and copies, stream ordering of stream memory operations on
// host-mapped words and of events, and the reduction kernels against the
// host collectives (hostReduce), bit for bit, for every dtype, operator, flag
// combination, source count and a range of counts and buffer alignments;
// the same for the low-latency collectives among 2, 3 and 8 streams; and
// the staged copies' waits, bytes and signals through host slots.
// Prints one PASS or FAIL line per check and exits non-zero on any
// failure. Every wait has a deadline: a stream that never finishes is a
// FAIL, not a hang.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "runtime/device/device_module.h"
#include "runtime/host/host_reduce.h"
#include "support/low_latency_expected.h"
#include "util/dtype.h"
#include "util/error.h"  // format

namespace hetccl {
namespace {

using Clock = std::chrono::steady_clock;

// ---- Reporting ----

class Report {
 public:
  void pass(const std::string& what) { std::printf("PASS %s\n", what.c_str()); }

  // The first kShownFailures are printed; a broken kernel fails thousands
  // of cases, and the first ones say enough.
  void fail(const std::string& what) {
    if (++failures_ <= kShownFailures) {
      std::printf("FAIL %s\n", what.c_str());
    } else if (failures_ == kShownFailures + 1) {
      std::printf("FAIL (further failures are counted, not shown)\n");
    }
    std::fflush(stdout);
  }

  // A summary line, PASS or FAIL, always printed.
  void verdict(bool ok, const std::string& what) {
    if (!ok) ++failures_;
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    std::fflush(stdout);
  }

  // FAIL unless `ok`; returns ok.
  bool expect(bool ok, const std::string& what) {
    if (!ok) fail(what);
    return ok;
  }

  int failures() const { return failures_; }

 private:
  static constexpr int kShownFailures = 40;
  int failures_ = 0;
};

// A runtime call that failed; ends the check it happened in.
class CallFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- The module and RAII handles over its table ----

class Module {
 public:
  explicit Module(const char* path) {
    // Never closed: runtimes register exit handlers inside the module.
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      throw std::runtime_error(format("dlopen %s: %s", path, dlerror()));
    auto entry = reinterpret_cast<hetcclDeviceModuleEntry>(
        dlsym(handle, HETCCL_DEVICE_MODULE_ENTRY));
    if (entry == nullptr)
      throw std::runtime_error(
          format("%s has no %s", path, HETCCL_DEVICE_MODULE_ENTRY));
    table_ = entry();
    if (table_ == nullptr || table_->abiVersion != HETCCL_DEVICE_MODULE_ABI)
      throw std::runtime_error(format("%s: wrong module ABI", path));
  }

  const hetcclDeviceModuleTable& operator*() const { return *table_; }
  const hetcclDeviceModuleTable* operator->() const { return table_; }

  // Throws CallFailed with the runtime's message unless `code` is 0.
  void check(int code, const char* what) const {
    if (code != 0)
      throw CallFailed(
          format("%s: error %d (%s)", what, code, table_->errorString(code)));
  }

 private:
  const hetcclDeviceModuleTable* table_ = nullptr;
};

class DeviceBuffer {
 public:
  DeviceBuffer(const Module& module, size_t bytes) : module_(module) {
    module.check(module->deviceAlloc(&data_, bytes), "deviceAlloc");
  }
  ~DeviceBuffer() { module_->deviceFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* data() const { return static_cast<char*>(data_); }

 private:
  const Module& module_;
  void* data_ = nullptr;
};

class HostBuffer {
 public:
  HostBuffer(const Module& module, size_t bytes) : module_(module) {
    module.check(module->hostAlloc(&data_, bytes), "hostAlloc");
    std::memset(data_, 0, bytes);
  }
  ~HostBuffer() { module_->hostFree(data_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  char* data() const { return static_cast<char*>(data_); }
  uint64_t* word() const { return static_cast<uint64_t*>(data_); }

 private:
  const Module& module_;
  void* data_ = nullptr;
};

class Stream {
 public:
  explicit Stream(const Module& module) : module_(module) {
    module.check(module->streamCreate(&handle_), "streamCreate");
  }
  ~Stream() { module_->streamDestroy(handle_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* get() const { return handle_; }

  bool idle() const {
    int idle = 0;
    module_.check(module_->streamQuery(handle_, &idle), "streamQuery");
    return idle != 0;
  }

  // Polls until the stream is idle; false after `seconds`.
  bool waitIdle(double seconds) const {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (!idle()) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    return true;
  }

 private:
  const Module& module_;
  void* handle_ = nullptr;
};

class Event {
 public:
  explicit Event(const Module& module) : module_(module) {
    module.check(module->eventCreate(&handle_), "eventCreate");
  }
  ~Event() { module_->eventDestroy(handle_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void* get() const { return handle_; }

  bool done() const {
    int done = 0;
    module_.check(module_->eventQuery(handle_, &done), "eventQuery");
    return done != 0;
  }

 private:
  const Module& module_;
  void* handle_ = nullptr;
};

// A stream that does not finish leaves work behind that no cleanup can
// undo: report and leave the process.
void requireIdle(Report& report, const Stream& stream, const char* what) {
  if (stream.waitIdle(10.0)) return;
  report.fail(format("%s: the stream did not finish within 10 s", what));
  std::fflush(stdout);
  std::_Exit(1);
}

void fillPattern(char* data, size_t bytes, uint32_t seed) {
  for (size_t i = 0; i < bytes; ++i)
    data[i] = char((i * 2654435761u + seed) >> 13);
}

// ---- Device, memory and copies ----

void checkDevice(const Module& module, Report& report, int device) {
  int runtimeVersion = 0, driverVersion = 0;
  module.check(module->versions(&runtimeVersion, &driverVersion), "versions");
  int count = 0;
  module.check(module->deviceCount(&count), "deviceCount");
  if (!report.expect(device < count, format("device %d of %d", device, count)))
    throw CallFailed("no such device");
  module.check(module->setDevice(device), "setDevice");
  // Before any stream waits on a host word (see device_module.h).
  module.check(module->loadKernels(), "loadKernels");
  int current = -1;
  module.check(module->getDevice(&current), "getDevice");
  char busId[64] = {};
  module.check(module->deviceBusId(device, busId, sizeof(busId)),
               "deviceBusId");
  const bool ok =
      report.expect(current == device, "getDevice after setDevice") &
      report.expect(std::strlen(busId) >= 7, "deviceBusId");
  if (ok)
    report.pass(format("device %d of %d, bus %s, %s runtime %d, driver %d",
                       device, count, busId, module->runtimeName,
                       runtimeVersion, driverVersion));
}

int kindOf(const Module& module, const void* pointer) {
  int kind = -1;
  module.check(module->memoryKind(pointer, &kind), "memoryKind");
  return kind;
}

void checkMemoryAndCopies(const Module& module, Report& report) {
  const size_t bytes = (4 << 20) + 13;
  HostBuffer source(module, bytes), back(module, bytes);
  DeviceBuffer device(module, bytes), device2(module, bytes);
  fillPattern(source.data(), bytes, 7);
  Stream stream(module);
  module.check(
      module->copyAsync(device.data(), source.data(), bytes, stream.get()),
      "copyAsync host->device");
  module.check(
      module->copyAsync(device2.data(), device.data(), bytes, stream.get()),
      "copyAsync device->device");
  module.check(
      module->copyAsync(back.data(), device2.data(), bytes, stream.get()),
      "copyAsync device->host");
  requireIdle(report, stream, "copies");
  bool ok = report.expect(std::memcmp(source.data(), back.data(), bytes) == 0,
                          "host->device->device->host copies keep the bytes");

  // Rows apart on the host, as a staging ring's slots hold pieces shorter
  // than themselves: 3 rows of 1 MiB out with a pitch of 1.5 MiB, and back
  // in one after the other.
  const size_t row = 1 << 20, pitch = row + row / 2, rows = 3;
  HostBuffer spaced(module, pitch * rows);
  DeviceBuffer gathered(module, row * rows);
  module.check(module->copy2DAsync(spaced.data(), pitch, device.data(), row,
                                   row, rows, stream.get()),
               "copy2DAsync device->host");
  module.check(module->copy2DAsync(gathered.data(), row, spaced.data(), pitch,
                                   row, rows, stream.get()),
               "copy2DAsync host->device");
  module.check(
      module->copyAsync(back.data(), gathered.data(), row * rows, stream.get()),
      "copyAsync device->host");
  requireIdle(report, stream, "2D copies");
  bool rowsKept = std::memcmp(back.data(), source.data(), row * rows) == 0;
  for (size_t r = 0; r < rows; ++r)
    rowsKept &= std::memcmp(spaced.data() + r * pitch, source.data() + r * row,
                            row) == 0;
  ok &= report.expect(rowsKept,
                      "2D copies put each row where its pitch says, both ways");

  // Plain memory, registered: the runtime knows it, copies reach it.
  const size_t pageBytes = (bytes + 4095) / 4096 * 4096;
  std::unique_ptr<char, decltype(&std::free)> plain(
      static_cast<char*>(std::aligned_alloc(4096, pageBytes)), &std::free);
  std::memset(plain.get(), 0, pageBytes);
  ok &= report.expect(kindOf(module, plain.get()) == hetcclMemoryUnknown,
                      "memoryKind(plain host memory) is unknown");
  module.check(module->hostRegister(plain.get(), pageBytes), "hostRegister");
  ok &= report.expect(kindOf(module, plain.get()) == hetcclMemoryHost,
                      "memoryKind(registered memory) is host");
  module.check(
      module->copyAsync(plain.get(), device.data(), bytes, stream.get()),
      "copyAsync device->registered");
  requireIdle(report, stream, "copy into registered memory");
  ok &= report.expect(std::memcmp(source.data(), plain.get(), bytes) == 0,
                      "device->registered host copy keeps the bytes");
  module.check(module->hostUnregister(plain.get()), "hostUnregister");
  ok &= report.expect(kindOf(module, device.data()) == hetcclMemoryDevice,
                      "memoryKind(device memory) is device");
  ok &= report.expect(kindOf(module, source.data()) == hetcclMemoryHost,
                      "memoryKind(hostAlloc memory) is host");
  int capturing = -1;
  module.check(module->streamIsCapturing(stream.get(), &capturing),
               "streamIsCapturing");
  ok &= report.expect(capturing == 0, "a fresh stream is not capturing");
  if (ok)
    report.pass("memory kinds, allocations and copies in every direction");
}

// ---- Stream ordering: wait/write on host words, events ----

void storeWord(uint64_t* word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

uint64_t loadWord(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

bool allBytesAre(const char* data, size_t bytes, char value) {
  return std::all_of(data, data + bytes, [&](char c) { return c == value; });
}

// Sets host words past any value a stream waits for, when it goes away.
class WordsReleaser {
 public:
  explicit WordsReleaser(std::vector<uint64_t*> words)
      : words_(std::move(words)) {}
  ~WordsReleaser() {
    for (uint64_t* word : words_) storeWord(word, uint64_t(1) << 62);
  }
  WordsReleaser(const WordsReleaser&) = delete;
  WordsReleaser& operator=(const WordsReleaser&) = delete;

 private:
  std::vector<uint64_t*> words_;
};

void checkStreamOrdering(const Module& module, Report& report) {
  const size_t bytes = 1 << 20;
  HostBuffer words(module, 4096);  // flag, done, relay: one cache line each
  uint64_t* flag = words.word();
  uint64_t* done = words.word() + 8;
  uint64_t* relay = words.word() + 16;
  HostBuffer pattern(module, bytes), out(module, bytes), out2(module, bytes);
  DeviceBuffer source(module, bytes), sum(module, bytes);
  fillPattern(pattern.data(), bytes, 3);
  Stream stream(module), other(module);
  Event event(module);
  // Should a call fail midway, the streams must not stay blocked on the
  // words: freeing memory would wait for them forever. Destroyed first.
  WordsReleaser releaser({flag, relay});
  module.check(
      module->copyAsync(source.data(), pattern.data(), bytes, stream.get()),
      "copyAsync");
  requireIdle(report, stream, "setup copy");
  std::memset(out.data(), 0, bytes);
  std::memset(out2.data(), 0, bytes);

  // stream: wait(flag >= 1), copy, reduce, write(done = 5), event.
  // other: wait for the event, copy.
  module.check(module->waitValue64(stream.get(), flag, 1), "waitValue64");
  module.check(
      module->copyAsync(out.data(), source.data(), bytes, stream.get()),
      "copyAsync after wait");
  hetcclDeviceReduction twice{};
  twice.dst = sum.data();
  twice.srcs[0] = twice.srcs[1] = source.data();
  twice.nsrcs = 2;
  twice.count = bytes;
  twice.dtype = ncclUint8;
  twice.op = ncclSum;
  module.check(module->reduceAsync(&twice, stream.get()), "reduceAsync");
  module.check(module->writeValue64(stream.get(), done, 5), "writeValue64");
  module.check(module->eventRecord(event.get(), stream.get()), "eventRecord");
  module.check(module->streamWaitEvent(other.get(), event.get()),
               "streamWaitEvent");
  module.check(module->copyAsync(out2.data(), sum.data(), bytes, other.get()),
               "copyAsync after event");

  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  bool ok = report.expect(!stream.idle(), "a stream waiting on a word is busy");
  ok &= report.expect(!event.done(), "an event behind the wait is not done");
  ok &= report.expect(allBytesAre(out.data(), bytes, 0),
                      "the copy queued after the wait has not run early");
  ok &= report.expect(allBytesAre(out2.data(), bytes, 0),
                      "the other stream's copy waits for the event");
  ok &= report.expect(loadWord(done) == 0,
                      "the write queued after the wait has not happened");

  storeWord(flag, 1);
  requireIdle(report, stream, "stream released by the host word");
  requireIdle(report, other, "stream released by the event");
  module.check(module->eventSynchronize(event.get()), "eventSynchronize");
  ok &= report.expect(event.done(), "the event is done");
  ok &= report.expect(std::memcmp(out.data(), pattern.data(), bytes) == 0,
                      "the copy ran once the word was set");
  ok &= report.expect(loadWord(done) == 5, "writeValue64 stored its value");
  bool doubled = true;
  for (size_t i = 0; i < bytes; ++i)
    doubled &= uint8_t(out2.data()[i]) == uint8_t(2 * pattern.data()[i]);
  ok &= report.expect(doubled, "the reduction ran in stream order");
  if (ok) report.pass("wait/write on host words, events and stream order");

  // A word already past the value does not block (>=, not ==).
  storeWord(flag, 3);
  module.check(module->waitValue64(stream.get(), flag, 2), "waitValue64");
  module.check(module->copyAsync(out.data(), source.data(), 16, stream.get()),
               "copyAsync");
  requireIdle(report, stream, "wait on a word already past its value");
  report.pass("waitValue64 passes a word that is already greater");

  // Stream to stream through a host word: `other` waits for what `stream`
  // writes after its copy. Both copies touch device memory: a copy between
  // two host buffers may run on the CPU, in stream order, and so block the
  // caller until the wait ends.
  std::memset(out2.data(), 0, bytes);
  module.check(module->waitValue64(other.get(), relay, 7), "waitValue64");
  module.check(module->copyAsync(out2.data(), sum.data(), bytes, other.get()),
               "copyAsync");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ok = report.expect(!other.idle(), "the relay waiter is blocked");
  module.check(
      module->copyAsync(sum.data(), source.data(), bytes, stream.get()),
      "copyAsync");
  module.check(module->writeValue64(stream.get(), relay, 7), "writeValue64");
  requireIdle(report, stream, "relay writer");
  requireIdle(report, other, "relay waiter");
  ok &= report.expect(std::memcmp(out2.data(), pattern.data(), bytes) == 0,
                      "the waiter saw the writer's data");
  if (ok) report.pass("one stream releases another through a host word");
}

// ---- Staged copies: a kernel's wait, copy and signal ----

// Polls a host word as the staging proxy does; false after 10 s.
bool awaitWord(const uint64_t* word, uint64_t value) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (loadWord(word) < value)
    if (Clock::now() > deadline) return false;
  return true;
}

hetcclDeviceStagedCopy stagedCopy(void* dst, const void* src, size_t bytes,
                                  const uint64_t* waitWord, uint64_t waitValue,
                                  uint64_t* signalWord, uint64_t signalValue) {
  hetcclDeviceStagedCopy c{};
  c.dst = dst;
  c.src = src;
  c.bytes = bytes;
  c.waitWord = waitWord;
  c.waitValue = waitValue;
  c.signalWord = signalWord;
  c.signalValue = signalValue;
  return c;
}

// As the staged GPU engine uses them between hosts, round after round over
// the same host slot, each round with new bytes: the host writes the slot
// and raises `arrived`; a kernel waits for it and copies the slot to the
// GPU, signalling `freed`; a second kernel copies the GPU buffer into
// another host slot and signals `staged`. The host must see every byte of
// the round as soon as it sees `staged`, and the first kernel must not
// read before `arrived` (nor a stale slot from the round before).
void checkStagedCopies(const Module& module, Report& report) {
  const size_t kMaxBytes = (64 << 10) + 64;
  HostBuffer words(module, 4096);
  uint64_t* arrived = words.word();
  uint64_t* freed = words.word() + 8;
  uint64_t* staged = words.word() + 16;
  HostBuffer inSlot(module, kMaxBytes), outSlot(module, kMaxBytes);
  DeviceBuffer onGpu(module, kMaxBytes);
  std::vector<char> expected(kMaxBytes);
  Stream stream(module);
  WordsReleaser releaser({arrived});
  const size_t sizes[] = {1, 17, 4096, 8192, 65536, 65536 + 13};
  bool ok = true;
  uint64_t round = 0;
  for (size_t bytes : sizes)
    for (size_t shift : {size_t{0}, size_t{3}})
      for (int repeat = 0; repeat < 20 && ok; ++repeat) {
        ++round;
        const std::string what =
            format("round %llu, %zu bytes at +%zu", (unsigned long long)round,
                   bytes, shift);
        const hetcclDeviceStagedCopy in =
            stagedCopy(onGpu.data() + shift, inSlot.data(), bytes, arrived,
                       round, freed, round);
        const hetcclDeviceStagedCopy out =
            stagedCopy(outSlot.data() + shift, onGpu.data() + shift, bytes,
                       nullptr, 0, staged, round);
        module.check(module->stagedCopy(&in, stream.get()), "stagedCopy in");
        module.check(module->stagedCopy(&out, stream.get()), "stagedCopy out");
        if (round == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          ok &= report.expect(!stream.idle() && loadWord(freed) == 0,
                              "a staged copy waits for its word");
        }
        fillPattern(expected.data(), bytes, uint32_t(round));
        std::memcpy(inSlot.data(), expected.data(), bytes);
        storeWord(arrived, round);
        ok &= report.expect(awaitWord(staged, round),
                            what + ": the signal came within 10 s");
        ok &= report.expect(loadWord(freed) == round,
                            what + ": the first kernel signalled too");
        ok &= report.expect(
            std::memcmp(outSlot.data() + shift, expected.data(), bytes) == 0,
            what + ": the host sees every byte once signalled");
      }
  requireIdle(report, stream, "staged copies");
  if (ok)
    report.pass(
        format("staged copies: %llu rounds of 1 B to 64 KiB + 13 "
               "through host slots, each waited for and signalled",
               (unsigned long long)round));
}

// ---- Reductions against hostReduce ----

constexpr ncclDataType_t kDtypes[] = {
    ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
    ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
    ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
constexpr ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin};
constexpr int kSourceCounts[] = {1, 2, 3, 8};
// The largest count is 1000003, or DEVICE_CHECK_LARGE_COUNT (from 8) where
// that is set: tests/gpu/run.sh's sanitizer step runs the check under
// compute-sanitizer, many times slower, with a smaller one.
size_t largeCount() {
  static const size_t count = [] {
    const char* text = std::getenv("DEVICE_CHECK_LARGE_COUNT");
    const long long value = text != nullptr ? std::atoll(text) : 0;
    return value >= 8 && value <= 1000003 ? size_t(value) : size_t(1000003);
  }();
  return count;
}
// Room around the elements for shifted layouts and guard elements.
constexpr size_t kSlack = 4;

enum class Mode { kPlain, kPreScale, kDivisor, kBoth };
constexpr Mode kModes[] = {Mode::kPlain, Mode::kPreScale, Mode::kDivisor,
                           Mode::kBoth};

const char* modeName(Mode mode) {
  switch (mode) {
    case Mode::kPlain:
      return "plain";
    case Mode::kPreScale:
      return "prescale";
    case Mode::kDivisor:
      return "divisor";
    case Mode::kBoth:
      return "prescale+divisor";
  }
  return "?";
}

// Where the buffers sit: at the start of their allocation, all shifted by
// one element (equally misaligned: the kernels peel a head), shifted by
// different amounts (no common alignment: element by element), or dst
// being the first source.
enum class Layout { kAligned, kShifted, kMixed, kInPlace };
constexpr int kLayouts = 4;

const char* layoutName(Layout layout) {
  switch (layout) {
    case Layout::kAligned:
      return "aligned";
    case Layout::kShifted:
      return "shifted";
    case Layout::kMixed:
      return "mixed";
    case Layout::kInPlace:
      return "in-place";
  }
  return "?";
}

// Bit layout of the floating types: exponent and mantissa widths.
struct FloatBits {
  int exponent;
  int mantissa;
};

bool floatBits(ncclDataType_t dtype, FloatBits* bits) {
  switch (dtype) {
    case ncclFloat16:
      *bits = {5, 10};
      return true;
    case ncclFloat32:
      *bits = {8, 23};
      return true;
    case ncclFloat64:
      *bits = {11, 52};
      return true;
    case ncclBfloat16:
      *bits = {8, 7};
      return true;
    case ncclFloat8e4m3:
      *bits = {4, 3};
      return true;
    case ncclFloat8e5m2:
      *bits = {5, 2};
      return true;
    default:
      return false;
  }
}

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

// One element's bits: integers are random bit patterns; floating values
// are mostly moderate numbers (so that sums and products stay finite and
// rounding matters), with subnormals, infinities, NaNs and raw patterns.
uint64_t randomElement(ncclDataType_t dtype, Random& random) {
  FloatBits bits;
  if (!floatBits(dtype, &bits)) return random.next();
  const int width = 1 + bits.exponent + bits.mantissa;
  const uint64_t sign = (random.next() & 1) << (width - 1);
  const uint64_t mantissa =
      random.next() & ((uint64_t(1) << bits.mantissa) - 1);
  const uint64_t maxExponent = (uint64_t(1) << bits.exponent) - 1;
  const int64_t bias = int64_t(maxExponent >> 1);
  uint64_t exponent;
  const uint64_t kind = random.below(100);
  if (kind < 60) {  // moderate: 2^-3 .. 2^3
    const int64_t spread = std::min<int64_t>(3, bias - 1);
    exponent = uint64_t(bias - spread + int64_t(random.below(2 * spread + 1)));
  } else if (kind < 72) {
    exponent = 0;  // subnormal (or zero)
  } else if (kind < 77) {
    return sign | (maxExponent << bits.mantissa);  // infinity (e4m3: 256)
  } else if (kind < 82) {                          // NaN with a payload
    return sign | (maxExponent << bits.mantissa) | mantissa | 1;
  } else {
    return random.next() &
           (width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1);
  }
  return sign | (exponent << bits.mantissa) | mantissa;
}

uint64_t elementBits(const char* data, size_t size, size_t i) {
  uint64_t bits = 0;
  std::memcpy(&bits, data + i * size, size);
  return bits;
}

bool isNaN(ncclDataType_t dtype, uint64_t bits) {
  FloatBits layout;
  if (!floatBits(dtype, &layout)) return false;
  if (dtype == ncclFloat8e4m3) return (bits & 0x7f) == 0x7f;
  const uint64_t maxExponent = (uint64_t(1) << layout.exponent) - 1;
  const uint64_t exponent = (bits >> layout.mantissa) & maxExponent;
  const uint64_t mantissa = bits & ((uint64_t(1) << layout.mantissa) - 1);
  return exponent == maxExponent && mantissa != 0;
}

// Runs `body(chunk, begin, end)` over [0, count), in at most kMaxChunks
// chunks on as many threads (one, for small counts).
constexpr size_t kMaxChunks = 16;

template <typename Body>
void parallelFor(size_t count, Body body) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t chunks = count < (1 << 16) ? 1 : std::min(kMaxChunks, cores);
  if (chunks == 1) return body(size_t(0), size_t(0), count);
  std::vector<std::thread> workers;
  const size_t share = (count + chunks - 1) / chunks;
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    const size_t begin = std::min(count, chunk * share);
    const size_t end = std::min(count, begin + share);
    workers.emplace_back([=] { body(chunk, begin, end); });
  }
  for (std::thread& worker : workers) worker.join();
}

// The buffers of one dtype's cases: sources, destination, a poison buffer
// to overwrite the destination with before each case, and host copies.
class ReductionBench {
 public:
  ReductionBench(const Module& module, Report& report, ncclDataType_t dtype,
                 uint64_t seed)
      : module_(module),
        report_(report),
        dtype_(dtype),
        size_(dtypeSize(dtype)),
        elements_(largeCount() + 2 * kSlack),
        bytes_(elements_ * size_),
        deviceSources_(),
        deviceDst_(module, bytes_),
        devicePoison_(module, bytes_),
        hostResult_(module, bytes_),
        stream_(module),
        random_(seed) {
    HostBuffer staging(module, bytes_);
    for (int s = 0; s < HETCCL_DEVICE_MAX_SOURCES; ++s) {
      hostSources_.emplace_back(bytes_);
      fillRandom(hostSources_.back().data());
      deviceSources_.emplace_back(new DeviceBuffer(module, bytes_));
      upload(deviceSources_.back()->data(), hostSources_.back().data(),
             staging);
    }
    std::memset(staging.data(), kPoison, bytes_);
    module.check(module->copyAsync(devicePoison_.data(), staging.data(), bytes_,
                                   stream_.get()),
                 "copyAsync");
    requireIdle(report, stream_, "poison upload");
  }

  // One case; returns false (after FAIL lines) on a mismatch.
  bool run(ncclRedOp_t op, Mode mode, int nsrcs, size_t count, Layout layout,
           uint64_t divisor) {
    const bool scaled = mode == Mode::kPreScale || mode == Mode::kBoth;
    const bool divided = mode == Mode::kDivisor || mode == Mode::kBoth;
    const uint64_t preScale = randomFiniteElement();

    // Element offsets of dst and each source within their allocations.
    const size_t dstOffset = layout == Layout::kShifted ? 1 : kSlack / 2;
    std::vector<size_t> srcOffsets(nsrcs);
    for (int s = 0; s < nsrcs; ++s) {
      srcOffsets[s] = layout == Layout::kShifted ? 1
                      : layout == Layout::kMixed ? size_t(s % 3) + 1
                                                 : 0;
    }
    const size_t alignedDst = layout == Layout::kAligned ? 0 : dstOffset;
    char* dst = deviceDst_.data() + alignedDst * size_;

    // Poison dst and one guard element on either side.
    copy(deviceDst_.data() + (alignedDst - (alignedDst > 0)) * size_,
         devicePoison_.data(), (count + 1 + (alignedDst > 0)) * size_);
    hetcclDeviceReduction r{};
    r.dst = dst;
    r.nsrcs = nsrcs;
    r.count = count;
    r.dtype = dtype_;
    r.op = op;
    r.applyPreScale = scaled;
    r.preScale = preScale;
    r.applyDivisor = divided;
    r.divisor = divisor;
    std::vector<const void*> hostSrcs(nsrcs);
    for (int s = 0; s < nsrcs; ++s) {
      r.srcs[s] = deviceSources_[s]->data() + srcOffsets[s] * size_;
      hostSrcs[s] = hostSources_[s].data() + srcOffsets[s] * size_;
    }
    if (layout == Layout::kInPlace) {
      copy(dst, r.srcs[0], count * size_);
      r.srcs[0] = dst;
    }
    const std::string name =
        format("reduce %s %s %s nsrcs=%d count=%zu layout=%s divisor=%llu",
               dtypeName(dtype_), redOpName(op), modeName(mode), nsrcs, count,
               layoutName(layout), (unsigned long long)divisor);
    module_.check(module_->reduceAsync(&r, stream_.get()), name.c_str());
    copy(hostResult_.data(),
         deviceDst_.data() + (alignedDst - (alignedDst > 0)) * size_,
         (count + 1 + (alignedDst > 0)) * size_);
    requireIdle(report_, stream_, name.c_str());

    std::vector<char> expected(std::max<size_t>(count, 1) * size_);
    Reduction reduction{dtype_, op};
    if (scaled) reduction.preScale = &preScale;
    if (divided) reduction.divisor = divisor;
    parallelFor(count, [&](size_t, size_t begin, size_t end) {
      std::vector<const void*> part(nsrcs);
      for (int s = 0; s < nsrcs; ++s)
        part[s] = static_cast<const char*>(hostSrcs[s]) + begin * size_;
      hostReduce(expected.data() + begin * size_, part.data(), nsrcs,
                 end - begin, reduction);
    });
    const char* got = hostResult_.data() + (alignedDst > 0) * size_;
    return compare(name, expected.data(), got, count, hostSrcs) &
           guardsIntact(name, count, alignedDst > 0);
  }

 private:
  static constexpr char kPoison = char(0xa5);

  // A scale that leaves something to check: not NaN, not infinite.
  uint64_t randomFiniteElement() {
    FloatBits bits;
    if (!floatBits(dtype_, &bits)) return randomElement(dtype_, random_);
    const uint64_t maxExponent = (uint64_t(1) << bits.exponent) - 1;
    for (;;) {
      const uint64_t value = randomElement(dtype_, random_);
      const bool special =
          ((value >> bits.mantissa) & maxExponent) == maxExponent &&
          dtype_ != ncclFloat8e4m3;
      if (!special && !isNaN(dtype_, value)) return value;
    }
  }

  void fillRandom(char* data) {
    for (size_t i = 0; i < elements_; ++i) {
      const uint64_t bits = randomElement(dtype_, random_);
      std::memcpy(data + i * size_, &bits, size_);
    }
  }

  void upload(char* device, const char* host, const HostBuffer& staging) {
    std::memcpy(staging.data(), host, bytes_);
    copy(device, staging.data(), bytes_);
    requireIdle(report_, stream_, "source upload");
  }

  void copy(void* dst, const void* src, size_t bytes) {
    module_.check(module_->copyAsync(dst, src, bytes, stream_.get()),
                  "copyAsync");
  }

  bool compare(const std::string& name, const char* expected, const char* got,
               size_t count, const std::vector<const void*>& srcs) {
    struct Mismatches {
      size_t number = 0;
      size_t first = SIZE_MAX;
    };
    std::vector<Mismatches> chunks(kMaxChunks);
    parallelFor(count, [&](size_t chunk, size_t begin, size_t end) {
      Mismatches& mine = chunks[chunk];
      for (size_t i = begin; i < end; ++i) {
        const uint64_t want = elementBits(expected, size_, i);
        const uint64_t have = elementBits(got, size_, i);
        if (want == have || (isNaN(dtype_, want) && isNaN(dtype_, have)))
          continue;
        if (mine.number++ == 0) mine.first = i;
      }
    });
    Mismatches all;
    for (const Mismatches& chunk : chunks) {
      all.number += chunk.number;
      all.first = std::min(all.first, chunk.first);
    }
    if (all.number == 0) return true;
    const size_t i = all.first;
    std::string inputs;
    for (const void* src : srcs) {
      inputs += format(" %llx", (unsigned long long)elementBits(
                                    static_cast<const char*>(src), size_, i));
    }
    report_.fail(
        format("%s: %zu of %zu elements differ; first at %zu: "
               "expected %llx, got %llx, inputs%s",
               name.c_str(), all.number, count, i,
               (unsigned long long)elementBits(expected, size_, i),
               (unsigned long long)elementBits(got, size_, i), inputs.c_str()));
    return false;
  }

  // The element after dst's range, and the one before it when there is
  // one, still hold the poison.
  bool guardsIntact(const std::string& name, size_t count, bool before) {
    const char* data = hostResult_.data();
    const bool ok =
        allBytesAre(data + (before + count) * size_, size_, kPoison) &&
        (!before || allBytesAre(data, size_, kPoison));
    return report_.expect(ok, name + ": wrote outside dst");
  }

  const Module& module_;
  Report& report_;
  ncclDataType_t dtype_;
  size_t size_;
  size_t elements_;
  size_t bytes_;
  std::vector<std::vector<char>> hostSources_;
  std::vector<std::unique_ptr<DeviceBuffer>> deviceSources_;
  DeviceBuffer deviceDst_;
  DeviceBuffer devicePoison_;
  HostBuffer hostResult_;
  Stream stream_;
  Random random_;
};

constexpr uint64_t kDivisors[] = {3, 1, 2, 7, 1000, uint64_t(1) << 63};

void checkReductions(const Module& module, Report& report) {
  for (ncclDataType_t dtype : kDtypes) {
    const auto start = Clock::now();
    ReductionBench bench(module, report, dtype, 0x5eed0000u + dtype);
    size_t cases = 0, failed = 0, index = 0;
    for (size_t count : {size_t(0), size_t(1), size_t(7), largeCount()}) {
      for (ncclRedOp_t op : kOps) {
        for (Mode mode : kModes) {
          for (int nsrcs : kSourceCounts) {
            // Shifted by one per group of source counts, so that every
            // source count meets every layout.
            const Layout layout =
                Layout((index + index / std::size(kSourceCounts)) % kLayouts);
            const uint64_t divisor = kDivisors[index % std::size(kDivisors)];
            ++index;
            ++cases;
            if (!bench.run(op, mode, nsrcs, count, layout, divisor)) ++failed;
          }
        }
      }
    }
    const double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    report.verdict(failed == 0,
                   failed == 0 ? format("reduce %s: %zu cases bitwise equal to "
                                        "hostReduce (%.1f s)",
                                        dtypeName(dtype), cases, seconds)
                               : format("reduce %s: %zu of %zu cases differ",
                                        dtypeName(dtype), failed, cases));
  }
}

// ---- The low-latency collectives ----

// `nranks` ranks as streams of this process on one GPU, each with its line
// area (pinned, mapped) and its counts, running collectives of every kind
// in a row: every rank's output bitwise equal (NaNs aside) to what the
// host computes (tests/unit/support/low_latency_expected.h).
class LowLatencyBench {
 public:
  static constexpr size_t kMaxBytes = 64 << 10;  // the larger buffer

  LowLatencyBench(const Module& module, Report& report, int nranks)
      : module_(module),
        report_(report),
        nranks_(nranks),
        halfLines_(2 * ((kMaxBytes + 7) / 8)),
        release_(module, sizeof(uint64_t)),
        staging_(module, kMaxBytes + 16) {
    HostBuffer zeros(module, HETCCL_DEVICE_LL_BLOCKS * sizeof(uint64_t));
    for (int r = 0; r < nranks; ++r) {
      areas_.emplace_back(new HostBuffer(module, 2 * halfLines_ * 8));
      counts_.emplace_back(new DeviceBuffer(module, 64));
      inputs_.emplace_back(new DeviceBuffer(module, kMaxBytes + 16));
      outputs_.emplace_back(new DeviceBuffer(module, kMaxBytes + 16));
      streams_.emplace_back(new Stream(module));
      module.check(module->copyAsync(counts_.back()->data(), zeros.data(),
                                     HETCCL_DEVICE_LL_BLOCKS * 8,
                                     streams_.back()->get()),
                   "copyAsync");
      requireIdle(report, *streams_.back(), "zeroing the counts");
    }
  }

  // The largest count of `kind` whose larger buffer fits kMaxBytes.
  size_t mostElements(int kind, ncclDataType_t dtype) const {
    const bool parts = kind == hetcclLowLatencyReduceScatter ||
                       kind == hetcclLowLatencyAllGather;
    return kMaxBytes / dtypeSize(dtype) / (parts ? nranks_ : 1);
  }

  // One collective on every rank; false (after FAIL lines) on a mismatch.
  // Out of place, buffers are aligned to their element only.
  bool run(int kind, ncclDataType_t dtype, ncclRedOp_t op, Mode mode,
           size_t count, bool inPlace, Random& random) {
    const size_t size = dtypeSize(dtype);
    const size_t part = count * size;
    const bool scatter = kind == hetcclLowLatencyReduceScatter;
    const bool gather = kind == hetcclLowLatencyAllGather;
    const size_t inputBytes = scatter ? nranks_ * part : part;
    const size_t shift = inPlace ? 0 : size;
    hetcclDeviceLowLatencyCollective c{};
    c.kind = kind;
    c.root = int(random.below(nranks_));
    c.reduction.nsrcs = 1;
    c.reduction.count = count;
    c.reduction.dtype = dtype;
    c.reduction.op = op;
    c.reduction.applyPreScale = mode == Mode::kPreScale || mode == Mode::kBoth;
    c.reduction.preScale = randomElement(dtype, random);
    c.reduction.applyDivisor = mode == Mode::kDivisor || mode == Mode::kBoth;
    c.reduction.divisor = 3;
    c.nranks = nranks_;
    c.halfLines = halfLines_;
    c.release = release_.word();
    for (int r = 0; r < nranks_; ++r) c.areas[r] = areas_[r]->word();
    std::vector<std::vector<char>> hostInputs(nranks_);
    std::vector<const char*> inputs;
    // NCCL's in-place buffers: the input is the output, or the rank's part
    // of it (all-gather).
    auto input = [&](int r) {
      if (!inPlace) return inputs_[r]->data() + shift;
      return outputs_[r]->data() + (gather ? r * part : 0);
    };
    for (int r = 0; r < nranks_; ++r) {
      hostInputs[r].resize(inputBytes);
      for (size_t i = 0; i < inputBytes / size; ++i) {
        const uint64_t bits = randomElement(dtype, random);
        std::memcpy(&hostInputs[r][i * size], &bits, size);
      }
      inputs.push_back(hostInputs[r].data());
      std::memcpy(staging_.data(), hostInputs[r].data(), inputBytes);
      copy(r, input(r), staging_.data(), inputBytes);
      requireIdle(report_, *streams_[r], "input upload");
    }
    const std::string name =
        format("low-latency %s %s %s %s, %d ranks, root %d, count=%zu%s",
               kindName(kind), dtypeName(dtype), redOpName(op), modeName(mode),
               nranks_, c.root, count, inPlace ? " in place" : "");
    // Every rank's kernel is queued before any is waited for: each waits
    // for the others' lines.
    std::vector<char*> outputs;
    for (int r = 0; r < nranks_; ++r) {
      outputs.push_back(outputs_[r]->data() +
                        (inPlace ? (scatter ? r * part : 0) : shift));
      c.rank = r;
      c.reduction.srcs[0] = input(r);
      c.reduction.dst = outputs[r];
      c.counts = reinterpret_cast<uint64_t*>(counts_[r]->data());
      module_.check(module_->lowLatencyCollective(&c, streams_[r]->get()),
                    name.c_str());
    }
    for (int r = 0; r < nranks_; ++r)
      requireIdle(report_, *streams_[r], name.c_str());
    bool ok = true;
    for (int r = 0; r < nranks_ && ok; ++r) {
      const std::vector<char> want = lowLatencyExpected(c, inputs, r);
      copy(r, staging_.data(), outputs[r], want.size());
      requireIdle(report_, *streams_[r], "output download");
      for (size_t i = 0; i < count * (gather ? nranks_ : 1) && ok; ++i) {
        const uint64_t expected = elementBits(want.data(), size, i);
        const uint64_t got = elementBits(staging_.data(), size, i);
        ok = report_.expect(
            expected == got || (isNaN(dtype, expected) && isNaN(dtype, got)),
            format("%s: rank %d: element %zu is %llx, expected %llx",
                   name.c_str(), r, i, (unsigned long long)got,
                   (unsigned long long)expected));
      }
    }
    return ok;
  }

 private:
  static const char* kindName(int kind) {
    switch (kind) {
      case hetcclLowLatencyAllReduce:
        return "all-reduce";
      case hetcclLowLatencyReduceScatter:
        return "reduce-scatter";
      case hetcclLowLatencyAllGather:
        return "all-gather";
      default:
        return "broadcast";
    }
  }

  void copy(int rank, void* dst, const void* src, size_t bytes) {
    module_.check(module_->copyAsync(dst, src, bytes, streams_[rank]->get()),
                  "copyAsync");
  }

  const Module& module_;
  Report& report_;
  const int nranks_;
  const size_t halfLines_;
  HostBuffer release_;
  HostBuffer staging_;
  std::vector<std::unique_ptr<HostBuffer>> areas_;
  std::vector<std::unique_ptr<DeviceBuffer>> counts_;
  std::vector<std::unique_ptr<DeviceBuffer>> inputs_;
  std::vector<std::unique_ptr<DeviceBuffer>> outputs_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

void checkLowLatencyCollectives(const Module& module, Report& report) {
  for (int nranks : {2, 3, 8}) {
    const auto start = Clock::now();
    LowLatencyBench bench(module, report, nranks);
    Random random(0x11a11u + nranks);
    size_t cases = 0, failed = 0;
    for (int kind : {hetcclLowLatencyAllReduce, hetcclLowLatencyReduceScatter,
                     hetcclLowLatencyAllGather, hetcclLowLatencyBroadcast}) {
      const bool reduces = kind == hetcclLowLatencyAllReduce ||
                           kind == hetcclLowLatencyReduceScatter;
      for (ncclDataType_t dtype : kDtypes) {
        const size_t most = bench.mostElements(kind, dtype);
        for (size_t count : {size_t(1), size_t(7), size_t(1001), most}) {
          for (ncclRedOp_t op : kOps) {
            for (Mode mode : {Mode::kPlain, Mode::kPreScale, Mode::kDivisor}) {
              if (!reduces && (op != ncclSum || mode != Mode::kPlain)) continue;
              ++cases;
              if (!bench.run(kind, dtype, op, mode, std::min(count, most),
                             cases % 2 == 0, random))
                ++failed;
            }
          }
        }
      }
    }
    const double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    report.verdict(failed == 0,
                   format("low-latency collectives, %d ranks: %zu of %zu "
                          "cases (every kind and dtype) wrong (%.1f s)",
                          nranks, failed, cases, seconds));
  }
}

// Arguments the kernels cannot take are refused, not run.
void checkRejections(const Module& module, Report& report) {
  Stream stream(module);
  DeviceBuffer buffer(module, 64);
  hetcclDeviceReduction r{};
  r.dst = buffer.data();
  r.srcs[0] = buffer.data();
  r.srcs[1] = buffer.data() + 1;  // not aligned to a float
  r.nsrcs = 2;
  r.count = 4;
  r.dtype = ncclFloat32;
  r.op = ncclSum;
  bool ok = report.expect(module->reduceAsync(&r, stream.get()) != 0,
                          "a misaligned source is refused");
  r.srcs[1] = buffer.data() + 16;
  r.op = ncclAvg;
  ok &= report.expect(module->reduceAsync(&r, stream.get()) != 0,
                      "ncclAvg as an operator is refused");
  requireIdle(report, stream, "after refused reductions");
  if (ok) report.pass("invalid reductions are refused");
}

int run(const char* path, int device) {
  Report report;
  try {
    Module module(path);
    std::printf("module %s (%s)\n", path, module->runtimeName);
    const auto start = Clock::now();
    using Check = void (*)(const Module&, Report&);
    checkDevice(module, report, device);
    for (Check check :
         {checkMemoryAndCopies, checkStreamOrdering, checkStagedCopies,
          checkRejections, checkLowLatencyCollectives, checkReductions}) {
      try {
        check(module, report);
      } catch (const CallFailed& error) {
        report.fail(error.what());
      }
    }
    std::printf("%s: %d failure(s) in %.1f s\n",
                report.failures() == 0 ? "PASS" : "FAIL", report.failures(),
                std::chrono::duration<double>(Clock::now() - start).count());
  } catch (const std::exception& error) {
    report.fail(error.what());
  }
  return report.failures() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hetccl

int main(int argc, char** argv) {
  // Line by line: a run cut short by a timeout still shows how far it got.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr,
                 "usage: %s <libhetccl-cuda.so | libhetccl-hip.so> [device]\n",
                 argv[0]);
    return 2;
  }
  return hetccl::run(argv[1], argc == 3 ? std::atoi(argv[2]) : 0);
}

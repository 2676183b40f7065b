// libhetccl-ucx.so: the UCX module's table (transport/ucx/ucx_module.h)
// over UCP's tag API and UCT's resource queries. It keeps no state of its
// own beyond what each handle holds; the core decides everything else.
#include "transport/ucx/ucx_module.h"

#include <time.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

struct hetcclUcxContext {
  ucp_context_h context;
};

struct hetcclUcxWorker {
  ucp_worker_h worker;
};

struct hetcclUcxEndpoint {
  ucp_ep_h endpoint;
  hetcclUcxPeerFailure onFailure;
  void* user;
};

namespace {

// What a posted operation's UCX callback needs to reach the core's.
struct Completion {
  hetcclUcxCompletion done;
  void* user;
  uint64_t tag;  // the posted one
};

double secondsNow() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) +
         1e-9 * static_cast<double>(now.tv_nsec);
}

ucs_memory_type_t ucsMemoryType(unsigned memory) {
  switch (memory) {
    case HETCCL_UCX_MEMORY_CUDA:
      return UCS_MEMORY_TYPE_CUDA;
    case HETCCL_UCX_MEMORY_ROCM:
      return UCS_MEMORY_TYPE_ROCM;
    default:
      return UCS_MEMORY_TYPE_HOST;
  }
}

// Progresses `worker` until `request` (a UCX request, an error or NULL) is
// no longer in progress or `seconds` pass; frees it; returns its status.
int finishRequest(ucp_worker_h worker, void* request, double seconds) {
  if (request == nullptr) return UCS_OK;
  if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
  const double deadline = secondsNow() + seconds;
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS &&
         secondsNow() < deadline)
    ucp_worker_progress(worker);
  ucp_request_free(request);
  return status;
}

void sendDone(void* request, ucs_status_t status, void* data) {
  auto* completion = static_cast<Completion*>(data);
  completion->done(completion->user, status, 0, completion->tag);
  delete completion;
  ucp_request_free(request);
}

void recvDone(void* request, ucs_status_t status,
              const ucp_tag_recv_info_t* info, void* data) {
  auto* completion = static_cast<Completion*>(data);
  completion->done(completion->user, status,
                   status == UCS_OK ? info->length : 0,
                   status == UCS_OK ? info->sender_tag : completion->tag);
  delete completion;
  ucp_request_free(request);
}

void peerFailed(void* data, ucp_ep_h, ucs_status_t status) {
  auto* endpoint = static_cast<hetcclUcxEndpoint*>(data);
  endpoint->onFailure(endpoint->user, status);
}

// The common tail of a post: an error, an immediate completion (the
// callback runs now) or an operation in flight.
int posted(ucs_status_ptr_t request, Completion* completion, size_t bytes,
           hetcclUcxOperation** operation) {
  if (UCS_PTR_IS_ERR(request)) {
    delete completion;
    return UCS_PTR_STATUS(request);
  }
  *operation = reinterpret_cast<hetcclUcxOperation*>(request);
  if (request == nullptr) {
    completion->done(completion->user, UCS_OK, bytes, completion->tag);
    delete completion;
  }
  return UCS_OK;
}

ucp_request_param_t operationParams(unsigned memory, Completion* completion) {
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                        UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  params.user_data = completion;
  params.memory_type = ucsMemoryType(memory);
  return params;
}

const char* statusString(int status) {
  return ucs_status_string(static_cast<ucs_status_t>(status));
}

void version(unsigned* major, unsigned* minor, unsigned* release) {
  ucp_get_version(major, minor, release);
}

// Appends "tl/device" for every transport resource of one memory domain.
void appendTransportsOf(uct_component_h component, const char* mdName,
                        std::string& names) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK)
    return;
  uct_md_h md = nullptr;
  ucs_status_t status = uct_md_open(component, mdName, config, &md);
  uct_config_release(config);
  if (status != UCS_OK) return;
  uct_tl_resource_desc_t* resources = nullptr;
  unsigned count = 0;
  if (uct_md_query_tl_resources(md, &resources, &count) == UCS_OK) {
    for (unsigned i = 0; i < count; ++i) {
      if (!names.empty()) names += ", ";
      names += std::string(resources[i].tl_name) + "/" + resources[i].dev_name;
    }
    uct_release_tl_resource_list(resources);
  }
  uct_md_close(md);
}

int listTransports(char* names, size_t length) {
  uct_component_h* components = nullptr;
  unsigned count = 0;
  ucs_status_t status = uct_query_components(&components, &count);
  if (status != UCS_OK) return status;
  std::string list;
  for (unsigned c = 0; c < count; ++c) {
    uct_component_attr_t attr{};
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                      UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(components[c], &attr) != UCS_OK) continue;
    auto* mds = static_cast<uct_md_resource_desc_t*>(
        calloc(attr.md_resource_count + 1, sizeof(uct_md_resource_desc_t)));
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds;
    if (uct_component_query(components[c], &attr) == UCS_OK)
      for (unsigned m = 0; m < attr.md_resource_count; ++m)
        appendTransportsOf(components[c], mds[m].md_name, list);
    free(mds);
  }
  uct_release_component_list(components);
  snprintf(names, length, "%s", list.c_str());
  return UCS_OK;
}

int contextCreate(const char* netDevices, hetcclUcxContext** out) {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return status;
  if (netDevices != nullptr) {
    status = ucp_config_modify(config, "NET_DEVICES", netDevices);
    if (status != UCS_OK) {
      ucp_config_release(config);
      return status;
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES |
                      UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  params.name = "hetccl";
  ucp_context_h context = nullptr;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) return status;
  *out = new hetcclUcxContext{context};
  return UCS_OK;
}

void contextDestroy(hetcclUcxContext* context) {
  ucp_cleanup(context->context);
  delete context;
}

unsigned contextMemoryTypes(hetcclUcxContext* context) {
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(context->context, &attr) != UCS_OK) return 0;
  unsigned kinds = 0;
  if (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_HOST))
    kinds |= HETCCL_UCX_MEMORY_HOST;
  if (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA))
    kinds |= HETCCL_UCX_MEMORY_CUDA;
  if (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_ROCM))
    kinds |= HETCCL_UCX_MEMORY_ROCM;
  return kinds;
}

int workerCreate(hetcclUcxContext* context, hetcclUcxWorker** out) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // One thread drives the worker, but it is set up by another.
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h worker = nullptr;
  ucs_status_t status = ucp_worker_create(context->context, &params, &worker);
  if (status != UCS_OK) return status;
  *out = new hetcclUcxWorker{worker};
  return UCS_OK;
}

void workerDestroy(hetcclUcxWorker* worker) {
  ucp_worker_destroy(worker->worker);
  delete worker;
}

int workerFlush(hetcclUcxWorker* worker, double seconds) {
  ucp_request_param_t params{};
  return finishRequest(worker->worker,
                       ucp_worker_flush_nbx(worker->worker, &params), seconds);
}

int workerAddress(hetcclUcxWorker* worker, void* address, size_t* length) {
  ucp_address_t* own = nullptr;
  size_t ownLength = 0;
  ucs_status_t status =
      ucp_worker_get_address(worker->worker, &own, &ownLength);
  if (status != UCS_OK) return status;
  const bool fits = ownLength <= *length;
  if (fits) memcpy(address, own, ownLength);
  *length = ownLength;
  ucp_worker_release_address(worker->worker, own);
  return fits ? UCS_OK : UCS_ERR_BUFFER_TOO_SMALL;
}

int workerEventFd(hetcclUcxWorker* worker, int* fd) {
  return ucp_worker_get_efd(worker->worker, fd);
}

int workerArm(hetcclUcxWorker* worker) {
  return ucp_worker_arm(worker->worker);
}

unsigned workerProgress(hetcclUcxWorker* worker) {
  return ucp_worker_progress(worker->worker);
}

int endpointCreate(hetcclUcxWorker* worker, const void* address,
                   hetcclUcxPeerFailure onFailure, void* user,
                   hetcclUcxEndpoint** out) {
  auto* endpoint = new hetcclUcxEndpoint{nullptr, onFailure, user};
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = static_cast<const ucp_address_t*>(address);
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = peerFailed;
  params.err_handler.arg = endpoint;
  ucs_status_t status =
      ucp_ep_create(worker->worker, &params, &endpoint->endpoint);
  if (status != UCS_OK) {
    delete endpoint;
    return status;
  }
  *out = endpoint;
  return UCS_OK;
}

void endpointClose(hetcclUcxWorker* worker, hetcclUcxEndpoint* endpoint) {
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  params.flags = UCP_EP_CLOSE_FLAG_FORCE;
  // A forced close does not wait for the peer; the bound only guards
  // against a UCX that never finishes it.
  finishRequest(worker->worker, ucp_ep_close_nbx(endpoint->endpoint, &params),
                10.0);
  delete endpoint;
}

int tagSend(hetcclUcxEndpoint* endpoint, const void* buffer, size_t bytes,
            uint64_t tag, unsigned memory, hetcclUcxCompletion done, void* user,
            hetcclUcxOperation** operation) {
  auto* completion = new Completion{done, user, tag};
  ucp_request_param_t params = operationParams(memory, completion);
  params.cb.send = sendDone;
  return posted(
      ucp_tag_send_nbx(endpoint->endpoint, buffer, bytes, tag, &params),
      completion, 0, operation);
}

int tagRecv(hetcclUcxWorker* worker, void* buffer, size_t bytes, uint64_t tag,
            uint64_t tagMask, unsigned memory, hetcclUcxCompletion done,
            void* user, hetcclUcxOperation** operation) {
  auto* completion = new Completion{done, user, tag};
  ucp_request_param_t params = operationParams(memory, completion);
  params.cb.recv = recvDone;
  // UCX 1.13 leaves recv_info unset when a receive completes at once, so
  // every receive completes through the callback, which has the length.
  params.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  ucs_status_ptr_t request =
      ucp_tag_recv_nbx(worker->worker, buffer, bytes, tag, tagMask, &params);
  return posted(request, completion, 0, operation);
}

void cancel(hetcclUcxWorker* worker, hetcclUcxOperation* operation) {
  ucp_request_cancel(worker->worker, operation);
}

const hetcclUcxModuleTable kTable = {
    HETCCL_UCX_MODULE_ABI,
    statusString,
    version,
    listTransports,
    contextCreate,
    contextDestroy,
    contextMemoryTypes,
    workerCreate,
    workerDestroy,
    workerFlush,
    workerAddress,
    workerEventFd,
    workerArm,
    workerProgress,
    endpointCreate,
    endpointClose,
    tagSend,
    tagRecv,
    cancel,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const hetcclUcxModuleTable*
hetcclUcxModule(void) {
  return &kTable;
}

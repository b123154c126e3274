//===- test/pjrt/fake_pjrt_plugin.cc - A PJRT plugin without XLA, for tests -===//
//
// Exports GetPjrtApi with a function table whose version and size the test sets
// (FakePjrt_Configure). Implements the error functions, Plugin_Initialize,
// Plugin_Attributes (xla_version=2, stablehlo_current_version=[1,2,3]) and
// Client_Create, which records the create options it was given and always fails with
// UNAVAILABLE "fake plugin: no devices". FakePjrt_LiveErrors counts errors created and
// not yet destroyed, so tests can check that the loader destroys every error.
// FakePjrt_NewEvent makes an event that reports ready from its Nth PJRT_Event_IsReady
// call on (never, with N < 0); Event_Await returns at once and counts, Event_Destroy frees;
// FakePjrt_EventCalls reports the IsReady and Await calls and the live events.
// FakePjrt_SetDmaMap(mode) adds Client_DmaMap / DmaUnmap to the table (mode 1: mapping
// works; 2: it fails with INTERNAL; 0: the slots stay NULL, the default), and
// FakePjrt_DmaCalls counts the successful maps and the unmaps.
//
//===----------------------------------------------------------------------===//
#include "pjrt/pjrt_c_api.h"

#include <cstring>
#include <sstream>
#include <string>

namespace rs::pjrt::capi {
struct PJRT_Error {
  std::string message;
  int code = 0;
};
struct PJRT_Event {
  int ready_after = 0; // IsReady calls before it reports ready; < 0: never
  int polls = 0;
};
} // namespace rs::pjrt::capi

namespace {

using namespace rs::pjrt::capi;

constexpr size_t kSlots = 140;
alignas(8) unsigned char g_api[kFirstSlotOffset + 8 * kSlots];
int g_live_errors = 0;
std::string g_last_options;

PJRT_Error *makeError(int code, std::string message) {
  ++g_live_errors;
  return new PJRT_Error{std::move(message), code};
}

void errorDestroy(PJRT_Error_Destroy_Args *a) {
  delete a->error;
  --g_live_errors;
}

void errorMessage(PJRT_Error_Message_Args *a) {
  a->message = a->error->message.data();
  a->message_size = a->error->message.size();
}

PJRT_Error *errorGetCode(PJRT_Error_GetCode_Args *a) {
  a->code = static_cast<PJRT_Error_Code>(a->error->code);
  return nullptr;
}

PJRT_Error *pluginInitialize(PJRT_Plugin_Initialize_Args *) { return nullptr; }

PJRT_Error *pluginAttributes(PJRT_Plugin_Attributes_Args *a) {
  static const int64_t version[3] = {1, 2, 3};
  static PJRT_NamedValue values[2];
  values[0] = PJRT_NamedValue{};
  values[0].struct_size = sizeof(PJRT_NamedValue);
  values[0].name = "xla_version";
  values[0].name_size = std::strlen(values[0].name);
  values[0].type = PJRT_NamedValue_kInt64;
  values[0].int64_value = 2;
  values[0].value_size = 1;
  values[1] = PJRT_NamedValue{};
  values[1].struct_size = sizeof(PJRT_NamedValue);
  values[1].name = "stablehlo_current_version";
  values[1].name_size = std::strlen(values[1].name);
  values[1].type = PJRT_NamedValue_kInt64List;
  values[1].int64_array_value = version;
  values[1].value_size = 3;
  a->attributes = values;
  a->num_attributes = 2;
  return nullptr;
}

PJRT_Error *clientCreate(PJRT_Client_Create_Args *a) {
  if (a->struct_size < 88)
    return makeError(3, "Unexpected PJRT_Client_Create_Args size");
  std::ostringstream os;
  for (size_t i = 0; i < a->num_options; ++i) {
    const PJRT_NamedValue &v = a->create_options[i];
    os << (i ? "," : "") << std::string(v.name, v.name_size) << "=";
    switch (v.type) {
    case PJRT_NamedValue_kInt64List:
      os << "[";
      for (size_t k = 0; k < v.value_size; ++k)
        os << (k ? " " : "") << v.int64_array_value[k];
      os << "]";
      break;
    case PJRT_NamedValue_kFloat: os << "f" << v.float_value; break;
    case PJRT_NamedValue_kBool: os << (v.bool_value ? "true" : "false"); break;
    case PJRT_NamedValue_kInt64: os << v.int64_value; break;
    case PJRT_NamedValue_kString: os << std::string(v.string_value, v.value_size); break;
    }
  }
  g_last_options = os.str();
  return makeError(14, "fake plugin: no devices");
}

int g_is_ready_calls = 0, g_await_calls = 0, g_live_events = 0;

PJRT_Error *eventIsReady(PJRT_Event_IsReady_Args *a) {
  ++g_is_ready_calls;
  PJRT_Event *e = a->event;
  a->is_ready = e->ready_after >= 0 && ++e->polls >= e->ready_after;
  return nullptr;
}

PJRT_Error *eventAwait(PJRT_Event_Await_Args *) {
  ++g_await_calls;
  return nullptr;
}

PJRT_Error *eventDestroy(PJRT_Event_Destroy_Args *a) {
  delete a->event;
  --g_live_events;
  return nullptr;
}

int g_dma_maps = 0, g_dma_unmaps = 0;
bool g_dma_fails = false;

PJRT_Error *clientDmaMap(PJRT_Client_DmaMap_Args *) {
  if (g_dma_fails)
    return makeError(13, "fake plugin: cannot register host memory");
  ++g_dma_maps;
  return nullptr;
}

PJRT_Error *clientDmaUnmap(PJRT_Client_DmaUnmap_Args *) {
  ++g_dma_unmaps;
  return nullptr;
}

template <typename Fn> void setSlot(Slot slot, Fn fn) {
  void *p = reinterpret_cast<void *>(fn);
  std::memcpy(g_api + slotOffset(slot), &p, sizeof p);
}

} // namespace

extern "C" {

/// Sets the version and struct_size GetPjrtApi reports (struct_size at most the table).
__attribute__((visibility("default"))) void FakePjrt_Configure(int major, int minor,
                                                               size_t struct_size) {
  std::memset(g_api, 0, sizeof g_api);
  PJRT_Api header{};
  header.struct_size = struct_size < sizeof g_api ? struct_size : sizeof g_api;
  header.pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
  header.pjrt_api_version.major_version = major;
  header.pjrt_api_version.minor_version = minor;
  std::memcpy(g_api, &header, sizeof header);
  setSlot(Slot::kErrorDestroy, &errorDestroy);
  setSlot(Slot::kErrorMessage, &errorMessage);
  setSlot(Slot::kErrorGetCode, &errorGetCode);
  setSlot(Slot::kPluginInitialize, &pluginInitialize);
  setSlot(Slot::kPluginAttributes, &pluginAttributes);
  setSlot(Slot::kClientCreate, &clientCreate);
  setSlot(Slot::kEventIsReady, &eventIsReady);
  setSlot(Slot::kEventAwait, &eventAwait);
  setSlot(Slot::kEventDestroy, &eventDestroy);
  g_is_ready_calls = g_await_calls = 0;
  g_dma_maps = g_dma_unmaps = 0;
}

/// Client_DmaMap / DmaUnmap: 0 absent, 1 working, 2 failing (see the file comment).
__attribute__((visibility("default"))) void FakePjrt_SetDmaMap(int mode) {
  g_dma_fails = mode == 2;
  if (mode == 0) {
    std::memset(g_api + slotOffset(Slot::kClientDmaMap), 0, 8);
    std::memset(g_api + slotOffset(Slot::kClientDmaUnmap), 0, 8);
    return;
  }
  setSlot(Slot::kClientDmaMap, &clientDmaMap);
  setSlot(Slot::kClientDmaUnmap, &clientDmaUnmap);
}

/// Successful Client_DmaMap calls and Client_DmaUnmap calls since FakePjrt_Configure.
__attribute__((visibility("default"))) void FakePjrt_DmaCalls(int *maps, int *unmaps) {
  *maps = g_dma_maps;
  *unmaps = g_dma_unmaps;
}

/// A new event, ready from its `ready_after`th IsReady call on (never when negative).
__attribute__((visibility("default"))) PJRT_Event *FakePjrt_NewEvent(int ready_after) {
  ++g_live_events;
  return new PJRT_Event{ready_after, 0};
}

/// IsReady calls, Await calls and live events since FakePjrt_Configure.
__attribute__((visibility("default"))) void FakePjrt_EventCalls(int *is_ready, int *await,
                                                                int *live) {
  *is_ready = g_is_ready_calls;
  *await = g_await_calls;
  *live = g_live_events;
}

__attribute__((visibility("default"))) int FakePjrt_LiveErrors() { return g_live_errors; }

__attribute__((visibility("default"))) const char *FakePjrt_LastCreateOptions() {
  return g_last_options.c_str();
}

__attribute__((visibility("default"))) const PJRT_Api *GetPjrtApi() {
  return reinterpret_cast<const PJRT_Api *>(g_api);
}

} // extern "C"

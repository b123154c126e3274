//===- pjrt/pjrt_c_api.h - The PJRT C API subset this project uses -------===//
//
// The project's own declaration of the part of the PJRT C API (openxla/xla
// `xla/pjrt/c/pjrt_c_api.h`) that the PJRT backend calls. No XLA header is included
// anywhere: every struct below is written from `../shared/reference/pjrt.md` (section 1,
// "PJRT C API"), whose byte offsets were checked against the plugin on the H200
// (`xla_cuda_plugin.so` from jax-cuda13-pjrt 0.11.2, PJRT API 0.115). The static_asserts
// pin those offsets for x86-64 LP64.
//
// Conventions of the C API (pjrt.md 1.2):
//   - every Args struct starts with `size_t struct_size` and `PJRT_Extension_Base*
//     extension_start`; callers zero the struct, set struct_size = sizeof(the struct) and
//     leave extension_start NULL. The plugin accepts any struct_size >= the size it was
//     built with and ignores bytes past its own size.
//   - every function except Error_Destroy / Error_Message returns a PJRT_Error* (NULL =
//     success) that the caller must destroy; every PJRT_Event* the plugin hands out must
//     be destroyed too.
//   - the PJRT_Api function table is append-only since API 0.57: slot k lives at byte
//     40 + 8k. `Slot` lists the slots used here; the loader checks api->struct_size
//     covers the highest one.
//
// Structs whose newest layout keeps growing (Client_Create_Args, ExecuteOptions,
// BufferFromHostBuffer_Args, DeserializeAndLoad_Args) carry `kReservedTail` zero bytes
// after their last known field: a newer plugin that appended an optional field (a
// pointer or count whose zero value means "absent", as every append so far) then still
// finds a struct at least as large as its own, instead of failing with "Unexpected
// <struct> size".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace rs::pjrt::capi {

// Opaque plugin objects.
struct PJRT_Error;
struct PJRT_Event;
struct PJRT_Client;
struct PJRT_Device;
struct PJRT_DeviceDescription;
struct PJRT_Memory;
struct PJRT_Buffer;
struct PJRT_Executable;
struct PJRT_LoadedExecutable;
struct PJRT_SerializedExecutable;
struct PJRT_ExecuteContext;
struct PJRT_Buffer_MemoryLayout;

/// Zero bytes appended to the growing structs (see the file comment).
inline constexpr size_t kReservedTail = 64;

/// Oldest API minor whose function table and structs cover everything used here
/// (Executable_Fingerprint 0.35, DeserializeAndLoad overrides 0.71, ExecuteOptions
/// call_location 0.76). docs/gpu.md names the minor of the plugin in use.
inline constexpr int kMinApiMinor = 76;

// ---- Enums (pjrt.md 1.4) ---------------------------------------------------

enum PJRT_Error_Code : int {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
};

enum PJRT_NamedValue_Type : int {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4,
};

enum PJRT_Buffer_Type : int {
  PJRT_Buffer_Type_INVALID = 0,
  PJRT_Buffer_Type_PRED = 1,
  PJRT_Buffer_Type_S8 = 2,
  PJRT_Buffer_Type_S16 = 3,
  PJRT_Buffer_Type_S32 = 4,
  PJRT_Buffer_Type_S64 = 5,
  PJRT_Buffer_Type_U8 = 6,
  PJRT_Buffer_Type_U16 = 7,
  PJRT_Buffer_Type_U32 = 8,
  PJRT_Buffer_Type_U64 = 9,
  PJRT_Buffer_Type_F16 = 10,
  PJRT_Buffer_Type_F32 = 11,
  PJRT_Buffer_Type_F64 = 12,
  PJRT_Buffer_Type_BF16 = 13,
  PJRT_Buffer_Type_C64 = 14,
  PJRT_Buffer_Type_C128 = 15,
};

enum PJRT_HostBufferSemantics : int {
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
};

// ---- Extensions (pjrt.md 1.2; pjrt-fast-path.md 2.4) ------------------------

/// The header of every entry on PJRT_Api.extension_start's list.
struct PJRT_Extension_Base {
  size_t struct_size;
  int type; // PJRT_Extension_Type
  PJRT_Extension_Base *next;
};
static_assert(offsetof(PJRT_Extension_Base, type) == 8);
static_assert(offsetof(PJRT_Extension_Base, next) == 16);

/// PJRT_Extension_Type_Stream: the GPU plugin's stream extension (version 0).
inline constexpr int kExtensionTypeStream = 3;

/// Makes CUDA stream `stream` wait, on the device, for `buffer`'s definition event;
/// returns once that event has been recorded. No extension_start field.
struct PJRT_Wait_Until_Buffer_Ready_On_Stream_Args {
  size_t struct_size;
  intptr_t stream;
  PJRT_Buffer *buffer;
};
static_assert(sizeof(PJRT_Wait_Until_Buffer_Ready_On_Stream_Args) == 24);

struct PJRT_Stream_Extension {
  PJRT_Extension_Base base;
  void *get_stream; // PJRT_Get_Stream_For_External_Ready_Events (not used)
  PJRT_Error *(*wait_stream)(PJRT_Wait_Until_Buffer_Ready_On_Stream_Args *);
};
static_assert(offsetof(PJRT_Stream_Extension, get_stream) == 24);
static_assert(offsetof(PJRT_Stream_Extension, wait_stream) == 32);

// ---- PJRT_Api (pjrt.md 1.3) ------------------------------------------------

struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  int major_version;
  int minor_version;
};

/// The header of the function table; function pointer k follows at kFirstSlotOffset + 8k.
struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Api_Version pjrt_api_version;
};
inline constexpr size_t kFirstSlotOffset = 40;
static_assert(offsetof(PJRT_Api, pjrt_api_version) == 16);
static_assert(sizeof(PJRT_Api) == kFirstSlotOffset);

/// Function table slots used by this project (index k: byte 40 + 8k).
enum class Slot : int {
  kErrorDestroy = 0,
  kErrorMessage = 1,
  kErrorGetCode = 2,
  kPluginInitialize = 3,
  kPluginAttributes = 4,
  kEventDestroy = 5,
  kEventIsReady = 6,
  kEventAwait = 8,
  kClientCreate = 10,
  kClientDestroy = 11,
  kClientPlatformName = 12,
  kClientPlatformVersion = 14,
  kClientAddressableDevices = 16,
  kClientCompile = 20,
  kClientBufferFromHostBuffer = 22,
  kDeviceDescriptionId = 23,
  kDeviceDescriptionAttributes = 25,
  kDeviceDescriptionKind = 26,
  kDeviceGetDescription = 29,
  kDeviceLocalHardwareId = 31,
  kExecutableDestroy = 40,
  kExecutableNumOutputs = 44,
  kExecutableSerialize = 49,
  kLoadedExecutableDestroy = 50,
  kLoadedExecutableGetExecutable = 51,
  kLoadedExecutableExecute = 55,
  kExecutableDeserializeAndLoad = 56,
  kBufferDestroy = 58,
  kBufferElementType = 59,
  kBufferDimensions = 60,
  kBufferToHostBuffer = 70,
  kBufferOpaqueDeviceMemoryDataPointer = 76,
  kExecutableFingerprint = 94,
  // Optional slots: used where the plugin's table has them (Plugin::has), else the
  // server takes the plain path (pjrt/client.h).
  kExecutableOutputMemoryKinds = 47,
  kClientDmaMap = 110,
  kClientDmaUnmap = 111,
};
/// The highest required slot: api->struct_size must cover it.
inline constexpr Slot kHighestSlot = Slot::kExecutableFingerprint;
inline constexpr size_t slotOffset(Slot s) { return kFirstSlotOffset + 8 * static_cast<size_t>(s); }
static_assert(slotOffset(Slot::kClientCompile) == 200);
static_assert(slotOffset(Slot::kLoadedExecutableExecute) == 480);
static_assert(slotOffset(Slot::kBufferToHostBuffer) == 600);
static_assert(slotOffset(kHighestSlot) + 8 == 800);

// ---- Args structs (pjrt.md 1.5) --------------------------------------------

struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char *string_value;
    int64_t int64_value;
    const int64_t *int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size; // strlen for strings, element count for lists, 1 for scalars
};
static_assert(sizeof(PJRT_NamedValue) == 56);
static_assert(offsetof(PJRT_NamedValue, type) == 32);
static_assert(offsetof(PJRT_NamedValue, value_size) == 48);

struct PJRT_Error_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Error *error;
};

struct PJRT_Error_Message_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  const char *message; // out, valid until the error is destroyed
  size_t message_size; // out
};
static_assert(sizeof(PJRT_Error_Message_Args) == 40);

struct PJRT_Error_GetCode_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  PJRT_Error_Code code; // out
};
static_assert(offsetof(PJRT_Error_GetCode_Args, code) == 24);

struct PJRT_Plugin_Initialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
};

struct PJRT_Plugin_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_NamedValue *attributes; // out, process lifetime
  size_t num_attributes;             // out
};
static_assert(sizeof(PJRT_Plugin_Attributes_Args) == 32);

struct PJRT_Event_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

struct PJRT_Event_Await_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

struct PJRT_Event_IsReady_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
  bool is_ready; // out
};
static_assert(offsetof(PJRT_Event_IsReady_Args, is_ready) == 24);

struct PJRT_Client_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_NamedValue *create_options;
  size_t num_options;
  void *kv_get_callback;
  void *kv_get_user_arg;
  void *kv_put_callback;
  void *kv_put_user_arg;
  PJRT_Client *client; // out
  void *kv_try_get_callback;
  void *kv_try_get_user_arg;
  unsigned char reserved_tail[kReservedTail];
};
static_assert(offsetof(PJRT_Client_Create_Args, client) == 64);
static_assert(offsetof(PJRT_Client_Create_Args, reserved_tail) == 88);

struct PJRT_Client_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
};

/// Client_PlatformName_Args and Client_PlatformVersion_Args share this layout.
struct PJRT_Client_String_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *value; // out, owned by the client
  size_t value_size; // out
};
static_assert(sizeof(PJRT_Client_String_Args) == 40);

struct PJRT_Client_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Device *const *addressable_devices; // out, owned by the client
  size_t num_addressable_devices;          // out
};
static_assert(sizeof(PJRT_Client_AddressableDevices_Args) == 40);

struct PJRT_Device_GetDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_DeviceDescription *device_description; // out
};

struct PJRT_Device_LocalHardwareId_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  int local_hardware_id; // out: the CUDA ordinal
};
static_assert(offsetof(PJRT_Device_LocalHardwareId_Args, local_hardware_id) == 24);

struct PJRT_DeviceDescription_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  int id; // out
};

struct PJRT_DeviceDescription_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  size_t num_attributes;             // out (count BEFORE the pointer here)
  const PJRT_NamedValue *attributes; // out, device lifetime
};
static_assert(offsetof(PJRT_DeviceDescription_Attributes_Args, attributes) == 32);

struct PJRT_DeviceDescription_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *device_kind; // out
  size_t device_kind_size; // out
};
static_assert(sizeof(PJRT_DeviceDescription_Kind_Args) == 40);

struct PJRT_Program {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  char *code;
  size_t code_size;
  const char *format;
  size_t format_size;
};
static_assert(sizeof(PJRT_Program) == 48);

struct PJRT_Client_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const PJRT_Program *program;
  const char *compile_options; // serialized CompileOptionsProto
  size_t compile_options_size;
  PJRT_LoadedExecutable *executable; // out
};
static_assert(sizeof(PJRT_Client_Compile_Args) == 56);

struct PJRT_LoadedExecutable_GetExecutable_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *loaded_executable;
  PJRT_Executable *executable; // out, caller destroys
};

struct PJRT_Executable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
};

struct PJRT_LoadedExecutable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
};

struct PJRT_Executable_NumOutputs_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs; // out
};

struct PJRT_Executable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *executable_fingerprint; // out
  size_t executable_fingerprint_size; // out
};

struct PJRT_Executable_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Executable *executable;
  const char *serialized_bytes;                                       // out
  size_t serialized_bytes_size;                                       // out
  PJRT_SerializedExecutable *serialized_executable;                   // out, owns the bytes
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable *); // out, call once
};
static_assert(sizeof(PJRT_Executable_Serialize_Args) == 56);

struct PJRT_Executable_DeserializeAndLoad_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *serialized_executable;
  size_t serialized_executable_size;
  PJRT_LoadedExecutable *loaded_executable; // out
  const char *overridden_serialized_compile_options;
  size_t overridden_serialized_compile_options_size;
  const void *load_options;
  unsigned char reserved_tail[kReservedTail];
};
static_assert(offsetof(PJRT_Executable_DeserializeAndLoad_Args, loaded_executable) == 40);
static_assert(offsetof(PJRT_Executable_DeserializeAndLoad_Args, reserved_tail) == 72);

struct PJRT_ExecuteOptions {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  void *send_callbacks;
  void *recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t *non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext *context;
  const char *call_location;
  size_t num_tasks;
  int *task_ids;
  int64_t *incarnation_ids;
  void *multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  void *hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
  unsigned char reserved_tail[kReservedTail];
};
static_assert(offsetof(PJRT_ExecuteOptions, non_donatable_input_indices) == 56);
static_assert(offsetof(PJRT_ExecuteOptions, incarnation_ids) == 104);
static_assert(offsetof(PJRT_ExecuteOptions, num_hlo_output_callbacks) == 136);
static_assert(offsetof(PJRT_ExecuteOptions, reserved_tail) == 144);

struct PJRT_LoadedExecutable_Execute_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  PJRT_ExecuteOptions *options;
  PJRT_Buffer *const *const *argument_lists; // [num_devices][num_args]
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer **const *output_lists;   // [num_devices][num_outputs], filled by the plugin
  PJRT_Event **device_complete_events; // optional [num_devices], filled by the plugin
  PJRT_Device *execute_device;
};
static_assert(sizeof(PJRT_LoadedExecutable_Execute_Args) == 80);

struct PJRT_Client_BufferFromHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const void *data;
  PJRT_Buffer_Type type;
  const int64_t *dims;
  size_t num_dims;
  const int64_t *byte_strides;
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device *device;
  PJRT_Memory *memory;
  PJRT_Buffer_MemoryLayout *device_layout;
  PJRT_Event *done_with_host_buffer; // out, always set, caller destroys
  PJRT_Buffer *buffer;               // out
  unsigned char reserved_tail[kReservedTail];
};
static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, host_buffer_semantics) == 72);
static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, buffer) == 112);

struct PJRT_Buffer_ToHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *src;
  PJRT_Buffer_MemoryLayout *host_layout; // NULL: the buffer's own (dense) layout
  void *dst;                             // NULL: only report dst_size
  size_t dst_size;                       // in/out
  PJRT_Event *event;                     // out
};
static_assert(sizeof(PJRT_Buffer_ToHostBuffer_Args) == 56);

struct PJRT_Buffer_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

struct PJRT_Buffer_ElementType_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Buffer_Type type; // out
};

struct PJRT_Buffer_Dimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const int64_t *dims; // out, buffer lifetime
  size_t num_dims;     // out
};
static_assert(sizeof(PJRT_Buffer_Dimensions_Args) == 40);

struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  void *device_memory_ptr; // out; a host address for a pinned_host buffer
};
static_assert(sizeof(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args) == 32);

struct PJRT_Executable_OutputMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;              // out
  const char *const *memory_kinds; // out, num_outputs entries, executable lifetime
  const size_t *memory_kind_sizes; // out, num_outputs entries
};
static_assert(sizeof(PJRT_Executable_OutputMemoryKinds_Args) == 48);

struct PJRT_Client_DmaMap_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  void *data;
  size_t size;
};
static_assert(sizeof(PJRT_Client_DmaMap_Args) == 40);

struct PJRT_Client_DmaUnmap_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  void *data;
};
static_assert(sizeof(PJRT_Client_DmaUnmap_Args) == 32);

/// Signature of every function in the table except Error_Destroy / Error_Message.
template <typename Args> using PjrtFn = PJRT_Error *(*)(Args *);
/// Signature of Error_Destroy / Error_Message.
template <typename Args> using PjrtVoidFn = void (*)(Args *);
/// The plugin's single exported symbol.
using GetPjrtApiFn = const PJRT_Api *(*)();

} // namespace rs::pjrt::capi

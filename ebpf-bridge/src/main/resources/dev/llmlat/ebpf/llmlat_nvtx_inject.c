/*
 * llmlat NVTX injection library: the probe point for NVTX v3.
 *
 * NVTX v3 is header-only: nvtxRangePushA() & co. are inline functions in the application that
 * forward to whatever library NVTX_INJECTION64_PATH names (or do nothing). There is no exported
 * nvtxRangePushA to put a uprobe on, so this library is loaded as that injection and forwards every
 * range call to small exported, never-inlined functions (llmlat_nvtx_*) that the bpftrace probes
 * in ebpf-bridge/probes/nvtx-inject.bt attach to. It records nothing itself.
 *
 * Range text longer than one bpftrace string (BPFTRACE_STRLEN, at most 200 bytes in bpftrace
 * 0.17) is handed over in chunks of LLMLAT_NVTX_CHUNK bytes before the push/start call, so the
 * bridge can reassemble texts of any length (a 256-request llmlat step text is about 8.5 KB).
 *
 * Self-contained (no NVTX headers needed): the few ABI definitions below are copied from
 * nvtx3/nvtxDetail/nvtxTypes.h and nvToolsExt.h, which NVIDIA keeps stable across versions.
 * Build: cc -shared -fPIC -O2 -o libllmlat_nvtx_inject.so llmlat_nvtx_inject.c
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LLMLAT_NVTX_CHUNK 192

typedef void (*NvtxFunctionPointer)(void);
typedef NvtxFunctionPointer **NvtxFunctionTable;
typedef const void *(*NvtxGetExportTableFunc_t)(uint32_t exportTableId);
typedef struct {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, NvtxFunctionTable *out_table, unsigned int *out_size);
} NvtxExportTableCallbacks;

enum { ETID_CALLBACKS = 1, MODULE_CORE = 1, MODULE_CORE2 = 5 };
enum { CORE_RangeStartEx = 4, CORE_RangeStartA = 5, CORE_RangeEnd = 7, CORE_RangePushEx = 8,
       CORE_RangePushA = 9, CORE_RangePop = 11 };
enum { CORE2_DomainRangeStartEx = 2, CORE2_DomainRangeEnd = 3, CORE2_DomainRangePushEx = 4,
       CORE2_DomainRangePop = 5 };
enum { MESSAGE_TYPE_ASCII = 1 };

/* nvtxEventAttributes_v2: messageType at offset 32, message (union of pointers) at 40. */
typedef struct {
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t colorType;
  uint32_t color;
  int32_t payloadType;
  int32_t reserved0;
  uint64_t payload;
  int32_t messageType;
  const void *message;
} EventAttributes;

#define PROBE __attribute__((visibility("default"), noinline, used))
/* Keeps calls to the empty probe functions from being optimised away. */
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

/* One chunk of the next range's text: bytes [offset, offset + chunk) of a text of `total` bytes. */
PROBE void llmlat_nvtx_text(const char *chunk, uint32_t offset, uint32_t total) { KEEP(chunk); KEEP(offset); KEEP(total); }
/* A thread-scoped range opened (push) / closed (pop); depth as NVTX reports it. */
PROBE void llmlat_nvtx_push(uint32_t total, int depth) { KEEP(total); KEEP(depth); }
PROBE void llmlat_nvtx_pop(int depth) { KEEP(depth); }
/* A process-scoped range started / ended (start/end may happen on different threads). */
PROBE void llmlat_nvtx_start(uint64_t id, uint32_t total) { KEEP(id); KEEP(total); }
PROBE void llmlat_nvtx_end(uint64_t id) { KEEP(id); }

static __thread int depth;
static uint64_t next_id = 1;

static uint32_t hand_over(const char *text) {
  if (text == NULL) {
    return 0;
  }
  size_t total = strlen(text);
  for (size_t off = 0; off < total; off += LLMLAT_NVTX_CHUNK) {
    llmlat_nvtx_text(text + off, (uint32_t) off, (uint32_t) total);
  }
  return (uint32_t) total;
}

static const char *ascii_message(const EventAttributes *a) {
  return (a != NULL && a->messageType == MESSAGE_TYPE_ASCII) ? (const char *) a->message : NULL;
}

static int push_a(const char *text) { llmlat_nvtx_push(hand_over(text), depth); return depth++; }
static int push_ex(const EventAttributes *a) { return push_a(ascii_message(a)); }
static int pop(void) {
  if (depth > 0) {
    depth--;
  }
  llmlat_nvtx_pop(depth);
  return depth;
}
static uint64_t start_a(const char *text) {
  uint64_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  llmlat_nvtx_start(id, hand_over(text));
  return id;
}
static uint64_t start_ex(const EventAttributes *a) { return start_a(ascii_message(a)); }
static void end(uint64_t id) { llmlat_nvtx_end(id); }
static int domain_push_ex(void *domain, const EventAttributes *a) { (void) domain; return push_ex(a); }
static int domain_pop(void *domain) { (void) domain; return pop(); }
static uint64_t domain_start_ex(void *domain, const EventAttributes *a) { (void) domain; return start_ex(a); }
static void domain_end(void *domain, uint64_t id) { (void) domain; end(id); }

static void set(NvtxFunctionTable table, unsigned int size, unsigned int id, NvtxFunctionPointer fn) {
  if (id < size && table[id] != NULL) {
    *table[id] = fn;
  }
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const NvtxExportTableCallbacks *callbacks = get_export_table(ETID_CALLBACKS);
  if (callbacks == NULL || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) {
    return 0;
  }
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(MODULE_CORE, &table, &size) && table != NULL) {
    set(table, size, CORE_RangePushA, (NvtxFunctionPointer) push_a);
    set(table, size, CORE_RangePushEx, (NvtxFunctionPointer) push_ex);
    set(table, size, CORE_RangePop, (NvtxFunctionPointer) pop);
    set(table, size, CORE_RangeStartA, (NvtxFunctionPointer) start_a);
    set(table, size, CORE_RangeStartEx, (NvtxFunctionPointer) start_ex);
    set(table, size, CORE_RangeEnd, (NvtxFunctionPointer) end);
  }
  table = NULL;
  size = 0;
  if (callbacks->GetModuleFunctionTable(MODULE_CORE2, &table, &size) && table != NULL) {
    set(table, size, CORE2_DomainRangePushEx, (NvtxFunctionPointer) domain_push_ex);
    set(table, size, CORE2_DomainRangePop, (NvtxFunctionPointer) domain_pop);
    set(table, size, CORE2_DomainRangeStartEx, (NvtxFunctionPointer) domain_start_ex);
    set(table, size, CORE2_DomainRangeEnd, (NvtxFunctionPointer) domain_end);
  }
  return 1;
}

/* A stand-in for libcuda.so.1, for testing mlfuse's ctypes bindings of the CUDA
 * driver API on machines without a GPU (tests/unit/test_cuda_driver.py).
 *
 * Memory is host memory (cuMemAlloc is a 256-byte aligned malloc; it fails with
 * CUDA_ERROR_OUT_OF_MEMORY past a limit on live allocations a test may set) and
 * copies are memcpy; calls from a thread with no current context fail with
 * CUDA_ERROR_INVALID_CONTEXT, as the driver's do. A module "loads" when its PTX
 * has an .entry; otherwise the error log buffer passed through the JIT options
 * receives a message, as the real driver's does. Launches run nothing: they
 * record what they were given (the grid, the block, each kernel parameter read
 * as a CUdeviceptr), which the test reads back through standin_* functions.
 * Events record the host's clock; the device has 80 GiB.
 * Signatures are the driver's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;

enum {
    SUCCESS = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_CONTEXT = 201, INVALID_PTX = 218,
    INVALID_HANDLE = 400, NOT_FOUND = 500, NOT_READY = 600, LAUNCH_FAILED = 719,
};

static int initialized;
static __thread void *current; /* the calling thread's current context, as the driver keeps it */
#define NEEDS_CONTEXT if (!current) return INVALID_CONTEXT
static CUresult sticky; /* returned by the next synchronize */
static unsigned last_grid, last_block, last_shared;
static int last_nparams;
static long live_allocations, allocation_limit = 1L << 40; /* "device memory": a count of allocations */
static CUdeviceptr last_params[64];

struct module { char *ptx; };
struct function { char name[256]; int nparams; };

CUresult cuInit(unsigned flags) { initialized = flags == 0; return flags ? INVALID_VALUE : SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return initialized ? SUCCESS : NOT_INITIALIZED; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? SUCCESS : INVALID_VALUE; }
CUresult cuDeviceGetName(char *name, int len, int d) { snprintf(name, len, "Stand-in GPU %d", d); return SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
    switch (attr) {
    case 75: *v = 9; return SUCCESS;   /* compute capability major */
    case 76: *v = 0; return SUCCESS;   /* minor */
    case 16: *v = 132; return SUCCESS; /* multiprocessors */
    default: return INVALID_VALUE;
    }
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { static int c; *ctx = &c; return SUCCESS; }
CUresult cuCtxSetCurrent(void *ctx) { current = ctx; return ctx ? SUCCESS : INVALID_VALUE; }
CUresult cuCtxSynchronize(void) { NEEDS_CONTEXT; CUresult r = sticky; sticky = SUCCESS; return r; }

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    NEEDS_CONTEXT;
    if (live_allocations >= allocation_limit) return OUT_OF_MEMORY;
    void *m = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!m) return OUT_OF_MEMORY;
    live_allocations++;
    *p = (CUdeviceptr)(uintptr_t)m;
    return SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) { NEEDS_CONTEXT; free((void *)(uintptr_t)p); live_allocations--; return SUCCESS; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { NEEDS_CONTEXT; memcpy((void *)(uintptr_t)d, h, n); return SUCCESS; }
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr s, size_t n) { NEEDS_CONTEXT; memcpy(h, (void *)(uintptr_t)s, n); return SUCCESS; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
    NEEDS_CONTEXT;
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) { *bytes = (size_t)80 << 30; return SUCCESS; }
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    NEEDS_CONTEXT;
    *total = (size_t)80 << 30;
    *free_bytes = *total - (size_t)live_allocations * 256;
    return SUCCESS;
}

/* events: host clock times taken when recorded */
struct event { double ms; int recorded; };
CUresult cuEventCreate(void **ev, unsigned flags) { NEEDS_CONTEXT; *ev = calloc(1, sizeof(struct event)); return SUCCESS; }
CUresult cuEventRecord(void *ev, void *stream) {
    NEEDS_CONTEXT;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    struct event *e = ev;
    e->ms = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
    e->recorded = 1;
    return SUCCESS;
}
CUresult cuEventSynchronize(void *ev) { NEEDS_CONTEXT; return ((struct event *)ev)->recorded ? SUCCESS : INVALID_HANDLE; }
CUresult cuEventQuery(void *ev) { NEEDS_CONTEXT; return SUCCESS; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
    NEEDS_CONTEXT;
    struct event *x = a, *y = b;
    if (!x->recorded || !y->recorded) return INVALID_HANDLE;
    *ms = (float)(y->ms - x->ms);
    return SUCCESS;
}
CUresult cuEventDestroy_v2(void *ev) { free(ev); return SUCCESS; }

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *options, void **values) {
    NEEDS_CONTEXT;
    char *log = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (options[i] == 5) log = values[i];                    /* CU_JIT_ERROR_LOG_BUFFER */
        if (options[i] == 6) size = (size_t)(uintptr_t)values[i]; /* ..._SIZE_BYTES */
    }
    const char *ptx = image;
    if (!strstr(ptx, ".entry")) {
        if (log && size) snprintf(log, size, "ptxas application ptx input, line 1; fatal   : Parsing error near '%.12s'", ptx);
        return INVALID_PTX;
    }
    struct module *m = malloc(sizeof *m);
    m->ptx = strdup(ptx);
    *mod = m;
    return SUCCESS;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
    NEEDS_CONTEXT;
    struct module *m = mod;
    char entry[300];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    const char *at = strstr(m->ptx, entry);
    if (!at) return NOT_FOUND;
    struct function *f = calloc(1, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    const char *end = strchr(at, ')');
    for (const char *p = strstr(at, "_param_"); p && p < end; p = strstr(p + 1, "_param_")) f->nparams++;
    *fn = f;
    return SUCCESS;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    NEEDS_CONTEXT;
    struct function *f = fn;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || extra) return INVALID_VALUE;
    last_grid = gx, last_block = bx, last_shared = shared, last_nparams = f->nparams;
    for (int i = 0; i < f->nparams && i < 64; i++) last_params[i] = *(CUdeviceptr *)params[i];
    return SUCCESS;
}

CUresult cuGetErrorName(CUresult rc, const char **name) {
    switch (rc) {
    case INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return SUCCESS;
    case OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return SUCCESS;
    case INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; return SUCCESS;
    case INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; return SUCCESS;
    case INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE"; return SUCCESS;
    case NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; return SUCCESS;
    case LAUNCH_FAILED: *name = "CUDA_ERROR_LAUNCH_FAILED"; return SUCCESS;
    default: *name = NULL; return INVALID_VALUE;
    }
}
CUresult cuGetErrorString(CUresult rc, const char **text) {
    *text = rc == INVALID_PTX ? "a PTX JIT compilation failed" : NULL;
    return SUCCESS;
}

/* what the test reads back */
unsigned standin_last_grid(void) { return last_grid; }
unsigned standin_last_block(void) { return last_block; }
unsigned standin_last_shared(void) { return last_shared; }
int standin_last_nparams(void) { return last_nparams; }
CUdeviceptr standin_last_param(int i) { return last_params[i]; }
void standin_fail_next_sync(CUresult rc) { sticky = rc; }
long standin_live_allocations(void) { return live_allocations; }
void standin_limit_allocations(long n) { allocation_limit = n; }

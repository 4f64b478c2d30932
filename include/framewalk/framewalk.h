/* framewalk.h: the C API of libframewalk. How did this program get here?
 *
 * The shape is that of the elfutils design of a thread/frame unwinding
 * interface with pluggable back-ends:
 *
 *   context   modules, caches and options; reusable across targets
 *   target    what is walked: a live process (with a freeze policy), one
 *             thread of it, a core file, a snapshot read from files, the
 *             calling thread, or your own back-end of callbacks
 *   thread    listed by fw_next_thread (the first after 0, then the next
 *             after a given one); walked by fw_walk, which freezes it for the
 *             walk (set_initial_registers .. thread_detach)
 *   frame     given to your callback, innermost first: its PC, whether it
 *             is an activation (the PC is exact: frame 0, or interrupted by
 *             a signal; else it is a return address), how it was found, its
 *             module; on request its function, source line and inlined calls
 *
 * Errors are values: every call that can fail returns an fw_status (FW_OK
 * is 0) and leaves a sentence naming the file, offset or address in
 * fw_last_error(), kept per calling thread. Nothing here aborts, exits or
 * writes to stderr; no signal handler is installed (fw_release_held_threads
 * is for one you install).
 *
 * Thread safety: a context and everything made from it is used by one thread
 * at a time (a live target by the thread that attached it: Linux ties ptrace
 * to the tracing thread). Different contexts may be used in different threads
 * at once. fw_last_error and fw_release_held_threads may be called anywhere;
 * fw_set_debuginfod sets a default for contexts made later, nothing else.
 *
 * Lifetime: a target keeps its context alive; free them in any order. A
 * frame and every string it gives are valid only during the callback that
 * received it.
 *
 * Version: FRAMEWALK_API_VERSION below; the library's symbols carry the
 * version node FRAMEWALK_0 (see docs/C_API.md for the compatibility rules).
 */
#ifndef FRAMEWALK_FRAMEWALK_H
#define FRAMEWALK_FRAMEWALK_H

#include <stddef.h>
#include <stdint.h>

#include "framewalk/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FRAMEWALK_API_VERSION 1

/* The library's API version (FRAMEWALK_API_VERSION of the headers it was
 * built with). */
FRAMEWALK_API int fw_api_version(void);

typedef enum fw_status {
  FW_OK = 0,
  FW_ERR_ARGUMENT = 1,      /* a null or out-of-range argument */
  FW_ERR_NO_PROCESS = 2,    /* no such process or thread */
  FW_ERR_PERMISSION = 3,    /* ptrace not permitted */
  FW_ERR_THREAD_GONE = 4,   /* the thread exited */
  FW_ERR_IO = 5,            /* a file could not be read */
  FW_ERR_FORMAT = 6,        /* a file is not what it should be (not ELF, a bad core, a bad snapshot) */
  FW_ERR_UNSUPPORTED = 7,   /* a machine or file kind framewalk does not unwind */
  FW_ERR_STATE = 8,         /* a call out of order (a detached target) */
  FW_ERR_BACKEND = 9,       /* a user back-end's callback failed */
  FW_ERR_NO_MEMORY = 10
} fw_status;

/* The message of the calling thread's last failed call ("" when none). */
FRAMEWALK_API const char *fw_last_error(void);

/* ---- context ---------------------------------------------------------- */

typedef struct fw_context fw_context;

/* NULL only when out of memory. */
FRAMEWALK_API fw_context *fw_context_new(void);
FRAMEWALK_API void fw_context_free(fw_context *context);
/* A prefix for every file a core names (a core of another machine). */
FRAMEWALK_API fw_status fw_context_set_sysroot(fw_context *context, const char *sysroot);
/* A directory searched for separate debug files (by build-id,
 * DIR/.build-id/xx/yyyy.debug, and by .gnu_debuglink) before /usr/lib/debug,
 * for the files the context opens from now on. */
FRAMEWALK_API fw_status fw_context_add_debug_directory(fw_context *context, const char *directory);
/* Missing debug files fetched from the servers DEBUGINFOD_URLS names, for the
 * files the context opens from now on (default: fw_set_debuginfod's setting
 * when the context was made). */
FRAMEWALK_API fw_status fw_context_set_debuginfod(fw_context *context, int enabled);
/* The default of fw_context_set_debuginfod for contexts made from now on
 * (off until set). */
FRAMEWALK_API void fw_set_debuginfod(int enabled);

/* ---- targets ---------------------------------------------------------- */

typedef struct fw_target fw_target;

typedef enum fw_freeze {
  FW_FREEZE_PROCESS = 0, /* every thread stopped from the first fw_next_thread until detach: consistent */
  FW_FREEZE_THREAD = 1,  /* each thread stopped only while it is walked: least disturbance */
  FW_FREEZE_COPY = 2     /* all stopped at once, registers and stacks copied, all released: shortest pause */
} fw_freeze;

/* A live process (ptrace). The process is left as it was by fw_target_detach
 * and fw_target_free. */
FRAMEWALK_API fw_status fw_target_attach(fw_context *context, int pid, fw_freeze freeze, fw_target **out);
/* One thread of a live process (a thread id that does not exist is reported
 * by the first fw_walk of it). */
FRAMEWALK_API fw_status fw_target_attach_thread(fw_context *context, int pid, int tid, fw_freeze freeze,
                                               fw_target **out);
/* A core file; `executable` may be NULL (the core's own path is used). */
FRAMEWALK_API fw_status fw_target_core(fw_context *context, const char *core, const char *executable,
                                      fw_target **out);
/* A snapshot in a directory (docs/C_API.md): `machine` (x86_64, aarch64 or
 * arm), `maps` (/proc/PID/maps lines), and per thread TID.regs ("DWARF-number
 * hex-value" lines) and TID.stack (blocks of memory: each its address and
 * its size as 8 little-endian bytes each, then its bytes); optionally `pid`
 * and `name`. `framewalk stack --save-snapshot DIR` writes one. */
FRAMEWALK_API fw_status fw_target_snapshot(fw_context *context, const char *directory, fw_target **out);
/* The calling thread, walked from inside fw_walk (its first frame is the
 * caller of fw_walk). One thread: fw_next_thread gives the caller's id. */
FRAMEWALK_API fw_status fw_target_self(fw_context *context, fw_target **out);

/* Your own back-end (a debugger's, a sampler's, a replay). */
typedef struct fw_thread_state fw_thread_state;
typedef struct fw_mappings fw_mappings;

typedef struct fw_backend {
  /* sizeof(fw_backend) as the caller compiled it: fields added later are
   * then known to be absent. */
  size_t struct_size;
  int machine; /* ELF e_machine: 62 x86-64, 183 AArch64, 40 ARM */
  int pid;     /* the process's id: for messages, and for /proc/PID/maps when report_mappings is NULL */

  /* Process level. The thread after `after_tid` (0: the first): its id > 0,
   * 0 when there are no more, < 0 on failure. Required. */
  int (*next_thread)(void *arg, int after_tid);
  /* Called once, by fw_target_detach or fw_target_free. Optional. */
  void (*detach)(void *arg);

  /* Thread level. Gives the thread's registers at its frozen moment by
   * calling fw_thread_state_set_registers (once per range of DWARF
   * numbers); 0 on success, non-zero on failure. From this call until
   * thread_detach the thread must stay frozen. Required. */
  int (*set_initial_registers)(void *arg, int tid, fw_thread_state *state);
  /* Copies up to `size` bytes at `address` into `out`; returns how many
   * could be read (a prefix; 0 when none). The stacks: code is read from the
   * modules' files first. Required. */
  size_t (*memory_read)(void *arg, uint64_t address, void *out, size_t size);
  /* Called after each walk whose set_initial_registers succeeded. Optional. */
  void (*thread_detach)(void *arg, int tid);

  /* Which files are mapped where, by fw_mappings_add for each executable
   * mapping; 0 on success. Optional: when NULL, /proc/PID/maps of `pid`. */
  int (*report_mappings)(void *arg, fw_mappings *mappings);
} fw_backend;

/* From set_initial_registers: registers first_register .. first_register +
 * count - 1 (DWARF numbers) have these values. */
FRAMEWALK_API fw_status fw_thread_state_set_registers(fw_thread_state *state, unsigned first_register,
                                                     unsigned count, const uint64_t *values);
/* From report_mappings: [start, end) maps `path` from `file_offset`. */
FRAMEWALK_API fw_status fw_mappings_add(fw_mappings *mappings, uint64_t start, uint64_t end, uint64_t file_offset,
                                       const char *path);

/* `backend` is copied; `arg` is passed to every callback. */
FRAMEWALK_API fw_status fw_target_backend(fw_context *context, const fw_backend *backend, void *arg,
                                         fw_target **out);

/* Lets the process go (every thread still held); idempotent. */
FRAMEWALK_API fw_status fw_target_detach(fw_target *target);
/* Detaches, then frees. A live target must be freed (or detached) by the
 * thread that walked it: Linux lets only the tracing thread detach; freed
 * from another, its threads stay stopped until the tracing thread exits. */
FRAMEWALK_API void fw_target_free(fw_target *target);
FRAMEWALK_API int fw_target_pid(const fw_target *target);
/* ELF e_machine of the target's code. */
FRAMEWALK_API int fw_target_machine(const fw_target *target);
/* Problems met opening the target that did not stop it (a missing file, a
 * build-id mismatch): the i-th message, NULL past the last. */
FRAMEWALK_API const char *fw_target_warning(const fw_target *target, size_t i);
/* Async-signal-safe: detaches every thread any live target of the process
 * holds. For a SIGINT/SIGTERM handler you install. */
FRAMEWALK_API void fw_release_held_threads(void);

/* ---- threads ---------------------------------------------------------- */

/* The thread after `after_tid` (0: the first) in *tid; *tid is 0 when there
 * are no more. With FW_FREEZE_PROCESS the first call stops the process. */
FRAMEWALK_API fw_status fw_next_thread(fw_target *target, int after_tid, int *tid);
/* The thread's name (its comm; a core's process name); "" when unknown.
 * Valid until the next call of this function with the same target. */
FRAMEWALK_API const char *fw_thread_name(fw_target *target, int tid);

/* ---- walks ------------------------------------------------------------ */

typedef struct fw_frame fw_frame;

typedef enum fw_walk_action { FW_CONTINUE = 0, FW_STOP = 1 } fw_walk_action;
typedef fw_walk_action (*fw_frame_callback)(const fw_frame *frame, void *arg);

/* How a walk ended. */
typedef enum fw_end {
  FW_END_OUTERMOST = 0, /* the stack's natural end (its code says so) */
  FW_END_CALLBACK = 1,  /* the callback returned FW_STOP */
  FW_END_TRUNCATED = 2, /* the frame limit was reached */
  FW_END_FAILED = 3     /* a caller could not be found: see reason and address */
} fw_end;

typedef enum fw_stop_reason {
  FW_STOP_OUTERMOST = 0,           /* the return address is undefined or zero */
  FW_STOP_CANNOT_UNWIND = 1,       /* the tables mark the function as the outermost (ARM EXIDX_CANTUNWIND) */
  FW_STOP_CALLBACK = 2,
  FW_STOP_MAX_FRAMES = 3,
  FW_STOP_NO_UNWIND_INFO = 4,      /* no rule for the PC (address) and no safe fallback */
  FW_STOP_BAD_MEMORY = 5,          /* memory a rule needs is unreadable (address) */
  FW_STOP_CFA_DID_NOT_ADVANCE = 6, /* the caller's stack pointer did not move up (address: it) */
  FW_STOP_BAD_UNWIND_INFO = 7,     /* the rule for the PC (address) cannot be evaluated */
  FW_STOP_NO_REGISTERS = 8,        /* the initial registers lack the PC or the stack pointer */
  FW_STOP_UNSUPPORTED_MACHINE = 9
} fw_stop_reason;

typedef struct fw_walk_end {
  fw_end end;
  fw_stop_reason reason;
  uint64_t address;  /* the PC or memory address the reason names */
  size_t frames;     /* frames given to the callback */
  char message[192]; /* the reason as a sentence: "no-unwind-info for 0x401136" */
} fw_walk_end;

typedef struct fw_walk_options {
  size_t struct_size; /* sizeof(fw_walk_options) */
  size_t max_frames;  /* 0: 256 */
  size_t skip_frames; /* frames not given to the callback, innermost first
                         (a language runtime's own, walking the calling thread) */
} fw_walk_options;

/* Walks thread `tid`: calls `callback` for each frame, innermost first, until
 * it returns FW_STOP or the walk ends. FW_OK when the thread could be read
 * (however the walk ended: see *end, which may be NULL); else the thread's
 * error. `options` may be NULL. */
FRAMEWALK_API fw_status fw_walk(fw_target *target, int tid, fw_frame_callback callback, void *arg,
                               const fw_walk_options *options, fw_walk_end *end);

/* How a frame's registers were recovered from its callee. */
typedef enum fw_frame_source {
  FW_SOURCE_CONTEXT = 0,     /* frame 0: the thread's own registers */
  FW_SOURCE_CFI = 1,         /* .eh_frame */
  FW_SOURCE_DEBUG_FRAME = 2, /* .debug_frame */
  FW_SOURCE_EXIDX = 3,       /* ARM EHABI */
  FW_SOURCE_SFRAME = 4,
  FW_SOURCE_SIGNAL = 5,      /* the kernel's signal frame */
  FW_SOURCE_FRAME_POINTER = 6,
  FW_SOURCE_PROLOGUE = 7,    /* read from the callee's instructions */
  FW_SOURCE_JIT = 8          /* the callee is jit code (executable memory no file backs, its
                                module's path "[anon]", "[anon:NAME]", "/memfd:NAME"...):
                                its frame pointer, the return address checked */
} fw_frame_source;

typedef struct fw_module_info {
  uint64_t id;           /* unique in the process, never reused */
  const char *path;      /* as mapped ("[vdso]") */
  const char *build_id;  /* lower-case hex; "" when the file has none or could not be read */
  uint64_t start, end;   /* mapped addresses */
  uint64_t bias;         /* run-time address = link-time address + bias */
} fw_module_info;

typedef struct fw_frame_info {
  uint64_t pc;     /* exact for an activation, else the return address */
  uint64_t sp;
  int activation;  /* 1: the PC is exact (frame 0, or interrupted by a signal) */
  fw_frame_source source;
  uint64_t module_id;    /* 0: in no module */
  uint64_t module_offset; /* the link-time address of the PC in its module */
} fw_frame_info;

FRAMEWALK_API size_t fw_frame_index(const fw_frame *frame);
FRAMEWALK_API uint64_t fw_frame_pc(const fw_frame *frame);
FRAMEWALK_API uint64_t fw_frame_sp(const fw_frame *frame);
FRAMEWALK_API int fw_frame_is_activation(const fw_frame *frame);
FRAMEWALK_API fw_frame_source fw_frame_get_source(const fw_frame *frame);
/* "context", "cfi", "debug_frame", "exidx", "sframe", "signal", "fp", "prologue". */
FRAMEWALK_API const char *fw_frame_source_name(fw_frame_source source);
FRAMEWALK_API void fw_frame_get_info(const fw_frame *frame, fw_frame_info *out);
/* 1 and *value when the walk knows the register's value in this frame
 * (DWARF number), else 0. */
FRAMEWALK_API int fw_frame_register(const fw_frame *frame, unsigned dwarf_register, uint64_t *value);
/* Every register the walk knows in this frame, in increasing DWARF number:
 * up to `max` numbers and values, returns how many there are (may exceed max). */
FRAMEWALK_API size_t fw_frame_registers(const fw_frame *frame, unsigned *numbers, uint64_t *values, size_t max);
/* 1 and *out when the PC is in a module, else 0. */
FRAMEWALK_API int fw_frame_module(const fw_frame *frame, fw_module_info *out);
/* The function's name (demangled) and the PC's offset in it; NULL when no
 * symbol covers the PC. For jit code (executable memory no file backs), the
 * name its process gives: a live process's perf map (/tmp/perf-PID.map, read
 * again for an address it does not name yet) and jitdump, a core's jitdump. */
FRAMEWALK_API const char *fw_frame_function(const fw_frame *frame, uint64_t *offset);

/* What the debug information says of a frame's PC: the inlined calls there
 * innermost first, then the physical function; each with its file and line
 * (0 when unknown). */
typedef struct fw_source_location {
  const char *function; /* NULL for the physical function: fw_frame_function names it */
  const char *file;     /* NULL when no line information covers the PC */
  unsigned line;
  unsigned column;      /* 0: not recorded */
  int inlined;          /* 1 for an inlined call */
} fw_source_location;

/* Fills up to `max` locations, returns how many there are (may exceed max;
 * 0 without debug information). */
FRAMEWALK_API size_t fw_frame_source_locations(const fw_frame *frame, fw_source_location *out, size_t max);

/* The convenience: up to `max` frames of thread `tid` into `frames`, their
 * number in *count. As fw_walk otherwise (a full array ends the walk as
 * FW_END_TRUNCATED). */
FRAMEWALK_API fw_status fw_backtrace(fw_target *target, int tid, fw_frame_info *frames, size_t max, size_t *count,
                                    fw_walk_end *end);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FRAMEWALK_FRAMEWALK_H */

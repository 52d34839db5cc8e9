/* SPDX-License-Identifier: MIT */
/* ntwmi.h: the kernel logger's wire constants: trace header types, hook ids, group masks, profile
 * sources. */
#ifndef ETW_NTWMI_H
#define ETW_NTWMI_H

#include "wintypes.h"

/* Trace header types: byte 2 of a record's marker (ETL-FORMAT.md 2.2). */
#define TRACE_HEADER_TYPE_SYSTEM32       0x01
#define TRACE_HEADER_TYPE_SYSTEM64       0x02
#define TRACE_HEADER_TYPE_COMPACT32      0x03
#define TRACE_HEADER_TYPE_COMPACT64      0x04
#define TRACE_HEADER_TYPE_FULL_HEADER32  0x0A
#define TRACE_HEADER_TYPE_INSTANCE32     0x0B
#define TRACE_HEADER_TYPE_TIMED          0x0C
#define TRACE_HEADER_TYPE_ERROR          0x0D
#define TRACE_HEADER_TYPE_WNODE_HEADER   0x0E
#define TRACE_HEADER_TYPE_MESSAGE        0x0F
#define TRACE_HEADER_TYPE_PERFINFO32     0x10
#define TRACE_HEADER_TYPE_PERFINFO64     0x11
#define TRACE_HEADER_TYPE_EVENT_HEADER32 0x12
#define TRACE_HEADER_TYPE_EVENT_HEADER64 0x13
#define TRACE_HEADER_TYPE_FULL_HEADER64  0x14
#define TRACE_HEADER_TYPE_INSTANCE64     0x15

#define TRACE_HEADER_FLAG              0x80000000
#define TRACE_HEADER_EVENT_TRACE       0x40000000
#define TRACE_HEADER_TRACE_MESSAGE     0x10000000
#define TRACE_HEADER_PMC_COUNTERS_MASK 0x0700
#define TRACE_HEADER_PEBS_INDEX_FLAG   0x8000

/* WMI_BUFFER_HEADER (ETL-FORMAT.md 1.2). */
#define WMI_BUFFER_HEADER_SIZE           0x48
#define WMI_BUFFER_FLAG_FLUSH_MARKER     0x0001
#define WMI_BUFFER_FLAG_EVENTS_LOST      0x0002
#define WMI_BUFFER_FLAG_BUFFER_LOST      0x0004
#define WMI_BUFFER_FLAG_RTBACKUP_CORRUPT 0x0008
#define WMI_BUFFER_FLAG_RTBACKUP         0x0010
#define WMI_BUFFER_FLAG_PROC_INDEX       0x0020
#define WMI_BUFFER_FLAG_COMPRESSED       0x0040
#define WMI_BUFFER_TYPE_GENERIC          0
#define WMI_BUFFER_TYPE_RUNDOWN          1
#define WMI_BUFFER_TYPE_CTX_SWAP         2
#define WMI_BUFFER_TYPE_REFTIME          3
#define WMI_BUFFER_TYPE_HEADER           4
#define WMI_BUFFER_TYPE_BATCHED          5
#define WMI_BUFFER_TYPE_EMPTY_MARKER     6
#define WMI_BUFFER_TYPE_DBG_INFO         7
#define ETW_PROCESSOR_INDEX_MASK         0x07FF
#define MIN_ETW_BUFFER_SIZE              1024
#define MAX_ETW_BUFFER_SIZE              (16 * 1024 * 1024)
#define MAX_ETW_EVENT_SIZE               0xFFFF

/* COMPRESSION_FORMAT_*: low 16 bits of the first buffer's State in a compressed file (1.5). */
#define COMPRESSION_FORMAT_LZNT1       2
#define COMPRESSION_FORMAT_XPRESS      3
#define COMPRESSION_FORMAT_XPRESS_HUFF 4

/* Hook ids (group << 8 | type) of the events etwtop reads and writes (ETL-FORMAT.md 3.12). */
#define WMI_LOG_TYPE_HEADER                            0x0000
#define WMI_LOG_TYPE_HEADER_EXTENSION                  0x0005
#define WMI_LOG_TYPE_RUNDOWN_COMPLETE                  0x0008
#define WMI_LOG_TYPE_GROUP_MASKS_END                   0x0020
#define WMI_LOG_TYPE_PARTITION_INFO                    0x0050
#define WMI_LOG_TYPE_PROCESS_CREATE                    0x0301
#define WMI_LOG_TYPE_PROCESS_DELETE                    0x0302
#define WMI_LOG_TYPE_PROCESS_DC_START                  0x0303
#define WMI_LOG_TYPE_PROCESS_DC_END                    0x0304
#define WMI_LOG_TYPE_PROCESS_LOAD_IMAGE                0x030A
#define WMI_LOG_TYPE_PROCESS_DEFUNCT                   0x0327
#define WMI_LOG_TYPE_THREAD_CREATE                     0x0501
#define WMI_LOG_TYPE_THREAD_DELETE                     0x0502
#define WMI_LOG_TYPE_THREAD_DC_START                   0x0503
#define WMI_LOG_TYPE_THREAD_DC_END                     0x0504
#define WMI_LOG_TYPE_CONTEXT_SWAP                      0x0524
#define WMI_LOG_TYPE_CONTEXT_SWAP_BATCH                0x0525
#define WMI_LOG_TYPE_READY_THREAD                      0x0532
#define WMI_LOG_TYPE_THREAD_SET_NAME                   0x0548
#define WMI_LOG_TYPE_LBR                               0x0C20
#define PERFINFO_LOG_TYPE_SAMPLED_PROFILE              0x0F2E
#define PERFINFO_LOG_TYPE_PMC_INTERRUPT                0x0F2F
#define PERFINFO_LOG_TYPE_PMC_CONFIG                   0x0F30
#define PERFINFO_LOG_TYPE_PMC_CORRUPTION               0x0F31
#define PERFINFO_LOG_TYPE_BATCHED_SAMPLED_PROFILE      0x0F37
#define PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL 0x0F48
#define PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START     0x0F49
#define PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_END       0x0F4A
#define WMI_LOG_TYPE_IMAGE_UNLOAD                      0x1402
#define WMI_LOG_TYPE_IMAGE_DC_START                    0x1403
#define WMI_LOG_TYPE_IMAGE_DC_END                      0x1404
#define WMI_LOG_TYPE_IMAGE_LOAD                        0x140A
#define WMI_LOG_TYPE_IMAGE_KERNEL_BASE                 0x1421
#define WMI_LOG_TYPE_IMAGE_HYPERCALL_PAGE              0x1422
#define WMI_LOG_TYPE_STACKWALK                         0x1820
#define WMI_LOG_TYPE_STACK_KEY_CREATE                  0x1822
#define WMI_LOG_TYPE_STACK_KEY_DELETE                  0x1823
#define WMI_LOG_TYPE_STACK_KEY_RUNDOWN                 0x1824
#define WMI_LOG_TYPE_STACK_KEY_KERNEL                  0x1825
#define WMI_LOG_TYPE_STACK_KEY_USER                    0x1826

/* KernelTraceControl image-identity opcodes (ETL-FORMAT.md 3.10). */
#define KTC_IMAGE_ID     0
#define KTC_DBGID_NONE   32
#define KTC_DBGID_RSDS   36
#define KTC_DBGID_ILRSDS 37
#define KTC_DBGID_PPDB   38
#define KTC_DBGID_DETERM 40
#define KTC_FILE_VERSION 64

/* KernelTraceControl MetaData opcodes: TDH's TRACE_EVENT_INFO, and a provider GUID with an
   EVENT_MAP_INFO, as xperf's merge writes them before the events they describe. */
#define KTC_METADATA_EVENT_INFO     32
#define KTC_METADATA_EVENT_MAP_INFO 33

/* PERFINFO_GROUPMASK: the kernel logger's eight group masks (ETL-FORMAT.md 3.1). */
typedef struct _PERFINFO_GROUPMASK {
        ULONG Masks[8];
} PERFINFO_GROUPMASK, *PPERFINFO_GROUPMASK;
_Static_assert(sizeof(PERFINFO_GROUPMASK) == 32, "PERFINFO_GROUPMASK is 32 bytes");

#define PERF_MASK_INDEX         0xe0000000
#define PERF_MASK_GROUP         (~PERF_MASK_INDEX)
#define PERF_NUM_MASKS          8
#define PERF_GET_MASK_INDEX(gm) (((gm)&PERF_MASK_INDEX) >> 29)
#define PERF_GET_MASK_GROUP(gm) ((gm)&PERF_MASK_GROUP)

#define PERF_REGISTRY         0x00020000
#define PERF_HARD_FAULTS      0x00002000
#define PERF_JOB              0x00080000
#define PERF_PROC_THREAD      0x00000003
#define PERF_LOADER           0x00000004
#define PERF_PROFILE_FLAG     0x01000000
#define PERF_CSWITCH_FLAG     0x00000010
#define PERF_DISPATCHER_FLAG  0x00000800
#define PERF_MEMORY           0x20000001
#define PERF_PROFILE          0x20000002
#define PERF_CONTEXT_SWITCH   0x20000004
#define PERF_FOOTPRINT        0x20000008
#define PERF_DRIVERS          0x20000010
#define PERF_REFSET           0x20000020
#define PERF_POOL             0x20000040
#define PERF_POOLTRACE        0x20000041
#define PERF_DPC              0x20000080
#define PERF_COMPACT_CSWITCH  0x20000100
#define PERF_DISPATCHER       0x20000200
#define PERF_PMC_PROFILE      0x20000400
#define PERF_PROFILING        0x20000402
#define PERF_PROCESS_INSWAP   0x20000800
#define PERF_AFFINITY         0x20001000
#define PERF_PRIORITY         0x20002000
#define PERF_INTERRUPT        0x20004000
#define PERF_VIRTUAL_ALLOC    0x20008000
#define PERF_SPINLOCK         0x20010000
#define PERF_SYNC_OBJECTS     0x20020000
#define PERF_DPC_QUEUE        0x20040000
#define PERF_MEMINFO          0x20080000
#define PERF_CONTMEM_GEN      0x20100000
#define PERF_SPINLOCK_CNTRS   0x20200000
#define PERF_SESSION          0x20400000
#define PERF_PFSECTION        0x20800000
#define PERF_MEMINFO_WS       0x21000000
#define PERF_KERNEL_QUEUE     0x22000000
#define PERF_INTERRUPT_STEER  0x24000000
#define PERF_SHOULD_YIELD     0x28000000
#define PERF_WS               0x30000000
#define PERF_ANTI_STARVATION  0x40000001
#define PERF_PROCESS_FREEZE   0x40000002
#define PERF_PFN_LIST         0x40000004
#define PERF_WS_DETAIL        0x40000008
#define PERF_WS_ENTRY         0x40000010
#define PERF_HEAP             0x40000020
#define PERF_SYSCALL          0x40000040
#define PERF_UMS              0x40000080
#define PERF_BACKTRACE        0x40000100
#define PERF_VULCAN           0x40000200
#define PERF_OBJECTS          0x40000400
#define PERF_EVENTS           0x40000800
#define PERF_FULLTRACE        0x40001000
#define PERF_DFSS             0x40002000
#define PERF_PREFETCH         0x40004000
#define PERF_PROCESSOR_IDLE   0x40008000
#define PERF_CPU_CONFIG       0x40010000
#define PERF_TIMER            0x40020000
#define PERF_CLOCK_INTERRUPT  0x40040000
#define PERF_LOAD_BALANCER    0x40080000
#define PERF_CLOCK_TIMER      0x40100000
#define PERF_IDLE_SELECTION   0x40200000
#define PERF_IPI              0x40400000
#define PERF_IO_TIMER         0x40800000
#define PERF_REG_HIVE         0x41000000
#define PERF_REG_NOTIF        0x42000000
#define PERF_PPM_EXIT_LATENCY 0x44000000
#define PERF_WORKER_THREAD    0x48000000
#define PERF_OPTICAL_IO       0x80000001
#define PERF_OPTICAL_IO_INIT  0x80000002
#define PERF_DLL_INFO         0x80000008
#define PERF_DLL_FLUSH_WS     0x80000010
#define PERF_OB_HANDLE        0x80000040
#define PERF_OB_OBJECT        0x80000080
#define PERF_WAKE_DROP        0x80000200
#define PERF_WAKE_EVENT       0x80000400
#define PERF_DEBUGGER         0x80000800
#define PERF_PROC_ATTACH      0x80001000
#define PERF_WAKE_COUNTER     0x80002000
#define PERF_POWER            0x80008000
#define PERF_SOFT_TRIM        0x80010000
#define PERF_CC               0x80020000
#define PERF_FLT_IO_INIT      0x80080000
#define PERF_FLT_IO           0x80100000
#define PERF_FLT_FASTIO       0x80200000
#define PERF_FLT_IO_FAILURE   0x80400000
#define PERF_HV_PROFILE       0x80800000
#define PERF_WDF_DPC          0x81000000
#define PERF_WDF_INTERRUPT    0x82000000
#define PERF_CACHE_FLUSH      0x84000000
#define PERF_HIBER_RUNDOWN    0xA0000001
#define PERF_SYSCFG_SYSTEM    0xC0000001
#define PERF_SYSCFG_GRAPHICS  0xC0000002
#define PERF_SYSCFG_STORAGE   0xC0000004
#define PERF_SYSCFG_NETWORK   0xC0000008
#define PERF_SYSCFG_SERVICES  0xC0000010
#define PERF_SYSCFG_PNP       0xC0000020
#define PERF_SYSCFG_OPTICAL   0xC0000040
#define PERF_SYSCFG_ALL       0xDFFFFFFF
#define PERF_CLUSTER_OFF      0xE0000001
#define PERF_MEMORY_CONTROL   0xE0000002

/* KPROFILE_SOURCE: the profile sources (ETL-FORMAT.md 3.3). */
typedef enum _KPROFILE_SOURCE {
        ProfileTime = 0,
        ProfileAlignmentFixup = 1,
        ProfileTotalIssues = 2,
        ProfilePipelineDry = 3,
        ProfileLoadInstructions = 4,
        ProfilePipelineFrozen = 5,
        ProfileBranchInstructions = 6,
        ProfileTotalNonissues = 7,
        ProfileDcacheMisses = 8,
        ProfileIcacheMisses = 9,
        ProfileCacheMisses = 10,
        ProfileBranchMispredictions = 11,
        ProfileStoreInstructions = 12,
        ProfileFpInstructions = 13,
        ProfileIntegerInstructions = 14,
        Profile2Issue = 15,
        Profile3Issue = 16,
        Profile4Issue = 17,
        ProfileSpecialInstructions = 18,
        ProfileTotalCycles = 19,
        ProfileIcacheIssues = 20,
        ProfileDcacheAccesses = 21,
        ProfileMemoryBarrierCycles = 22,
        ProfileLoadLinkedIssues = 23,
        ProfileMaximum = 24
} KPROFILE_SOURCE,
        *PKPROFILE_SOURCE;

/* LBR configuration bits as the kernel stores them in an LBR event's Options (3.11). */
#define EVENT_TRACE_LAST_BRANCH_CONFIGURATION_EXCLUDE_KERNEL 0x1
#define EVENT_TRACE_LAST_BRANCH_MAXIMUM_EVENTS               4
#define EVENT_TRACE_LAST_BRANCH_EVENT_OPCODE                 0x20

#endif

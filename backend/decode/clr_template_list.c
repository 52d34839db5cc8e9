/* SPDX-License-Identifier: MIT */
/* clr_template_list.c: owns the table of the .NET runtime's and rundown's templates that
   known_templates.c decodes by (ClrEtwAll.man's <templates> and <events>), grouped by provider
   and Id. */
#include "known_templates.h"

#define R(id, lo, hi, name, fields)                                                                \
        {                                                                                          \
                TMPL_CLR_RUNTIME, id, lo, hi, "DotNETRuntime/" name, fields                        \
        }
#define D(id, lo, hi, name, fields)                                                                \
        {                                                                                          \
                TMPL_CLR_RUNDOWN, id, lo, hi, "DotNETRuntimeRundown/" name, fields                 \
        }

const struct clr_template clr_templates[] = {
        R(40, 0, 0, "WorkerThreadCreate", "WorkerThreadCount:u32 RetiredWorkerThreads:u32"),
        R(50, 0, 0, "ThreadPoolWorkerThreadStart",
          "ActiveWorkerThreadCount:u32 RetiredWorkerThreadCount:u32 ClrInstanceID:u16"),
        R(51, 0, 0, "ThreadPoolWorkerThreadStop",
          "ActiveWorkerThreadCount:u32 RetiredWorkerThreadCount:u32 ClrInstanceID:u16"),
        R(54, 0, 0, "ThreadPoolWorkerThreadAdjustmentSample", "Throughput:f64 ClrInstanceID:u16"),
        R(55, 0, 0, "ThreadPoolWorkerThreadAdjustmentAdjustment",
          "AverageThroughput:f64 NewWorkerThreadCount:u32 Reason:u32@ThreadAdjustmentReasonMap "
          "ClrInstanceID:u16"),
        R(56, 0, 0, "ThreadPoolWorkerThreadAdjustmentStats",
          "Duration:f64 Throughput:f64 ThreadWave:f64 ThroughputWave:f64 "
          "ThroughputErrorEstimate:f64 AverageThroughputErrorEstimate:f64 ThroughputRatio:f64 "
          "Confidence:f64 NewControlSetting:f64 NewThreadWaveMagnitude:u16 ClrInstanceID:u16"),
        R(57, 0, 0, "ThreadPoolWorkerThreadWait",
          "ActiveWorkerThreadCount:u32 RetiredWorkerThreadCount:u32 ClrInstanceID:u16"),
        R(59, 0, 0, "ThreadPoolMinMaxThreads",
          "MinWorkerThreads:u16 MaxWorkerThreads:u16 MinIOCompletionThreads:u16 "
          "MaxIOCompletionThreads:u16 ClrInstanceID:u16"),
        R(60, 0, 0, "ThreadPoolWorkingThreadCount", "Count:u32 ClrInstanceID:u16"),
        R(61, 0, 0, "ThreadPoolEnqueue", "WorkID:ptr ClrInstanceID:u16"),
        R(62, 0, 0, "ThreadPoolDequeue", "WorkID:ptr ClrInstanceID:u16"),
        R(63, 0, 0, "ThreadPoolIOEnqueue",
          "NativeOverlapped:ptr Overlapped:ptr MultiDequeues:bool ClrInstanceID:u16"),
        R(64, 0, 0, "ThreadPoolIODequeue", "NativeOverlapped:ptr Overlapped:ptr ClrInstanceID:u16"),
        R(65, 0, 0, "ThreadPoolIOPack", "NativeOverlapped:ptr Overlapped:ptr ClrInstanceID:u16"),
        R(70, 0, 0, "ThreadCreating", "ID:ptr ClrInstanceID:u16"),
        R(71, 0, 0, "ThreadRunning", "ID:ptr ClrInstanceID:u16"),
        R(73, 0, 0, "TypeLoadStart", "TypeLoadStartID:u32 ClrInstanceID:u16"),
        R(74, 0, 0, "TypeLoadStop",
          "TypeLoadStartID:u32 ClrInstanceID:u16 LoadLevel:u16 TypeID:hex64 TypeName:wstr"),
        R(80, 0, 0, "ExceptionThrown", ""),
        R(80, 1, 1, "ExceptionThrown",
          "ExceptionType:wstr ExceptionMessage:wstr ExceptionEIP:ptr ExceptionHRESULT:hex32 "
          "ExceptionFlags:u16@ExceptionThrownFlagsMap ClrInstanceID:u16"),
        R(81, 0, 0, "Contention", ""),
        R(81, 1, 1, "ContentionStart", "ContentionFlags:u8@ContentionFlagsMap ClrInstanceID:u16"),
        R(81, 2, 2, "ContentionStart",
          "ContentionFlags:u8@ContentionFlagsMap ClrInstanceID:u16 LockID:ptr "
          "AssociatedObjectID:ptr LockOwnerThreadID:u64"),
        R(85, 0, 0, "ThreadCreated",
          "ManagedThreadID:hex64 AppDomainID:hex64 Flags:u32@ThreadFlagsMap ManagedThreadIndex:u32 "
          "OSThreadID:u32 ClrInstanceID:u16"),
        R(86, 0, 0, "ThreadTerminated",
          "ManagedThreadID:hex64 AppDomainID:hex64 ClrInstanceID:u16"),
        R(88, 0, 0, "ILStubGenerated",
          "ClrInstanceID:u16 ModuleID:hex64 StubMethodID:hex64 "
          "StubFlags:u32@ILStubGeneratedFlagsMap ManagedInteropMethodToken:hex32 "
          "ManagedInteropMethodNamespace:wstr ManagedInteropMethodName:wstr "
          "ManagedInteropMethodSignature:wstr NativeMethodSignature:wstr StubMethodSignature:wstr "
          "StubMethodILCode:wstr"),
        R(89, 0, 0, "ILStubCacheHit",
          "ClrInstanceID:u16 ModuleID:hex64 StubMethodID:hex64 ManagedInteropMethodToken:hex32 "
          "ManagedInteropMethodNamespace:wstr ManagedInteropMethodName:wstr "
          "ManagedInteropMethodSignature:wstr"),
        R(90, 0, 0, "LockCreated", "LockID:ptr AssociatedObjectID:ptr ClrInstanceID:u16"),
        R(91, 0, 0, "ContentionStop", "ContentionFlags:u8@ContentionFlagsMap ClrInstanceID:u16"),
        R(91, 1, 1, "ContentionStop",
          "ContentionFlags:u8@ContentionFlagsMap ClrInstanceID:u16 DurationNs:f64"),
        R(145, 0, 0, "MethodJittingStarted",
          "MethodID:hex64 ModuleID:hex64 MethodToken:hex32 MethodILSize:hex32 MethodNamespace:wstr "
          "MethodName:wstr MethodSignature:wstr"),
        R(145, 1, 1, "MethodJittingStarted",
          "MethodID:hex64 ModuleID:hex64 MethodToken:hex32 MethodILSize:hex32 MethodNamespace:wstr "
          "MethodName:wstr MethodSignature:wstr ClrInstanceID:u16"),
        R(146, 0, 0, "MethodJitMemoryAllocatedForCode",
          "MethodID:hex64 ModuleID:hex64 JitHotCodeRequestSize:u64 JitRODataRequestSize:u64 "
          "AllocatedSizeForJitCode:u64 JitAllocFlag:u32 ClrInstanceID:u16"),
        R(151, 0, 0, "DomainModuleLoad",
          "ModuleID:hex64 AssemblyID:hex64 AppDomainID:hex64 ModuleFlags:u32@ModuleFlagsMap "
          "Reserved1:u32 ModuleILPath:wstr ModuleNativePath:wstr"),
        R(151, 1, 1, "DomainModuleLoad",
          "ModuleID:hex64 AssemblyID:hex64 AppDomainID:hex64 ModuleFlags:u32@ModuleFlagsMap "
          "Reserved1:u32 ModuleILPath:wstr ModuleNativePath:wstr ClrInstanceID:u16"),
        R(154, 0, 0, "AssemblyLoad",
          "AssemblyID:hex64 AppDomainID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr"),
        R(154, 1, 1, "AssemblyLoad",
          "AssemblyID:hex64 AppDomainID:hex64 BindingID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr ClrInstanceID:u16"),
        R(155, 0, 0, "AssemblyUnload",
          "AssemblyID:hex64 AppDomainID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr"),
        R(155, 1, 1, "AssemblyUnload",
          "AssemblyID:hex64 AppDomainID:hex64 BindingID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr ClrInstanceID:u16"),
        R(156, 0, 0, "AppDomainLoad",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr"),
        R(156, 1, 1, "AppDomainLoad",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr "
          "AppDomainIndex:u32 ClrInstanceID:u16"),
        R(157, 0, 0, "AppDomainUnload",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr"),
        R(157, 1, 1, "AppDomainUnload",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr "
          "AppDomainIndex:u32 ClrInstanceID:u16"),
        R(159, 0, 0, "R2RGetEntryPoint",
          "MethodID:hex64 MethodNamespace:wstr MethodName:wstr MethodSignature:wstr "
          "EntryPoint:hex64 ClrInstanceID:u16"),
        R(160, 0, 0, "R2RGetEntryPointStart", "MethodID:hex64 ClrInstanceID:u16"),
        R(185, 0, 0, "MethodJitInliningSucceeded",
          "MethodBeingCompiledNamespace:wstr MethodBeingCompiledName:wstr "
          "MethodBeingCompiledNameSignature:wstr InlinerNamespace:wstr InlinerName:wstr "
          "InlinerNameSignature:wstr InlineeNamespace:wstr InlineeName:wstr "
          "InlineeNameSignature:wstr ClrInstanceID:u16"),
        R(186, 0, 0, "MethodJitInliningFailedAnsi",
          "MethodBeingCompiledNamespace:wstr MethodBeingCompiledName:wstr "
          "MethodBeingCompiledNameSignature:wstr InlinerNamespace:wstr InlinerName:wstr "
          "InlinerNameSignature:wstr InlineeNamespace:wstr InlineeName:wstr "
          "InlineeNameSignature:wstr FailAlways:bool FailReason:astr ClrInstanceID:u16"),
        R(187, 0, 0, "RuntimeInformationStart",
          "ClrInstanceID:u16 Sku:u16@RuntimeSkuMap BclMajorVersion:u16 BclMinorVersion:u16 "
          "BclBuildNumber:u16 BclQfeNumber:u16 VMMajorVersion:u16 VMMinorVersion:u16 "
          "VMBuildNumber:u16 VMQfeNumber:u16 StartupFlags:u32@StartupFlagsMap "
          "StartupMode:u8@StartupModeMap CommandLine:wstr ComObjectGuid:guid RuntimeDllPath:wstr"),
        R(188, 0, 0, "MethodJitTailCallSucceeded",
          "MethodBeingCompiledNamespace:wstr MethodBeingCompiledName:wstr "
          "MethodBeingCompiledNameSignature:wstr CallerNamespace:wstr CallerName:wstr "
          "CallerNameSignature:wstr CalleeNamespace:wstr CalleeName:wstr CalleeNameSignature:wstr "
          "TailPrefix:bool TailCallType:u32@TailCallTypeMap ClrInstanceID:u16"),
        R(189, 0, 0, "MethodJitTailCallFailedAnsi",
          "MethodBeingCompiledNamespace:wstr MethodBeingCompiledName:wstr "
          "MethodBeingCompiledNameSignature:wstr CallerNamespace:wstr CallerName:wstr "
          "CallerNameSignature:wstr CalleeNamespace:wstr CalleeName:wstr CalleeNameSignature:wstr "
          "TailPrefix:bool FailReason:astr ClrInstanceID:u16"),
        R(190, 0, 0, "MethodILToNativeMap",
          "MethodID:hex64 ReJITID:hex64 MethodExtent:u8 CountOfMapEntries:u16 "
          "ILOffsets:u32[CountOfMapEntries] NativeOffsets:u32[CountOfMapEntries] "
          "ClrInstanceID:u16"),
        R(190, 1, 1, "MethodILToNativeMap",
          "MethodID:hex64 ReJITID:hex64 MethodExtent:u8 CountOfMapEntries:u16 "
          "ILOffsets:u32[CountOfMapEntries] NativeOffsets:u32[CountOfMapEntries] ClrInstanceID:u16 "
          "ILVersionID:u64"),
        R(191, 0, 0, "MethodJitTailCallFailed",
          "MethodBeingCompiledNamespace:wstr MethodBeingCompiledName:wstr "
          "MethodBeingCompiledNameSignature:wstr CallerNamespace:wstr CallerName:wstr "
          "CallerNameSignature:wstr CalleeNamespace:wstr CalleeName:wstr CalleeNameSignature:wstr "
          "TailPrefix:bool FailReason:wstr ClrInstanceID:u16"),
        R(192, 0, 0, "MethodJitInliningFailed",
          "MethodBeingCompiledNamespace:wstr MethodBeingCompiledName:wstr "
          "MethodBeingCompiledNameSignature:wstr InlinerNamespace:wstr InlinerName:wstr "
          "InlinerNameSignature:wstr InlineeNamespace:wstr InlineeName:wstr "
          "InlineeNameSignature:wstr FailAlways:bool FailReason:wstr ClrInstanceID:u16"),
        R(250, 0, 0, "ExceptionCatchStart",
          "EntryEIP:hex64 MethodID:hex64 MethodName:wstr ClrInstanceID:u16"),
        R(251, 0, 0, "ExceptionCatchStop", ""),
        R(252, 0, 0, "ExceptionFinallyStart",
          "EntryEIP:hex64 MethodID:hex64 MethodName:wstr ClrInstanceID:u16"),
        R(253, 0, 0, "ExceptionFinallyStop", ""),
        R(254, 0, 0, "ExceptionFilterStart",
          "EntryEIP:hex64 MethodID:hex64 MethodName:wstr ClrInstanceID:u16"),
        R(255, 0, 0, "ExceptionFilterStop", ""),
        R(256, 0, 0, "ExceptionThrownStop", ""),
        R(280, 0, 0, "TieredCompilationSettings",
          "ClrInstanceID:u16 Flags:hex32@TieredCompilationSettingsFlagsMap"),
        R(281, 0, 0, "TieredCompilationPause", "ClrInstanceID:u16"),
        R(282, 0, 0, "TieredCompilationResume", "ClrInstanceID:u16 NewMethodCount:u32"),
        R(283, 0, 0, "TieredCompilationBackgroundJitStart",
          "ClrInstanceID:u16 PendingMethodCount:u32"),
        R(284, 0, 0, "TieredCompilationBackgroundJitStop",
          "ClrInstanceID:u16 PendingMethodCount:u32 JittedMethodCount:u32"),
        R(290, 0, 0, "AssemblyLoadStart",
          "ClrInstanceID:u16 AssemblyName:wstr AssemblyPath:wstr RequestingAssembly:wstr "
          "AssemblyLoadContext:wstr RequestingAssemblyLoadContext:wstr"),
        R(291, 0, 0, "AssemblyLoadStop",
          "ClrInstanceID:u16 AssemblyName:wstr AssemblyPath:wstr RequestingAssembly:wstr "
          "AssemblyLoadContext:wstr RequestingAssemblyLoadContext:wstr Success:bool "
          "ResultAssemblyName:wstr ResultAssemblyPath:wstr Cached:bool"),
        R(300, 0, 0, "ExecutionCheckpoint", "ClrInstanceID:u16 Name:wstr Timestamp:i64"),
        D(10, 0, 0, "GCSettingsRundown",
          "HardLimit:u64 LOHThreshold:u64 PhysicalMemoryConfig:u64 Gen0MinBudgetConfig:u64 "
          "Gen0MaxBudgetConfig:u64 HighMemPercentConfig:u32 BitSettings:u32 ClrInstanceID:u16"),
        D(145, 0, 0, "DCStartComplete", ""),
        D(145, 1, 1, "DCStartComplete", "ClrInstanceID:u16"),
        D(146, 0, 0, "DCEndComplete", ""),
        D(146, 1, 1, "DCEndComplete", "ClrInstanceID:u16"),
        D(147, 0, 0, "DCStartInit", ""),
        D(147, 1, 1, "DCStartInit", "ClrInstanceID:u16"),
        D(148, 0, 0, "DCEndInit", ""),
        D(148, 1, 1, "DCEndInit", "ClrInstanceID:u16"),
        D(149, 0, 0, "MethodDCStartILToNativeMap",
          "MethodID:hex64 ReJITID:hex64 MethodExtent:u8 CountOfMapEntries:u16 "
          "ILOffsets:u32[CountOfMapEntries] NativeOffsets:u32[CountOfMapEntries] "
          "ClrInstanceID:u16"),
        D(149, 1, 1, "MethodDCStartILToNativeMap",
          "MethodID:hex64 ReJITID:hex64 MethodExtent:u8 CountOfMapEntries:u16 "
          "ILOffsets:u32[CountOfMapEntries] NativeOffsets:u32[CountOfMapEntries] ClrInstanceID:u16 "
          "ILVersionID:u64"),
        D(150, 0, 0, "MethodDCEndILToNativeMap",
          "MethodID:hex64 ReJITID:hex64 MethodExtent:u8 CountOfMapEntries:u16 "
          "ILOffsets:u32[CountOfMapEntries] NativeOffsets:u32[CountOfMapEntries] "
          "ClrInstanceID:u16"),
        D(150, 1, 1, "MethodDCEndILToNativeMap",
          "MethodID:hex64 ReJITID:hex64 MethodExtent:u8 CountOfMapEntries:u16 "
          "ILOffsets:u32[CountOfMapEntries] NativeOffsets:u32[CountOfMapEntries] ClrInstanceID:u16 "
          "ILVersionID:u64"),
        D(151, 0, 0, "DomainModuleDCStart",
          "ModuleID:hex64 AssemblyID:hex64 AppDomainID:hex64 ModuleFlags:u32@ModuleFlagsMap "
          "Reserved1:u32 ModuleILPath:wstr ModuleNativePath:wstr"),
        D(151, 1, 1, "DomainModuleDCStart",
          "ModuleID:hex64 AssemblyID:hex64 AppDomainID:hex64 ModuleFlags:u32@ModuleFlagsMap "
          "Reserved1:u32 ModuleILPath:wstr ModuleNativePath:wstr ClrInstanceID:u16"),
        D(152, 0, 0, "DomainModuleDCEnd",
          "ModuleID:hex64 AssemblyID:hex64 AppDomainID:hex64 ModuleFlags:u32@ModuleFlagsMap "
          "Reserved1:u32 ModuleILPath:wstr ModuleNativePath:wstr"),
        D(152, 1, 1, "DomainModuleDCEnd",
          "ModuleID:hex64 AssemblyID:hex64 AppDomainID:hex64 ModuleFlags:u32@ModuleFlagsMap "
          "Reserved1:u32 ModuleILPath:wstr ModuleNativePath:wstr ClrInstanceID:u16"),
        D(155, 0, 0, "AssemblyDCStart",
          "AssemblyID:hex64 AppDomainID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr"),
        D(155, 1, 1, "AssemblyDCStart",
          "AssemblyID:hex64 AppDomainID:hex64 BindingID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr ClrInstanceID:u16"),
        D(156, 0, 0, "AssemblyDCEnd",
          "AssemblyID:hex64 AppDomainID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr"),
        D(156, 1, 1, "AssemblyDCEnd",
          "AssemblyID:hex64 AppDomainID:hex64 BindingID:hex64 AssemblyFlags:u32@AssemblyFlagsMap "
          "FullyQualifiedAssemblyName:wstr ClrInstanceID:u16"),
        D(157, 0, 0, "AppDomainDCStart",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr"),
        D(157, 1, 1, "AppDomainDCStart",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr "
          "AppDomainIndex:u32 ClrInstanceID:u16"),
        D(158, 0, 0, "AppDomainDCEnd",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr"),
        D(158, 1, 1, "AppDomainDCEnd",
          "AppDomainID:hex64 AppDomainFlags:u32@AppDomainFlagsMap AppDomainName:wstr "
          "AppDomainIndex:u32 ClrInstanceID:u16"),
        D(159, 0, 0, "ThreadDC",
          "ManagedThreadID:hex64 AppDomainID:hex64 Flags:u32@ThreadFlagsMap ManagedThreadIndex:u32 "
          "OSThreadID:u32 ClrInstanceID:u16"),
        D(160, 0, 0, "ModuleRangeDCStart",
          "ClrInstanceID:u16 ModuleID:hex64 RangeBegin:hex32[1] RangeSize:hex32[1] "
          "RangeType:u8@ModuleRangeTypeMap"),
        D(161, 0, 0, "ModuleRangeDCEnd",
          "ClrInstanceID:u16 ModuleID:hex64 RangeBegin:hex32[1] RangeSize:hex32[1] "
          "RangeType:u8@ModuleRangeTypeMap"),
        D(187, 0, 0, "RuntimeInformationDCStart",
          "ClrInstanceID:u16 Sku:u16@RuntimeSkuMap BclMajorVersion:u16 BclMinorVersion:u16 "
          "BclBuildNumber:u16 BclQfeNumber:u16 VMMajorVersion:u16 VMMinorVersion:u16 "
          "VMBuildNumber:u16 VMQfeNumber:u16 StartupFlags:u32@StartupFlagsMap "
          "StartupMode:u8@StartupModeMap CommandLine:wstr ComObjectGuid:guid RuntimeDllPath:wstr"),
        D(280, 0, 0, "TieredCompilationSettingsDCStart",
          "ClrInstanceID:u16 Flags:hex32@TieredCompilationSettingsFlagsMap"),
        D(300, 0, 0, "ExecutionCheckpointDCEnd", "ClrInstanceID:u16 Name:wstr Timestamp:i64"),
};

const size_t clr_nr_templates = sizeof(clr_templates) / sizeof(clr_templates[0]);

/* The value and bit maps the templates name (ClrEtwAll.man <maps>, texts from its string
   table). */
static const uint32_t app_domain_flags_map_values[] = {0x1, 0x2, 0x4};
static const char *const app_domain_flags_map_texts[] = {"Default", "Executable", "Shared"};
/* (0x10, ReadyToRun, is newer than the manifest: TraceEvent's AssemblyFlags, and the rundown
   of a .NET 8 process (PerfView's gcrundownevents.etl) sets it) */
static const uint32_t assembly_flags_map_values[] = {0x1, 0x2, 0x4, 0x8, 0x10};
static const char *const assembly_flags_map_texts[] = {"DomainNeutral", "Dynamic", "Native",
                                                       "Collectible", "ReadyToRun"};
static const uint32_t module_flags_map_values[] = {0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40};
static const char *const module_flags_map_texts[] = {"DomainNeutral",
                                                     "Native",
                                                     "Dynamic",
                                                     "Manifest",
                                                     "IbcOptimized",
                                                     "ReadyToRunModule",
                                                     "PartialReadyToRunModule"};
static const uint32_t runtime_sku_map_values[] = {0x1, 0x2, 0x4};
static const char *const runtime_sku_map_texts[] = {"DesktopClr", "CoreClr", "Mono"};
static const uint32_t startup_flags_map_values[] = {0x1,     0x2,     0x4,      0x10,     0x100,
                                                    0x1000,  0x2000,  0x4000,   0x10000,  0x20000,
                                                    0x40000, 0x80000, 0x100000, 0x200000, 0x400000};
static const char *const startup_flags_map_texts[] = {"CONCURRENT_GC",
                                                      "LOADER_OPTIMIZATION_SINGLE_DOMAIN",
                                                      "LOADER_OPTIMIZATION_MULTI_DOMAIN",
                                                      "LOADER_SAFEMODE",
                                                      "LOADER_SETPREFERENCE",
                                                      "SERVER_GC",
                                                      "HOARD_GC_VM",
                                                      "SINGLE_VERSION_HOSTING_INTERFACE",
                                                      "LEGACY_IMPERSONATION",
                                                      "DISABLE_COMMITTHREADSTACK",
                                                      "ALWAYSFLOW_IMPERSONATION",
                                                      "TRIM_GC_COMMIT",
                                                      "ETW",
                                                      "SERVER_BUILD",
                                                      "ARM"};
static const uint32_t startup_mode_map_values[] = {0x1, 0x2, 0x4, 0x8, 0x10};
static const char *const startup_mode_map_texts[] = {"ManagedExe", "HostedClr", "IjwDll",
                                                     "ComActivated", "Other"};
static const uint32_t exception_thrown_flags_map_values[] = {0x1, 0x2, 0x4, 0x8, 0x10};
static const char *const exception_thrown_flags_map_texts[] = {
        "HasInnerException", "Nested", "ReThrown", "CorruptedState", "CLSCompliant"};
static const uint32_t contention_flags_map_values[] = {0x0, 0x1};
static const char *const contention_flags_map_texts[] = {"Managed", "Native"};
static const uint32_t thread_flags_map_values[] = {0x1, 0x2, 0x4};
static const char *const thread_flags_map_texts[] = {"GCSpecial", "Finalizer", "ThreadPoolWorker"};
static const uint32_t thread_adjustment_reason_map_values[] = {0x0, 0x1, 0x2, 0x3,
                                                               0x4, 0x5, 0x6, 0x7};
static const char *const thread_adjustment_reason_map_texts[] = {
        "Warmup",      "Initializing", "RandomMove", "ClimbingMove",
        "ChangePoint", "Stabilizing",  "Starvation", "ThreadTimedOut"};
static const uint32_t i_l_stub_generated_flags_map_values[] = {0x1,  0x2,  0x4, 0x8,
                                                               0x10, 0x20, 0x40};
static const char *const i_l_stub_generated_flags_map_texts[] = {
        "ReverseInterop", "ComInterop",      "NGenedStub",   "Delegate",
        "VarArg",         "UnmanagedCallee", "StructMarshal"};
static const uint32_t tail_call_type_map_values[] = {0x0, 0x1, 0x2};
static const char *const tail_call_type_map_texts[] = {"OptimizedTailCall", "RecursiveLoop",
                                                       "HelperAssistedTailCall"};
static const uint32_t tiered_compilation_settings_flags_map_values[] = {0x0, 0x1, 0x2, 0x4, 0x8};
static const char *const tiered_compilation_settings_flags_map_texts[] = {
        "None", "QuickJit", "QuickJitForLoops", "TieredPGO", "ReadyToRun"};
static const uint32_t module_range_type_map_values[] = {0x4};
static const char *const module_range_type_map_texts[] = {"ColdRange"};
const struct clr_map clr_maps[] = {
        KNOWN_MAP("AppDomainFlagsMap", true, app_domain_flags_map),
        KNOWN_MAP("AssemblyFlagsMap", true, assembly_flags_map),
        KNOWN_MAP("ModuleFlagsMap", true, module_flags_map),
        KNOWN_MAP("RuntimeSkuMap", true, runtime_sku_map),
        KNOWN_MAP("StartupFlagsMap", true, startup_flags_map),
        KNOWN_MAP("StartupModeMap", true, startup_mode_map),
        KNOWN_MAP("ExceptionThrownFlagsMap", true, exception_thrown_flags_map),
        KNOWN_MAP("ContentionFlagsMap", false, contention_flags_map),
        KNOWN_MAP("ThreadFlagsMap", true, thread_flags_map),
        KNOWN_MAP("ThreadAdjustmentReasonMap", false, thread_adjustment_reason_map),
        KNOWN_MAP("ILStubGeneratedFlagsMap", true, i_l_stub_generated_flags_map),
        KNOWN_MAP("TailCallTypeMap", false, tail_call_type_map),
        KNOWN_MAP("TieredCompilationSettingsFlagsMap", true, tiered_compilation_settings_flags_map),
        KNOWN_MAP("ModuleRangeTypeMap", true, module_range_type_map),
};
const size_t clr_nr_maps = sizeof(clr_maps) / sizeof(clr_maps[0]);

/* SPDX-License-Identifier: MIT */
/* clr_private.c: owns the layouts of the .NET runtime's private provider
   (Microsoft-Windows-DotNETRuntimePrivate, {763fd754-7086-4dfe-95eb-c01a46faf4ca}): its events
   by Id and version, with the fields of their manifest templates (ClrEtwAll.man), named as
   TraceEvent names them. Where a template ends in an array, the fields before it are decoded;
   GCPerHeapHistory from version 2, whose template is empty, prints its bytes with their length;
   GCGlobalHeapHistory's Reason its GCReason name, as TraceEvent shows it. */
#include <stddef.h>
#include <string.h>

#include "clr_gc.h"
#include "kdecoder_int.h"
#include "kevent_mof.h"

static const GUID clr_private_guid = {
        0x763fd754, 0x7086, 0x4dfe, {0x95, 0xeb, 0xc0, 0x1a, 0x46, 0xfa, 0xf4, 0xca}};

/* The manifest's templates (every field follows the one before it) */
/* BGCAllocWait */
static const struct mof_field bgc_alloc_wait[] = {
        F("Reason", M_U32, 0),
        F("ClrInstanceID", M_U16, NEXT),
};
/* BGCDrainMark */
static const struct mof_field bgc_drain_mark[] = {
        F("Objects", M_U64, 0),
        F("ClrInstanceID", M_U16, NEXT),
};
/* BGCOverflow */
static const struct mof_field bgc_overflow[] = {
        F("Min", M_U64, 0),        F("Max", M_U64, NEXT),           F("Objects", M_U64, NEXT),
        F("IsLarge", M_U32, NEXT), F("ClrInstanceID", M_U16, NEXT),
};
/* BGCRevisit */
static const struct mof_field bgc_revisit[] = {
        F("Pages", M_U64, 0),
        F("Objects", M_U64, NEXT),
        F("IsLarge", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* Binding */
static const struct mof_field binding[] = {
        F("AppDomainID", M_U32, 0),          F("LoadContextID", M_U32, NEXT),
        F("FromLoaderCache", M_U32, NEXT),   F("DynamicLoad", M_U32, NEXT),
        F("AssemblyCodebase", M_WSTR, NEXT), F("AssemblyName", M_WSTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* CCWRefCountChange */
static const struct mof_field ccw_ref_count_change[] = {
        F("HandleID", M_PTR, 0),
        F("ObjectID", M_PTR, NEXT),
        F("COMInterfacePointer", M_PTR, NEXT),
        F("NewRefCount", M_U32, NEXT),
        F("AppDomainID", M_X64, NEXT),
        F("ClassName", M_ASTR, NEXT),
        F("NameSpace", M_ASTR, NEXT),
        F("Operation", M_WSTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* ClrStackWalk (the fields before its array) */
static const struct mof_field clr_stack_walk[] = {
        F("ClrInstanceID", M_U16, 0),
        F("Reserved1", M_U8, NEXT),
        F("Reserved2", M_U8, NEXT),
        F("FrameCount", M_U32, NEXT),
};
/* DynamicTypeUseNoParametersPrivate */
static const struct mof_field dynamic_type_use_no_parameters_private[] = {
        F("ClrInstanceID", M_U16, 0),
};
/* DynamicTypeUsePrivate */
static const struct mof_field dynamic_type_use_private[] = {
        F("TypeName", M_WSTR, 0),
        F("ClrInstanceID", M_U16, NEXT),
};
/* DynamicTypeUsePrivateVariance */
static const struct mof_field dynamic_type_use_private_variance[] = {
        F("TypeName", M_WSTR, 0),
        F("InterfaceTypeName", M_WSTR, NEXT),
        F("VariantInterfaceTypeName", M_WSTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* DynamicTypeUseStringAndIntPrivate */
static const struct mof_field dynamic_type_use_string_and_int_private[] = {
        F("TypeName", M_WSTR, 0),
        F("Int1", M_I32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* DynamicTypeUseTwoParametersPrivate */
static const struct mof_field dynamic_type_use_two_parameters_private[] = {
        F("TypeName", M_WSTR, 0),
        F("SecondTypeName", M_WSTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* EvidenceGenerated */
static const struct mof_field evidence_generated[] = {
        F("Type", M_U32, 0),
        F("AppDomain", M_U32, NEXT),
        F("ILImage", M_WSTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* FailFast */
static const struct mof_field fail_fast[] = {
        F("FailFastUserMessage", M_WSTR, 0), F("FailedEIP", M_PTR, NEXT),
        F("OSExitCode", M_U32, NEXT),        F("ClrExitCode", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* FieldTransparencyCalculation */
static const struct mof_field field_transparency_calculation[] = {
        F("Field", M_WSTR, 0),
        F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* FieldTransparencyCalculationResult */
static const struct mof_field field_transparency_calculation_result[] = {
        F("Field", M_WSTR, 0),           F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),   F("IsCritical", M_U32, NEXT),
        F("IsTreatAsSafe", M_U32, NEXT), F("ClrInstanceID", M_U16, NEXT),
};
/* FusionErrorCode */
static const struct mof_field fusion_error_code[] = {
        F("ClrInstanceID", M_U16, 0),
        F("Category", M_U32, NEXT),
        F("ErrorCode", M_U32, NEXT),
};
/* FusionMessage */
static const struct mof_field fusion_message[] = {
        F("ClrInstanceID", M_U16, 0),
        F("Prepend", M_U32, NEXT),
        F("Message", M_WSTR, NEXT),
};
/* GCDecision */
static const struct mof_field gc_decision[] = {
        F("DoCompact", M_U32, 0),
};
/* GCDecision_V1 */
static const struct mof_field gc_decision_v1[] = {
        F("DoCompact", M_U32, 0),
        F("ClrInstanceID", M_U16, NEXT),
};
/* GCFullNotify */
static const struct mof_field gc_full_notify[] = {
        F("GenNumber", M_U32, 0),
        F("IsAlloc", M_U32, NEXT),
};
/* GCFullNotify_V1 */
static const struct mof_field gc_full_notify_v1[] = {
        F("GenNumber", M_U32, 0),
        F("IsAlloc", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* GCGlobalHeap */
static const struct mof_field gc_global_heap[] = {
        F("FinalYoungestDesired", M_X64, 0),
        F("NumHeaps", M_I32, NEXT),
        F("CondemnedGeneration", M_U32, NEXT),
        F("Gen0ReductionCount", M_U32, NEXT),
        F("Reason", M_U32, NEXT),
        F("GlobalMechanisms", M_U32, NEXT),
};
/* GCGlobalHeap_V1 */
static const struct mof_field gc_global_heap_v1[] = {
        F("FinalYoungestDesired", M_X64, 0),
        F("NumHeaps", M_I32, NEXT),
        F("CondemnedGeneration", M_U32, NEXT),
        F("Gen0ReductionCount", M_U32, NEXT),
        F("Reason", M_U32, NEXT),
        F("GlobalMechanisms", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* GCJoin */
static const struct mof_field gc_join[] = {
        F("Heap", M_U32, 0),
        F("JoinTime", M_U32, NEXT),
        F("JoinType", M_U32, NEXT),
};
/* GCJoin_V1 */
static const struct mof_field gc_join_v1[] = {
        F("Heap", M_U32, 0),
        F("JoinTime", M_U32, NEXT),
        F("JoinType", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* GCNoUserData */
static const struct mof_field gc_no_user_data[] = {
        F("ClrInstanceID", M_U16, 0),
};
/* GCOptimized */
static const struct mof_field gc_optimized[] = {
        F("DesiredAllocation", M_X64, 0),
        F("NewAllocation", M_X64, NEXT),
        F("GenerationNumber", M_U32, NEXT),
};
/* GCOptimized_V1 */
static const struct mof_field gc_optimized_v1[] = {
        F("DesiredAllocation", M_X64, 0),
        F("NewAllocation", M_X64, NEXT),
        F("GenerationNumber", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* GCPerHeapHistory_V1 */
static const struct mof_field gc_per_heap_history_v1[] = {
        F("ClrInstanceID", M_U16, 0),
};
/* GCSettings */
static const struct mof_field gc_settings[] = {
        F("SegmentSize", M_U64, 0),
        F("LargeObjectSegmentSize", M_U64, NEXT),
        F("ServerGC", M_U32, NEXT),
};
/* GCSettings_V1 */
static const struct mof_field gc_settings_v1[] = {
        F("SegmentSize", M_U64, 0),
        F("LargeObjectSegmentSize", M_U64, NEXT),
        F("ServerGC", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* LoaderHeapPrivate */
static const struct mof_field loader_heap_private[] = {
        F("LoaderHeapPtr", M_PTR, 0),  F("MemoryAddress", M_PTR, NEXT),
        F("RequestSize", M_U32, NEXT), F("Unused1", M_U32, NEXT),
        F("Unused2", M_X64, NEXT),     F("ClrInstanceID", M_U16, NEXT),
};
/* MethodTransparencyCalculation */
static const struct mof_field method_transparency_calculation[] = {
        F("Method", M_WSTR, 0),
        F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* MethodTransparencyCalculationResult */
static const struct mof_field method_transparency_calculation_result[] = {
        F("Method", M_WSTR, 0),          F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),   F("IsCritical", M_U32, NEXT),
        F("IsTreatAsSafe", M_U32, NEXT), F("ClrInstanceID", M_U16, NEXT),
};
/* ModuleRangePrivate (the fields before its array) */
static const struct mof_field module_range_private[] = {
        F("ClrInstanceID", M_U16, 0),
        F("ModuleID", M_X64, NEXT),
};
/* ModuleTransparencyCalculation */
static const struct mof_field module_transparency_calculation[] = {
        F("Module", M_WSTR, 0),
        F("AppDomainID", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* ModuleTransparencyCalculationResult */
static const struct mof_field module_transparency_calculation_result[] = {
        F("Module", M_WSTR, 0),
        F("AppDomainID", M_U32, NEXT),
        F("IsAllCritical", M_U32, NEXT),
        F("IsAllTransparent", M_U32, NEXT),
        F("IsTreatAsSafe", M_U32, NEXT),
        F("IsOpportunisticallyCritical", M_U32, NEXT),
        F("SecurityRuleSet", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* MulticoreJitMethodCodeReturnedPrivate */
static const struct mof_field multicore_jit_method_code_returned_private[] = {
        F("ClrInstanceID", M_U16, 0),
        F("ModuleID", M_U64, NEXT),
        F("MethodID", M_U64, NEXT),
};
/* MulticoreJitPrivate */
static const struct mof_field multicore_jit_private[] = {
        F("ClrInstanceID", M_U16, 0), F("String1", M_WSTR, NEXT), F("String2", M_WSTR, NEXT),
        F("Int1", M_I32, NEXT),       F("Int2", M_I32, NEXT),     F("Int3", M_I32, NEXT),
};
/* NgenBindEvent */
static const struct mof_field ngen_bind_event[] = {
        F("ClrInstanceID", M_U16, 0),
        F("BindingID", M_U64, NEXT),
        F("ReasonCode", M_U32, NEXT),
        F("AssemblyName", M_WSTR, NEXT),
};
/* PinPlugAtGCTime */
static const struct mof_field pin_plug_at_gc_time[] = {
        F("PlugStart", M_PTR, 0),
        F("PlugEnd", M_PTR, NEXT),
        F("GapBeforeSize", M_PTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* PrvDestroyGCHandle */
static const struct mof_field prv_destroy_gc_handle[] = {
        F("HandleID", M_PTR, 0),
        F("ClrInstanceID", M_U16, NEXT),
};
/* PrvFinalizeObject */
static const struct mof_field prv_finalize_object[] = {
        F("TypeID", M_PTR, 0),
        F("ObjectID", M_PTR, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
        F("TypeName", M_WSTR, NEXT),
};
/* PrvGCMark */
static const struct mof_field prv_gc_mark[] = {
        F("HeapNum", M_U32, 0),
};
/* PrvGCMark_V1 */
static const struct mof_field prv_gc_mark_v1[] = {
        F("HeapNum", M_U32, 0),
        F("ClrInstanceID", M_U16, NEXT),
};
/* PrvSetGCHandle */
static const struct mof_field prv_set_gc_handle[] = {
        F("HandleID", M_PTR, 0),       F("ObjectID", M_PTR, NEXT),
        F("Kind", M_U32, NEXT),        F("Generation", M_U32, NEXT),
        F("AppDomainID", M_X64, NEXT), F("ClrInstanceID", M_U16, NEXT),
};
/* Startup_V1 */
static const struct mof_field startup_v1[] = {
        F("ClrInstanceID", M_U16, 0),
};
/* TokenTransparencyCalculation */
static const struct mof_field token_transparency_calculation[] = {
        F("Token", M_U32, 0),
        F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* TokenTransparencyCalculationResult */
static const struct mof_field token_transparency_calculation_result[] = {
        F("Token", M_U32, 0),
        F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),
        F("IsCritical", M_U32, NEXT),
        F("IsTreatAsSafe", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* TypeTransparencyCalculation */
static const struct mof_field type_transparency_calculation[] = {
        F("Type", M_WSTR, 0),
        F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};
/* TypeTransparencyCalculationResult */
static const struct mof_field type_transparency_calculation_result[] = {
        F("Type", M_WSTR, 0),
        F("Module", M_WSTR, NEXT),
        F("AppDomainID", M_U32, NEXT),
        F("IsAllCritical", M_U32, NEXT),
        F("IsAllTransparent", M_U32, NEXT),
        F("IsCritical", M_U32, NEXT),
        F("IsTreatAsSafe", M_U32, NEXT),
        F("ClrInstanceID", M_U16, NEXT),
};

struct clr_private_event {
        uint16_t id;
        uint8_t min_version, max_version;
        const char *name;               /* "DotNETRuntimePrivate/Event" */
        const struct mof_field *fields; /* NULL: named only */
        uint8_t nr_fields;
};

#define P(id, lo, hi, name, f)                                                                     \
        {                                                                                          \
                id, lo, hi, "DotNETRuntimePrivate/" name, f, NF(f)                                 \
        }
#define P0(id, lo, hi, name)                                                                       \
        {                                                                                          \
                id, lo, hi, "DotNETRuntimePrivate/" name, NULL, 0                                  \
        }

/* By Id, then version (a version past the last known reads as the last: fields are appended). */
static const struct clr_private_event clr_private_events[] = {
        P(1, 0, 0, "GCDecision", gc_decision),
        P(1, 1, 255, "GCDecision", gc_decision_v1),
        P(2, 0, 0, "GCSettings", gc_settings),
        P(2, 1, 255, "GCSettings", gc_settings_v1),
        P(3, 0, 0, "GCOptimized", gc_optimized),
        P(3, 1, 255, "GCOptimized", gc_optimized_v1),
        P(4, 1, 1, "GCPerHeapHistory", gc_per_heap_history_v1),
        P0(4, 2, 255, "GCPerHeapHistory"),
        P(5, 0, 0, "GCGlobalHeapHistory", gc_global_heap),
        P(5, 1, 255, "GCGlobalHeapHistory", gc_global_heap_v1),
        P(6, 0, 0, "GCJoin", gc_join),
        P(6, 1, 255, "GCJoin", gc_join_v1),
        P(7, 0, 0, "GCMarkStackRoots", prv_gc_mark),
        P(7, 1, 255, "GCMarkStackRoots", prv_gc_mark_v1),
        P(8, 0, 0, "GCMarkFinalizeQueueRoots", prv_gc_mark),
        P(8, 1, 255, "GCMarkFinalizeQueueRoots", prv_gc_mark_v1),
        P(9, 0, 0, "GCMarkHandles", prv_gc_mark),
        P(9, 1, 255, "GCMarkHandles", prv_gc_mark_v1),
        P(10, 0, 0, "GCMarkCards", prv_gc_mark),
        P(10, 1, 255, "GCMarkCards", prv_gc_mark_v1),
        P(11, 0, 255, "GCBGCStart", gc_no_user_data),
        P(12, 0, 255, "GCBGC1stNonCondStop", gc_no_user_data),
        P(13, 0, 255, "GCBGC1stConStop", gc_no_user_data),
        P(14, 0, 255, "GCBGC2ndNonConStart", gc_no_user_data),
        P(15, 0, 255, "GCBGC2ndNonConStop", gc_no_user_data),
        P(16, 0, 255, "GCBGC2ndConStart", gc_no_user_data),
        P(17, 0, 255, "GCBGC2ndConStop", gc_no_user_data),
        P(18, 0, 255, "GCBGCPlanStop", gc_no_user_data),
        P(19, 0, 255, "GCBGCSweepStop", gc_no_user_data),
        P(20, 0, 255, "GCBGCDrainMark", bgc_drain_mark),
        P(21, 0, 255, "GCBGCRevisit", bgc_revisit),
        P(22, 0, 255, "GCBGCOverflow", bgc_overflow),
        P(23, 0, 255, "GCBGCAllocWaitStart", bgc_alloc_wait),
        P(24, 0, 255, "GCBGCAllocWaitStop", bgc_alloc_wait),
        P(25, 0, 0, "GCFullNotify", gc_full_notify),
        P(25, 1, 255, "GCFullNotify", gc_full_notify_v1),
        P0(80, 0, 0, "StartupEEStartupStart"),
        P(80, 1, 255, "StartupEEStartupStart", startup_v1),
        P0(81, 0, 0, "StartupEEStartupStop"),
        P(81, 1, 255, "StartupEEStartupStop", startup_v1),
        P0(82, 0, 0, "StartupEEConfigSetupStart"),
        P(82, 1, 255, "StartupEEConfigSetupStart", startup_v1),
        P0(83, 0, 0, "StartupEEConfigSetupStop"),
        P(83, 1, 255, "StartupEEConfigSetupStop", startup_v1),
        P0(84, 0, 0, "StartupLoadSystemBasesStart"),
        P(84, 1, 255, "StartupLoadSystemBasesStart", startup_v1),
        P0(85, 0, 0, "StartupLoadSystemBasesStop"),
        P(85, 1, 255, "StartupLoadSystemBasesStop", startup_v1),
        P0(86, 0, 0, "StartupExecExeStart"),
        P(86, 1, 255, "StartupExecExeStart", startup_v1),
        P0(87, 0, 0, "StartupExecExeStop"),
        P(87, 1, 255, "StartupExecExeStop", startup_v1),
        P0(88, 0, 0, "StartupMainStart"),
        P(88, 1, 255, "StartupMainStart", startup_v1),
        P0(89, 0, 0, "StartupMainStop"),
        P(89, 1, 255, "StartupMainStop", startup_v1),
        P0(90, 0, 0, "StartupApplyPolicyStart"),
        P(90, 1, 255, "StartupApplyPolicyStart", startup_v1),
        P0(91, 0, 0, "StartupApplyPolicyStop"),
        P(91, 1, 255, "StartupApplyPolicyStop", startup_v1),
        P0(92, 0, 0, "StartupLdLibShFolderStart"),
        P(92, 1, 255, "StartupLdLibShFolderStart", startup_v1),
        P0(93, 0, 0, "StartupLdLibShFolderStop"),
        P(93, 1, 255, "StartupLdLibShFolderStop", startup_v1),
        P0(94, 0, 0, "StartupPrestubWorkerStart"),
        P(94, 1, 255, "StartupPrestubWorkerStart", startup_v1),
        P0(95, 0, 0, "StartupPrestubWorkerStop"),
        P(95, 1, 255, "StartupPrestubWorkerStop", startup_v1),
        P0(96, 0, 0, "StartupGetInstallationStart"),
        P(96, 1, 255, "StartupGetInstallationStart", startup_v1),
        P0(97, 0, 0, "StartupGetInstallationStop"),
        P(97, 1, 255, "StartupGetInstallationStop", startup_v1),
        P0(98, 0, 0, "StartupOpenHModuleStart"),
        P(98, 1, 255, "StartupOpenHModuleStart", startup_v1),
        P0(99, 0, 0, "StartupOpenHModuleStop"),
        P(99, 1, 255, "StartupOpenHModuleStop", startup_v1),
        P0(100, 0, 0, "StartupExplicitBindStart"),
        P(100, 1, 255, "StartupExplicitBindStart", startup_v1),
        P0(101, 0, 0, "StartupExplicitBindStop"),
        P(101, 1, 255, "StartupExplicitBindStop", startup_v1),
        P0(102, 0, 0, "StartupParseXmlStart"),
        P(102, 1, 255, "StartupParseXmlStart", startup_v1),
        P0(103, 0, 0, "StartupParseXmlStop"),
        P(103, 1, 255, "StartupParseXmlStop", startup_v1),
        P0(104, 0, 0, "StartupInitDefaultDomainStart"),
        P(104, 1, 255, "StartupInitDefaultDomainStart", startup_v1),
        P0(105, 0, 0, "StartupInitDefaultDomainStop"),
        P(105, 1, 255, "StartupInitDefaultDomainStop", startup_v1),
        P0(106, 0, 0, "StartupInitSecurityStart"),
        P(106, 1, 255, "StartupInitSecurityStart", startup_v1),
        P0(107, 0, 0, "StartupInitSecurityStop"),
        P(107, 1, 255, "StartupInitSecurityStop", startup_v1),
        P0(108, 0, 0, "StartupAllowBindingRedirsStart"),
        P(108, 1, 255, "StartupAllowBindingRedirsStart", startup_v1),
        P0(109, 0, 0, "StartupAllowBindingRedirsStop"),
        P(109, 1, 255, "StartupAllowBindingRedirsStop", startup_v1),
        P0(110, 0, 0, "StartupEEConfigSyncStart"),
        P(110, 1, 255, "StartupEEConfigSyncStart", startup_v1),
        P0(111, 0, 0, "StartupEEConfigSyncStop"),
        P(111, 1, 255, "StartupEEConfigSyncStop", startup_v1),
        P0(112, 0, 0, "StartupBindingStart"),
        P(112, 1, 255, "StartupBindingStart", startup_v1),
        P0(113, 0, 0, "StartupBindingStop"),
        P(113, 1, 255, "StartupBindingStop", startup_v1),
        P0(114, 0, 0, "StartupLoaderCatchCallStart"),
        P(114, 1, 255, "StartupLoaderCatchCallStart", startup_v1),
        P0(115, 0, 0, "StartupLoaderCatchCallStop"),
        P(115, 1, 255, "StartupLoaderCatchCallStop", startup_v1),
        P0(116, 0, 0, "StartupFusionInitStart"),
        P(116, 1, 255, "StartupFusionInitStart", startup_v1),
        P0(117, 0, 0, "StartupFusionInitStop"),
        P(117, 1, 255, "StartupFusionInitStop", startup_v1),
        P0(118, 0, 0, "StartupFusionAppCtxStart"),
        P(118, 1, 255, "StartupFusionAppCtxStart", startup_v1),
        P0(119, 0, 0, "StartupFusionAppCtxStop"),
        P(119, 1, 255, "StartupFusionAppCtxStop", startup_v1),
        P0(120, 0, 0, "StartupFusion2EEStart"),
        P(120, 1, 255, "StartupFusion2EEStart", startup_v1),
        P0(121, 0, 0, "StartupFusion2EEStop"),
        P(121, 1, 255, "StartupFusion2EEStop", startup_v1),
        P0(122, 0, 0, "StartupSecurityCatchCallStart"),
        P(122, 1, 255, "StartupSecurityCatchCallStart", startup_v1),
        P0(123, 0, 0, "StartupSecurityCatchCallStop"),
        P(123, 1, 255, "StartupSecurityCatchCallStop", startup_v1),
        P(151, 0, 255, "ClrStackWalk", clr_stack_walk),
        P(158, 0, 255, "ClrPerfTrackModuleRangeLoad", module_range_private),
        P(159, 0, 255, "BindingPolicyPhaseStart", binding),
        P(160, 0, 255, "BindingPolicyPhaseStop", binding),
        P(161, 0, 255, "BindingNgenPhaseStart", binding),
        P(162, 0, 255, "BindingNgenPhaseStop", binding),
        P(163, 0, 255, "BindingLoopupAndProbingPhaseStart", binding),
        P(164, 0, 255, "BindingLookupAndProbingPhaseStop", binding),
        P(165, 0, 255, "BindingLoaderPhaseStart", binding),
        P(166, 0, 255, "BindingLoaderPhaseStop", binding),
        P(167, 0, 255, "BindingPhaseStart", binding),
        P(168, 0, 255, "BindingPhaseStop", binding),
        P(169, 0, 255, "BindingDownloadPhaseStart", binding),
        P(170, 0, 255, "BindingDownloadPhaseStop", binding),
        P(171, 0, 255, "BindingLoaderAssemblyInitPhaseStart", binding),
        P(172, 0, 255, "BindingLoaderAssemblyInitPhaseStop", binding),
        P(173, 0, 255, "BindingLoaderMappingPhaseStart", binding),
        P(174, 0, 255, "BindingLoaderMappingPhaseStop", binding),
        P(175, 0, 255, "BindingLoaderDeliverEventPhaseStart", binding),
        P(176, 0, 255, "BindingLoaderDeliverEventsPhaseStop", binding),
        P(177, 0, 255, "EvidenceGenerationEvidenceGenerated", evidence_generated),
        P(178, 0, 255, "TransparencyModuleTransparencyComputationStart",
          module_transparency_calculation),
        P(179, 0, 255, "TransparencyModuleTransparencyComputationStop",
          module_transparency_calculation_result),
        P(180, 0, 255, "TransparencyTypeTransparencyComputationStart",
          type_transparency_calculation),
        P(181, 0, 255, "TransparencyTypeTransparencyComputationStop",
          type_transparency_calculation_result),
        P(182, 0, 255, "TransparencyMethodTransparencyComputationStart",
          method_transparency_calculation),
        P(183, 0, 255, "TransparencyMethodTransparencyComputationStop",
          method_transparency_calculation_result),
        P(184, 0, 255, "TransparencyFieldTransparencyComputationStart",
          field_transparency_calculation),
        P(185, 0, 255, "TransparencyFieldTransparencyComputationStop",
          field_transparency_calculation_result),
        P(186, 0, 255, "TransparencyTokenTransparencyComputationStart",
          token_transparency_calculation),
        P(187, 0, 255, "TransparencyTokenTransparencyComputationStop",
          token_transparency_calculation_result),
        P(188, 0, 255, "NgenBinderNgenBind", ngen_bind_event),
        P(191, 0, 255, "FailFast", fail_fast),
        P(192, 0, 255, "GCFinalizeObject", prv_finalize_object),
        P(193, 0, 255, "GCCCWRefCountChangeAnsi", ccw_ref_count_change),
        P(194, 0, 255, "GCSetGCHandle", prv_set_gc_handle),
        P(195, 0, 255, "GCDestroyGCHandle", prv_destroy_gc_handle),
        P(196, 0, 255, "BindingFusionMessage", fusion_message),
        P(197, 0, 255, "FusionErrorCodeEvent", fusion_error_code),
        P(199, 0, 255, "GCPinPlugAtGCTime", pin_plug_at_gc_time),
        P(201, 0, 255, "ClrMulticoreJitCommon", multicore_jit_private),
        P(202, 0, 255, "ClrMulticoreJitMethodCodeReturned",
          multicore_jit_method_code_returned_private),
        P(310, 0, 255, "LoaderHeapAllocRequest", loader_heap_private),
        P(400, 0, 255, "ClrDynamicTypeUsageIInspectableRuntimeClassName", dynamic_type_use_private),
        P(401, 0, 255, "ClrDynamicTypeUsageWinRTUnbox", dynamic_type_use_two_parameters_private),
        P(402, 0, 255, "ClrDynamicTypeUsageCreateRCW", dynamic_type_use_private),
        P(403, 0, 255, "ClrDynamicTypeUsageRCWVariance", dynamic_type_use_private_variance),
        P(404, 0, 255, "ClrDynamicTypeUsageRCWIEnumerableCasting",
          dynamic_type_use_two_parameters_private),
        P(405, 0, 255, "ClrDynamicTypeUsageCreateCCW", dynamic_type_use_private),
        P(406, 0, 255, "ClrDynamicTypeUsageCCWVariance", dynamic_type_use_private_variance),
        P(407, 0, 255, "ClrDynamicTypeUsageObjectVariantMarshallingToNative",
          dynamic_type_use_string_and_int_private),
        P(408, 0, 255, "ClrDynamicTypeUsageGetTypeFromGUID",
          dynamic_type_use_two_parameters_private),
        P(409, 0, 255, "ClrDynamicTypeUsageGetTypeFromProgID",
          dynamic_type_use_two_parameters_private),
        P(410, 0, 255, "ClrDynamicTypeUsageConvertToCallbackEtw",
          dynamic_type_use_two_parameters_private),
        P(411, 0, 255, "ClrDynamicTypeUsageBeginCreateManagedReference",
          dynamic_type_use_no_parameters_private),
        P(412, 0, 255, "ClrDynamicTypeUsageEndCreateManagedReference",
          dynamic_type_use_no_parameters_private),
        P(413, 0, 255, "ClrDynamicTypeUsageObjectVariantMarshallingToManaged",
          dynamic_type_use_string_and_int_private),
};

/* The event of this Id and version, or NULL. */
static const struct clr_private_event *clr_private_find(uint16_t id, uint8_t version)
{
        size_t lo = 0, hi = sizeof(clr_private_events) / sizeof(clr_private_events[0]);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (clr_private_events[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo; i < sizeof(clr_private_events) / sizeof(clr_private_events[0]) &&
                            clr_private_events[i].id == id;
             i++)
                if (version >= clr_private_events[i].min_version &&
                    version <= clr_private_events[i].max_version)
                        return &clr_private_events[i];
        return NULL;
}

int clr_private_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                       const GUID *g, uint16_t id)
{
        if (memcmp(g, &clr_private_guid, sizeof(*g)) != 0) /* the runtime's: its GC events */
                return clr_gc_is_runtime(g) ? clr_gc_decode(d, ev, pl, id) : KEV_NO_LAYOUT;

        const struct clr_private_event *e = clr_private_find(id, ev->version);

        if (!e)
                return KEV_NO_LAYOUT;
        ev->name = e->name;
        if (id == 4 && ev->version >= 2) /* GCPerHeapHistory: no template */
                return clr_gc_decode_bytes(d, ev, pl);
        if (!e->fields)
                return KEV_NO_LAYOUT;

        int rc = kevent_mof_fields(d, e->name, e->fields, e->nr_fields, ev, pl->p, pl->len,
                                   pl->psize);

        if (rc == 0 && id == 5) /* GCGlobalHeapHistory */
                clr_gc_name_reason(d, ev);
        return rc;
}

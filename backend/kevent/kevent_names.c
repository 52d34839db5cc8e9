/* SPDX-License-Identifier: MIT */
/* kevent_names.c: owns the names of the decoded events' Windows enumerations (KTHREAD_STATE,
   KWAIT_REASON, KPROFILE_SOURCE), as xperf and WPA show them: part of the decoded-event
   interface, so that the model and the screen name what they show without the decoder. */
#include "kevent.h"

const char *kevent_thread_state_name(uint8_t state)
{
        static const char *const names[] = {
                "Initialized",      "Ready",
                "Running",          "Standby",
                "Terminated",       "Waiting",
                "Transition",       "DeferredReady",
                "GateWaitObsolete", "WaitingForProcessInSwap",
        };
        return state < sizeof(names) / sizeof(names[0]) ? names[state] : "Unknown";
}

const char *kevent_wait_reason_name(uint8_t reason)
{
        static const char *const names[] = {
                "Executive",
                "FreePage",
                "PageIn",
                "PoolAllocation",
                "DelayExecution",
                "Suspended",
                "UserRequest",
                "WrExecutive",
                "WrFreePage",
                "WrPageIn",
                "WrPoolAllocation",
                "WrDelayExecution",
                "WrSuspended",
                "WrUserRequest",
                "WrEventPair",
                "WrQueue",
                "WrLpcReceive",
                "WrLpcReply",
                "WrVirtualMemory",
                "WrPageOut",
                "WrRendezvous",
                "WrKeyedEvent",
                "WrTerminated",
                "WrProcessInSwap",
                "WrCpuRateControl",
                "WrCalloutStack",
                "WrKernel",
                "WrResource",
                "WrPushLock",
                "WrMutex",
                "WrQuantumEnd",
                "WrDispatchInt",
                "WrPreempted",
                "WrYieldExecution",
                "WrFastMutex",
                "WrGuardedMutex",
                "WrRundown",
                "WrAlertByThreadId",
                "WrDeferredPreempt",
                "WrPhysicalFault",
                "WrIoRing",
                "WrMdlCache",
                "WrRcu",
        };
        return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "Unknown";
}

const char *kevent_profile_source_name(uint32_t source)
{
        /* KPROFILE_SOURCE (ETL-FORMAT.md 3.3), named as xperf names them. */
        static const char *const names[] = {
                "Timer",
                "AlignmentFixup",
                "TotalIssues",
                "PipelineDry",
                "LoadInstructions",
                "PipelineFrozen",
                "BranchInstructions",
                "TotalNonissues",
                "DcacheMisses",
                "IcacheMisses",
                "CacheMisses",
                "BranchMispredictions",
                "StoreInstructions",
                "FpInstructions",
                "IntegerInstructions",
                "2Issue",
                "3Issue",
                "4Issue",
                "SpecialInstructions",
                "TotalCycles",
                "IcacheIssues",
                "DcacheAccesses",
                "MemoryBarrierCycles",
                "LoadLinkedIssues",
        };
        return source < sizeof(names) / sizeof(names[0]) ? names[source] : NULL;
}

const char *kevent_pmc_source_name(uint32_t source)
{
        static const char *const high[] = {"UnhaltedCoreCycles",
                                           "InstructionRetired",
                                           "UnhaltedReferenceCycles",
                                           "LLCReference",
                                           "LLCMisses",
                                           "BranchInstructionRetired",
                                           "BranchMispredictsRetired",
                                           "LbrInserts",
                                           "InstructionsRetiredFixed",
                                           "UnhaltedCoreCyclesFixed",
                                           "UnhaltedReferenceCyclesFixed",
                                           "TimerFixed"};
        const char *n = kevent_profile_source_name(source);
        if (n)
                return n;
        if (source >= 25 && source < 25 + sizeof(high) / sizeof(high[0]))
                return high[source - 25];
        return NULL;
}

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dump_samples.sh: `etwtop --dump` on every real sample: totals per event type, decoded fields
# against the byte examples of ETL-FORMAT.md, bad input, multi-file merging, PerfView's .etl.zip
# read as it comes.
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES:?}" "${ETWTOP_SAMPLES_UNPACKED:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"

# total FILE -> the "events in all" count of the dump
total() { awk '/events in all/ {print $1}' "$1"; }
# count FILE EVENT -> the totals row of EVENT (summed over versions)
count() { awk -v e="$2" '/^Totals per event type/ {t=1} t && $3 == e {n += $1} END {print n + 0}' "$1"; }

dump() { # name path
        local out="$tmp/$1.txt"
        if ! "$ETWTOP" --dump "$2" >"$out" 2>"$tmp/$1.err"; then
                echo "FAIL: etwtop --dump $2 exited non-zero: $(cat "$tmp/$1.err")" >&2
                nr_fail=$((nr_fail + 1))
        fi
}

s=$ETWTOP_SAMPLES
u=$ETWTOP_SAMPLES_UNPACKED
dump lxcore "$s/etlparser_lxcore_kernel.etl"
dump shutdown "$s/etlparser_ShutdownPerfDiagLogger.etl"
dump powershell "$s/krabsetw_powershell.etl"
dump selfdesc "$s/perfview_SelfDescribingSingleEvent.etl"
dump gc "$u/gcevents/PerfViewData.etl"
dump net "$u/net.4.5.2.x64.etl"

# Record counts of samples/README.md
check "lxcore has 4 events" [ "$(total "$tmp/lxcore.txt")" = 4 ]
check "ShutdownPerfDiagLogger has 17078 events" [ "$(total "$tmp/shutdown.txt")" = 17078 ]
check "powershell has 114 events" [ "$(total "$tmp/powershell.txt")" = 114 ]
check "powershell: 101 CommandLifecycle by its manifest's template" [ "$(count "$tmp/powershell.txt" PowerShell/CommandLifecycle)" = 101 ]
check "powershell: every event named and decoded" bash -c "! grep -q 'EventID(' '$tmp/powershell.txt'"
check "powershell: EngineTrace's fields" grep -q ' 16040  10372 PowerShell/EngineTrace ClassName="RemoteSessionNamedPipeServer" MethodName="StartListening" WorkflowGuid="00000000-0000-0000-0000-000000000000" Message="Listener thread started on Process 16040 in AppDomainName DefaultAppDomain." ' "$tmp/powershell.txt"
check "SelfDescribing has 23 events" [ "$(total "$tmp/selfdesc.txt")" = 23 ]
check "gcevents has 71 events" [ "$(total "$tmp/gc.txt")" = 71 ]
check "net.4.5.2 has 179474 events" [ "$(total "$tmp/net.txt")" = 179474 ]

# Per event type (ETL-FORMAT.md section 4)
check "net: 79528 SampledProfile" [ "$(count "$tmp/net.txt" PerfInfo/SampledProfile)" = 79528 ]
check "net: 252 Stack" [ "$(count "$tmp/net.txt" StackWalk/Stack)" = 252 ]
check "net: 7046 StackKeyUser" [ "$(count "$tmp/net.txt" StackWalk/StackKeyUser)" = 7046 ]
check "net: 2061 StackKeyKernel" [ "$(count "$tmp/net.txt" StackWalk/StackKeyKernel)" = 2061 ]
check "net: 3590 ImageID" [ "$(count "$tmp/net.txt" KernelTraceControl/ImageID)" = 3590 ]
check "net: 3534 DbgID_RSDS" [ "$(count "$tmp/net.txt" KernelTraceControl/DbgID_RSDS)" = 3534 ]
check "net: 35 Image/Load" [ "$(count "$tmp/net.txt" Image/Load)" = 35 ]
check "net: 0 CSwitch" [ "$(count "$tmp/net.txt" Thread/CSwitch)" = 0 ]
# the .NET runtime's method and module events, told apart by Id (not by opcode: 2 other events
# share MethodLoadVerbose's opcode 37, 27 MethodDCEndVerbose's 40)
check "net: 290 MethodLoadVerbose" [ "$(count "$tmp/net.txt" DotNETRuntime/MethodLoadVerbose)" = 290 ]
check "net: 16702 MethodDCEndVerbose" \
        [ "$(count "$tmp/net.txt" DotNETRuntimeRundown/MethodDCEndVerbose)" = 16702 ]
check "gcevents: 2 GCStart (Id 1)" [ "$(count "$tmp/gc.txt" DotNETRuntime/GCStart)" = 2 ]
check "gcevents: 12 GCAllocationTick (Id 10)" [ "$(count "$tmp/gc.txt" DotNETRuntime/GCAllocationTick)" = 12 ]
check "gcevents: 13 GCMarkWithType (Id 202)" [ "$(count "$tmp/gc.txt" DotNETRuntime/GCMarkWithType)" = 13 ]
# the runtime's events outside the GC task by the manifest's templates (the trace carries no
# MetaData): RuntimeInformation's versions, its flags through StartupFlagsMap
check "gcevents: RuntimeInformation's fields" grep -q ' DotNETRuntime/RuntimeInformation ClrInstanceID=8 Sku="CoreClr" BclMajorVersion=8 BclMinorVersion=0 BclBuildNumber=0 BclQfeNumber=0 VMMajorVersion=42 VMMinorVersion=42 VMBuildNumber=42 VMQfeNumber=42424 StartupFlags="CONCURRENT_GC|LOADER_OPTIMIZATION_SINGLE_DOMAIN" ' "$tmp/gc.txt"
# a PerfView recording carries no MetaData: the GC events by the manifest's templates, value maps
# by name as TraceEvent shows them (issue 26)
check "gcevents: GCStart's fields, Reason and Type named" \
        grep -q ' DotNETRuntime/GCStart Count=1 Depth=1 Reason="Induced" Type="NonConcurrentGC" ClrInstanceID=8 ClientSequenceNumber=0$' "$tmp/gc.txt"
check "gcevents: GCSuspendEEBegin's Reason named" \
        grep -q ' DotNETRuntime/GCSuspendEEBegin Reason="SuspendForGC" Count=0 ClrInstanceID=8$' "$tmp/gc.txt"
check "gcevents: GCAllocationTick (version 4) with its AllocationKind named" \
        grep -q ' DotNETRuntime/GCAllocationTick AllocationAmount=0x350e8 AllocationKind="Large" ClrInstanceID=8 AllocationAmount64=0x350e8 TypeID=0x7ffb485e1c08 TypeName="System.String" HeapIndex=0 Address=0x1b0f3c00048 ObjectSize=217328$' "$tmp/gc.txt"
check "gcevents: GCEnd and GCHeapStats' fields" \
        bash -c "grep -q ' DotNETRuntime/GCEnd Count=1 Depth=1 ClrInstanceID=8\$' '$tmp/gc.txt' && grep -q ' DotNETRuntime/GCHeapStats GenerationSize0=0x248 TotalPromotedSize0=0x4bea8 .* GCHandleCount=53 ClrInstanceID=8 GenerationSize4=0x3ff0 TotalPromotedSize4=0x0\$' '$tmp/gc.txt'"
check "gcevents: GCCreateSegment's Type and GCMarkWithType's Type named" \
        bash -c "grep -q 'GCCreateSegment Address=0x1b0f3c00028 Size=0x1ffffd8 Type=\"LargeObjectHeap\"' '$tmp/gc.txt' && grep -q 'GCMarkWithType HeapNum=0 ClrInstanceID=8 Type=\"Older\" Bytes=293544' '$tmp/gc.txt'"
check "gcevents: GCPerHeapHistory (version 3): its fields and each generation's values" \
        grep -q ' DotNETRuntime/GCPerHeapHistory ClrInstanceID=8 FreeListAllocated=0x0 .* CondemnReasons0=5 .* HeapIndex=0 ExtraGen0Commit=0x0 Count=5 SizeBefore="\[0x112d30,0x0,0x0,0x4f9a8,0x3ff0\]" .* NewAllocation="\[0x488d58,0x40000,0x0,0x0,0x0\]"$' "$tmp/gc.txt"
check "gcevents: GCGlobalHeapHistory (version 4): its fields, the Values' bytes with their length" \
        grep -q ' DotNETRuntime/GCGlobalHeapHistory FinalYoungestDesired=0x475fb8 NumHeaps=1 CondemnedGeneration=1 Gen0ReductionCount=0 Reason="Induced" .* Count=8 ValuesLength=32 Values="0x' "$tmp/gc.txt"
# Ids 208 and 209 (issue 26): the runtime writes its C structs, padding included (32 and 16 bytes
# a struct on 64 bits), where the manifest's templates pack them (28 and 14): 36 = 4 + 1 x 32,
# 158 = 14 + 9 x 16
check "gcevents: GCLOHCompact (Id 208): its fields and each heap's values" \
        grep -q ' DotNETRuntime/GCLOHCompact ClrInstanceID=8 Count=1 TimePlan="\[1\]" TimeCompact="\[17\]" TimeRelocate="\[0\]" TotalRefs="\[0x0\]" ZeroRefs="\[0x0\]"$' "$tmp/gc.txt"
check "gcevents: GCFitBucketInfo (Id 209): its fields and each bucket's values" \
        grep -q ' DotNETRuntime/GCFitBucketInfo ClrInstanceID=8 BucketKind=1 TotalSize=310848 Count=9 Index="\[0,1,2,3,4,5,6,7,...(9)\]" Count="\[215,117,106,27,7,1,1,1,...(9)\]" Size="\[0x6720,0xa628,' "$tmp/gc.txt"
check "gcevents: no runtime event left as {GUID}/opN" \
        bash -c "! grep -q '{e13c0d23-ccbc-4e12-931b-d9cc2eee27e4}/op' '$tmp/gc.txt'"
check "gcevents: no GC event left without its fields" \
        bash -c "! grep -E ' DotNETRuntime/GC[A-Za-z]+ version=' '$tmp/gc.txt'"
check "net: 16221 MethodDCEndILToNativeMap" \
        [ "$(count "$tmp/net.txt" DotNETRuntimeRundown/MethodDCEndILToNativeMap)" = 16221 ]
check "net: 27 ModuleDCEnd" [ "$(count "$tmp/net.txt" DotNETRuntimeRundown/ModuleDCEnd)" = 27 ]
check "net: a method's fields" grep -q 'DotNETRuntime/MethodLoadVerbose method_id=0x7f95eb0a230 module_id=0x7f95e933020 start=0x7f95eb10090 size=0x279 .*namespace="System.AppDomain" name="SetupDomain"' "$tmp/net.txt"
check "net: a module's IL path" grep -q 'DotNETRuntime/ModuleLoad module_id=0x7f95e933020 .*il_path="C:\\Windows\\Microsoft.Net\\assembly\\GAC_64\\mscorlib\\.*\\mscorlib.dll"' "$tmp/net.txt"
# replayed, the JIT-compiled code the samples hit is named from those events, as PerfView does
"$ETWTOP" --replay "$u/net.4.5.2.x64.etl" -b --top 5 >"$tmp/net-replay.txt" 2>"$tmp/net-replay.err"
check "net replay: exits 0" [ $? = 0 ]
check "net replay: the file's 179474 events (stacks rebuilt from keys not counted again)" \
        grep -q ' 179474 events, 0 lost$' "$tmp/net-replay.txt"
check "net replay: the hottest .NET method named" \
        grep -Eq '^ +2\.33% +2\.33% +1856 +1856 +mscorlib\.dll +System\.DateTime\.GetDatePart\(int32\)$' "$tmp/net-replay.txt"
check "net replay: the program's Main named" bash -c "'$ETWTOP' --replay '$u/net.4.5.2.x64.etl' -b --top 100 2>/dev/null | grep -Eq 'Test\.x64\.exe +Test\.Program\.Main\(class System\.String\[\]\)\$'"
check "net replay: mscorlib's methods from the CLR events" \
        grep -Eq 'mscorlib\.dll +[0-9]+ from the recording.s CLR method events' "$tmp/net-replay.txt"
check "shutdown: 72 Image/Load (hook 0x030A)" [ "$(count "$tmp/shutdown.txt" Image/Load)" = 72 ]
check "shutdown: 6745 Image/DCStart" [ "$(count "$tmp/shutdown.txt" Image/DCStart)" = 6745 ]
check "shutdown: 4791 Image/Unload" [ "$(count "$tmp/shutdown.txt" Image/Unload)" = 4791 ]
check "shutdown: 1175 Thread/DCStart" [ "$(count "$tmp/shutdown.txt" Thread/DCStart)" = 1175 ]
check "shutdown: 5 Process/Defunct" [ "$(count "$tmp/shutdown.txt" Process/Defunct)" = 5 ]

# Decoded fields against the byte examples of ETL-FORMAT.md 3.2 and 3.4: the SampledProfile of
# TID 3780 at IP 0xffffffffffd03003 and the stack that follows it with the same event time.
check "net: SampledProfile 3780 at 0xffffffffffd03003" \
        grep -q -E ' 3780 PerfInfo/SampledProfile ip=0xffffffffffd03003 count=1 priority=11' "$tmp/net.txt"
line=$(grep -n -m1 ' 3780 PerfInfo/SampledProfile ip=0xffffffffffd03003' "$tmp/net.txt" | cut -d: -f1)
check "net: its stack follows with frame 0 = the IP" \
        bash -c "sed -n '$((line + 1)),$((line + 8))p' '$tmp/net.txt' | grep -q 'StackWalk/Stack .*frames=[0-9]*: 0xffffffffffd03003'"
check "net: header names the Relogger" grep -q '^Logger name: *Relogger' "$tmp/net.txt"
check "net: no damaged buffer" grep -q '^Damaged buffers: *0$' "$tmp/net.txt"
check "net: image loads carry NT paths" grep -q 'Image/DCStart .*file="\\' "$tmp/net.txt"
check "shutdown: process names decoded" grep -q 'Process/DCStart .*image="' "$tmp/shutdown.txt"
# Process_Terminate_TypeGroup1 (opcode 11, Windows 8 on): the ended process from its payload
check "shutdown: Process/Terminate with its process (60, none left as op11)" bash -c \
        "[ \$(grep -c ' Process/Terminate ProcessId=[0-9]*\$' '$tmp/shutdown.txt') = 60 ] && ! grep -q 'Process/op11' '$tmp/shutdown.txt'"
check "lxcore: TraceLogging events named" grep -q " 5876   2868 Microsoft.Windows.Subsystem.LxCore/BreakPoint " "$tmp/lxcore.txt"
# ... and decoded by the schema each record carries (its EVENT_SCHEMA_TL item): strings, a GUID,
# integers of each sign, as TraceEvent shows them
check "lxcore: TraceLogging fields decoded" grep -q '\.LxCore/BreakPoint ErrorLevel=2 instanceId="{00000000-0000-0000-0000-000000000000}" LxPid=-1 LxTid=-1 LxNs=0 ExecutablePath="" Function="LxpDrvFsTypeMount" Line=10528 Message="Failed to open volume C:\\WINDOWS\\system32\\lxss\\tools, result -2' "$tmp/lxcore.txt"
check "SelfDescribing: TraceLogging fields decoded" grep -q ' MySource/TestEvent b="Hello" c="World!"$' "$tmp/selfdesc.txt"
# What the dump says is what the payload holds, with one name per event type, quoted values
# escaped, and samples in the process the replay gives them
check "lxcore: the TraceLogging name in the totals too" \
        grep -Eq '^ +2 +206  Microsoft\.Windows\.Subsystem\.LxCore/BreakPoint \(v0\)$' "$tmp/lxcore.txt"
check "SelfDescribing: the TraceLogging name in the totals too" \
        grep -Eq '^ +1 +26  MySource/TestEvent \(v0\)$' "$tmp/selfdesc.txt"
check "no TraceLogging event left as GUID/op in the totals" \
        bash -c "! grep -h '^ *[0-9]* *[0-9]*  {[0-9a-f-]*}/op' '$tmp/lxcore.txt' '$tmp/selfdesc.txt'"
check "net: a command line's quotes escaped" \
        grep -q ' image="dwm.exe" cmdline="\\"dwm.exe\\""$' "$tmp/net.txt"
check "net: DbgID_None says its base and process only (its 12 bytes)" \
        grep -q ' KernelTraceControl/DbgID_None base=0x7f9ccc50000 pid=724$' "$tmp/net.txt"
check "net: no DbgID_None with a GUID" bash -c "! grep -q 'DbgID_None .*guid=' '$tmp/net.txt'"
check "net: the first sample of thread 3780 in process 3988, as its stack and the replay say" \
        grep -q '^  0\.029955600   3   3988   3780 PerfInfo/SampledProfile ip=0xffffffffffd03003 ' "$tmp/net.txt"
check "net: no sample left without its process" \
        bash -c "! awk '\$5 == \"PerfInfo/SampledProfile\" && \$3 == -1' '$tmp/net.txt' | grep -q ."
check "lxcore: header fields" grep -q '^OS version: *10.0 build 19041 (log file layout 1.5)' "$tmp/lxcore.txt"
check "every dump line's time is non-negative and ordered" \
        bash -c "awk '/^ *time cpu/ {t=1; next} /^\$/ {t=0} t && \$1+0 < last {bad=1} t {last=\$1+0} END {exit bad}' '$tmp/shutdown.txt'"

# The fixture written by etwtop's writer: the events this machine cannot record (LBR, PMC,
# CSwitch with counters, ReadyThread, a 32-bit record), decoded end to end
if [ -n "${ETL_FIXTURE:-}" ]; then
        "$ETL_FIXTURE" "$tmp/fixture.etl"
        dump fixture "$tmp/fixture.etl"
        f=$tmp/fixture.txt
        check "fixture: events in all" [ "$(total "$f")" = 821 ]
        check "fixture: events lost to a ring" grep -q ' etwtop/EventsLost cpu=1 reason=1 count=7$' "$f"
        check "fixture: LBR entries" grep -q ' 4242   4243 LastBranchRecord/LBR event_time=0.010000000 options=0x1 entries=3: 0x401250->0x401200 0x4011f0->0x401240 0x401180->0x4011e0$' "$f"
        check "fixture: stack of the sample" grep -q ' 4242   4243 StackWalk/Stack event_time=0.010000000 frames=3: 0x401234 0x401100 0x400f00$' "$f"
        check "fixture: PMC sample" grep -q 'PerfInfo/PMCInterrupt ip=0x401300 source=11 source_name="BranchMispredictions"' "$f"
        check "fixture: CSwitch with counters" grep -q 'Thread/CSwitch new_tid=4243 new_pid=4242 old_tid=0 old_pid=0 .*old_state=Waiting wait_reason=WrQueue wait_mode=user .*pmc=3896,9400' "$f"
        check "fixture: ReadyThread" grep -q ' 4242   4244 Thread/ReadyThread readied_tid=4244 by_tid=4243 by_pid=4242' "$f"
        check "fixture: 32-bit record" grep -q '   1   4242   4244 PerfInfo/SampledProfile ip=0x8048123 ' "$f"
        check "fixture: PMC counter names" grep -q 'PMCCounterConfig counters=2 name="BranchInstructions" name="LLCReference"' "$f"
        check "fixture: group masks" grep -q 'EventTrace/Extension masks=01000817,00000606,' "$f"
        check "fixture: clock at 1 GHz" grep -q '^Clock: *QPC (1), frequency 1000000000 Hz' "$f"
        check "fixture: file is 0600" [ "$(stat -c %a "$tmp/fixture.etl")" = 600 ]

        # WPP messages (TraceMessage's records): events named by their message GUID and number,
        # with their thread, process, time and argument bytes; one without a time is skipped
        "$ETL_FIXTURE" --wpp "$tmp/wpp.etl"
        dump wpp "$tmp/wpp.etl"
        f=$tmp/wpp.txt
        check "wpp: messages with a GUID" grep -q '^  0.020000000   0   4242   4243 {13121110-1514-1716-1819-1a1b1c1d1e1f}/Message(43) version=0 size=20$' "$f"
        check "wpp: 3 of them" [ "$(count "$f" '{13121110-1514-1716-1819-1a1b1c1d1e1f}/Message(43)')" = 3 ]
        check "wpp: a message with a sequence and a component id, 32-bit" grep -q '^  0.015000000   1   4242   4244 {00000000-0000-0000-0000-000000000000}/Message(7) version=0 size=4$' "$f"
        check "wpp: in time order with the sample between" bash -c "grep -E 'Message|SampledProfile' '$f' | awk '{print \$1}' | tr '\n' ' ' | grep -q '^0.010000000 0.015000000 0.020000000 0.025000000 0.030000000 '"
        check "wpp: the message without a time skipped" grep -q '^Skipped records: *1 ' "$f"
        # merged with a trace of another clock: each message's time converted where it is (a
        # write at another header's place would change its GUID)
        "$ETWTOP" --merge -o "$tmp/wpp-merged.etl" "$tmp/wpp.etl" "$s/krabsetw_powershell.etl"
        dump wpp_merged "$tmp/wpp-merged.etl"
        check "wpp merged: the messages and their GUIDs kept" [ "$(count "$tmp/wpp_merged.txt" '{13121110-1514-1716-1819-1a1b1c1d1e1f}/Message(43)')" = 3 ]
        check "wpp merged: 10 ms apart still" bash -c "grep 'Message(43)' '$tmp/wpp_merged.txt' | head -3 | awk 'NR > 1 {d = \$1 - last; if (d < 0.0099 || d > 0.0101) bad = 1} {last = \$1} END {exit bad}'"
fi

# Several files merged in time order
"$ETWTOP" --dump --totals "$s/krabsetw_powershell.etl" "$u/gcevents/PerfViewData.etl" >"$tmp/two.txt"
check "two files: 114 + 71 events" [ "$(total "$tmp/two.txt")" = 185 ]

# etwtop --merge (CreateMergedTraceFile): time order, every event kept, image identity added
"$ETWTOP" --merge -o "$tmp/merged.etl" "$s/krabsetw_powershell.etl" "$u/gcevents/PerfViewData.etl" \
        "$s/etlparser_ShutdownPerfDiagLogger.etl"
check "merge: exit 0" [ $? = 0 ]
dump merged "$tmp/merged.etl"
# an ImageID for each Image Load and DCStart, and as xperf's merge writes them, Unload and
# DCEnd: the shutdown trace's 72 + 6745 + 4791 + 2145
check "merge: 113 + 70 + 17077 events + 13753 ImageID + a header" [ "$(total "$tmp/merged.txt")" = 31014 ]
check "merge: an ImageID per image load, unload and rundown" [ "$(count "$tmp/merged.txt" KernelTraceControl/ImageID)" = 13753 ]
check "merge: ImageID names the image" grep -q 'KernelTraceControl/ImageID .*name="[^"\\]*\.dll"' "$tmp/merged.txt"
check "merge: events in time order" \
        bash -c "awk '/^ *time cpu/ {t=1; next} /^\$/ {t=0} t && \$1+0 < last {bad=1} t {last=\$1+0} END {exit bad}' '$tmp/merged.txt'"
check "merge: file is 0600" [ "$(stat -c %a "$tmp/merged.etl")" = 600 ]
"$ETWTOP" --merge -o "$tmp/merged.etl" "$s/krabsetw_powershell.etl" 2>"$tmp/merge.err"
check "merge: an existing output is not overwritten" grep -q 'exists' "$tmp/merge.err"
"$ETWTOP" --merge --force -o "$tmp/merged.etl" "$u/net.4.5.2.x64.etl"
dump merged_net "$tmp/merged.etl"
check "merge: an already merged trace keeps its own ImageIDs" [ "$(count "$tmp/merged_net.txt" KernelTraceControl/ImageID)" = 3590 ]
# issue 15, section 3: a merge keeps its input's header but for what it changes (its mode,
# its file name, its layout): the logger name, the time zone, the maximum file size, the clock
# and timer fields, the times, the machine
hdr() { grep -E '^(Logger name|OS version|Processors|Pointer size|Clock|Timer resolution|CPU speed|Start time|Boot time|Maximum file size|Time zone):' "$1" | sed 's/ (log file layout [0-9.]*)//'; }
for f in "$u/net.4.5.2.x64.etl" "$s/etlparser_ShutdownPerfDiagLogger.etl" "$s/krabsetw_powershell.etl" "$s/etlparser_lxcore_kernel.etl"; do
        [ -f "$f" ] || continue
        b=$(basename "$f" .etl)
        "$ETWTOP" --dump --totals "$f" >"$tmp/in-$b.txt" 2>&1
        "$ETWTOP" --merge --force -o "$tmp/m-$b.etl" "$f" 2>/dev/null
        "$ETWTOP" --dump --totals "$tmp/m-$b.etl" >"$tmp/out-$b.txt" 2>&1
        check "merge of $b: the input's header fields kept ($(diff <(hdr "$tmp/in-$b.txt") <(hdr "$tmp/out-$b.txt") | tr '\n' ' ' | head -c 300))" \
                cmp -s <(hdr "$tmp/in-$b.txt") <(hdr "$tmp/out-$b.txt")
done
check "merge: every record of the compressed trace kept" [ "$(total "$tmp/merged_net.txt")" = 179474 ]

# replay -b of LBR and switch events this machine cannot record: the fixture's trace
if [ -n "${ETL_FIXTURE:-}" ] && "$ETL_FIXTURE" "$tmp/lbr.etl" >/dev/null 2>&1; then
        "$ETWTOP" --replay "$tmp/lbr.etl" -b >"$tmp/lbr-replay.txt" 2>&1
        check "lbr replay: exits 0" [ $? = 0 ]
        check "lbr replay: the edges counted" grep -q '^Hot branch edges (LBR, 3 branches)$' "$tmp/lbr-replay.txt"
        check "lbr replay: an edge, its share" \
                grep -Eq '^ +33\.33% +1 +- +-  work\+0x1250 -> work\+0x1200$' "$tmp/lbr-replay.txt"
        check "lbr replay: the threads that switched" \
                grep -Eq '^ +1 .* 4244 +4242 .*work\.exe/worker$' "$tmp/lbr-replay.txt"
        check "lbr replay: the counters of each thread's timeslice (CSwitch PMC)" \
                grep -Eq '^ +4243  work\.exe/main +BranchInstructions 1\.00 K, LLCReference 1\.50 K$' "$tmp/lbr-replay.txt"
        check "lbr replay: ... of the other thread" \
                grep -Eq '^ +4244  work\.exe/worker +BranchInstructions 2\.50 K, LLCReference 250$' "$tmp/lbr-replay.txt"
fi

# Bad input: a clear error naming the problem and the byte offset; nothing crashes
printf 'this is not a trace file, just text that is long enough to hold a buffer header......\n' >"$tmp/text.etl"
: >"$tmp/empty.etl"
head -c 100000 "$s/etlparser_ShutdownPerfDiagLogger.etl" >"$tmp/truncated.etl"
"$ETWTOP" --dump "$tmp/text.etl" >/dev/null 2>"$tmp/text.err"
check "not an ETL: exit 1" [ $? = 1 ]
check "not an ETL: message names it and the offset" grep -q 'not an ETL file.*offset' "$tmp/text.err"
"$ETWTOP" --dump "$tmp/empty.etl" >/dev/null 2>"$tmp/empty.err"
check "empty: exit 1" [ $? = 1 ]
check "empty: says so" grep -q 'empty' "$tmp/empty.err"
"$ETWTOP" --dump "$tmp/missing.etl" >/dev/null 2>"$tmp/missing.err"
check "missing: exit 1 with the reason" grep -q 'No such file' "$tmp/missing.err"
"$ETWTOP" --dump "$tmp/truncated.etl" >"$tmp/truncated.txt" 2>&1
check "truncated: still dumps (exit 0)" [ $? = 0 ]
check "truncated: one damaged buffer counted" grep -q '^Damaged buffers: *1$' "$tmp/truncated.txt"
check "truncated: the problem names its offset" grep -q 'Last problem: .*truncated.*byte offset 65536' "$tmp/truncated.txt"
"$ETWTOP" --replay "$tmp/truncated.etl" -b >"$tmp/truncated-replay.txt" 2>"$tmp/truncated-replay.err"
check "truncated replay: still reads (exit 0)" [ $? = 0 ]
check "truncated replay: says what was skipped, with the offset" \
        grep -q 'truncated.etl: 1 damaged buffer skipped .*truncated.*byte offset 65536' "$tmp/truncated-replay.err"

# A perf.data cut inside its data section (the header says 1304 to 257120): converted up to the
# cut, and both the dump and the replay say where it ends; the replay's stderr said nothing.
if [ -f "$s/perf/perf.data.busy.0-3.4" ]; then
        head -c 150000 "$s/perf/perf.data.busy.0-3.4" >"$tmp/cut.data"
        "$ETWTOP" --dump "$tmp/cut.data" >"$tmp/cut.txt" 2>&1
        check "cut perf.data: still dumps (exit 0)" [ $? = 0 ]
        check "cut perf.data: the dump names the cut and its offset" \
                grep -q 'Last problem: .*ends at 150000 bytes, in its data section .*truncated.*byte offset 150000' "$tmp/cut.txt"
        "$ETWTOP" --replay "$tmp/cut.data" -b -n 1 >"$tmp/cut-replay.txt" 2>"$tmp/cut-replay.err"
        check "cut perf.data replay: still reads (exit 0)" [ $? = 0 ]
        check "cut perf.data replay: says it read up to the cut, with the offset" \
                grep -q 'cut.data: read up to its damage: .*truncated.*byte offset 150000' "$tmp/cut-replay.err"
        "$ETWTOP" --merge -o "$tmp/cut-merged.etl" "$tmp/cut.data" "$tmp/truncated.etl" \
                2>"$tmp/cut-merge.err"
        check "merge of damaged inputs: still merges (exit 0)" [ $? = 0 ] && [ -s "$tmp/cut-merged.etl" ]
        check "merge of damaged inputs: names the first, its problem and offset, and counts the other" \
                grep -q 'cut-merged.etl: merged without what was skipped: .*cut.data: read up to its damage: .*truncated.*byte offset 150000.*; 1 more input damaged' "$tmp/cut-merge.err"
        "$ETWTOP" --merge -o "$tmp/whole-merged.etl" "$s/perf/perf.data.busy.0-3.4" \
                2>"$tmp/whole-merge.err"
        check "merge of a whole perf.data: nothing said skipped" bash -c "! grep -q skipped \"\$1\"" _ "$tmp/whole-merge.err"
        "$ETWTOP" --replay "$s/perf/perf.data.busy.0-3.4" -b -n 1 >/dev/null 2>"$tmp/whole-replay.err"
        check "whole perf.data replay: no damage named" bash -c "! grep -q damage \"\$1\"" _ "$tmp/whole-replay.err"
fi

# PerfView's .etl.zip read as it comes (its .etl inflated in memory): the same dump as the
# unpacked file's (but the name), the same replay, a merge of it; archives that hold no trace
# or two, and files that are no trace, named for what they are
for z in perfview_gcevents.etl.zip:gcevents/PerfViewData.etl perfview_net.4.5.2.x64.etl.zip:net.4.5.2.x64.etl; do
        zip=$s/${z%%:*} etl=$u/${z#*:}
        [ -f "$zip" ] || continue
        "$ETWTOP" --dump "$zip" | tail -n +2 >"$tmp/zip-dump.txt"
        "$ETWTOP" --dump "$etl" | tail -n +2 >"$tmp/etl-dump.txt"
        check "${z%%:*}: dumps as its .etl" cmp -s "$tmp/zip-dump.txt" "$tmp/etl-dump.txt"
        check "${z%%:*}: a dump of events" [ "$(total "$tmp/zip-dump.txt")" -gt 50 ]
        "$ETWTOP" --replay "$zip" -b -n 1 2>&1 | tail -n +2 >"$tmp/zip-replay.txt"
        "$ETWTOP" --replay "$etl" -b -n 1 2>&1 | tail -n +2 >"$tmp/etl-replay.txt"
        check "${z%%:*}: replays as its .etl" cmp -s "$tmp/zip-replay.txt" "$tmp/etl-replay.txt"
done
if [ -f "$s/perfview_gcevents.etl.zip" ]; then
        "$ETWTOP" --merge -o "$tmp/zip-merged.etl" "$s/perfview_gcevents.etl.zip" "$s/krabsetw_powershell.etl"
        check "merge of an .etl.zip: exit 0" [ $? = 0 ]
        dump zip_merged "$tmp/zip-merged.etl"
        check "merge of an .etl.zip: its 70 events, the other's 113 and a header" \
                [ "$(awk '/events in all/ {print $1}' "$tmp/zip_merged.txt")" -ge 184 ]
fi
c=$(dirname "$0")/../corpus/zip
"$ETWTOP" --dump "$c/two_traces.zip" >/dev/null 2>"$tmp/two.err"
check "zip of two traces: refused (exit non-zero)" [ $? != 0 ]
check "zip of two traces: both named" grep -q 'two_traces.zip: a zip archive that holds 2 .etl files (a.etl, b.etl): unzip it and give one' "$tmp/two.err"
"$ETWTOP" --dump "$c/empty.zip" >/dev/null 2>"$tmp/empty.err"
check "empty zip: says it holds no .etl" grep -q 'empty.zip: a zip archive that holds no .etl file (0 entries)' "$tmp/empty.err"
head -c 2000 "$c/lxcore_deflated.zip" | head -c 600 >"$tmp/cut.zip"
"$ETWTOP" --dump "$tmp/cut.zip" >/dev/null 2>"$tmp/cutzip.err"
check "zip cut short: says so" grep -q 'cut.zip: a damaged zip archive: no end of central directory record' "$tmp/cutzip.err"
gzip -c "$s/etlparser_lxcore_kernel.etl" >"$tmp/lx.etl.gz"
"$ETWTOP" --dump "$tmp/lx.etl.gz" >/dev/null 2>"$tmp/gz.err"
check "gzip of a trace: named, with what to do" grep -q 'lx.etl.gz: not an ETL file: a gzip-compressed file: give it uncompressed (gunzip)' "$tmp/gz.err"

# a perf.data's BPF program (perf record -o - of a program run by BPF_PROG_TEST_RUN: its
# KSYMBOL before its samples): a module of its own named as its symbol, as perf report's dso
# (56 samples in it, as perf report -n counts them); no perf needed to read it
"$ETWTOP" --replay "$(dirname "$0")/../corpus/perfdata/ksymbol-bpf-pipe" -b -n 1 --top 3 \
        >"$tmp/ksym.txt" 2>"$tmp/ksym.err"
check "a perf.data's BPF program: its own module and function, 56 samples" \
        awk '$3 == 56 && $5 == "bpf_prog_44170d3d09754250_etwtop_probe" &&
             $6 == $5 {found = 1} END {exit !found}' "$tmp/ksym.txt"

echo "$nr_pass passed, $nr_fail failed"
[ "$nr_fail" = 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dump_kernel_classes.sh: the kernel classes decoded by their MOF layouts (backend/decode/kevent_mof.c),
# the CLR's private provider by its manifest's templates (backend/decode/clr_private.c)
# and the manifest events decoded by the metadata the trace carries (MetaData EventInfo and
# EventMapInfo: backend/decode/tdh_meta.c) in `etwtop --dump` of the x64 .NET sample: per-type counts
# against TraceEvent's baseline for the same trace (net.4.5.2.x64.baseline.txt, its COUNT lines),
# and the fields of its first events.
set -u
: "${ETWTOP:?}" "${ETWTOP_SAMPLES_UNPACKED:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/check.sh"

net=$ETWTOP_SAMPLES_UNPACKED/net.4.5.2.x64.etl
if [ ! -f "$net" ]; then
        skip "no $net (the zipped sample is unpacked by the build)"
        echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
        exit 0
fi
"$ETWTOP" --dump "$net" >"$tmp/net.txt" 2>"$tmp/err" || check "--dump exits 0: $(cat "$tmp/err")" false

# count EVENT -> its totals row, summed over versions
count() { awk -v e="$1" '/^Totals per event type/ {t=1} t && $3 == e {n += $1} END {print n + 0}' "$tmp/net.txt"; }
# first EVENT -> the first line of EVENT
first() { grep -m1 " $1 " "$tmp/net.txt"; }
has() { # EVENT TEXT: the first EVENT line holds TEXT
        case "$(first "$1")" in *"$2"*) return 0 ;; *) echo "  $1: $(first "$1" | cut -c1-300)"; return 1 ;; esac
}

# TraceEvent's names are DiskIO/..., Memory/HardFault, SysConfig/...: etwtop keeps xperf's
# provider names (DiskIo, PageFault, SysConfigEx)
while read -r ours theirs n; do
        check "$ours: $n as TraceEvent's $theirs" [ "$(count "$ours")" = "$n" ]
done <<'COUNTS'
DiskIo/Read DiskIO/Read 1208
DiskIo/ReadInit DiskIO/ReadInit 1208
DiskIo/Write DiskIO/Write 21
DiskIo/WriteInit DiskIO/WriteInit 21
DiskIo/FlushBuffers DiskIO/FlushBuffers 2
DiskIo/FlushInit DiskIO/FlushInit 2
PageFault/HardFault Memory/HardFault 153
TcpIp/RecvIPV6 TcpIp/RecvIPV6 250
TcpIp/SendIPV6 TcpIp/SendIPV6 240
UdpIp/Recv UdpIp/Recv 19
UdpIp/RecvIPV6 UdpIp/RecvIPV6 10
UdpIp/Send UdpIp/Send 1
UdpIp/SendIPV6 UdpIp/SendIPV6 6
Process/PerfCtr Process/PerfCtr 1
Process/PerfCtrRundown Process/PerfCtrRundown 32
SysConfigEx/BuildInfo SysConfig/BuildInfo 1
SysConfigEx/SystemPaths SysConfig/SystemPaths 1
SysConfigEx/UnknownVolume SysConfig/UnknownVolume 1
SysConfigEx/VolumeMapping SysConfig/VolumeMapping 9
SystemConfig/CPU SystemConfig/CPU 1
SystemConfig/IDEChannel SystemConfig/IDEChannel 2
SystemConfig/LogDisk SystemConfig/LogDisk 1
SystemConfig/NIC SystemConfig/NIC 3
SystemConfig/Network SystemConfig/Network 1
SystemConfig/PhyDisk SystemConfig/PhyDisk 1
SystemConfig/PnP SystemConfig/PnP 78
SystemConfig/Power SystemConfig/Power 1
SystemConfig/Services SystemConfig/Services 157
COUNTS

# no event of these classes is left a bare opcode
bare=$(grep -cE ' (DiskIo/op1[0-5]|PageFault/op32|TcpIp/op(1[0-8]|2[6-9]|3[0-4])|UdpIp/op(1[01]|2[67])|FileIo/op(0|32|35|36)|Process/op3[23]|SysConfigEx/op3[2-5]) ' "$tmp/net.txt")
check "no DiskIo, HardFault, TcpIp, UdpIp, FileIo name, PerfCtr or SysConfigEx event left as opN ($bare)" [ "$bare" = 0 ]

# The first events' fields, as the baseline prints them (its values, without its digit grouping;
# a backslash before a closing quote doubled, as --dump quotes: doc/dump.md)
check "DiskIo/WriteInit: Irp of the first" has DiskIo/WriteInit "Irp=0xfffffa830047e8f0"
check "DiskIo/Write: size, offset, Irp, issuing thread" has DiskIo/Write \
        "TransferSize=4096 Reserved=0 ByteOffset=6109835264 FileObject=0xfffff8a0045ffc50 Irp=0xfffffa830047e8f0"
check "DiskIo/Write: the thread of the payload" has DiskIo/Write "IssuingThreadId=44"
check "TcpIp/SendIPV6: size, addresses, ports, times" has TcpIp/SendIPV6 \
        'PID=4 size=65652 daddr="2001:4898:e0:81:7cb9:' 
check "TcpIp/SendIPV6: ports in network order, times" has TcpIp/SendIPV6 \
        "dport=445 sport=64025 startime=1942 endtime=1942 seqnum=0"
check "TcpIp/RecvIPV6: size and ports" has TcpIp/RecvIPV6 "size=84"
check "SystemConfig/CPU: MHz to the computer's name" has SystemConfig/CPU \
        'MHz=3592 NumberOfProcessors=8 MemSize=4096 PageSize=4096 AllocationGranularity=65536 ComputerName="BRIANROB-W8" DomainName=""'
check "SystemConfig/NIC: address length, indexes, description" has SystemConfig/NIC \
        'PhysicalAddr=44360508708096 PhysicalAddrLen=6 Ipv4Index=12 Ipv6Index=12 NICDescription="Microsoft Hyper-V Network Adapter"'
check "SystemConfig/Services: names, state, tag" has SystemConfig/Services \
        'ServiceState=1 SubProcessTag=1 ServiceName="AeLookupSvc" DisplayName="Application Experience"'
svc_pid=$(first SystemConfig/Services | awk '{print $3}')
check "SystemConfig/Services: the service's process (0), as TraceEvent's PID=0 ($svc_pid)" [ "$svc_pid" = 0 ]
check "SystemConfig/PhyDisk: geometry and maker" has SystemConfig/PhyDisk \
        'BytesPerSector=512 SectorsPerTrack=63 TracksPerCylinder=255 Cylinders=16578 SCSIPort=0 SCSIPath=0 SCSITarget=0 SCSILun=0 Manufacturer="Virtual HD ATA Device" PartitionCount=2 WriteCacheEnabled=1 BootDriveLetter="C"'
check "SystemConfig/IDEChannel" has SystemConfig/IDEChannel \
        'LocationInformationLen=9 LocationInformation="Channel 0"'
check "SystemConfig/PnP (version 4): the strings after the class GUID" has SystemConfig/PnP \
        'DeviceDescription="Microsoft Hyper-V S3 Cap" FriendlyName="" PdoName="\Device\NTPNP_PCI0004" ServiceName="s3cap"'
check "SystemConfig/Power" has SystemConfig/Power "S1=0 S2=0 S3=0 S4=0 S5=1"
check "SystemConfig/LogDisk" has SystemConfig/LogDisk \
        'StartOffset=368050176 PartitionSize=135996112896 DiskNumber=0 Size=112 DriveType=1 DriveLetterString="C:" PartitionNumber=2 SectorsPerCluster=8 BytesPerSector=512 NumberOfFreeClusters=29898381 TotalNumberOfClusters=33202175 FileSystem="NTFS" VolumeExt=0'
check "SystemConfig/OpticalMedia: numbers, UTF-16 then 8-bit strings" has SystemConfig/OpticalMedia \
        'BytesPerSector=2048 DiscStatus=0 LastSessionStatus=0 DriveLetter="D:" FileSystemName="UDF" DeviceName="Virtual CD/ROM  " ManufacturerName="Msft    "'
check "SystemConfig/Platform" has SystemConfig/Platform \
        'SystemManufacturer="Microsoft Corporation" SystemProductName="Virtual Machine" BiosDate="12/07/2018" BiosVersion="090008"'
check "SystemConfig/DPI" has SystemConfig/DPI "MachineDPI=96 UserDPI=96"
cfg_bare=$(grep -c ' SystemConfig/op' "$tmp/net.txt")
check "no SystemConfig event left as opN ($cfg_bare)" [ "$cfg_bare" = 0 ]
check "SystemConfig/Network" has SystemConfig/Network \
        "TcbTablePartitions=32 MaxHashTableSize=4294967295 MaxUserPort=65536 TcpTimedWaitDelay=120"
check "SysConfigEx/SystemPaths" has SysConfigEx/SystemPaths \
        'SystemDirectory="C:\Windows\system32" SystemWindowsDirectory="C:\Windows\\"'
check "SysConfigEx/VolumeMapping" has SysConfigEx/VolumeMapping 'NtPath="\??\\" DosPath=""'
check "SysConfigEx/UnknownVolume" has SysConfigEx/UnknownVolume 'Value="\Device\HarddiskVolume1\\"'
# The thread of a hard fault is in its payload; its process follows from the thread table
hf=$(first PageFault/HardFault)
check "PageFault/HardFault: TThreadId and the header agree ($(echo "$hf" | cut -c1-120))" \
        bash -c '[[ "$1" =~ ^\ +[0-9.]+\ +[0-9]+\ +([0-9]+)\ +([0-9]+)\ .*TThreadId=([0-9]+) ]] && [ "${BASH_REMATCH[2]}" = "${BASH_REMATCH[3]}" ] && [ "${BASH_REMATCH[1]}" != -1 ]' _ "$hf"
check "UdpIp/Recv: the process of the payload, an IPv4 address" has UdpIp/Recv 'PID=2108 size=173 daddr="239.255.255.250"'

# Manifest providers described by the trace's MetaData events, named as TraceEvent names them
while read -r name n; do
        check "$name: $n" [ "$(count "$name")" = "$n" ]
done <<'COUNTS'
Microsoft-Windows-Kernel-File/Create 562
Microsoft-Windows-Kernel-EventTracing/ETW_TASK_PROVIDER/ETW_OPCODE_REGISTER 31
Microsoft-Windows-Kernel-EventTracing/ETW_TASK_PROVIDER/ETW_OPCODE_UNREGISTER 31
Microsoft-Windows-Kernel-EventTracing/ETW_TASK_PROVIDER/ETW_OPCODE_ENABLE 15
Microsoft-Windows-DNS-Client/DnsServerForInterface 4
Microsoft-Windows-Immersive-Shell/ImmersiveShellAppManagerSetActiveProcess/Start 2
Microsoft-Windows-Immersive-Shell/ImmersiveShellAppManagerSetActiveProcess/Stop 2
Microsoft-Windows-Immersive-Shell/ImmersiveShellAppManagerOnShellHookMessage/Start 2
Microsoft-Windows-Immersive-Shell/ImmersiveShellAppManagerOnShellHookMessage/Stop 2
Microsoft-Windows-Kernel-Process/ProcessStart/Start 1
Microsoft-Windows-Kernel-Process/ProcessStop/Stop 1
PerfView/PerfViewLog 53
PerfView/ProviderEnableParameters 37
PerfView/CommandLineParameters 3
PerfView/SessionParameters 2
PerfView/KernelEnableParameters 1
PerfView/ClrEnableParameters 2
PerfView/StartAndStopTimes 2
PerfView/ManifestData 2
PerfView/Tracing/Start 1
PerfView/Tracing/Stop 1
PerfView/Rundown/Start 1
PerfView/Rundown/Stop 1
PerfView/StopReason 1
PerfView/WaitForIdle 1
System.Diagnostics.Eventing.FrameworkEventSource/ManifestData 1
System.Diagnostics.Eventing.FrameworkEventSource/ThreadPoolDequeueWork 2
System.Diagnostics.Eventing.FrameworkEventSource/ThreadPoolEnqueueWork 3
System.Threading.Tasks.TplEventSource/ManifestData 1
System.Threading.Tasks.TplEventSource/TaskExecute/Start 3
System.Threading.Tasks.TplEventSource/TaskExecute/Stop 1
System.Threading.Tasks.TplEventSource/TaskScheduled/Send 3
COUNTS
# EventSources' events, decoded by the manifests they log (ManifestData)
check "PerfView/SessionParameters: its strings and sizes" has PerfView/SessionParameters \
        'sessionName="NT Kernel Logger" sessionFileName="net.4.5.2.x64.kernel.etl" bufferSizeMB=256 circularBuffSizeMB=500'
check "PerfView/StartAndStopTimes" has PerfView/StartAndStopTimes \
        'startTimeRelativeMSec=9726 stopTimeRelativeMSec=0'
eventsource=$(grep -cE ' \{(a8a71ac1|8e9f5090|2e5dba47)-' "$tmp/net.txt")
check "no event of the three EventSources left as {GUID}/opN ($eventsource)" [ "$eventsource" = 0 ]
check "Kernel-File/Create: its fields from the metadata" has Microsoft-Windows-Kernel-File/Create \
        'FileObject=0xfffffa83004bda90'
check "Kernel-File/Create: the file's name" has Microsoft-Windows-Kernel-File/Create \
        'FileName="\Device\HarddiskVolume2\Windows\SysWOW64\inetsrv\iiscore.dll"'
check "DNS-Client: strings and a socket address" has Microsoft-Windows-DNS-Client/DnsServerForInterface \
        'Interface="Ethernet" TotalServerCount=4 Index=1 DynamicAddress="dynamic"'
check "DNS-Client: an IPv6 socket address as [addr]:port" \
        grep -q 'DnsServerForInterface .*Address="\[2001:4898::1050:1050\]:0"' "$tmp/net.txt"
check "DNS-Client: an IPv4 socket address" \
        grep -q 'DnsServerForInterface .*Index=3 .*Address="10.50.10.50:0"' "$tmp/net.txt"
# The .NET runtime's events keep their names; the metadata gives their fields, value maps named
check "GCAllocationTick: named as before, its fields and its value map" has DotNETRuntime/GCAllocationTick \
        'AllocationAmount=0x1a464 AllocationKind="Small" ClrInstanceID=11'

# The .NET runtime's private provider ({763fd754-...}): named by Id and version as TraceEvent
# names them (its Task/Opcode run together), its fields from the manifest's templates
# (ClrEtwAll.man); counts against the baseline's COUNT lines, fields against its first events
while read -r ours theirs n; do
        check "$ours: $n as TraceEvent's $theirs" [ "$(count "DotNETRuntimePrivate/$ours")" = "$n" ]
done <<'COUNTS'
BindingFusionMessage Binding/FusionMessage 20
BindingLoaderAssemblyInitPhaseStart Binding/LoaderAssemblyInitPhaseStart 2
BindingLoaderAssemblyInitPhaseStop Binding/LoaderAssemblyInitPhaseStop 2
BindingLoaderDeliverEventPhaseStart Binding/LoaderDeliverEventPhaseStart 2
BindingLoaderDeliverEventsPhaseStop Binding/LoaderDeliverEventsPhaseStop 2
BindingLoaderMappingPhaseStart Binding/LoaderMappingPhaseStart 4
BindingLoaderMappingPhaseStop Binding/LoaderMappingPhaseStop 4
BindingLoaderPhaseStart Binding/LoaderPhaseStart 1
BindingLoaderPhaseStop Binding/LoaderPhaseStop 1
BindingNgenPhaseStart Binding/NgenPhaseStart 1
BindingNgenPhaseStop Binding/NgenPhaseStop 1
GCGlobalHeapHistory GC/GlobalHeapHistory 264
GCMarkCards GC/MarkCards 264
GCMarkFinalizeQueueRoots GC/MarkFinalizeQueueRoots 264
GCMarkHandles GC/MarkHandles 264
GCMarkStackRoots GC/MarkStackRoots 264
GCPerHeapHistory GC/PerHeapHistory 264
GCSettings GC/Settings 1
NgenBinderNgenBind NgenBinder/NgenBind 2
COUNTS
private=$(grep -c ' {763fd754-7086-4dfe-95eb-c01a46faf4ca}/op' "$tmp/net.txt")
check "no event of the CLR's private provider left as {GUID}/opN ($private)" [ "$private" = 0 ]
check "DotNETRuntimePrivate/GCSettings (version 1)" has DotNETRuntimePrivate/GCSettings \
        'SegmentSize=16777216 LargeObjectSegmentSize=16777216 ServerGC=0 ClrInstanceID=11'
check "DotNETRuntimePrivate/BindingFusionMessage: a Boolean, then the message" \
        has DotNETRuntimePrivate/BindingFusionMessage 'ClrInstanceID=9 Prepend=0 Message="BEGIN : IL image bind."'
check "DotNETRuntimePrivate/BindingLoaderMappingPhaseStart: ids, then two strings" \
        has DotNETRuntimePrivate/BindingLoaderMappingPhaseStart \
        'AppDomainID=1 LoadContextID=4 FromLoaderCache=0 DynamicLoad=0 AssemblyCodebase="C:\Windows\Microsoft.Net\assembly\GAC_64\mscorlib\'
check "DotNETRuntimePrivate/BindingLoaderMappingPhaseStart: the fields after the strings" \
        has DotNETRuntimePrivate/BindingLoaderMappingPhaseStart 'mscorlib.dll" AssemblyName="NULL" ClrInstanceID=9'
check "DotNETRuntimePrivate/NgenBinderNgenBind (ReasonCode 0, START_BIND)" has DotNETRuntimePrivate/NgenBinderNgenBind \
        'ClrInstanceID=9 BindingID=8164512 ReasonCode=0 AssemblyName="mscorlib, Version=4.0.0.0,'
check "DotNETRuntimePrivate/GCMarkStackRoots" has DotNETRuntimePrivate/GCMarkStackRoots 'HeapNum=0 ClrInstanceID=9'
check "DotNETRuntimePrivate/GCGlobalHeapHistory (Reason 0, AllocSmall, named as TraceEvent names it)" \
        has DotNETRuntimePrivate/GCGlobalHeapHistory \
        'FinalYoungestDesired=0x400000 NumHeaps=1 CondemnedGeneration=0 Gen0ReductionCount=0 Reason="AllocSmall" GlobalMechanisms=20 ClrInstanceID=9'
# GCPerHeapHistory version 2 has no template (the runtime writes its heap's record as it is in
# memory, then a byte of ClrInstanceID): its bytes with their length, not fields made up
check "DotNETRuntimePrivate/GCPerHeapHistory (version 2): its 433 bytes, the first 64 shown" \
        has DotNETRuntimePrivate/GCPerHeapHistory \
        'DataLength=433 Data="0x30004000000000000000000000000000000000000000000018000000000000000000000000000000000000000000000000000000000000003049000000000000..."'
check "DotNETRuntimePrivate/GCPerHeapHistory: every one with its bytes" \
        [ "$(grep -c 'DotNETRuntimePrivate/GCPerHeapHistory DataLength=[0-9]* Data="0x' "$tmp/net.txt")" = 264 ]

echo "$nr_pass passed, $nr_fail failed, $nr_skip skipped"
[ "$nr_fail" -eq 0 ]

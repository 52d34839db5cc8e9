/* SPDX-License-Identifier: MIT */
/* kevent_mof.c: owns the MOF layouts of the kernel classes that have no decoder of their own
 * (DiskIo, PageFault HardFault, TcpIp, UdpIp, FileIo names, SystemConfig, Process counters,
 * SysConfigEx, EventTrace's DbgID_RSDS and BuildInfo) and decodes them into name=value fields. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kevent_mof.h"
#include "le_bytes.h"
#include "lznt1.h"

struct mof_event {
        const char *provider; /* kevent_provider_name's */
        uint8_t opcode;
        uint8_t min_version, max_version;
        const char *name; /* "Provider/Event" */
        const struct mof_field *fields;
        uint8_t nr_fields;
};

/* DiskIo_TypeGroup1 (Read, Write); IssuingThreadId from version 3 */
static const struct mof_field disk_rw[] = {
        F("DiskNumber", M_U32, 0),
        F("IrpFlags", M_X32, 4),
        F("TransferSize", M_U32, 8),
        F("Reserved", M_U32, 12),
        F("ByteOffset", M_I64, 16),
        F("FileObject", M_PTR, 24),
        FP("Irp", M_PTR, 28, 1),
        FP("HighResResponseTime", M_U64, 32, 2),
        FOPT("IssuingThreadId", M_U32, 40, 2, R_TID),
};
/* DiskIo_TypeGroup2 (ReadInit, WriteInit, FlushInit) */
static const struct mof_field disk_init[] = {
        F("Irp", M_PTR, 0),
        FOPT("IssuingThreadId", M_U32, 4, 1, R_TID),
};
/* DiskIo_TypeGroup3 (FlushBuffers) */
static const struct mof_field disk_flush[] = {
        F("DiskNumber", M_U32, 0),
        F("IrpFlags", M_X32, 4),
        F("HighResResponseTime", M_U64, 8),
        F("Irp", M_PTR, 16),
        FOPT("IssuingThreadId", M_U32, 20, 1, R_TID),
};
/* PageFault_HardFault */
static const struct mof_field hard_fault[] = {
        F("InitialTime", M_I64, 0),           F("ReadOffset", M_U64, 8),
        F("VirtualAddress", M_PTR, 16),       FP("FileObject", M_PTR, 20, 1),
        FR("TThreadId", M_U32, 24, 2, R_TID), FP("ByteCount", M_U32, 28, 2),
};
/* TcpIp_SendIPV4 */
static const struct mof_field tcp_send4[] = {
        FR("PID", M_U32, 0, 0, R_PID), F("size", M_U32, 4),     F("daddr", M_IPV4, 8),
        F("saddr", M_IPV4, 12),        F("dport", M_PORT, 16),  F("sport", M_PORT, 18),
        F("startime", M_U32, 20),      F("endtime", M_U32, 24), F("seqnum", M_U32, 28),
        F("connid", M_PTR, 32),
};
/* TcpIp_TypeGroup1 (Recv, Disconnect, Retransmit, Reconnect, TCPCopy) and UdpIp_TypeGroup1 */
static const struct mof_field ip_group4[] = {
        FR("PID", M_U32, 0, 0, R_PID), F("size", M_U32, 4),    F("daddr", M_IPV4, 8),
        F("saddr", M_IPV4, 12),        F("dport", M_PORT, 16), F("sport", M_PORT, 18),
        F("seqnum", M_U32, 20),        F("connid", M_PTR, 24),
};
/* TcpIp_TypeGroup2 (Connect, Accept) */
static const struct mof_field tcp_connect4[] = {
        FR("PID", M_U32, 0, 0, R_PID), F("size", M_U32, 4),     F("daddr", M_IPV4, 8),
        F("saddr", M_IPV4, 12),        F("dport", M_PORT, 16),  F("sport", M_PORT, 18),
        F("mss", M_U16, 20),           F("sackopt", M_U16, 22), F("tsopt", M_U16, 24),
        F("wsopt", M_U16, 26),         F("rcvwin", M_U32, 28),  F("rcvwinscale", M_I16, 32),
        F("sndwinscale", M_I16, 34),   F("seqnum", M_U32, 36),  F("connid", M_PTR, 40),
};
/* TcpIp_SendIPV6 */
static const struct mof_field tcp_send6[] = {
        FR("PID", M_U32, 0, 0, R_PID), F("size", M_U32, 4),     F("daddr", M_IPV6, 8),
        F("saddr", M_IPV6, 24),        F("dport", M_PORT, 40),  F("sport", M_PORT, 42),
        F("startime", M_U32, 44),      F("endtime", M_U32, 48), F("seqnum", M_U32, 52),
        F("connid", M_PTR, 56),
};
/* TcpIp_TypeGroup3 (the IPv6 Recv, Disconnect, Retransmit, Reconnect, TCPCopy) and
   UdpIp_TypeGroup2 */
static const struct mof_field ip_group6[] = {
        FR("PID", M_U32, 0, 0, R_PID), F("size", M_U32, 4),    F("daddr", M_IPV6, 8),
        F("saddr", M_IPV6, 24),        F("dport", M_PORT, 40), F("sport", M_PORT, 42),
        F("seqnum", M_U32, 44),        F("connid", M_PTR, 48),
};
/* TcpIp_TypeGroup4 (the IPv6 Connect, Accept) */
static const struct mof_field tcp_connect6[] = {
        FR("PID", M_U32, 0, 0, R_PID), F("size", M_U32, 4),     F("daddr", M_IPV6, 8),
        F("saddr", M_IPV6, 24),        F("dport", M_PORT, 40),  F("sport", M_PORT, 42),
        F("mss", M_U16, 44),           F("sackopt", M_U16, 46), F("tsopt", M_U16, 48),
        F("wsopt", M_U16, 50),         F("rcvwin", M_U32, 52),  F("rcvwinscale", M_I16, 56),
        F("sndwinscale", M_I16, 58),   F("seqnum", M_U32, 60),  F("connid", M_PTR, 64),
};
/* TcpIp_Fail, UdpIp_Fail */
static const struct mof_field ip_fail[] = {
        F("Proto", M_U16, 0),
        F("FailureCode", M_U16, 2),
};
/* FileIo_Name (Name, FileCreate, FileDelete, FileRundown) */
static const struct mof_field file_name[] = {
        F("FileObject", M_PTR, 0),
        FP("FileName", M_WSTR, 4, 1),
};
/* Process_V2_TypeGroup2 (PerfCtr, PerfCtrRundown) */
static const struct mof_field process_ctr[] = {
        FR("ProcessId", M_U32, 0, 0, R_PID),
        F("PageFaultCount", M_U32, 4),
        F("HandleCount", M_U32, 8),
        F("Reserved", M_U32, 12),
        F("PeakVirtualSize", M_SIZE, 16),
        FP("PeakWorkingSetSize", M_SIZE, 20, 1),
        FP("PeakPagefileUsage", M_SIZE, 24, 2),
        FP("QuotaPeakPagedPoolUsage", M_SIZE, 28, 3),
        FP("QuotaPeakNonPagedPoolUsage", M_SIZE, 32, 4),
        FP("VirtualSize", M_SIZE, 36, 5),
        FP("WorkingSetSize", M_SIZE, 40, 6),
        FP("PagefileUsage", M_SIZE, 44, 7),
        FP("QuotaPagedPoolUsage", M_SIZE, 48, 8),
        FP("QuotaNonPagedPoolUsage", M_SIZE, 52, 9),
        FP("PrivatePageCount", M_SIZE, 56, 10),
};
/* Process_Terminate_TypeGroup1 (Windows 8 on): the process whose last thread ended */
static const struct mof_field process_terminate[] = {
        FR("ProcessId", M_U32, 0, 0, R_PID),
};
/* SystemConfig_CPU (version 2 on: DomainName of 134 code units) */
static const struct mof_field cfg_cpu[] = {
        F("MHz", M_U32, 0),
        F("NumberOfProcessors", M_U32, 4),
        F("MemSize", M_U32, 8),
        F("PageSize", M_U32, 12),
        F("AllocationGranularity", M_U32, 16),
        FW("ComputerName", 20, 256),
        FW("DomainName", 532, 134),
        F("HyperThreadingFlag", M_PTR, 800),
};
/* SystemConfig_V1_CPU */
static const struct mof_field cfg_cpu_v1[] = {
        F("MHz", M_U32, 0),
        F("NumberOfProcessors", M_U32, 4),
        F("MemSize", M_U32, 8),
        F("PageSize", M_U32, 12),
        F("AllocationGranularity", M_U32, 16),
        FW("ComputerName", 20, 256),
        FW("DomainName", 532, 132),
        F("HyperThreadingFlag", M_PTR, 796),
};
static const struct mof_field cfg_phy_disk[] = {
        F("DiskNumber", M_U32, 0),       F("BytesPerSector", M_U32, 4),
        F("SectorsPerTrack", M_U32, 8),  F("TracksPerCylinder", M_U32, 12),
        F("Cylinders", M_U64, 16),       F("SCSIPort", M_U32, 24),
        F("SCSIPath", M_U32, 28),        F("SCSITarget", M_U32, 32),
        F("SCSILun", M_U32, 36),         FW("Manufacturer", 40, 256),
        F("PartitionCount", M_U32, 552), F("WriteCacheEnabled", M_U8, 556),
        FW("BootDriveLetter", 558, 3),   FW("Spare", 564, 2),
};
static const struct mof_field cfg_log_disk[] = {
        F("StartOffset", M_U64, 0),
        F("PartitionSize", M_U64, 8),
        F("DiskNumber", M_U32, 16),
        F("Size", M_U32, 20),
        F("DriveType", M_U32, 24),
        FW("DriveLetterString", 28, 4),
        F("PartitionNumber", M_U32, 40),
        F("SectorsPerCluster", M_U32, 44),
        F("BytesPerSector", M_U32, 48),
        F("NumberOfFreeClusters", M_I64, 56),
        F("TotalNumberOfClusters", M_I64, 64),
        FW("FileSystem", 72, 16),
        F("VolumeExt", M_U32, 104),
};
/* SystemConfig_NIC (version 2 on) */
static const struct mof_field cfg_nic[] = {
        F("PhysicalAddr", M_U64, 0),
        F("PhysicalAddrLen", M_U32, 8),
        F("Ipv4Index", M_U32, 12),
        F("Ipv6Index", M_U32, 16),
        F("NICDescription", M_WSTR, 20),
        F("IpAddresses", M_WSTR, NEXT),
        F("DnsServerAddresses", M_WSTR, NEXT),
};
static const struct mof_field cfg_video[] = {
        F("MemorySize", M_U32, 0),    F("XResolution", M_U32, 4),     F("YResolution", M_U32, 8),
        F("BitsPerPixel", M_U32, 12), F("VRefresh", M_U32, 16),       FW("ChipType", 20, 256),
        FW("DACType", 532, 256),      FW("AdapterString", 1044, 256), FW("BiosString", 1556, 256),
        FW("DeviceID", 2068, 256),    F("StateFlags", M_X32, 2580),
};
/* SystemConfig_Services (version 2 on; version 3 adds the load-order and svchost groups) */
static const struct mof_field cfg_services[] = {
        FR("ProcessId", M_U32, 0, 0, R_PID),
        F("ServiceState", M_U32, 4),
        F("SubProcessTag", M_U32, 8),
        F("ServiceName", M_WSTR, 12),
        F("DisplayName", M_WSTR, NEXT),
        F("ProcessName", M_WSTR, NEXT),
        FOPT("LoadOrderGroup", M_WSTR, NEXT, 0, R_NONE),
        FOPT("SvchostGroup", M_WSTR, NEXT, 0, R_NONE),
};
static const struct mof_field cfg_power[] = {
        F("S1", M_U8, 0), F("S2", M_U8, 1), F("S3", M_U8, 2), F("S4", M_U8, 3), F("S5", M_U8, 4),
};
static const struct mof_field cfg_network[] = {
        F("TcbTablePartitions", M_U32, 0),
        F("MaxHashTableSize", M_U32, 4),
        F("MaxUserPort", M_U32, 8),
        F("TcpTimedWaitDelay", M_U32, 12),
};
/* SystemConfig_IRQ before version 3, and from it (a 16-bit group and padding at 12) */
static const struct mof_field cfg_irq[] = {
        F("IRQAffinity", M_X64, 0),
        F("IRQNum", M_U32, 8),
        F("DeviceDescriptionLen", M_U32, 12),
        F("DeviceDescription", M_WSTR, 16),
};
static const struct mof_field cfg_irq_v3[] = {
        F("IRQAffinity", M_X64, 0),         F("IRQNum", M_U32, 8),
        F("IRQGroup", M_U16, 12),           F("DeviceDescriptionLen", M_U32, 16),
        F("DeviceDescription", M_WSTR, 20),
};
/* SystemConfig_PnP: up to version 3 three lengths lead; version 4 a class GUID and filter
   counts; version 5 also the device's status and problem */
static const struct mof_field cfg_pnp_v3[] = {
        F("IDLength", M_U32, 0),
        F("DescriptionLength", M_U32, 4),
        F("FriendlyNameLength", M_U32, 8),
        F("DeviceID", M_WSTR, 12),
        F("DeviceDescription", M_WSTR, NEXT),
        F("FriendlyName", M_WSTR, NEXT),
};
static const struct mof_field cfg_pnp_v4[] = {
        F("ClassGuid", M_GUID, 0),
        F("UpperFilterCount", M_U32, 16),
        F("LowerFilterCount", M_U32, 20),
        F("DeviceID", M_WSTR, 24),
        F("DeviceDescription", M_WSTR, NEXT),
        F("FriendlyName", M_WSTR, NEXT),
        F("PdoName", M_WSTR, NEXT),
        F("ServiceName", M_WSTR, NEXT),
};
static const struct mof_field cfg_pnp_v5[] = {
        F("ClassGuid", M_GUID, 0),
        F("UpperFilterCount", M_U32, 16),
        F("LowerFilterCount", M_U32, 20),
        F("DevStatus", M_X32, 24),
        F("DevProblem", M_U32, 28),
        F("DeviceID", M_WSTR, 32),
        F("DeviceDescription", M_WSTR, NEXT),
        F("FriendlyName", M_WSTR, NEXT),
        F("PdoName", M_WSTR, NEXT),
        F("ServiceName", M_WSTR, NEXT),
};
static const struct mof_field cfg_ide[] = {
        F("TargetId", M_U32, 0),
        F("DeviceType", M_U32, 4),
        F("DeviceTimingMode", M_X32, 8),
        F("LocationInformationLen", M_U32, 12),
        F("LocationInformation", M_WSTR, 16),
};
/* SystemConfig_OpticalMedia: the drive's and the disc's numbers, then the drive letter and file
   system (UTF-16), the device's and maker's names (8-bit) */
static const struct mof_field cfg_optical[] = {
        F("DiskNumber", M_U16, 0),           F("BusType", M_U16, 2),
        F("DeviceType", M_U16, 4),           F("MediaType", M_U16, 6),
        F("StartingOffset", M_U64, 8),       F("Size", M_U64, 16),
        F("NumberOfFreeBlocks", M_U64, 24),  F("TotalNumberOfBlocks", M_U64, 32),
        F("NextWritableAddress", M_U64, 40), F("NumberOfSessions", M_U32, 48),
        F("NumberOfTracks", M_U32, 52),      F("BytesPerSector", M_U32, 56),
        F("DiscStatus", M_U16, 60),          F("LastSessionStatus", M_U16, 62),
        F("DriveLetter", M_WSTR, 64),        F("FileSystemName", M_WSTR, NEXT),
        F("DeviceName", M_ASTR, NEXT),       F("ManufacturerName", M_ASTR, NEXT),
};
/* SystemConfig_Platform: four UTF-16 strings */
static const struct mof_field cfg_platform[] = {
        F("SystemManufacturer", M_WSTR, 0),
        F("SystemProductName", M_WSTR, NEXT),
        F("BiosDate", M_WSTR, NEXT),
        F("BiosVersion", M_WSTR, NEXT),
};
/* SystemConfig_DPI */
static const struct mof_field cfg_dpi[] = {
        F("MachineDPI", M_U32, 0),
        F("UserDPI", M_U32, 4),
};
/* EventTrace's DbgID_RSDS and BuildInfo, which a WPP logger writes at its start (a circular log
   such as CldFlt's): the PDB that holds the messages' formats, and the system's build */
static const struct mof_field trace_dbgid_rsds[] = {
        F("GuidSig", M_GUID, 0),
        F("Age", M_U32, 16),
        F("PdbFileName", M_ASTR, 20),
};
static const struct mof_field trace_build_info[] = {
        F("BuildLab", M_ASTR, 0),
};
/* EventTrace PartitionInfo (0x0050): the trace's partition (ETL-FORMAT.md 3.1, "all zeros" on a
   machine with no other partitions) */
static const struct mof_field trace_partition_info[] = {
        F("EventVersion", M_U16, 0),  F("Reserved", M_U16, 2),
        F("PartitionType", M_U32, 4), F("QpcOffsetFromRoot", M_I64, 8),
        F("PartitionId", M_GUID, 16), F("ParentId", M_GUID, 32),
};
/* Image KernelBase (0x1421) and HypercallPage (0x1422): WMI_IMAGELOAD_INFORMATION's ImageBase
   alone, the kernel's and the hypervisor's call page's address */
static const struct mof_field image_base[] = {
        F("ImageBase", M_PTR, 0),
};
/* PerfInfo Mark and AsyncMark (PERFINFO_LOG_TYPE_MARK 0x0F22, ASYNCMARK 0x0F24:
   PERFINFO_MARK_INFORMATION, its Name an 8-bit string): a mark set in the trace (xperf -m, and
   WPR's "Wpr_Initiated_Rundown" and the profile's name and description) */
static const struct mof_field perfinfo_mark[] = {
        F("Name", M_ASTR, 0),
};
/* SysConfigEx */
static const struct mof_field ex_build_info[] = {
        F("InstallDate", M_I64, 0),
        F("BuildLab", M_WSTR, 8),
        F("ProductName", M_WSTR, NEXT),
};
static const struct mof_field ex_system_paths[] = {
        F("SystemDirectory", M_WSTR, 0),
        F("SystemWindowsDirectory", M_WSTR, NEXT),
};
static const struct mof_field ex_unknown_volume[] = {
        F("Value", M_WSTR, 0),
};
static const struct mof_field ex_volume_mapping[] = {
        F("NtPath", M_WSTR, 0),
        F("DosPath", M_WSTR, NEXT),
};

/* SysConfigEx 36: a network interface, as GetIfTable2 gives it (MIB_IF_ROW2, 1,352 bytes on
   x64 and x86 alike: no pointers); a merged trace has one for each interface. The byte counters
   of each kind of traffic, the unknown protocols and the queue length are left out (at most
   KEV_MAX_FIELDS fields). */
static const struct mof_field ex_network_interface[] = {
        F("InterfaceLuid", M_X64, 0),
        F("InterfaceIndex", M_U32, 8),
        F("InterfaceGuid", M_GUID, 12),
        FW("Alias", 28, 257),
        FW("Description", 542, 257),
        FR("PhysicalAddressLength", M_U32, 1056, 0, R_LEN),
        FB("PhysicalAddress", M_MAC, 1060, 32),
        FB("PermanentPhysicalAddress", M_MAC, 1092, 32),
        F("Mtu", M_U32, 1124),
        F("Type", M_U32, 1128),
        F("TunnelType", M_U32, 1132),
        F("MediaType", M_U32, 1136),
        F("PhysicalMediumType", M_U32, 1140),
        F("AccessType", M_U32, 1144),
        F("InterfaceAndOperStatusFlags", M_U8, 1152),
        F("OperStatus", M_U32, 1156),
        F("AdminStatus", M_U32, 1160),
        F("MediaConnectState", M_U32, 1164),
        F("NetworkGuid", M_GUID, 1168),
        F("ConnectionType", M_U32, 1184),
        F("TransmitLinkSpeed", M_U64, 1192),
        F("ReceiveLinkSpeed", M_U64, 1200),
        F("InOctets", M_U64, 1208),
        F("InUcastPkts", M_U64, 1216),
        F("InNUcastPkts", M_U64, 1224),
        F("InDiscards", M_U64, 1232),
        F("InErrors", M_U64, 1240),
        F("OutOctets", M_U64, 1280),
        F("OutUcastPkts", M_U64, 1288),
        F("OutNUcastPkts", M_U64, 1296),
        F("OutDiscards", M_U64, 1304),
        F("OutErrors", M_U64, 1312),
};
/* SysConfigEx 37: the system's version, major.minor.build and the update's revision (a
   22000.613 build's trace: 10.0.22000.613, as its BuildInfo's BuildLab says "22000.613..."),
   then two words whose meaning no public source gives (3 and 0 in every trace seen) */
static const struct mof_field ex_os_version[] = {
        F("Version", M_VER64, 0),
        F("Value1", M_U32, 8),
        F("Value2", M_U32, 12),
};
/* WinSat (ed54dff8-c409-4cf6-bf83-05e1e61a09c4), which a merged trace carries: the Windows
   System Assessment Tool's documents, XML in UTF-16 compressed with LZNT1 after its size (33:
   <WinSPR>, the scores; 35: <Metrics>; 37: <SystemConfig>, the machine) */
static const struct mof_field winsat_xml[] = {
        F("Version", M_U32, 0),
        FR("XmlSize", M_U32, 4, 0, R_LEN),
        F("Xml", M_LZNT1_WSTR, 8),
};

#define E(prov, op, lo, hi, name, f)                                                               \
        {                                                                                          \
                prov, op, lo, hi, prov "/" name, f, NF(f)                                          \
        }

/* Told apart by provider, opcode and version, never by opcode alone (ETL-FORMAT.md 3). */
static const struct mof_event mof_events[] = {
        E("DiskIo", 10, 2, 255, "Read", disk_rw),
        E("DiskIo", 11, 2, 255, "Write", disk_rw),
        E("DiskIo", 12, 2, 255, "ReadInit", disk_init),
        E("DiskIo", 13, 2, 255, "WriteInit", disk_init),
        E("DiskIo", 14, 2, 255, "FlushBuffers", disk_flush),
        E("DiskIo", 15, 2, 255, "FlushInit", disk_init),
        E("PageFault", 32, 2, 255, "HardFault", hard_fault),
        E("TcpIp", 10, 1, 255, "Send", tcp_send4),
        E("TcpIp", 11, 1, 255, "Recv", ip_group4),
        E("TcpIp", 12, 1, 255, "Connect", tcp_connect4),
        E("TcpIp", 13, 1, 255, "Disconnect", ip_group4),
        E("TcpIp", 14, 1, 255, "Retransmit", ip_group4),
        E("TcpIp", 15, 1, 255, "Accept", tcp_connect4),
        E("TcpIp", 16, 1, 255, "Reconnect", ip_group4),
        E("TcpIp", 17, 2, 255, "Fail", ip_fail),
        E("TcpIp", 18, 1, 255, "TCPCopy", ip_group4),
        E("TcpIp", 26, 2, 255, "SendIPV6", tcp_send6),
        E("TcpIp", 27, 2, 255, "RecvIPV6", ip_group6),
        E("TcpIp", 28, 2, 255, "ConnectIPV6", tcp_connect6),
        E("TcpIp", 29, 2, 255, "DisconnectIPV6", ip_group6),
        E("TcpIp", 30, 2, 255, "RetransmitIPV6", ip_group6),
        E("TcpIp", 31, 2, 255, "AcceptIPV6", tcp_connect6),
        E("TcpIp", 32, 2, 255, "ReconnectIPV6", ip_group6),
        E("TcpIp", 34, 2, 255, "TCPCopyIPV6", ip_group6),
        E("UdpIp", 10, 1, 255, "Send", ip_group4),
        E("UdpIp", 11, 1, 255, "Recv", ip_group4),
        E("UdpIp", 17, 2, 255, "Fail", ip_fail),
        E("UdpIp", 26, 2, 255, "SendIPV6", ip_group6),
        E("UdpIp", 27, 2, 255, "RecvIPV6", ip_group6),
        E("FileIo", 0, 2, 255, "Name", file_name),
        E("FileIo", 32, 2, 255, "FileCreate", file_name),
        E("FileIo", 35, 2, 255, "FileDelete", file_name),
        E("FileIo", 36, 2, 255, "FileRundown", file_name),
        E("PerfInfo", 34, 0, 255, "Mark", perfinfo_mark),
        E("PerfInfo", 36, 0, 255, "AsyncMark", perfinfo_mark),
        E("Process", 11, 2, 255, "Terminate", process_terminate),
        E("Process", 32, 2, 255, "PerfCtr", process_ctr),
        E("Process", 33, 2, 255, "PerfCtrRundown", process_ctr),
        E("SystemConfig", 10, 1, 1, "CPU", cfg_cpu_v1),
        E("SystemConfig", 10, 2, 255, "CPU", cfg_cpu),
        E("SystemConfig", 11, 1, 255, "PhyDisk", cfg_phy_disk),
        E("SystemConfig", 12, 1, 255, "LogDisk", cfg_log_disk),
        E("SystemConfig", 13, 2, 255, "NIC", cfg_nic),
        E("SystemConfig", 14, 1, 255, "Video", cfg_video),
        E("SystemConfig", 15, 2, 255, "Services", cfg_services),
        E("SystemConfig", 16, 1, 255, "Power", cfg_power),
        E("SystemConfig", 17, 2, 255, "Network", cfg_network),
        E("SystemConfig", 18, 2, 255, "OpticalMedia", cfg_optical),
        E("SystemConfig", 21, 0, 2, "IRQ", cfg_irq),
        E("SystemConfig", 21, 3, 255, "IRQ", cfg_irq_v3),
        E("SystemConfig", 22, 0, 3, "PnP", cfg_pnp_v3),
        E("SystemConfig", 22, 4, 4, "PnP", cfg_pnp_v4),
        E("SystemConfig", 22, 5, 255, "PnP", cfg_pnp_v5),
        E("SystemConfig", 23, 2, 255, "IDEChannel", cfg_ide),
        E("SystemConfig", 25, 2, 255, "Platform", cfg_platform),
        E("SystemConfig", 28, 2, 255, "DPI", cfg_dpi),
        E("EventTrace", 64, 0, 255, "DbgID_RSDS", trace_dbgid_rsds),
        E("EventTrace", 80, 0, 255, "PartitionInfo", trace_partition_info),
        E("Image", 33, 0, 255, "KernelBase", image_base),
        E("Image", 34, 0, 255, "HypercallPage", image_base),
        E("EventTrace", 66, 0, 255, "BuildInfo", trace_build_info),
        E("SysConfigEx", 32, 0, 255, "BuildInfo", ex_build_info),
        E("SysConfigEx", 33, 0, 255, "SystemPaths", ex_system_paths),
        E("SysConfigEx", 34, 0, 255, "UnknownVolume", ex_unknown_volume),
        E("SysConfigEx", 35, 0, 255, "VolumeMapping", ex_volume_mapping),
        E("SysConfigEx", 36, 0, 255, "NetworkInterface", ex_network_interface),
        E("SysConfigEx", 37, 0, 255, "OsVersion", ex_os_version),
        E("WinSat", 33, 0, 255, "WinSPR", winsat_xml),
        E("WinSat", 35, 0, 255, "Metrics", winsat_xml),
        E("WinSat", 37, 0, 255, "SystemConfig", winsat_xml),
};

#define NR_MOF_EVENTS (sizeof(mof_events) / sizeof(mof_events[0]))
_Static_assert(NR_MOF_EVENTS < 255, "mof_by_op's links are bytes");

/* mof_events by opcode: the first entry of each opcode and each entry's next of the same opcode
   (index + 1, 0 for none), in table order: a lookup compares the providers of its opcode's few
   entries (1 to 4) rather than scanning the 60 (140 instructions a DiskIo or TcpIp event). */
static uint8_t mof_first[256], mof_next[NR_MOF_EVENTS];
static pthread_once_t mof_by_op_once = PTHREAD_ONCE_INIT;

static void mof_by_op_build(void)
{
        for (size_t i = NR_MOF_EVENTS; i-- > 0;) {
                mof_next[i] = mof_first[mof_events[i].opcode];
                mof_first[mof_events[i].opcode] = (uint8_t)(i + 1);
        }
}

static const struct mof_event *mof_find(const char *provider, uint8_t op, uint8_t version)
{
        pthread_once(&mof_by_op_once, mof_by_op_build);
        for (unsigned i = mof_first[op]; i; i = mof_next[i - 1]) {
                const struct mof_event *e = &mof_events[i - 1];

                if (version >= e->min_version && version <= e->max_version &&
                    strcmp(e->provider, provider) == 0)
                        return e;
        }
        return NULL;
}

/* Bytes a fixed-size property takes; 0 for strings. */
static size_t mof_size(enum mof_type t, unsigned psize)
{
        switch (t) {
        case M_U8: return 1;
        case M_U16:
        case M_I16:
        case M_PORT: return 2;
        case M_U32:
        case M_I32:
        case M_X32:
        case M_IPV4: return 4;
        case M_U64:
        case M_I64:
        case M_X64:
        case M_VER64: return 8;
        case M_PTR:
        case M_SIZE: return psize;
        case M_IPV6:
        case M_GUID: return 16;
        case M_WSTR:
        case M_ASTR:
        case M_WFIXED:
        case M_MAC:
        case M_LZNT1_WSTR: return 0;
        }
        return 0;
}

size_t kevent_format_ipv6(char *buf, size_t size, const uint8_t *a)
{
        size_t o = 0;
        int best = -1, best_len = 0;

        /* the longest run of two or more zero groups becomes "::" (RFC 5952) */
        for (int i = 0; i < 8;) {
                int j = i;
                while (j < 8 && a[2 * j] == 0 && a[2 * j + 1] == 0)
                        j++;
                if (j - i > best_len && j - i >= 2) {
                        best = i;
                        best_len = j - i;
                }
                i = j > i ? j : i + 1;
        }
        for (int i = 0; i < 8 && o + 6 < size; i++) {
                if (i == best) {
                        buf[o++] = ':';
                        buf[o++] = ':';
                        i += best_len - 1;
                        continue;
                }
                if (o && buf[o - 1] != ':')
                        buf[o++] = ':';
                /* "%x" of the group: at most 4 digits, and o + 6 < size leaves room for them */
                unsigned g = (unsigned)(a[2 * i] << 8 | a[2 * i + 1]);
                size_t n = g >> 12 ? 4 : g >> 8 ? 3 : g >> 4 ? 2 : 1;
                for (size_t k = n; k-- > 0; g >>= 4)
                        buf[o + k] = "0123456789abcdef"[g & 15];
                o += n;
        }
        buf[o] = 0;
        return o;
}

/* The walk of fields[0..nr_fields) over p[0..len): into out (the field slots, their text in the
   arena), or with out NULL a check alone that gives the same answer, count and subject without
   the text (where each string ends instead). Returns 0 or -EBADMSG. */
static int mof_walk(struct kdecoder *d, const struct mof_field *fields, unsigned nr_fields,
                    const uint8_t *p, size_t len, unsigned psize, struct kevent_field *out,
                    uint32_t *nr_out, uint32_t *tid_out, uint32_t *pid_out)
{
        uint32_t nr = 0, tid = 0xFFFFFFFFu, pid = 0xFFFFFFFFu;
        size_t at = 0;     /* the end of the previous property */
        uint64_t used = 0; /* the last R_LEN property's value: M_MAC's and M_LZNT1_WSTR's size */
        struct kevent_field scratch;

        for (unsigned i = 0; i < nr_fields && nr < KEV_MAX_FIELDS; i++) {
                const struct mof_field *f = &fields[i];
                size_t off = f->off == NEXT ? at : (size_t)f->off + f->nptr * (psize - 4u);
                size_t size = mof_size(f->type, psize);
                struct kevent_field *o = out ? &out[nr] : &scratch;

                if ((f->type == M_WSTR || f->type == M_ASTR) && off >= len) {
                        if (f->is_optional)
                                break;
                        return -EBADMSG;
                }
                if (f->type == M_WFIXED)
                        size = (size_t)f->count * 2u;
                else if (f->type == M_MAC)
                        size = f->count;
                if (off > len || size > len - off) {
                        if (f->is_optional)
                                break;
                        return -EBADMSG;
                }
                const uint8_t *q = p + off;

                o->name = f->name;
                o->kind = KEV_FIELD_UINT;
                o->u = 0;
                o->s = "";
                at = off + size;
                switch ((enum mof_type)f->type) {
                case M_U8: o->u = q[0]; break;
                case M_U16: o->u = le_get16(q); break;
                case M_I16:
                        o->kind = KEV_FIELD_INT;
                        o->u = (uint64_t)(int64_t)(int16_t)le_get16(q);
                        break;
                case M_U32: o->u = le_get32(q); break;
                case M_I32:
                        o->kind = KEV_FIELD_INT;
                        o->u = (uint64_t)(int64_t)(int32_t)le_get32(q);
                        break;
                case M_X32:
                        o->kind = KEV_FIELD_HEX;
                        o->u = le_get32(q);
                        break;
                case M_U64: o->u = le_get64(q); break;
                case M_I64:
                        o->kind = KEV_FIELD_INT;
                        o->u = le_get64(q);
                        break;
                case M_X64:
                        o->kind = KEV_FIELD_HEX;
                        o->u = le_get64(q);
                        break;
                case M_PTR:
                        o->kind = KEV_FIELD_HEX;
                        o->u = psize == 8 ? le_get64(q) : le_get32(q);
                        break;
                case M_SIZE: o->u = psize == 8 ? le_get64(q) : le_get32(q); break;
                case M_PORT: o->u = (uint64_t)(q[0] << 8 | q[1]); break;
                case M_IPV4: {
                        o->kind = KEV_FIELD_STR;
                        if (!out)
                                break;
                        char buf[16];
                        snprintf(buf, sizeof(buf), "%u.%u.%u.%u", q[0], q[1], q[2], q[3]);
                        o->s = kdecoder_arena_copy(d, buf);
                        break;
                }
                case M_IPV6: {
                        o->kind = KEV_FIELD_STR;
                        if (!out)
                                break;
                        char buf[48];
                        kevent_format_ipv6(buf, sizeof(buf), q);
                        o->s = kdecoder_arena_copy(d, buf);
                        break;
                }
                case M_GUID: {
                        o->kind = KEV_FIELD_STR;
                        if (!out)
                                break;
                        char buf[40];
                        snprintf(buf, sizeof(buf),
                                 "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                                 (unsigned)le_get32(q), (unsigned)le_get16(q + 4),
                                 (unsigned)le_get16(q + 6), q[8], q[9], q[10], q[11], q[12], q[13],
                                 q[14], q[15]);
                        o->s = kdecoder_arena_copy(d, buf);
                        break;
                }
                case M_WSTR:
                        o->kind = KEV_FIELD_STR;
                        if (out)
                                o->s = kdecoder_utf16_at(d, p, len, off, &at);
                        else
                                at = kdecoder_utf16_end(p, len, off);
                        break;
                case M_WFIXED:
                        o->kind = KEV_FIELD_STR;
                        if (out)
                                o->s = kdecoder_utf16_fixed(d, p, len, off, f->count);
                        break;
                case M_MAC: {
                        o->kind = KEV_FIELD_STR;
                        if (!out)
                                break;
                        char buf[3 * 32 + 1] = "";
                        size_t n = used < f->count ? (size_t)used : f->count, w = 0;
                        for (size_t k = 0; k < n && k < 32; k++) {
                                if (k)
                                        buf[w++] = '-';
                                buf[w++] = "0123456789ABCDEF"[q[k] >> 4];
                                buf[w++] = "0123456789ABCDEF"[q[k] & 15];
                        }
                        buf[w] = 0;
                        o->s = kdecoder_arena_copy(d, buf);
                        break;
                }
                case M_VER64: {
                        o->kind = KEV_FIELD_STR;
                        if (!out)
                                break;
                        char buf[24];
                        uint64_t v = le_get64(q);
                        snprintf(buf, sizeof(buf), "%u.%u.%u.%u", (unsigned)(v >> 48),
                                 (unsigned)(v >> 32 & 0xffff), (unsigned)(v >> 16 & 0xffff),
                                 (unsigned)(v & 0xffff));
                        o->s = kdecoder_arena_copy(d, buf);
                        break;
                }
                case M_LZNT1_WSTR:
                        /* the check decompresses too (keeping nothing), so that a fill after
                           it never fails */
                        o->kind = KEV_FIELD_STR;
                        at = len;
                        if (!out && lznt1_decompress(q, len - off, NULL, 0) < 0)
                                return -EBADMSG;
                        if (out)
                                o->s = kdecoder_lznt1_utf16(d, p, len, off, used);
                        break;
                case M_ASTR: {
                        o->kind = KEV_FIELD_STR;
                        if (out) {
                                o->s = kdecoder_ansi_at(d, p, len, off, &at);
                                break;
                        }
                        const uint8_t *nul = memchr(q, 0, len - off); /* kstr_ansi's end */
                        at = nul ? (size_t)(nul - p) + 1 : len;
                        break;
                }
                }
                if (f->role == R_LEN)
                        used = o->u;
                if (f->role == R_PID)
                        pid = (uint32_t)o->u;
                else if (f->role == R_TID)
                        tid = (uint32_t)o->u;
                nr++;
        }
        *nr_out = nr;
        *tid_out = tid;
        *pid_out = pid;
        return 0;
}

/* ev's name, type and subject once its payload has passed mof_walk. */
static void mof_event_set(struct kdecoder *d, struct kevent *ev, const char *name, uint32_t tid,
                          uint32_t pid)
{
        ev->type = KEV_FIELDS;
        ev->name = name;
        /* the subject where Windows puts it in the payload, not in the header (-1 there) */
        if (tid != 0xFFFFFFFFu && ev->tid == 0xFFFFFFFFu)
                ev->tid = tid;
        if (pid != 0xFFFFFFFFu) /* the payload's process is the subject (a service's) */
                ev->pid = pid;
        if (ev->pid == 0xFFFFFFFFu && ev->tid != 0xFFFFFFFFu)
                ev->pid = kdecoder_pid_of_tid(d, ev->tid);
}

/* kdecoder_fill_fn of a mof_event (desc), its payload checked by mof_walk before. */
static int mof_fill(struct kdecoder *d, const void *desc, const void *table, const uint8_t *p,
                    size_t len, unsigned psize, uint32_t *nr)
{
        const struct mof_event *e = desc;
        uint32_t tid, pid;

        (void)table;
        return mof_walk(d, e->fields, e->nr_fields, p, len, psize, kdecoder_field_slots(d), nr,
                        &tid, &pid);
}

int kevent_mof_decode(struct kdecoder *d, const char *provider, struct kevent *ev, const uint8_t *p,
                      size_t len, unsigned psize)
{
        const struct mof_event *e = provider ? mof_find(provider, ev->opcode, ev->version) : NULL;
        uint32_t nr, tid, pid;

        if (!e)
                return 1;
        /* where the properties end and the subject, not their text: that when a consumer asks */
        int rc = mof_walk(d, e->fields, e->nr_fields, p, len, psize, NULL, &nr, &tid, &pid);
        if (rc)
                return rc;
        mof_event_set(d, ev, e->name, tid, pid);
        ev->fields.nr = 0;
        ev->fields.list = NULL;
        ev->fields.lazy = kdecoder_lazy_arm(d, mof_fill, e, NULL, p, len, psize);
        return 0;
}

int kevent_mof_decode_now(struct kdecoder *d, const char *provider, struct kevent *ev,
                          const uint8_t *p, size_t len, unsigned psize)
{
        const struct mof_event *e = provider ? mof_find(provider, ev->opcode, ev->version) : NULL;

        if (!e)
                return 1;
        return kevent_mof_fields(d, e->name, e->fields, e->nr_fields, ev, p, len, psize);
}

int kevent_mof_fields(struct kdecoder *d, const char *name, const struct mof_field *fields,
                      unsigned nr_fields, struct kevent *ev, const uint8_t *p, size_t len,
                      unsigned psize)
{
        struct kevent_field *out = kdecoder_field_slots(d);
        uint32_t nr, tid, pid;
        int rc = mof_walk(d, fields, nr_fields, p, len, psize, out, &nr, &tid, &pid);

        if (rc)
                return rc;
        mof_event_set(d, ev, name, tid, pid);
        ev->fields.nr = nr;
        ev->fields.list = out;
        ev->fields.lazy = NULL;
        return 0;
}

"""The records a point and its samples store: frozen dataclasses, one JSON shape each.

The store (:mod:`sizing.store`) writes and reads them and migrates older rows; every other
module reads them by attribute. :mod:`sizing.records.codec` is the one place their keys
are spelled.
"""

from sizing.records.codec import dump, load
from sizing.records.gateway import GatewayChecks, JwtCheck
from sizing.records.guards import GuardInputs, Guards, RepetitionEvidence, Verdict
from sizing.records.host import (
    CeilingsRecord,
    CryptoRecord,
    DeclaredCpu,
    DeclaredRecord,
    HostRecord,
    LockOwner,
    LockReply,
    hosts_of,
)
from sizing.records.latency import Climb, LatencyPoint, LatencyRecord, SloSearch, SoakRep
from sizing.records.platform import (
    BaremetalSettings,
    ContainerSettings,
    EsxiSettings,
    GuestTopology,
    HostHtRecord,
    KvmSettings,
    PlatformSettings,
    QemuThread,
    UlimitsRecord,
    VmConfigRecord,
)
from sizing.records.point import (
    PairLeg,
    PairRecord,
    PointEnvironment,
    PointEvidence,
    PointMeta,
    PointWorkload,
    StopRuleRecord,
    UpstreamRecord,
)
from sizing.records.run import ProfileDefRecord, RunOptionsRecord
from sizing.records.window import (
    CpuShare,
    CpuWindow,
    HistogramRecord,
    KernelOutside,
    MergedLatencyRecord,
    SampleMeta,
    ServerNet,
    UpstreamWindow,
)

__all__ = [
    "BaremetalSettings",
    "ContainerSettings",
    "EsxiSettings",
    "GuestTopology",
    "HostHtRecord",
    "KvmSettings",
    "QemuThread",
    "UlimitsRecord",
    "VmConfigRecord",
    "CeilingsRecord",
    "Climb",
    "CryptoRecord",
    "DeclaredCpu",
    "DeclaredRecord",
    "HostRecord",
    "LockOwner",
    "LockReply",
    "hosts_of",
    "CpuShare",
    "CpuWindow",
    "HistogramRecord",
    "PointEnvironment",
    "GatewayChecks",
    "GuardInputs",
    "Guards",
    "JwtCheck",
    "KernelOutside",
    "LatencyPoint",
    "LatencyRecord",
    "MergedLatencyRecord",
    "PairLeg",
    "PairRecord",
    "PlatformSettings",
    "PointEvidence",
    "PointMeta",
    "RepetitionEvidence",
    "SampleMeta",
    "ServerNet",
    "SloSearch",
    "SoakRep",
    "StopRuleRecord",
    "UpstreamRecord",
    "UpstreamWindow",
    "Verdict",
    "PointWorkload",
    "ProfileDefRecord",
    "RunOptionsRecord",
    "dump",
    "load",
]

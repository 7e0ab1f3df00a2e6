/// What the host refused or dropped at its limits (``HostLimits``, ``GATTServerSettings``)
/// since it started: all zero unless a peer or the controller sent more than the host keeps.
public struct HostDropCounts: Sendable, Equatable {
    /// L2CAP PDUs refused because their connection's send queue was full.
    public var refusedACLPDUs: Int
    /// Signalling and Security Manager PDUs and controller events the host had no room for.
    public var droppedHostItems: Int
    /// ATT PDUs the GATT server dropped because their connection had too many waiting.
    public var droppedServerPDUs: Int
    /// Indications the GATT server kept for away bonded clients and dropped
    /// (``GATTServerSettings/maximumDeferredIndications``).
    public var droppedDeferredIndications: Int
}

extension LEHost {
    /// What the host refused or dropped at its limits so far.
    public nonisolated var dropCounts: HostDropCounts {
        HostDropCounts(refusedACLPDUs: controller.refusedACLCount, droppedHostItems: l2cap.droppedHostItemCount,
                       droppedServerPDUs: server.droppedPDUCount, droppedDeferredIndications: server.droppedDeferredIndicationCount)
    }
}

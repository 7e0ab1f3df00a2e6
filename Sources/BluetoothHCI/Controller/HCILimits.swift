/// The bounds on what ``HCIController`` keeps for later. Each is a limit on memory that a
/// peer, a controller or a busy app could otherwise grow without end; what happens at the
/// limit is part of each field's documentation.
public struct HCILimits: Sendable, Equatable {
    /// The most bytes of L2CAP data one connection may have waiting for controller buffers
    /// (default 64 KiB, a little more than the largest L2CAP PDU). A PDU that would pass it is
    /// refused with ``HCIError/sendQueueFull(connectionHandle:)``; a PDU is always taken when
    /// the connection's queue is empty. A link drains at the radio's pace, so a queue this
    /// long means the peer asks faster than its link carries answers, or has stopped
    /// acknowledging: waiting longer would only hold memory.
    public var aclQueuedBytesPerConnection: Int = 64 * 1024
    /// The most commands waiting for the controller's command credits (default 256). One more
    /// is refused with ``HCIError/commandQueueFull(_:)``. The host sends a handful of commands
    /// at a time; hundreds waiting means the controller stopped answering, and each of them
    /// would time out anyway.
    public var waitingCommands: Int = 256
    /// The most items ``HCIController/inbound`` holds for a consumer that does not keep up
    /// (default 4096). Newer items are dropped and counted
    /// (``HCIController/droppedInboundCount``); the closing item still ends the stream. Only
    /// consumers of ``HCIController/start()`` use the stream: the host's own receiver path is
    /// synchronous and keeps nothing.
    public var inboundItems: Int = 4096

    public init() {}
}

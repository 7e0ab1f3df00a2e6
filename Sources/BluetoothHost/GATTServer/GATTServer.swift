import BluetoothCore
import BluetoothHCI
import Logging

/// This device's GATT server: answers the ATT requests of every connected client.
///
/// Until services are published it answers what every server must: Exchange MTU, and
/// "not found" or "not supported" for the rest.
public actor GATTServer {
    /// Writes an ATT PDU to a connection; the completion runs once the controller has it.
    public typealias Sender = @Sendable (_ connectionHandle: UInt16, _ pdu: [UInt8], _ completion: HCIController.ACLCompletion?) -> Void

    enum InboxItem: Sendable {
        case pdu([UInt8], Connection)
        case closed(connectionHandle: UInt16)
    }

    private let sendPDU: Sender
    let preferredMTU: UInt16
    let logger: Logger
    private let inbox: AsyncStream<InboxItem>.Continuation

    public init(preferredMTU: UInt16 = 517, logger: Logger = Logger(label: "bluejay.gatt-server"), send: @escaping Sender) {
        self.sendPDU = send
        self.preferredMTU = preferredMTU
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: InboxItem.self, bufferingPolicy: .unbounded)
        inbox = continuation
        Task { await self.run(stream) }
    }

    /// A server-bound ATT PDU (request, command, confirmation) from a connected client.
    nonisolated func receive(_ pdu: [UInt8], from connection: Connection) { inbox.yield(.pdu(pdu, connection)) }

    /// The connection ended: forget its state.
    nonisolated func connectionDidClose(handle: UInt16) { inbox.yield(.closed(connectionHandle: handle)) }

    private func run(_ stream: AsyncStream<InboxItem>) async {
        for await item in stream {
            switch item {
            case let .pdu(bytes, connection): await handle(bytes, from: connection)
            case .closed: break
            }
        }
    }

    private func handle(_ bytes: [UInt8], from connection: Connection) async {
        guard let first = bytes.first else { return }
        let opcode = ATTOpcode(rawValue: first)
        // Commands (bit 6 set) and confirmations are never answered (Core 6.0, Vol 3, Part F, 3.3).
        if opcode.isCommand || opcode.kind == .confirmation { return }
        let response: ATTPDU
        if case let .exchangeMTURequest(request)? = try? ATTPDU.decode(bytes) {
            response = .exchangeMTUResponse(ATTExchangeMTUResponse(serverRxMTU: preferredMTU))
            connection.gatt.peerRequestedMTU(min(request.clientRxMTU, preferredMTU))
        } else {
            let code: ATTErrorCode = opcode.kind == .request ? .attributeNotFound : .requestNotSupported
            response = .errorResponse(ATTErrorResponse(requestOpcode: opcode, handle: 0x0000, code: code))
        }
        sendPDU(connection.handle, response.encode(), nil)
    }
}

import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// The LE signaling channel (Core 6.0, Vol 3, Part A, 4): connection parameter updates and
    /// credit-based channels (LEHost+Channels.swift); everything else is refused as the
    /// specification asks.
    func receiveSignaling(_ payload: [UInt8], on connection: Connection) {
        // Identifier 0x00 is never valid (Core 6.0, Vol 3, Part A, 4): such a packet is
        // corrupt, and answering it would put the illegal identifier in our own command.
        if payload.count >= 2, payload[1] == 0 {
            logger.warning("signaling packet with identifier 0 from \(connection.peer) ignored")
            return
        }
        let packet: LESignalingPacket
        do {
            packet = try LESignalingPacket.decode(payload)
        } catch {
            logger.warning("malformed signaling packet from \(connection.peer): \(error)")
            if payload.count >= 2 { sendSignaling(.commandReject(.commandNotUnderstood), identifier: payload[1], on: connection) }
            return
        }
        let command: LESignalingCommand
        do {
            command = try LESignalingCommand(code: packet.code, data: packet.data)
        } catch {
            sendSignaling(.commandReject(.commandNotUnderstood), identifier: packet.identifier, on: connection)
            return
        }
        switch command {
        case let .connectionParameterUpdateRequest(request):
            // Only the central answers this request (Core 6.0, Vol 3, Part A, 4.20).
            guard connection.role == .central else {
                sendSignaling(.commandReject(.commandNotUnderstood), identifier: packet.identifier, on: connection)
                return
            }
            let acceptable = request.violations.isEmpty
            sendSignaling(.connectionParameterUpdateResponse(.init(result: acceptable ? .accepted : .rejected)),
                          identifier: packet.identifier, on: connection)
            guard acceptable else { return }
            applyPeerParameterUpdate(request, handle: connection.handle)
        case let .connectionParameterUpdateResponse(response):
            if response.result != .accepted {
                // The central said no (Core 6.0, Vol 3, Part A, 4.21): its result has no HCI
                // status, Unacceptable Connection Parameters says the same.
                failParameterUpdates(handle: connection.handle, error: .linkProcedureRefused(LinkProcedureRefusal(
                    procedure: .connectionParameterUpdate, refusedBy: .peer, status: .unacceptableConnectionParameters)))
            }
        case .leCreditBasedConnectionRequest, .creditBasedConnectionRequest, .leCreditBasedConnectionResponse,
             .flowControlCreditIndication, .disconnectionRequest, .disconnectionResponse, .commandReject,
             .creditBasedReconfigureRequest, .creditBasedConnectionResponse:
            receiveChannelSignaling(command, identifier: packet.identifier, on: connection)
        case .creditBasedReconfigureResponse:
            logger.debug("signaling \(command) ignored")
        case .unknown:
            sendSignaling(.commandReject(.commandNotUnderstood), identifier: packet.identifier, on: connection)
        }
    }

    /// Sends a signaling command with a new identifier (for requests this host starts).
    func sendSignaling(_ command: LESignalingCommand, on connection: Connection) {
        sendSignaling(command, identifier: l2cap.nextSignalingIdentifier(), on: connection)
    }

    func sendSignaling(_ command: LESignalingCommand, identifier: UInt8, on connection: Connection) {
        connection.link.sendSignaling(command, identifier: identifier)
    }
}

import BluetoothCore

extension GATTServer {
    /// Serves one request or command of a client, in the order the client sent them.
    /// `security` is the link's when the PDU arrived.
    func serve(_ bytes: [UInt8], security: LinkSecurity, clientID: UInt64, connectionHandle: UInt16) async {
        guard let current = client(id: clientID, connectionHandle: connectionHandle) else { return }
        let mtu = Int(mtu(of: current))
        let context = RequestContext(clientID: clientID, connectionHandle: connectionHandle, peer: current.link.peer, mtu: mtu,
                                     security: security)
        // No PDU may be longer than ATT_MTU (Core 6.0, Vol 3, Part F, 3.2.8): a request that
        // is gets Invalid PDU (an unknown one Request Not Supported, as any unknown request),
        // anything else is ignored, and nothing of it is stored.
        if bytes.count > mtu, let first = bytes.first {
            let opcode = ATTOpcode(rawValue: first)
            logger.debug("ATT PDU of \(bytes.count) octets over the MTU of \(mtu) refused")
            if !opcode.isCommand, !opcode.isKnown || opcode.kind == .request {
                let code: ATTErrorCode = opcode.isKnown ? .invalidPDU : .requestNotSupported
                send(.errorResponse(ATTErrorResponse(requestOpcode: opcode, handle: 0x0000, code: code)), to: connectionHandle)
            }
            return
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU.decode(bytes)
        } catch {
            // Unknown requests: Request Not Supported; malformed requests: Invalid PDU;
            // commands, unknown or malformed: ignored (Core 6.0, Vol 3, Part F, 3.3).
            if let answer = ATTPDU.serverErrorResponse(toUndecodable: bytes) {
                logger.debug("answering undecodable ATT PDU with \(answer.code): \(error)")
                send(.errorResponse(answer), to: connectionHandle)
            } else {
                logger.debug("ignoring undecodable ATT PDU: \(error)")
            }
            return
        }
        // Once the link is encrypted with a bond's key, the client is that bond's peer.
        if let identity = security.bondIdentity, current.cachingIdentity != identity {
            await adoptBondIdentity(identity, clientID: clientID, connectionHandle: connectionHandle)
        }
        switch cachingGate(pdu, clientID: clientID, connectionHandle: connectionHandle) {
        case .serve: break
        case .ignore:
            logger.debug("ignoring \(pdu.opcode) of change-unaware connection \(Hex.format(connectionHandle))")
            return
        case .outOfSync:
            // Core 6.0, Vol 3, Part G, 2.5.2.1: the client's cached handles may be wrong.
            send(Self.error(pdu.opcode, 0x0000, .databaseOutOfSync), to: connectionHandle)
            return
        }
        let response: ATTPDU?
        switch pdu {
        case let .exchangeMTURequest(request):
            response = exchangeMTU(request, clientID: clientID, connectionHandle: connectionHandle)
        case let .findInformationRequest(request):
            response = findInformation(request, context)
        case let .findByTypeValueRequest(request):
            response = findByTypeValue(request, context)
        case let .readByTypeRequest(request):
            response = await readByType(request, context)
        case let .readByGroupTypeRequest(request):
            response = await readByGroupType(request, context)
        case let .readRequest(request):
            response = await read(request, context)
        case let .readBlobRequest(request):
            response = await readBlob(request, context)
        case let .readMultipleRequest(request):
            response = await readMultiple(request, context)
        case let .readMultipleVariableRequest(request):
            response = await readMultipleVariable(request, context)
        case let .writeRequest(request):
            response = await write(request, context)
        case let .writeCommand(command):
            await write(command, context)
            response = nil
        case let .signedWriteCommand(command):
            await write(command, context)
            response = nil
        case let .prepareWriteRequest(request):
            response = await prepareWrite(request, context)
        case let .executeWriteRequest(request):
            response = await executeWrite(request, context)
        default:
            // Responses, notifications and indications are for the client, not the server.
            logger.debug("ignoring \(pdu.opcode) sent to the server")
            response = nil
        }
        // The connection may have ended while a handler ran.
        guard let response, client(id: clientID, connectionHandle: connectionHandle) != nil else { return }
        send(response, to: connectionHandle)
    }

    /// What a request's handling needs to know about its client.
    struct RequestContext: Sendable {
        let clientID: UInt64
        let connectionHandle: UInt16
        let peer: DeviceAddress?
        /// The bearer's ATT MTU when the request arrived.
        let mtu: Int
        /// The link's security when the request arrived: what its permission checks use.
        let security: LinkSecurity
        /// Another stack's ATT server took the request (BlueZ) and checked the link's
        /// security against the flags exported from the attribute's permissions before it
        /// asked: only the application's checks (authorization, length) run here.
        var linkCheckedByStack = false
    }

    static func error(_ opcode: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> ATTPDU {
        .errorResponse(ATTErrorResponse(requestOpcode: opcode, handle: handle, code: code))
    }

    /// Exchange MTU (Core 6.0, Vol 3, Part F, 3.4.2): answer this server's receive MTU; both
    /// sides then use the smaller of the two, at least 23. Only the first exchange on a
    /// bearer counts; a later one is answered the same way and changes nothing.
    private func exchangeMTU(_ request: ATTExchangeMTURequest, clientID: UInt64, connectionHandle: UInt16) -> ATTPDU {
        if let client = client(id: clientID, connectionHandle: connectionHandle) {
            // The bearer's one exchange, whichever role made it.
            let attBearer = client.link.bearer
            var mtu: UInt16?
            if attBearer.beginMTUExchange() {
                attBearer.setExchangedMTU(clientMTU: request.clientRxMTU, serverMTU: preferredMTU)
                mtu = attBearer.mtu
            }
            if let mtu {
                logger.debug("ATT MTU \(mtu) with connection \(connectionHandle)")
                broadcast(.mtuExchanged(connectionHandle: connectionHandle, mtu: mtu))
            }
        }
        return .exchangeMTUResponse(ATTExchangeMTUResponse(serverRxMTU: preferredMTU))
    }

    /// The checks every ranged request starts with (Core 6.0, Vol 3, Part F, 3.4.3.1): a
    /// starting handle of zero or above the ending handle is Invalid Handle.
    static func checkRange(_ start: UInt16, _ end: UInt16, opcode: ATTOpcode) -> ATTPDU? {
        guard start != 0, start <= end else { return error(opcode, start, .invalidHandle) }
        return nil
    }
}

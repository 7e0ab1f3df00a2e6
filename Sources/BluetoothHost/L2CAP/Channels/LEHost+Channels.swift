import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// How long a channel request waits for the peer's response (the RTX timer's upper bound,
    /// Core 6.0, Vol 3, Part A, 6.2.1).
    static let channelRequestTimeout: Duration = .seconds(30)

    /// How long a channel we closed keeps its CID waiting for the peer's Disconnection Response
    /// before the host releases it (the RTX timer's upper bound, Core 6.0, Vol 3, Part A, 6.2.1).
    public static let disconnectionResponseTimeout: Duration = .seconds(60)

    /// Opens an LE credit-based channel to `psm` on the peer of `connection` (Core 6.0, Vol 3,
    /// Part A, 4.22) and returns it once the peer accepted. Throws
    /// ``L2CAPChannelError/refused(_:)`` with the peer's result when it refused, and
    /// ``L2CAPChannelError/cancelled`` when the task is cancelled before the peer answered (a
    /// channel the peer accepts after that is disconnected as its answer comes).
    public func openChannel(psm: UInt16, on connection: Connection, parameters: L2CAPChannelParameters = L2CAPChannelParameters())
        async throws(L2CAPChannelError) -> L2CAPChannel {
        guard L2CAPServerTable.validPSMs.contains(psm) else { throw .invalidArgument("SPSM \(Hex.format(psm)) is outside 0x01…0xFF") }
        if let violation = parameters.violation { throw .invalidArgument(violation) }
        do { try requirePoweredOn() } catch { throw .host(error) }
        guard isCurrent(connection), connection.isConnected else {
            throw .host(.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier))
        }
        if Task.isCancelled { throw .cancelled }
        let link = connection.link
        let channel = try link.allocate { cid in
            makeChannel(psm: psm, connection: connection, localCID: cid, parameters: parameters, isEnhanced: false)
        }
        let request = LESignalingCommand.leCreditBasedConnectionRequest(.init(
            spsm: psm, sourceCID: channel.localCID, mtu: parameters.mtu, mps: parameters.mps, initialCredits: parameters.initialCredits))
        let response: L2CAPLECreditBasedConnectionResponse
        switch await exchangeChannelRequest(request, opening: [channel], on: connection) {
        case let .success(.leCreditBasedConnectionResponse(answer)):
            response = answer
        case .success:
            let error = L2CAPChannelError.host(.protocolViolation("an enhanced response to an LE credit-based connection request"))
            link.remove(channel)
            channel.finish(with: error)
            throw error
        case let .failure(error):
            // A cancelled request keeps its CID until the peer answers or the RTX timer ends.
            if error != .cancelled { link.remove(channel) }
            channel.finish(with: error)
            throw error
        }
        guard response.result.isSuccess else {
            link.remove(channel)
            channel.finish(with: .refused(response.result))
            throw .refused(response.result)
        }
        // Core 6.0, Vol 3, Part A, 4.23: the destination CID must be a dynamic one, the MTU and
        // MPS at least 23.
        guard response.destinationCID.isLEDynamic, response.mtu >= 23, response.mps >= 23, response.mps <= L2CAPChannelParameters.maximumMPS,
              link.channel(remoteCID: response.destinationCID) == nil else {
            logger.warning("channel response with invalid values from \(connection.peer): \(response)")
            let error = L2CAPChannelError.host(.protocolViolation("invalid L2CAP channel response: \(response)"))
            link.remove(channel)
            channel.finish(with: error)
            if response.destinationCID.isLEDynamic {
                sendSignaling(.disconnectionRequest(.init(destinationCID: response.destinationCID, sourceCID: channel.localCID)), on: connection)
            }
            throw error
        }
        channel.connect(remoteCID: response.destinationCID, peerMTU: Int(response.mtu), peerMPS: Int(response.mps),
                        credits: Int(response.initialCredits))
        logger.debug("opened \(channel): peer MTU \(response.mtu), MPS \(response.mps), \(response.initialCredits) credits")
        return channel
    }

    /// Sends a channel request for `channels` (holding their CIDs on the link) and waits for the response
    /// with the same identifier, a Command Reject, the link's end, or the RTX timeout. Task
    /// cancellation ends the wait with ``L2CAPChannelError/cancelled``; the channels then keep
    /// their CIDs until the request ends (see ``settleCancelledOpen(of:on:with:)``).
    private func exchangeChannelRequest(_ request: LESignalingCommand, opening channels: [L2CAPChannel], on connection: Connection)
        async -> Result<LESignalingCommand, L2CAPChannelError> {
        let identifier = l2cap.nextSignalingIdentifier()
        let link = connection.link
        let clock = configuration.clock
        let deadline = clock.now + Self.channelRequestTimeout
        let timer = Task {
            do { try await clock.sleep(until: deadline) } catch { return }
            link.takePendingOpen(identifier: identifier)?.complete(.failure(.timeout))
        }
        let settle: @Sendable (Result<LESignalingCommand, L2CAPChannelError>) -> Void = { [weak self] outcome in
            guard let self else { return channels.forEach { link.remove($0) } }
            self.settleCancelledOpen(of: channels, on: link, with: outcome)
        }
        let cancel: @Sendable () -> Void = { link.cancelPendingOpen(identifier: identifier, late: settle) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<LESignalingCommand, L2CAPChannelError>, Never>) in
                // Registered before the request goes out: the response is handled by this actor
                // only after this returns, but the link may close on the reader thread at once
                // (a closed link fails the open at once).
                link.addPendingOpen(.init(channels: channels, complete: { continuation.resume(returning: $0) }), identifier: identifier)
                sendSignaling(request, identifier: identifier, on: connection)
                // Cancelled before the open was registered: the handler found nothing to cancel.
                if Task.isCancelled { cancel() }
            }
        } onCancel: {
            cancel()
        }
        // A cancelled request still waits for its answer (or the RTX timeout) in `settle`.
        if result != .failure(.cancelled) { timer.cancel() }
        return result
    }

    /// What ends a request whose task was cancelled: channels the peer accepted are
    /// disconnected at once (their CIDs released once it answers, or after the RTX bound);
    /// the others, refused or never answered, release their CIDs now.
    private nonisolated func settleCancelledOpen(of channels: [L2CAPChannel], on link: L2CAPLink,
                                                 with outcome: Result<LESignalingCommand, L2CAPChannelError>) {
        var accepted: [L2CAPChannelID] = []
        switch outcome {
        case let .success(.leCreditBasedConnectionResponse(response)) where response.result.isSuccess:
            accepted = [response.destinationCID]
        case let .success(.creditBasedConnectionResponse(response)):
            accepted = response.destinationCIDs
        default:
            break
        }
        for (index, channel) in channels.enumerated() {
            let remote = index < accepted.count ? accepted[index] : .null
            guard remote.isLEDynamic, !link.isClosed, link.channel(remoteCID: remote) == nil else {
                link.remove(channel)
                continue
            }
            logger.debug("disconnecting \(channel): the peer accepted it after the open was cancelled")
            channel.connect(remoteCID: remote, peerMTU: 23, peerMPS: 23, credits: 0)
            channel.requestDisconnection(of: remote)
        }
    }

    /// Releases a channel we closed once the RTX bound passes without the peer's
    /// Disconnection Response (Core 6.0, Vol 3, Part A, 6.2.1); the response cancels this.
    nonisolated func releaseUnansweredDisconnection(of channel: L2CAPChannel, on link: L2CAPLink) {
        let clock = configuration.clock
        let deadline = clock.now + Self.disconnectionResponseTimeout
        let logger = logger
        link.setReleaseTimer(Task {
            do { try await clock.sleep(until: deadline) } catch { return }
            if link.remove(channel) {
                logger.info("no Disconnection Response for \(channel) in \(Self.disconnectionResponseTimeout): CID released")
            }
        }, for: channel)
    }

    /// Opens up to five enhanced credit-based channels to `psm` in one
    /// L2CAP_CREDIT_BASED_CONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.25) and returns those the
    /// peer accepted (it may accept some and refuse others). Throws
    /// ``L2CAPChannelError/refused(_:)`` when it accepted none, and
    /// ``L2CAPChannelError/cancelled`` as ``openChannel(psm:on:parameters:)`` does. MTU and MPS
    /// are at least 64.
    public func openEnhancedChannels(psm: UInt16, count: Int, on connection: Connection,
                                     parameters: L2CAPChannelParameters = L2CAPChannelParameters())
        async throws(L2CAPChannelError) -> [L2CAPChannel] {
        guard L2CAPServerTable.validPSMs.contains(psm) else { throw .invalidArgument("SPSM \(Hex.format(psm)) is outside 0x01…0xFF") }
        guard (1...L2CAPCreditBasedConnectionRequest.maximumChannels).contains(count) else {
            throw .invalidArgument("an enhanced request opens 1…5 channels, not \(count)")
        }
        if let violation = parameters.violation { throw .invalidArgument(violation) }
        guard parameters.mtu >= 64, parameters.mps >= 64 else { throw .invalidArgument("enhanced channels need an MTU and MPS of at least 64") }
        do { try requirePoweredOn() } catch { throw .host(error) }
        guard isCurrent(connection), connection.isConnected else {
            throw .host(.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier))
        }
        if Task.isCancelled { throw .cancelled }
        let link = connection.link
        var channels: [L2CAPChannel] = []
        for _ in 0..<count {
            do {
                channels.append(try link.allocate { cid in
                    makeChannel(psm: psm, connection: connection, localCID: cid, parameters: parameters, isEnhanced: true)
                })
            } catch {
                channels.forEach { link.remove($0) }
                throw error
            }
        }
        let request = L2CAPCreditBasedConnectionRequest(
            spsm: psm, mtu: parameters.mtu, mps: parameters.mps, initialCredits: parameters.initialCredits, sourceCIDs: channels.map(\.localCID))
        let response: L2CAPCreditBasedConnectionResponse
        switch await exchangeChannelRequest(.creditBasedConnectionRequest(request), opening: channels, on: connection) {
        case let .success(.creditBasedConnectionResponse(answer)):
            response = answer
        case .success:
            let error = L2CAPChannelError.host(.protocolViolation("an LE response to an enhanced credit-based connection request"))
            channels.forEach { link.remove($0); $0.finish(with: error) }
            throw error
        case let .failure(error):
            // A cancelled request keeps its CIDs until the peer answers or the RTX timer ends.
            if error != .cancelled { channels.forEach { link.remove($0) } }
            channels.forEach { $0.finish(with: error) }
            throw error
        }
        // A refused channel has destination 0; a peer may also leave the list short (Bumble does).
        let destinations = channels.indices.map { $0 < response.destinationCIDs.count ? response.destinationCIDs[$0] : .null }
        if let violation = response.violation(answering: request)
            ?? destinations.first(where: { $0 != .null && link.channel(remoteCID: $0) != nil })
                .map({ "destination CID \($0) is already in use on this link" }) {
            // The peer believes the channels it named open: close each from our side.
            logger.warning("enhanced channel response with invalid values from \(connection.peer): \(violation)")
            let error = L2CAPChannelError.host(.protocolViolation("invalid L2CAP enhanced channel response: \(violation)"))
            for (channel, destination) in zip(channels, destinations) {
                link.remove(channel)
                channel.finish(with: error)
                if destination.isLEDynamic {
                    sendSignaling(.disconnectionRequest(.init(destinationCID: destination, sourceCID: channel.localCID)), on: connection)
                }
            }
            throw error
        }
        var opened: [L2CAPChannel] = []
        let refusal = response.result.isSuccess ? L2CAPCreditBasedConnectionResult.noResourcesAvailable : response.result
        for (channel, destination) in zip(channels, destinations) {
            guard destination != .null else {
                link.remove(channel)
                channel.finish(with: .refused(refusal))
                continue
            }
            channel.connect(remoteCID: destination, peerMTU: Int(response.mtu), peerMPS: Int(response.mps), credits: Int(response.initialCredits))
            opened.append(channel)
        }
        guard !opened.isEmpty else { throw .refused(refusal) }
        logger.debug("opened \(opened.count) enhanced channels to PSM \(Hex.format(psm)): peer MTU \(response.mtu), MPS \(response.mps)")
        return opened
    }

    /// Registers a server for credit-based channels on `psm` (or, with `nil`, on a free dynamic
    /// SPSM in 0x80…0xFF): `accept` gets each channel a peer opens, on the host's actor (start
    /// a task for the channel's work). Peers on links below `security` are refused with
    /// Insufficient Authentication or Insufficient Encryption (Core 6.0, Vol 3, Part A, 4.23),
    /// and, when `security` asks for encryption, links whose key is shorter than
    /// `minimumKeySize` octets (7…16) with Encryption Key Size Too Short.
    public func listen(psm: UInt16? = nil, parameters: L2CAPChannelParameters = L2CAPChannelParameters(),
                       security: L2CAPChannelSecurity = .none, minimumKeySize: Int = Bond.keySizes.lowerBound,
                       accept: @escaping @Sendable (L2CAPChannel) -> Void) throws(L2CAPChannelError) -> L2CAPServer {
        if let violation = parameters.violation { throw .invalidArgument(violation) }
        guard Bond.keySizes.contains(minimumKeySize) else { throw .invalidArgument("an encryption key has 7…16 octets, not \(minimumKeySize)") }
        let server = try l2cap.servers.add(psm: psm, parameters: parameters, security: security, minimumKeySize: minimumKeySize,
                                           accept: accept)
        logger.info("listening for L2CAP channels on PSM \(Hex.format(server.psm))")
        return server
    }

    /// Removes the server of `psm`; channels it accepted stay open.
    public func stopListening(psm: UInt16) {
        l2cap.servers.remove(psm: psm)
    }

    /// The PSM servers registered.
    public var channelServers: [L2CAPServer] { l2cap.servers.registrations }

    /// The credit-based channels open on a connection.
    public nonisolated func channels(on connection: Connection) -> [L2CAPChannel] {
        connection.link.allChannels.filter(\.isOpen)
    }

    func makeChannel(psm: UInt16, connection: Connection, localCID: L2CAPChannelID, parameters: L2CAPChannelParameters,
                     isEnhanced: Bool) -> L2CAPChannel {
        let router = l2cap
        let (link, handle) = (connection.link, connection.handle)
        return L2CAPChannel(
            psm: psm, connectionHandle: handle, peer: connection.peer, localCID: localCID, parameters: parameters,
            isEnhanced: isEnhanced,
            io: .init(
                sendFrame: { [weak link] destination, payload, completion in
                    guard let link else {
                        completion?(.failure(.connectionClosed(connectionHandle: handle)))
                        return
                    }
                    link.send(payload, channel: destination, completion: completion)
                },
                sendSignaling: { [weak link] command in
                    link?.sendSignaling(command, identifier: router.nextSignalingIdentifier())
                },
                disconnecting: { [weak self, weak link] channel in
                    if let link { self?.releaseUnansweredDisconnection(of: channel, on: link) }
                }))
    }

    // MARK: Signalling

    /// Handles the credit-based channel commands of the LE signalling channel.
    func receiveChannelSignaling(_ command: LESignalingCommand, identifier: UInt8, on connection: Connection) {
        let link = connection.link
        switch command {
        case let .leCreditBasedConnectionRequest(request):
            acceptChannel(request, identifier: identifier, on: connection)
        case let .creditBasedConnectionRequest(request):
            acceptChannels(request, identifier: identifier, on: connection)
        case let .creditBasedReconfigureRequest(request):
            sendSignaling(.creditBasedReconfigureResponse(.init(result: reconfigure(request, on: connection))),
                          identifier: identifier, on: connection)
        case .leCreditBasedConnectionResponse, .creditBasedConnectionResponse:
            guard let open = link.takePendingOpen(identifier: identifier) else {
                logger.debug("channel response \(command) matches no request")
                return
            }
            open.complete(.success(command))
        case let .commandReject(reason):
            link.takePendingOpen(identifier: identifier)?.complete(.failure(.rejectedByPeer(reason)))
        case let .flowControlCreditIndication(indication):
            // The CID is the sender's (Core 6.0, Vol 3, Part A, 4.24): our destination.
            guard let channel = link.channel(remoteCID: indication.cid) else {
                logger.debug("credits for unknown channel \(indication.cid) ignored")
                return
            }
            channel.addCredits(indication.credits)
        case let .disconnectionRequest(request):
            // The request names the CIDs from its sender's side (Vol 3, Part A, 4.6).
            guard let channel = link.channel(localCID: request.destinationCID),
                  channel.remoteCID == request.sourceCID else {
                sendSignaling(.commandReject(.invalidCID(localCID: request.destinationCID, remoteCID: request.sourceCID)),
                              identifier: identifier, on: connection)
                return
            }
            sendSignaling(.disconnectionResponse(.init(destinationCID: request.destinationCID, sourceCID: request.sourceCID)),
                          identifier: identifier, on: connection)
            link.remove(channel)
            channel.finish(with: .closedByPeer)
        case let .disconnectionResponse(response):
            // It echoes our request: the source is our CID.
            if let channel = link.channel(localCID: response.sourceCID),
               channel.remoteCID == response.destinationCID {
                link.remove(channel)
                channel.finish(with: .closedLocally)
            }
        default:
            break
        }
    }

    /// The result refusing a channel to a server that needs `security` on this link, if any.
    private func securityRefusal(_ server: L2CAPServer, on connection: Connection) -> L2CAPCreditBasedConnectionResult? {
        let security = server.security
        guard security > .none else { return nil }
        let link = connection.security
        // Core 6.0, Vol 3, Part C, 10.3.1.1: Insufficient Encryption when a key exists for the
        // peer, else Insufficient Authentication. A link encrypted with a removed bond's key
        // counts as not encrypted.
        if !link.isEncrypted || link.isBondRemoved {
            return bondedPeers.contains(connection.peerIdentity) ? .insufficientEncryption : .insufficientAuthentication
        }
        if security == .authenticated, !link.isAuthenticated { return .insufficientAuthentication }
        // Result 0x0007 (Vol 3, Part A, 4.23): encrypted, but with a key shorter than the server needs.
        if link.keySize < server.minimumKeySize { return .encryptionKeySizeTooShort }
        return nil
    }

    /// Answers L2CAP_LE_CREDIT_BASED_CONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.22 / 4.23).
    private func acceptChannel(_ request: L2CAPLECreditBasedConnectionRequest, identifier: UInt8, on connection: Connection) {
        let link = connection.link
        func refuse(_ result: L2CAPCreditBasedConnectionResult) {
            logger.info("refused L2CAP channel for SPSM \(Hex.format(request.spsm)) from \(connection.peer): \(result)")
            sendSignaling(.leCreditBasedConnectionResponse(.refused(result)), identifier: identifier, on: connection)
        }
        guard let server = l2cap.servers.server(psm: request.spsm) else { return refuse(.spsmNotSupported) }
        if let refusal = securityRefusal(server.registration, on: connection) { return refuse(refusal) }
        guard request.sourceCID.isLEDynamic else { return refuse(.invalidSourceCID) }
        guard link.channel(remoteCID: request.sourceCID) == nil else {
            return refuse(.sourceCIDAlreadyAllocated)
        }
        guard request.mtu >= 23, request.mps >= 23, request.mps <= L2CAPChannelParameters.maximumMPS else {
            return refuse(.unacceptableParameters)
        }
        let parameters = server.registration.parameters
        guard let channel = try? link.allocate({ cid in
            makeChannel(psm: request.spsm, connection: connection, localCID: cid, parameters: parameters, isEnhanced: false)
        }) else { return refuse(.noResourcesAvailable) }
        channel.connect(remoteCID: request.sourceCID, peerMTU: Int(request.mtu), peerMPS: Int(request.mps), credits: Int(request.initialCredits))
        sendSignaling(.leCreditBasedConnectionResponse(.init(
            destinationCID: channel.localCID, mtu: parameters.mtu, mps: parameters.mps, initialCredits: parameters.initialCredits,
            result: .success)), identifier: identifier, on: connection)
        logger.debug("accepted \(channel)")
        server.accept(channel)
    }

    /// Applies L2CAP_CREDIT_BASED_RECONFIGURE_REQ to enhanced channels (Core 6.0, Vol 3, Part A,
    /// 4.27): the CIDs listed are the sender's, the MTU may not shrink, the MPS may shrink only
    /// for one channel at a time; nothing changes unless every check passes.
    func reconfigure(_ request: L2CAPCreditBasedReconfigureRequest, on connection: Connection) -> L2CAPCreditBasedReconfigureResult {
        let link = connection.link
        guard request.mtu >= 64, request.mps >= 64, request.mps <= L2CAPChannelParameters.maximumMPS,
              !request.destinationCIDs.isEmpty, request.destinationCIDs.count <= L2CAPCreditBasedConnectionRequest.maximumChannels else {
            return .unacceptableParameters
        }
        var channels: [L2CAPChannel] = []
        for cid in request.destinationCIDs {
            guard let channel = link.channel(remoteCID: cid), channel.isEnhanced else {
                return .invalidDestinationCID
            }
            channels.append(channel)
        }
        if channels.contains(where: { Int(request.mtu) < $0.peerMTU }) { return .mtuReductionNotAllowed }
        if channels.count > 1, channels.contains(where: { Int(request.mps) < $0.peerMPS }) { return .mpsReductionNotAllowed }
        channels.forEach { $0.reconfigure(peerMTU: Int(request.mtu), peerMPS: Int(request.mps)) }
        return .success
    }

    /// Answers L2CAP_CREDIT_BASED_CONNECTION_REQ: up to five enhanced channels at once, each
    /// refused on its own with destination CID 0 (Core 6.0, Vol 3, Part A, 4.25 / 4.26).
    private func acceptChannels(_ request: L2CAPCreditBasedConnectionRequest, identifier: UInt8, on connection: Connection) {
        let link = connection.link
        func refuseAll(_ result: L2CAPCreditBasedConnectionResult) {
            logger.info("refused enhanced L2CAP channels for SPSM \(Hex.format(request.spsm)) from \(connection.peer): \(result)")
            sendSignaling(.creditBasedConnectionResponse(.init(
                mtu: 0, mps: 0, initialCredits: 0, result: result, destinationCIDs: request.sourceCIDs.map { _ in .null })),
                identifier: identifier, on: connection)
        }
        // Enhanced channels need an MTU and MPS of at least 64 (Vol 3, Part A, 4.25).
        guard (1...L2CAPCreditBasedConnectionRequest.maximumChannels).contains(request.sourceCIDs.count),
              request.mtu >= 64, request.mps >= 64, request.mps <= L2CAPChannelParameters.maximumMPS else {
            return refuseAll(.invalidParameters)
        }
        guard let server = l2cap.servers.server(psm: request.spsm) else { return refuseAll(.spsmNotSupported) }
        if let refusal = securityRefusal(server.registration, on: connection) { return refuseAll(refusal) }
        var parameters = server.registration.parameters
        parameters.mtu = max(parameters.mtu, 64)
        parameters.mps = max(parameters.mps, 64)
        var result = L2CAPCreditBasedConnectionResult.success
        var destinations: [L2CAPChannelID] = []
        var accepted: [L2CAPChannel] = []
        for (index, source) in request.sourceCIDs.enumerated() {
            let refusal: L2CAPCreditBasedConnectionResult?
            if !source.isLEDynamic {
                refusal = .invalidSourceCID
            } else if link.channel(remoteCID: source) != nil
                        || request.sourceCIDs[..<index].contains(source) {
                refusal = .sourceCIDAlreadyAllocated
            } else if let channel = try? link.allocate({ cid in
                makeChannel(psm: request.spsm, connection: connection, localCID: cid, parameters: parameters, isEnhanced: true)
            }) {
                channel.connect(remoteCID: source, peerMTU: Int(request.mtu), peerMPS: Int(request.mps), credits: Int(request.initialCredits))
                accepted.append(channel)
                destinations.append(channel.localCID)
                refusal = nil
            } else {
                refusal = .noResourcesAvailable
            }
            if let refusal {
                destinations.append(.null)
                if result.isSuccess { result = refusal }
            }
        }
        sendSignaling(.creditBasedConnectionResponse(.init(
            mtu: parameters.mtu, mps: parameters.mps, initialCredits: parameters.initialCredits, result: result,
            destinationCIDs: destinations)), identifier: identifier, on: connection)
        accepted.forEach { server.accept($0) }
    }
}

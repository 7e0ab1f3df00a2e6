import BluetoothCore
import BluetoothCrypto
import BluetoothHCI

extension LinkSimulation {
    /// A command packet from a host. Every command gets an answer with
    /// Num_HCI_Command_Packets = 1: unknown or unimplemented ones Unknown HCI Command (0x01),
    /// malformed ones Invalid HCI Command Parameters (0x12) (Core 6.0, Vol 4, Part E, 4.5).
    mutating func handleCommand(_ bytes: [UInt8], from id: ControllerID) {
        guard let rawOpcode = ByteReader.uint16(in: bytes[...], at: 0) else {
            logger.warning("controller \(id): command packet of \(bytes.count) byte(s) has no opcode")
            // Nothing to answer to: a no-op Command Complete at least returns the credit.
            emit(.commandComplete(CommandCompleteEvent(numberOfHCICommandPackets: 1, opcode: .noOperation, returnParameters: [])), to: id)
            return
        }
        let opcode = HCIOpcode(rawValue: rawOpcode)
        if opcode.group == HCIOpcode.vendorSpecific {
            answerVendorCommand(opcode, from: id)
            return
        }
        let type = HCICommandCatalogue.commandType(for: opcode)
        let acknowledgement = type?.acknowledgement ?? .commandComplete
        guard type != nil, ControllerCapabilities.implementedOpcodes.contains(opcode) else {
            logger.debug("controller \(id): unknown command \(opcode)")
            reject(id, opcode, acknowledgement, .unknownCommand)
            return
        }
        let command: any HCICommand
        do {
            command = try HCICommandCatalogue.decode(HCICommandPacket.decode(bytes))
        } catch {
            logger.debug("controller \(id): malformed \(opcode): \(error)")
            reject(id, opcode, acknowledgement, .invalidCommandParameters)
            return
        }
        logger.trace("controller \(id): \(opcode)")
        if let family = LECommandFamily(opcode: opcode) {
            // Core 6.0, Vol 4, Part E, 3.1.1: a host that used one family of advertising,
            // scanning and initiating commands since the reset gets Command Disallowed for the
            // other, as real Bluetooth 5 controllers answer.
            if let used = controllers[id]?.commandFamily, used != family {
                logger.debug("controller \(id): \(opcode) refused: its host used the \(used) since the reset")
                reject(id, opcode, acknowledgement, .commandDisallowed)
                return
            }
            controllers[id]?.commandFamily = family
        }
        execute(command, opcode: opcode, from: id)
    }

    /// Answers a command with an error status in the way the command is acknowledged.
    mutating func reject(_ id: ControllerID, _ opcode: HCIOpcode, _ acknowledgement: HCICommandAcknowledgement, _ error: HCIStatus) {
        switch acknowledgement {
        case .commandComplete: complete(id, opcode, error)
        case .commandStatus: status(id, opcode, error)
        }
    }

    private mutating func execute(_ command: any HCICommand, opcode: HCIOpcode, from id: ControllerID) {
        switch command {
        // Controller and baseband, informational, status parameters
        case is ResetCommand:
            reset(id)
            complete(id, opcode, .success)
        case let command as SetEventMaskCommand:
            controllers[id]?.eventMask = command.mask
            complete(id, opcode, .success)
        case is WriteLEHostSupportCommand:
            complete(id, opcode, .success)
        case is ReadLocalVersionInformationCommand:
            let company = controllers[id]?.configuration.companyIdentifier ?? 0xFFFF
            complete(id, opcode, returning: ReadLocalVersionInformationCommand.ReturnParameters(
                hciVersion: ControllerCapabilities.version, hciSubversion: ControllerCapabilities.subversion,
                lmpVersion: ControllerCapabilities.version, companyIdentifier: company, lmpSubversion: ControllerCapabilities.subversion))
        case is ReadLocalSupportedCommandsCommand:
            complete(id, opcode, returning: ReadLocalSupportedCommandsCommand.ReturnParameters(supportedCommands: ControllerCapabilities.supportedCommands))
        case is ReadLocalSupportedFeaturesCommand:
            complete(id, opcode, returning: ReadLocalSupportedFeaturesCommand.ReturnParameters(features: ControllerCapabilities.lmpFeatures))
        case is ReadBufferSizeCommand:
            // An LE-only controller: the same buffers as LE Read Buffer Size.
            let configuration = controllers[id]?.configuration ?? .init()
            complete(id, opcode, returning: ReadBufferSizeCommand.ReturnParameters(
                aclDataPacketLength: configuration.aclDataLength, synchronousDataPacketLength: 0,
                totalNumACLDataPackets: UInt16(configuration.aclBufferCount), totalNumSynchronousDataPackets: 0))
        case is ReadBDADDRCommand:
            complete(id, opcode, returning: ReadBDADDRCommand.ReturnParameters(address: controllers[id]?.readableAddress ?? .zero))
        case let command as ReadRSSICommand:
            readRSSI(command, opcode: opcode, from: id)

        // LE controller
        case let command as LESetEventMaskCommand:
            controllers[id]?.leEventMask = command.mask
            complete(id, opcode, .success)
        case is LEReadBufferSizeCommand:
            let configuration = controllers[id]?.configuration ?? .init()
            complete(id, opcode, returning: LEReadBufferSizeCommand.ReturnParameters(
                leACLDataPacketLength: configuration.aclDataLength, totalNumLEACLDataPackets: configuration.aclBufferCount))
        case is LEReadBufferSizeV2Command:
            let configuration = controllers[id]?.configuration ?? .init()
            complete(id, opcode, returning: LEReadBufferSizeV2Command.ReturnParameters(
                leACLDataPacketLength: configuration.aclDataLength, totalNumLEACLDataPackets: configuration.aclBufferCount,
                isoDataPacketLength: 0, totalNumISODataPackets: 0))
        case is LEReadLocalSupportedFeaturesCommand:
            complete(id, opcode, returning: LEReadLocalSupportedFeaturesCommand.ReturnParameters(features: controllers[id]?.configuration.leFeatures ?? []))
        case let command as LESetRandomAddressCommand:
            setRandomAddress(command, opcode: opcode, from: id)
        case is LERandCommand:
            complete(id, opcode, returning: LERandCommand.ReturnParameters(randomNumber: random.next()))
        case let command as LEEncryptCommand:
            // HCI carries key and data least significant octet first (Core 6.0, Vol 4, Part E,
            // 7.8.22); the security function e takes them as numbers.
            let encrypted = SecurityToolbox.e(key: number(leastSignificantFirst: command.key), plaintext: number(leastSignificantFirst: command.plaintext))
            let octets = ByteWriter.littleEndianBytes(of: encrypted)
            complete(id, opcode, returning: LEEncryptCommand.ReturnParameters(encryptedData: octets))
        case let command as LEWriteSuggestedDefaultDataLengthCommand:
            writeSuggestedDefaultDataLength(command, opcode: opcode, from: id)
        case is LEReadMaximumDataLengthCommand:
            let octets = controllers[id]?.configuration.maximumDataLength ?? 251
            let time = RadioTiming.transmitTime(octets: octets)
            complete(id, opcode, returning: LEReadMaximumDataLengthCommand.ReturnParameters(
                supportedMaxTxOctets: octets, supportedMaxTxTime: time, supportedMaxRxOctets: octets, supportedMaxRxTime: time))

        // Advertising, scanning, initiating
        case let command as LESetAdvertisingParametersCommand: setAdvertisingParameters(command, opcode: opcode, from: id)
        case is LEReadAdvertisingPhysicalChannelTxPowerCommand:
            complete(id, opcode, returning: LEReadAdvertisingPhysicalChannelTxPowerCommand.ReturnParameters(
                txPowerLevel: controllers[id]?.configuration.txPower ?? 0))
        case let command as LESetAdvertisingDataCommand:
            controllers[id]?.advertising.data = command.data
            complete(id, opcode, .success)
        case let command as LESetScanResponseDataCommand:
            controllers[id]?.advertising.scanResponseData = command.data
            complete(id, opcode, .success)
        case let command as LESetAdvertisingEnableCommand: setAdvertisingEnable(command, opcode: opcode, from: id)
        case let command as LESetScanParametersCommand: setScanParameters(command, opcode: opcode, from: id)
        case let command as LESetScanEnableCommand: setScanEnable(command, opcode: opcode, from: id)
        case let command as LESetAdvertisingSetRandomAddressCommand: setAdvertisingSetRandomAddress(command, opcode: opcode, from: id)
        case let command as LESetExtendedAdvertisingParametersCommand: setExtendedAdvertisingParameters(command, opcode: opcode, from: id)
        case let command as LESetExtendedAdvertisingDataCommand:
            setExtendedAdvertisingData(command, isScanResponse: false, opcode: opcode, from: id)
        case let command as LESetExtendedScanResponseDataCommand:
            setExtendedAdvertisingData(command, isScanResponse: true, opcode: opcode, from: id)
        case let command as LESetExtendedAdvertisingEnableCommand: setExtendedAdvertisingEnable(command, opcode: opcode, from: id)
        case is LEReadMaximumAdvertisingDataLengthCommand:
            complete(id, opcode, returning: LEReadMaximumAdvertisingDataLengthCommand.ReturnParameters(
                maximumAdvertisingDataLength: UInt16(controllers[id]?.configuration.maximumAdvertisingDataLength ?? 31)))
        case is LEReadNumberOfSupportedAdvertisingSetsCommand:
            complete(id, opcode, returning: LEReadNumberOfSupportedAdvertisingSetsCommand.ReturnParameters(
                numSupportedAdvertisingSets: UInt8(clamping: controllers[id]?.configuration.maximumAdvertisingSets ?? 1)))
        case let command as LERemoveAdvertisingSetCommand: removeAdvertisingSet(command, opcode: opcode, from: id)
        case is LEClearAdvertisingSetsCommand: clearAdvertisingSets(opcode: opcode, from: id)
        case let command as LESetExtendedScanParametersCommand: setExtendedScanParameters(command, opcode: opcode, from: id)
        case let command as LESetExtendedScanEnableCommand: setExtendedScanEnable(command, opcode: opcode, from: id)
        case let command as LECreateConnectionCommand: createConnection(command, opcode: opcode, from: id)
        case let command as LEExtendedCreateConnectionCommand: extendedCreateConnection(command, opcode: opcode, from: id)
        case is LECreateConnectionCancelCommand: cancelCreateConnection(opcode: opcode, from: id)

        // Connections
        case let command as DisconnectCommand: disconnect(command, opcode: opcode, from: id)
        case let command as LEConnectionUpdateCommand: updateConnection(command, opcode: opcode, from: id)
        case let command as LERemoteConnectionParameterRequestReplyCommand: replyToParameterRequest(command, opcode: opcode, from: id)
        case let command as LERemoteConnectionParameterRequestNegativeReplyCommand: refuseParameterRequest(command, opcode: opcode, from: id)
        case let command as LEReadRemoteFeaturesCommand: readRemoteFeatures(command, opcode: opcode, from: id)
        case let command as ReadRemoteVersionInformationCommand: readRemoteVersion(command, opcode: opcode, from: id)
        case let command as LESetDataLengthCommand: setDataLength(command, opcode: opcode, from: id)
        case let command as LEReadPHYCommand: readPHY(command, opcode: opcode, from: id)
        case let command as LESetPHYCommand: setPHY(command, opcode: opcode, from: id)
        case let command as LESetDefaultPHYCommand: setDefaultPHY(command, opcode: opcode, from: id)
        case is LEReadSuggestedDefaultDataLengthCommand: readSuggestedDefaultDataLength(opcode: opcode, from: id)

        // Resolving list
        case let command as LEAddDeviceToResolvingListCommand:
            let capacity = controllers[id]?.configuration.resolvingListSize ?? ResolvingList.capacity
            changeResolvingList(opcode: opcode, from: id) {
                $0.add(.init(peerIdentity: command.peerIdentity, peerIRK: command.peerIRK, localIRK: command.localIRK), capacity: capacity)
            }
        case let command as LERemoveDeviceFromResolvingListCommand:
            changeResolvingList(opcode: opcode, from: id) { $0.remove(command.peerIdentity) }
        case is LEClearResolvingListCommand:
            changeResolvingList(opcode: opcode, from: id) { list in
                list.clear()
                return .success
            }
        case is LEReadResolvingListSizeCommand:
            let size = controllers[id]?.configuration.resolvingListSize ?? ResolvingList.capacity
            complete(id, opcode, returning: LEReadResolvingListSizeCommand.ReturnParameters(resolvingListSize: UInt8(clamping: size)))
        case let command as LESetPrivacyModeCommand:
            // Core 6.0, Vol 4, Part E, 7.8.77: refused like a list change while in use.
            changeResolvingList(opcode: opcode, from: id) { $0.setPrivacyMode(command.privacyMode, of: command.peerIdentity) }
        case let command as LESetResolvablePrivateAddressTimeoutCommand:
            guard LESetResolvablePrivateAddressTimeoutCommand.timeoutRange.contains(command.timeout) else {
                complete(id, opcode, .invalidCommandParameters)
                return
            }
            controllers[id]?.resolvingList.addressTimeout = command.timeout
            complete(id, opcode, .success)
        case let command as LESetAddressResolutionEnableCommand:
            guard controllers[id]?.isUsingAddresses == false else {
                complete(id, opcode, .commandDisallowed)
                return
            }
            controllers[id]?.resolvingList.isResolutionEnabled = command.enable
            complete(id, opcode, .success)

        // Encryption
        case let command as LEEnableEncryptionCommand: enableEncryption(command, opcode: opcode, from: id)
        case let command as LELongTermKeyRequestReplyCommand:
            replyToLongTermKeyRequest(handle: command.connectionHandle, key: command.longTermKey, opcode: opcode, from: id)
        case let command as LELongTermKeyRequestNegativeReplyCommand:
            replyToLongTermKeyRequest(handle: command.connectionHandle, key: nil, opcode: opcode, from: id)

        default:
            reject(id, opcode, type(of: command).acknowledgement, .unknownCommand)
        }
    }

    /// Changes the resolving list, unless address resolution is on while advertising,
    /// scanning or initiating (Core 6.0, Vol 4, Part E, 7.8.38-7.8.40).
    private mutating func changeResolvingList(opcode: HCIOpcode, from id: ControllerID, _ change: (inout ResolvingList) -> HCIStatus) {
        guard let state = controllers[id] else { return }
        guard !(state.resolvingList.isResolutionEnabled && state.isUsingAddresses) else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        var list = state.resolvingList
        let status = change(&list)
        controllers[id]?.resolvingList = list
        complete(id, opcode, status)
    }

    /// A vendor-specific command: Zephyr's, when the controller is configured with a static
    /// address to report (``VirtualController/Configuration/zephyrStaticAddress``), else
    /// Unknown HCI Command, as a controller that knows no vendor commands answers.
    private mutating func answerVendorCommand(_ opcode: HCIOpcode, from id: ControllerID) {
        guard let address = controllers[id]?.configuration.zephyrStaticAddress else {
            complete(id, opcode, .unknownCommand)
            return
        }
        switch opcode {
        case ZephyrReadVersionInformationCommand.opcode:
            // Nordic (0x0002), nRF52x (0x0002), a standard Bluetooth controller (0x01).
            complete(id, opcode, returning: ZephyrReadVersionInformationCommand.ReturnParameters(
                hardwarePlatform: 0x0002, hardwareVariant: 0x0002, firmwareVariant: 0x01, firmwareVersion: 3,
                firmwareRevision: 0, firmwareBuild: 0))
        case ZephyrReadSupportedCommandsCommand.opcode:
            complete(id, opcode, returning: ZephyrReadSupportedCommandsCommand.ReturnParameters(
                bits: [0, 1, ZephyrReadSupportedCommandsCommand.readStaticAddressesBit]))
        case ZephyrReadStaticAddressesCommand.opcode:
            complete(id, opcode, returning: ZephyrReadStaticAddressesCommand.ReturnParameters(
                addresses: [.init(address: address, identityRoot: [UInt8](repeating: 0x11, count: 16))]))
        default:
            complete(id, opcode, .unknownCommand)
        }
    }

    /// A connection handle as return parameters (after the Status octet).
    func handleBytes(_ handle: UInt16) -> [UInt8] {
        var writer = ByteWriter(capacity: 2)
        writer.write(handle & 0x0FFF)
        return writer.bytes
    }

    private mutating func setRandomAddress(_ command: LESetRandomAddressCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let state = controllers[id] else { return }
        // Core 6.0, Vol 4, Part E, 7.8.4: not while legacy advertising, scanning or initiating.
        guard !state.advertising.isEnabled, !state.scanning.isEnabled, state.initiating == nil else {
            complete(id, opcode, .commandDisallowed)
            return
        }
        controllers[id]?.randomAddress = command.address
        complete(id, opcode, .success)
    }

    private mutating func writeSuggestedDefaultDataLength(_ command: LEWriteSuggestedDefaultDataLengthCommand, opcode: HCIOpcode, from id: ControllerID) {
        guard ParameterRanges.dataLength(octets: command.suggestedMaxTxOctets, time: command.suggestedMaxTxTime) else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        let maximum = controllers[id]?.configuration.maximumDataLength ?? 251
        controllers[id]?.suggestedTxOctets = min(command.suggestedMaxTxOctets, maximum)
        controllers[id]?.suggestedTxTime = command.suggestedMaxTxTime
        complete(id, opcode, .success)
    }

    private mutating func readRSSI(_ command: ReadRSSICommand, opcode: HCIOpcode, from id: ControllerID) {
        guard let (connection, role) = connection(command.connectionHandle, of: id) else {
            complete(id, opcode, .unknownConnectionIdentifier, handleBytes(command.connectionHandle) + [0x7F])
            return
        }
        let peer = connection.end(role.peer).controller
        let rssi = reception(from: peer, to: id).reportedRSSI
        complete(id, opcode, returning: ReadRSSICommand.ReturnParameters(connectionHandle: command.connectionHandle, rssi: rssi))
    }

    /// The connection a controller's handle names, and the controller's role on it.
    func connection(_ handle: UInt16, of id: ControllerID) -> (LinkConnection, ConnectionRole)? {
        guard let connectionID = controllers[id]?.connections[handle], let connection = connections[connectionID],
              let role = connection.role(of: id) else { return nil }
        return (connection, role)
    }
}

/// The number whose octets, least significant first, are `octets` (16 of them, as a decoded
/// LE Encrypt command holds).
private func number(leastSignificantFirst octets: [UInt8]) -> UInt128 {
    ByteReader.integer(littleEndian: octets)
}
